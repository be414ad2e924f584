package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.ControlMessageCodec;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.IntPredicate;

/**
 * Queues between the controller and the replica hosts. In one JVM every host and the controller are local and
 * messages are objects on queues. When hosts run in several processes, a {@link ControlLink} carries the
 * messages whose destination is in another process ({@link ControlMessageCodec}-encoded, behind the destination
 * host id), and the receiving process hands them to {@link #deliver}. A host can be cut off from the controller
 * (both directions, as a lost ZooKeeper/controller connection would), which the fault tests use. Thread-safe.
 */
public final class ControlChannel
{
    private static final int CAPACITY = 64 * 1024;
    /** Destination host id of a forwarded message to the controller. */
    private static final int TO_CONTROLLER = -1;

    private final ManyToOneConcurrentArrayQueue<ControlMessage> toController =
        new ManyToOneConcurrentArrayQueue<>(CAPACITY);
    private final java.util.List<ManyToOneConcurrentArrayQueue<ControlMessage>> toHosts;
    private final AtomicLong cutHosts = new AtomicLong();
    private final IntPredicate localHost;
    private final java.util.concurrent.atomic.AtomicReferenceArray<Runnable> hostWakeUps;
    private final ControlLink link;
    private final AtomicLong malformed = new AtomicLong();
    private final AtomicLong misattributed = new AtomicLong();
    private final RateLimitedLog log = new RateLimitedLog(System.getLogger(ControlChannel.class.getName()));
    private final AtomicLong unsent = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicLongArray controllerHeardNs;
    private final java.util.concurrent.atomic.AtomicLongArray controllerEpochHeard;
    private final AtomicLong staleController = new AtomicLong();
    private final AtomicLong livenessDelivered = new AtomicLong();
    private final AtomicLong readingNs = new AtomicLong(System.nanoTime());

    /**
     * Carries control messages to other processes. Implementations are thread-safe.
     */
    public interface ControlLink
    {
        /** @return the host id whose process runs the controller now, or -1 when none is known. */
        int controllerHost();

        /**
         * Send an encoded message to the process of {@code host}, to be handed to its {@link #deliver}.
         *
         * @return false when it could not be sent now (the protocol repeats what matters: heartbeats repair lost
         *         state within an interval).
         */
        boolean send(int host, DirectBuffer buffer, int offset, int length);
    }

    /**
     * A channel whose hosts and controller are all in this JVM.
     *
     * @param maxHosts host ids are in {@code [0, maxHosts)}, at most 64.
     */
    public ControlChannel(final int maxHosts)
    {
        this(maxHosts, (host) -> true, null);
    }

    /**
     * A channel of one process among several.
     *
     * @param maxHosts  host ids are in {@code [0, maxHosts)}, at most 64.
     * @param localHost which host ids run in this process.
     * @param link      carries messages to the other processes.
     */
    public ControlChannel(final int maxHosts, final IntPredicate localHost, final ControlLink link)
    {
        final java.util.List<ManyToOneConcurrentArrayQueue<ControlMessage>> queues = new java.util.ArrayList<>();
        for (int i = 0; i < maxHosts; i++)
        {
            queues.add(new ManyToOneConcurrentArrayQueue<>(CAPACITY));
        }
        toHosts = java.util.List.copyOf(queues);
        controllerHeardNs = new java.util.concurrent.atomic.AtomicLongArray(maxHosts);
        controllerEpochHeard = new java.util.concurrent.atomic.AtomicLongArray(maxHosts);
        hostWakeUps = new java.util.concurrent.atomic.AtomicReferenceArray<>(maxHosts);
        this.localHost = localHost;
        this.link = link;
    }

    /**
     * Ring {@code wakeUp} whenever a message is queued for {@code host} in this process, so that the controller's
     * message to a host of its own process does not wait out that host's idle wait (a host process waits for a
     * datagram, which a queued object is not). The latest registration for a host wins (a restarted host).
     *
     * @param host   a host of this process.
     * @param wakeUp cheap, from any thread.
     */
    void onQueuedForHost(final int host, final Runnable wakeUp)
    {
        hostWakeUps.set(host, wakeUp);
    }

    private boolean controllerIsLocal()
    {
        if (null == link)
        {
            return true;
        }
        final int controller = link.controllerHost();
        return controller >= 0 && localHost.test(controller);
    }

    private void forward(final int host, final int destination, final ControlMessage message)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4 + ControlMessageCodec.encodedLength(message)]);
        buffer.putInt(0, destination, java.nio.ByteOrder.LITTLE_ENDIAN);
        final int length = 4 + ControlMessageCodec.encode(message, buffer, 4);
        if (host < 0 || !link.send(host, buffer, 0, length))
        {
            unsent.incrementAndGet();
        }
    }

    /**
     * Hand over a message another process's channel forwarded to this one: it is queued for its destination when
     * that runs here (a host of this process, or the controller while this process runs it) and dropped otherwise.
     * <p>
     * A message acts only for the host that sent it ({@code fromHost}, as the transport authenticated it, never a
     * field of the message): a message to the controller must name its sender as the host it speaks for (the host
     * registering, heartbeating or leaving, the leader asking for an ISR change), and a message to a host must come
     * from the host this process knows as the controller and, when it names a host, name its destination. A
     * malformed or misattributed message is counted and dropped, and logged at most once per kind per interval.
     *
     * @param fromHost the host whose process sent the message.
     * @return whether it was queued.
     */
    public boolean deliver(final int fromHost, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < 4 || fromHost < 0 || fromHost >= toHosts.size())
        {
            return malformed("from host " + fromHost + ", " + length + " bytes");
        }
        final ControlMessage message;
        try
        {
            message = ControlMessageCodec.decode(buffer, offset + 4, length - 4);
        }
        catch (final ControlMessageCodec.MalformedMessageException ex)
        {
            return malformed("from host " + fromHost + ": " + ex.getMessage());
        }
        final int destination = buffer.getInt(offset, java.nio.ByteOrder.LITTLE_ENDIAN);
        if (destination == TO_CONTROLLER)
        {
            if (!ControlMessageCodec.isToController(message) || ControlMessageCodec.senderHost(message) != fromHost)
            {
                return misattributed(fromHost, message);
            }
            if (message instanceof ControlMessage.Heartbeat)
            {
                livenessDelivered.incrementAndGet();
            }
            return controllerIsLocal() && toController.offer(message);
        }
        if (destination < 0 || destination >= toHosts.size() || !localHost.test(destination) || isCut(destination))
        {
            return false;
        }
        final int named = ControlMessageCodec.destinationHost(message);
        if (ControlMessageCodec.isToController(message) || (null != link && fromHost != link.controllerHost()) ||
            (named != ControlMessageCodec.NO_DESTINATION_HOST && named != destination))
        {
            return misattributed(fromHost, message);
        }
        if (message instanceof ControlMessage.ControllerAlive alive)
        {
            livenessDelivered.incrementAndGet();
            return controllerAlive(destination, alive.controllerEpoch());
        }
        return toHosts.get(destination).offer(message);
    }

    /**
     * A host heard the controller announce itself alive in {@code epoch}: recorded for {@link #controllerHeardNanos},
     * unless a newer controller epoch was heard before (a deposed controller, or a replayed message: stale, counted
     * and ignored).
     */
    private boolean controllerAlive(final int host, final long epoch)
    {
        while (true)
        {
            final long heard = controllerEpochHeard.get(host);
            if (epoch < heard)
            {
                staleController.incrementAndGet();
                return false;
            }
            if (controllerEpochHeard.compareAndSet(host, heard, epoch))
            {
                controllerHeardNs.set(host, Math.max(1, System.nanoTime()));
                return true;
            }
        }
    }

    /**
     * @return the {@link System#nanoTime} at which {@code host} (of this process) last heard the controller announce
     *         itself alive, or 0 when it never did. The host process suspects the controller dead when this grows old.
     */
    public long controllerHeardNanos(final int host)
    {
        return controllerHeardNs.get(host);
    }

    /**
     * The process's serving thread is reading the control stream now (called once per duty cycle, before its poll).
     * A silence of the controller counts only while this is current: a host whose own serving thread stalled (creating
     * the logs of a new topic on a busy machine, a long pause) did not hear anybody, and its silence is not the
     * controller's.
     *
     * @param nowNs {@link System#nanoTime}.
     */
    public void reading(final long nowNs)
    {
        readingNs.lazySet(nowNs);
    }

    /** @return the {@link System#nanoTime} of the last {@link #reading}: the creation of this channel before any. */
    public long readingNanos()
    {
        return readingNs.get();
    }

    /** @return the highest controller epoch {@code host} heard announced, or 0. */
    public long controllerEpochHeard(final int host)
    {
        return controllerEpochHeard.get(host);
    }

    /** @return controller announcements dropped because their host had heard a newer controller epoch. */
    public long staleControllerMessages()
    {
        return staleController.get();
    }

    private boolean malformed(final String detail)
    {
        malformed.incrementAndGet();
        log.log(System.Logger.Level.WARNING, "control malformed", "dropped a malformed control message " + detail +
            "; " + malformed.get() + " so far");
        return false;
    }

    private boolean misattributed(final int fromHost, final ControlMessage message)
    {
        misattributed.incrementAndGet();
        log.log(System.Logger.Level.WARNING, "control misattributed", "dropped a control message from host " +
            fromHost + " that does not act for its sender (or does not come from the controller): " +
            message.getClass().getSimpleName() + "; " + misattributed.get() + " so far");
        return false;
    }

    /** @return forwarded messages dropped as malformed. */
    public long malformedMessages()
    {
        return malformed.get();
    }

    /**
     * @return forwarded liveness messages accepted (a host's heartbeat to the controller, the controller's
     *         announcement to a host). A process's serving thread does not count them as work: they arrive every
     *         heartbeat interval whether or not anything happens, and counted, they would keep an idle host from ever
     *         parking deeper (see {@code QuietIdleStrategy} in module aeron).
     */
    public long livenessMessages()
    {
        return livenessDelivered.get();
    }

    /**
     * @return forwarded messages dropped because they did not act for their sender: a host speaking for another,
     *         or a message to a host from one that is not the controller.
     */
    public long misattributedMessages()
    {
        return misattributed.get();
    }

    /** @return host ids are in {@code [0, maxHosts)}. */
    public int maxHosts()
    {
        return toHosts.size();
    }

    /** @return messages to another process that could not be sent (no controller known, link back-pressured). */
    public long unsentMessages()
    {
        return unsent.get();
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
        if (isCut(fromHost))
        {
            return;
        }
        if (controllerIsLocal())
        {
            toController.offer(message);
        }
        else
        {
            forward(link.controllerHost(), TO_CONTROLLER, message);
        }
    }

    void toHost(final int host, final ControlMessage message)
    {
        if (host < 0 || host >= toHosts.size())
        {
            unsent.incrementAndGet(); // no such host: nothing to send it to
            return;
        }
        if (isCut(host))
        {
            return;
        }
        if (localHost.test(host))
        {
            if (message instanceof ControlMessage.ControllerAlive alive)
            {
                controllerAlive(host, alive.controllerEpoch());
                return;
            }
            if (toHosts.get(host).offer(message))
            {
                final Runnable wakeUp = hostWakeUps.get(host);
                if (null != wakeUp)
                {
                    wakeUp.run();
                }
            }
        }
        else
        {
            forward(host, host, message);
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
