package io.tidemark.kafka;

import java.nio.channels.SelectionKey;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The listener's budget of request memory ({@code kafka.queued.max.request.bytes}, Kafka's
 * {@code queued.max.request.bytes}): the bytes of requests read (or being read) and not yet answered, over all
 * connections, and the connections waiting for budget, first come first served. A connection takes a request's
 * bytes when its size is known, before its buffer is allocated, and gives them back when the answer is taken for
 * writing or the connection closes ({@link KafkaConnection#reservedBytes}).
 * <p>
 * Owned by the listener's agent thread; the counters ({@link #queued()}, {@link #maxQueued()}, {@link #waiters()},
 * {@link #mutes()}) may be read from any thread.
 */
final class RequestBudget
{
    private final long limit;
    private final ArrayDeque<KafkaConnection> waiters = new ArrayDeque<>();
    private final AtomicLong mutes = new AtomicLong();
    private volatile long queued;
    private volatile long maxQueued;
    private volatile int waiterCount;
    private boolean freed;

    RequestBudget(final long limit)
    {
        this.limit = limit;
    }

    /** @return the budget, in bytes. */
    long limit()
    {
        return limit;
    }

    /** Take {@code bytes} for a connection that is not waiting, or refuse (someone waits first, or it does not fit). */
    boolean reserve(final int bytes)
    {
        if (!waiters.isEmpty() || queued + bytes > limit)
        {
            return false;
        }
        take(bytes);
        return true;
    }

    /** Answers (or a closed connection) gave {@code bytes} back. */
    void release(final long bytes)
    {
        queued -= bytes;
        freed = true;
    }

    /** The connection's next request does not fit: it stops reading and waits its turn. */
    void mute(final KafkaConnection connection)
    {
        connection.memoryMuted = true;
        waiters.addLast(connection);
        waiterCount = waiters.size();
        mutes.incrementAndGet();
        connection.key.interestOps(connection.key.interestOps() & ~SelectionKey.OP_READ);
    }

    /** @return whether budget was given back since the last call (then {@link #admitWaiter()} may find one). */
    boolean takeFreed()
    {
        final boolean was = freed;
        freed = false;
        return was;
    }

    /**
     * @return the first waiting connection, its pending request's bytes now taken and its wait over, if that
     *         request fits; else null (it keeps its turn).
     */
    KafkaConnection admitWaiter()
    {
        final KafkaConnection head = waiters.peekFirst();
        if (null == head || queued + head.pendingSize() > limit)
        {
            return null;
        }
        waiters.pollFirst();
        waiterCount = waiters.size();
        take(head.pendingSize());
        head.memoryMuted = false;
        return head;
    }

    /** A closing connection leaves the queue of waiters and gives back what it held. */
    void forget(final KafkaConnection connection)
    {
        if (connection.memoryMuted)
        {
            waiters.remove(connection);
            waiterCount = waiters.size();
        }
        if (connection.reservedBytes > 0)
        {
            release(connection.reservedBytes);
            connection.reservedBytes = 0;
        }
    }

    private void take(final int bytes)
    {
        queued += bytes;
        if (queued > maxQueued)
        {
            maxQueued = queued;
        }
    }

    /** @return bytes of requests read (or being read) and not yet answered. */
    long queued()
    {
        return queued;
    }

    /** @return the most {@link #queued()} has been. */
    long maxQueued()
    {
        return maxQueued;
    }

    /** @return connections waiting for budget now. */
    int waiters()
    {
        return waiterCount;
    }

    /** @return times a connection stopped reading for want of budget. */
    long mutes()
    {
        return mutes.get();
    }
}
