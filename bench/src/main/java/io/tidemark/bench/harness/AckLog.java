package io.tidemark.bench.harness;

import java.util.Arrays;

/**
 * The acknowledgements of one partition: for each acknowledged produce request, the offset the leader gave its
 * first record, its correlation id and its record count. Appended by the produce listener (on a leader's agent
 * thread; after a failover another thread, hence the lock, uncontended in practice), read once at the end by the
 * verifier.
 */
public final class AckLog
{
    private long[] baseOffsets = new long[1024];
    private long[] correlationIds = new long[1024];
    private int[] counts = new int[1024];
    private int size;

    /**
     * Record an acknowledgement.
     *
     * @param baseOffset    offset of the request's first record.
     * @param correlationId the request's correlation id.
     * @param count         records in the request.
     */
    public synchronized void add(final long baseOffset, final long correlationId, final int count)
    {
        if (size == baseOffsets.length)
        {
            final int capacity = size * 2;
            baseOffsets = Arrays.copyOf(baseOffsets, capacity);
            correlationIds = Arrays.copyOf(correlationIds, capacity);
            counts = Arrays.copyOf(counts, capacity);
        }
        baseOffsets[size] = baseOffset;
        correlationIds[size] = correlationId;
        counts[size] = count;
        size++;
    }

    /** @return acknowledged requests. */
    public synchronized int size()
    {
        return size;
    }

    /** @return acknowledged records. */
    public synchronized long records()
    {
        long total = 0;
        for (int i = 0; i < size; i++)
        {
            total += counts[i];
        }
        return total;
    }

    /**
     * @return the acknowledgements sorted by base offset, as parallel arrays {@code [baseOffsets, correlationIds,
     *         counts]} (counts widened to long).
     */
    public synchronized long[][] sortedByOffset()
    {
        final Integer[] order = new Integer[size];
        for (int i = 0; i < size; i++)
        {
            order[i] = i;
        }
        boolean sorted = true;
        for (int i = 1; i < size && sorted; i++)
        {
            sorted = baseOffsets[i - 1] <= baseOffsets[i];
        }
        if (!sorted)
        {
            Arrays.sort(order, (a, b) -> Long.compare(baseOffsets[a], baseOffsets[b]));
        }
        final long[][] out = new long[3][size];
        for (int i = 0; i < size; i++)
        {
            out[0][i] = baseOffsets[order[i]];
            out[1][i] = correlationIds[order[i]];
            out[2][i] = counts[order[i]];
        }
        return out;
    }
}
