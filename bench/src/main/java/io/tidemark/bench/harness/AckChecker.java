package io.tidemark.bench.harness;

/**
 * Checks, while a partition's log is read in offset order, that every acknowledged record is there, at the offset
 * its acknowledgement gave, with the content its producer wrote (its request's correlation id and its index in the
 * request). Records that were not acknowledged (acks=0, or an unknown outcome) may be present and are only counted.
 */
public final class AckChecker
{
    private final long[] baseOffsets;
    private final long[] correlationIds;
    private final long[] counts;
    private final long expected;
    private int next;
    private long found;
    private long mismatched;
    private long recordsRead;
    private long lastOffset = -1;
    private String firstProblem;

    /**
     * @param acks the partition's acknowledgements.
     */
    public AckChecker(final AckLog acks)
    {
        final long[][] sorted = acks.sortedByOffset();
        baseOffsets = sorted[0];
        correlationIds = sorted[1];
        counts = sorted[2];
        long total = 0;
        for (int i = 0; i < baseOffsets.length; i++)
        {
            total += counts[i];
            if (i > 0 && baseOffsets[i] < baseOffsets[i - 1] + counts[i - 1])
            {
                problem("acknowledgements overlap: offsets " + baseOffsets[i - 1] + "+" + counts[i - 1] + " and " +
                    baseOffsets[i] + "+" + counts[i]);
            }
        }
        expected = total;
    }

    /**
     * One record of the log, in offset order.
     *
     * @param offset        its offset.
     * @param correlationId the correlation id its value starts with.
     * @param index         its index in its request, from its value.
     */
    public void onRecord(final long offset, final long correlationId, final int index)
    {
        recordsRead++;
        if (offset <= lastOffset)
        {
            problem("offsets not increasing: " + offset + " after " + lastOffset);
        }
        lastOffset = offset;
        while (next < baseOffsets.length && baseOffsets[next] + counts[next] <= offset)
        {
            next++;
        }
        if (next < baseOffsets.length && offset >= baseOffsets[next])
        {
            if (correlationIds[next] == correlationId && index == offset - baseOffsets[next])
            {
                found++;
            }
            else
            {
                mismatched++;
                problem("offset " + offset + " holds record " + index + " of request " +
                    Long.toHexString(correlationId) + " but was acknowledged as record " +
                    (offset - baseOffsets[next]) + " of request " + Long.toHexString(correlationIds[next]));
            }
        }
    }

    private void problem(final String text)
    {
        if (null == firstProblem)
        {
            firstProblem = text;
        }
    }

    /** @return acknowledged records (what must be found). */
    public long expected()
    {
        return expected;
    }

    /** @return acknowledged records found where acknowledged, with the right content. */
    public long found()
    {
        return found;
    }

    /** @return records read. */
    public long recordsRead()
    {
        return recordsRead;
    }

    /** @return whether every acknowledged record was found and nothing was inconsistent. */
    public boolean ok()
    {
        return null == firstProblem && found == expected;
    }

    /** @return null when {@link #ok()}, else what is wrong. */
    public String problem()
    {
        if (null != firstProblem)
        {
            return firstProblem + (mismatched > 1 ? " (" + mismatched + " mismatches in all)" : "");
        }
        if (found != expected)
        {
            return (expected - found) + " of " + expected + " acknowledged records missing from the log (" +
                recordsRead + " records read)";
        }
        return null;
    }
}
