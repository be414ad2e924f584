package io.tidemark.replication;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Queues between the controller and the replica hosts of one JVM. A host can be cut off from the controller
 * (both directions, as a lost ZooKeeper/controller connection would), which the fault tests use. Thread-safe.
 */
public final class ControlChannel
{
    private static final int CAPACITY = 64 * 1024;

    private final ManyToOneConcurrentArrayQueue<ControlMessage> toController =
        new ManyToOneConcurrentArrayQueue<>(CAPACITY);
    private final java.util.List<ManyToOneConcurrentArrayQueue<ControlMessage>> toHosts;
    private final AtomicLong cutHosts = new AtomicLong();

    /**
     * @param maxHosts host ids are in {@code [0, maxHosts)}, at most 64.
     */
    public ControlChannel(final int maxHosts)
    {
        final java.util.List<ManyToOneConcurrentArrayQueue<ControlMessage>> queues = new java.util.ArrayList<>();
        for (int i = 0; i < maxHosts; i++)
        {
            queues.add(new ManyToOneConcurrentArrayQueue<>(CAPACITY));
        }
        toHosts = java.util.List.copyOf(queues);
    }

    private boolean isCut(final int host)
    {
        return (cutHosts.get() & (1L << host)) != 0;
    }

    /** Cut a host off from the controller (messages both ways are dropped) until {@link #reconnect}. */
    public void disconnect(final int host)
    {
        cutHosts.updateAndGet((v) -> v | (1L << host));
    }

    /** Restore a host's connection to the controller. */
    public void reconnect(final int host)
    {
        cutHosts.updateAndGet((v) -> v & ~(1L << host));
    }

    void toController(final int fromHost, final ControlMessage message)
    {
        if (!isCut(fromHost))
        {
            toController.offer(message);
        }
    }

    void toHost(final int host, final ControlMessage message)
    {
        if (!isCut(host))
        {
            toHosts.get(host).offer(message);
        }
    }

    int drainController(final Consumer<ControlMessage> handler)
    {
        return toController.drain(handler);
    }

    int drainHost(final int host, final Consumer<ControlMessage> handler)
    {
        return toHosts.get(host).drain(handler);
    }

    /** Drop everything queued for a host (it restarts). */
    void clearHost(final int host)
    {
        toHosts.get(host).clear();
    }
}
