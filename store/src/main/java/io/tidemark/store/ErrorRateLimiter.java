package io.tidemark.store;

/**
 * At most one report per interval of an error that may repeat (an agent duty that fails every cycle, a checkpoint
 * that cannot be written while the disk is full): the first occurrence is reported, later ones within the interval
 * are counted, and the next report says how many were left out.
 * <p>
 * Thread-safe.
 */
final class ErrorRateLimiter
{
    private final long intervalNs;
    private long lastReportNs;
    private boolean reported;
    private long suppressed;

    /** @param intervalNs the least time between two reports. */
    ErrorRateLimiter(final long intervalNs)
    {
        this.intervalNs = intervalNs;
    }

    /**
     * Count one occurrence.
     *
     * @param nowNs {@link System#nanoTime()}.
     * @return -1 when this occurrence is not to be reported, else the number of occurrences left out since the last
     *         report.
     */
    synchronized long onOccurrence(final long nowNs)
    {
        if (reported && nowNs - lastReportNs < intervalNs)
        {
            suppressed++;
            return -1;
        }
        final long leftOut = suppressed;
        reported = true;
        lastReportNs = nowNs;
        suppressed = 0;
        return leftOut;
    }
}
