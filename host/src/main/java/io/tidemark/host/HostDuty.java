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

    /**
     * @return the gateway's and agents' work once attached (the driver's own heartbeats and status messages do not
     *         count: they would keep an idle host from ever parking deeper, see {@code QuietIdleStrategy}); the
     *         driver's before.
     */
    @Override
    public int doWork() throws Exception
    {
        final int driver = media.invoke();
        if (null == work)
        {
            return driver;
        }
        lock.lock();
        try
        {
            final Agent agent = work;
            return null == agent ? driver : agent.doWork();
        }
        finally
        {
            lock.unlock();
        }
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
