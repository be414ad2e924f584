package io.tidemark.host;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The produce results a client's reply publication refused (back pressure: the client reads slower than its results
 * come, e.g. a burst of acknowledgements when a high watermark catches up after a stall), kept in order and sent again
 * before any newer result. Without it a refused result was lost, and the client learnt the outcome only from its own
 * backstop, twice {@code request.timeout.ms} (60 s by default) after it sent the batch: a measured 16-partition run
 * saw the last 0.4 s of its records acknowledged a minute late.
 * <p>
 * Bounded: beyond {@link #MAX_ENTRIES} (a client that stopped reading) a result is refused here too, counted by the
 * caller, and the client's backstop applies. Bounded per host as well: every backlog of a host's clients takes its
 * room from one {@link Budget} ({@link #HOST_MAX_ENTRIES} by default), so 256 clients that all stop reading cost
 * the host at most that, not 256 times {@link #MAX_ENTRIES} (384 MiB). Grows from nothing and gives its memory back
 * to the budget once emptied: a client that keeps up costs no memory.
 * <p>
 * Not thread-safe: the caller holds its client's lock.
 */
final class ResultBacklog
{
    /** Results kept per client at most (24 bytes each). */
    static final int MAX_ENTRIES = 65_536;
    /** Room for results kept by all the clients of a host together, by default (24 MiB). */
    static final long HOST_MAX_ENTRIES = 1L << 20;
    private static final int LONGS_PER_ENTRY = 3;
    private static final int FIRST_CAPACITY = 64;
    private static final long[] NONE = new long[0];

    /** The room all the backlogs of one host share, in entries of capacity (reserved as a backlog grows). */
    static final class Budget
    {
        private final long limit;
        private final AtomicLong reserved = new AtomicLong();

        /** @param limit entries of capacity the backlogs sharing this budget may hold together. */
        Budget(final long limit)
        {
            this.limit = limit;
        }

        boolean reserve(final int entries)
        {
            long now;
            do
            {
                now = reserved.get();
                if (now + entries > limit)
                {
                    return false;
                }
            }
            while (!reserved.compareAndSet(now, now + entries));
            return true;
        }

        void release(final int entries)
        {
            reserved.addAndGet(-entries);
        }

        /** @return entries of capacity held now. */
        long reserved()
        {
            return reserved.get();
        }

        long limit()
        {
            return limit;
        }
    }

    private final Budget budget;
    private long[] entries = NONE;
    private int head;
    private int size;
    /** Whether the last refused {@link #add} was for want of the host's room (not this client's). */
    private boolean refusedForHost;

    /** A backlog with a budget of its own ({@link #MAX_ENTRIES}): bounded only per client. */
    ResultBacklog()
    {
        this(new Budget(MAX_ENTRIES));
    }

    /** @param budget the room this backlog shares with the other clients' of its host. */
    ResultBacklog(final Budget budget)
    {
        this.budget = budget;
    }

    /** @return whether no result waits. */
    boolean isEmpty()
    {
        return 0 == size;
    }

    /** @return results waiting. */
    int size()
    {
        return size;
    }

    /**
     * Keep a result, after every result kept before it.
     *
     * @return false when {@link #MAX_ENTRIES} are kept already, or the host's budget has no room for more (nothing
     *         is kept; {@link #refusedForHost} tells which).
     */
    boolean add(final int partitionId, final int errorCode, final long correlationId, final long baseOffset)
    {
        final int capacity = entries.length / LONGS_PER_ENTRY;
        if (size == capacity)
        {
            if (capacity >= MAX_ENTRIES)
            {
                refusedForHost = false;
                return false;
            }
            final int newCapacity = Math.min(MAX_ENTRIES, Math.max(FIRST_CAPACITY, capacity * 2));
            if (!budget.reserve(newCapacity - capacity))
            {
                refusedForHost = true;
                return false;
            }
            grow(newCapacity);
        }
        final int at = ((head + size) % (entries.length / LONGS_PER_ENTRY)) * LONGS_PER_ENTRY;
        entries[at] = ((long)partitionId << 32) | (errorCode & 0xFFFF_FFFFL);
        entries[at + 1] = correlationId;
        entries[at + 2] = baseOffset;
        size++;
        return true;
    }

    /** @return the oldest result's partition id (not empty). */
    int partitionId()
    {
        return (int)(entries[head * LONGS_PER_ENTRY] >>> 32);
    }

    /** @return the oldest result's error code (not empty). */
    int errorCode()
    {
        return (int)entries[head * LONGS_PER_ENTRY];
    }

    /** @return the oldest result's correlation id (not empty). */
    long correlationId()
    {
        return entries[head * LONGS_PER_ENTRY + 1];
    }

    /** @return the oldest result's base offset (not empty). */
    long baseOffset()
    {
        return entries[head * LONGS_PER_ENTRY + 2];
    }

    /** Drop the oldest result (sent). */
    void removeOldest()
    {
        if (0 == size)
        {
            throw new IllegalStateException("empty");
        }
        head = (head + 1) % (entries.length / LONGS_PER_ENTRY);
        if (0 == --size)
        {
            clear(); // caught up: its memory goes back to the host's budget
        }
    }

    /** Drop every result and the memory they took (back to the host's budget). */
    void clear()
    {
        budget.release(entries.length / LONGS_PER_ENTRY);
        entries = NONE;
        head = 0;
        size = 0;
    }

    /** @return whether the last refused {@link #add} was for want of the host's room rather than this client's. */
    boolean refusedForHost()
    {
        return refusedForHost;
    }

    /** @return results this backlog has room for now without growing. */
    int capacity()
    {
        return entries.length / LONGS_PER_ENTRY;
    }

    private void grow(final int newCapacity)
    {
        final long[] next = new long[newCapacity * LONGS_PER_ENTRY];
        final int capacity = entries.length / LONGS_PER_ENTRY;
        for (int i = 0; i < size; i++)
        {
            final int from = ((head + i) % capacity) * LONGS_PER_ENTRY;
            System.arraycopy(entries, from, next, i * LONGS_PER_ENTRY, LONGS_PER_ENTRY);
        }
        entries = next;
        head = 0;
    }
}
