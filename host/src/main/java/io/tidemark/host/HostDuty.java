package io.tidemark.host;

import io.tidemark.aeron.AeronMedia;
import org.agrona.concurrent.Agent;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The host's one thread in the shared profile with an embedded driver: each duty cycle runs the media driver and
 * the Aeron client's conductor, then the gateway and the replica host's agents once they are attached. Detaching
 * (a clean stop) waits for a cycle in progress, so that the node can close while the driver keeps running.
 * <p>
 * Owns the attached agent and the lock that keeps a detach from overlapping a cycle that runs it. Thread-safe:
 * {@link #doWork} runs on the duty thread, {@link #attach} and {@link #detach} on the starting and stopping threads.
 */
final class HostDuty implements Agent
{
    private final AeronMedia media;
    private final int hostId;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Agent work;
    private int driverWork;

    HostDuty(final AeronMedia media, final int hostId)
    {
        this.media = media;
        this.hostId = hostId;
    }

    void attach(final Agent agent)
    {
        work = agent;
    }

    /** Stop running the attached agent (it is closed here) but keep running the driver. */
    void detach()
    {
        final Agent agent = work;
        lock.lock();
        try
        {
            work = null;
        }
        finally
        {
            lock.unlock();
        }
        if (null != agent)
        {
            agent.onClose();
        }
    }

    /** @return the driver's (and the Aeron client's) work in the last cycle: on the duty thread only. */
    int driverWork()
    {
        return driverWork;
    }

    /**
     * Run the driver (what arrived is read into the images), the gateway and the agents (they answer it), then, when
     * they worked, the driver again: what they offered (a fetch answer, a fetch, an acknowledgement) is sent in this
     * cycle rather than the next, which would be a wake-up of its own, and on a loaded machine a wait for a core,
     * at every hop of a replicated write.
     *
     * @return the gateway's and agents' work once attached (the driver's own, in {@link #driverWork}, asks the idle
     *         strategy for another cycle but does not count: its heartbeats and status messages would keep an idle
     *         host from ever waiting longer, see {@code DatagramWaitIdleStrategy}); the driver's before.
     */
    @Override
    public int doWork() throws Exception
    {
        final int driver = media.invoke();
        driverWork = driver;
        if (null == work)
        {
            return driver;
        }
        final int agentWork;
        lock.lock();
        try
        {
            final Agent agent = work;
            agentWork = null == agent ? 0 : agent.doWork();
        }
        finally
        {
            lock.unlock();
        }
        if (agentWork > 0)
        {
            driverWork += media.invoke();
        }
        return agentWork;
    }

    @Override
    public void onClose()
    {
        detach();
    }

    @Override
    public String roleName()
    {
        return "tidemark-host-" + hostId;
    }
}
