package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

/**
 * A consumer's position cannot be used and {@code auto.offset.reset=none} forbids resetting it: there is no
 * committed offset, the position is below the leader's log start (retention), or the log was truncated under it
 * (an unclean election: the position is above the new leader's log end, or the new leader's log diverged from the
 * records read). Nothing is skipped silently: seek to recover.
 * <p>
 * Immutable; thread-safe.
 */
public final class OffsetOutOfRangeException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /** Why the position is unusable. */
    public enum Reason
    {
        /** The group has no committed offset for the partition (or the consumer has no group). */
        NO_COMMITTED_OFFSET,
        /** Below the leader's log start offset: those records were deleted by retention. */
        BELOW_LOG_START,
        /** Above the leader's log end: records were truncated (an unclean election). */
        ABOVE_LOG_END,
        /** The leader's log no longer holds the records read before the position (an unclean election). */
        LOG_DIVERGED
    }

    private final transient TopicPartition partition;
    private final long position;
    private final Reason reason;

    /**
     * @param partition the partition.
     * @param position  the unusable position (-1 when there is none).
     * @param reason    why.
     * @param detail    the leader's range or the underlying error.
     */
    public OffsetOutOfRangeException(final TopicPartition partition, final long position, final Reason reason,
        final String detail)
    {
        super(reason + " for " + partition + " at position " + position + ": " + detail);
        this.partition = partition;
        this.position = position;
        this.reason = reason;
    }

    /** @return the partition. */
    public TopicPartition partition()
    {
        return partition;
    }

    /** @return the unusable position, or -1. */
    public long position()
    {
        return position;
    }

    /** @return why. */
    public Reason reason()
    {
        return reason;
    }

    /** @return whether records were lost by truncation (an unclean election), not merely not committed or retained away. */
    public boolean truncation()
    {
        return reason == Reason.ABOVE_LOG_END || reason == Reason.LOG_DIVERGED;
    }
}
