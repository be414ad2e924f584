package io.tidemark.host;

/**
 * The produce results a client's reply publication refused (back pressure: the client reads slower than its results
 * come, e.g. a burst of acknowledgements when a high watermark catches up after a stall), kept in order and sent again
 * before any newer result. Without it a refused result was lost, and the client learnt the outcome only from its own
 * backstop, twice {@code request.timeout.ms} (60 s by default) after it sent the batch: a measured 16-partition run
 * saw the last 0.4 s of its records acknowledged a minute late.
 * <p>
 * Bounded: beyond {@link #MAX_ENTRIES} (a client that stopped reading) a result is refused here too, counted by the
 * caller, and the client's backstop applies. Grows from nothing: a client that keeps up costs no memory.
 * <p>
 * Not thread-safe: the caller holds its client's lock.
 */
final class ResultBacklog
{
    /** Results kept per client at most (24 bytes each). */
    static final int MAX_ENTRIES = 65_536;
    private static final int LONGS_PER_ENTRY = 3;
    private static final int FIRST_CAPACITY = 64;

    private long[] entries = new long[0];
    private int head;
    private int size;

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
     * @return false when {@link #MAX_ENTRIES} are kept already (nothing is kept).
     */
    boolean add(final int partitionId, final int errorCode, final long correlationId, final long baseOffset)
    {
        final int capacity = entries.length / LONGS_PER_ENTRY;
        if (size == capacity)
        {
            if (capacity >= MAX_ENTRIES)
            {
                return false;
            }
            grow(Math.min(MAX_ENTRIES, Math.max(FIRST_CAPACITY, capacity * 2)));
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
            head = 0;
        }
    }

    /** Drop every result and the memory they took. */
    void clear()
    {
        entries = new long[0];
        head = 0;
        size = 0;
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
