package io.tidemark.client;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * One assigned partition of a {@link Consumer}: its {@link PartitionReader} (reads stop at the leader's high
 * watermark; the reader validates the position against each new leader), and how its position is to be found when
 * it is not known: from the group's committed offset, the log start, the high watermark, or a timestamp. Positions
 * are resolved lazily, at the next poll, because a partition may have no leader at the moment of a seek.
 * <p>
 * A position the leader's log does not hold (below its start, above its end, or past the point where it diverged
 * after an unclean election) is never skipped silently: {@code auto.offset.reset} says whether to reset it (earliest
 * or latest) or to throw {@link OffsetOutOfRangeException}. Owned by the consumer's thread.
 */
final class AssignedPartition implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Consumer.class.getName());

    /** How the position is to be found. */
    enum Pending
    {
        /** Known: the reader's position. */
        NONE,
        /** The group's committed offset, or the reset policy without one. */
        COMMITTED,
        /** The log start offset. */
        EARLIEST,
        /** The high watermark. */
        LATEST,
        /** The first committed record at or after {@link #timestamp}, else the high watermark. */
        TIMESTAMP
    }

    final TopicPartition tp;
    private final PartitionReader reader;
    private final OffsetStore offsets;
    private final ConsumerContext.AutoOffsetReset policy;
    private Pending pending;
    private long timestamp;

    AssignedPartition(final PartitionReader reader, final TopicPartition tp, final OffsetStore offsets,
        final ConsumerContext.AutoOffsetReset policy)
    {
        this.reader = reader;
        this.tp = tp;
        this.offsets = offsets;
        this.policy = policy;
        this.pending = Pending.COMMITTED;
    }

    void seek(final long offset)
    {
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        reader.seek(offset);
        pending = Pending.NONE;
    }

    void reset(final Pending how)
    {
        pending = how;
    }

    void seekToTimestamp(final long timestamp)
    {
        this.timestamp = timestamp;
        pending = Pending.TIMESTAMP;
    }

    /** @return the position, or -1 when it cannot be resolved yet (no leader, or a new one still catching up). */
    long position()
    {
        return resolve() ? reader.position() : -1;
    }

    /** @return the leader epoch of the record before the position (-1 unknown), committed with the offset. */
    int lastEpoch()
    {
        return reader.lastEpoch();
    }

    boolean hasPosition()
    {
        return pending == Pending.NONE;
    }

    long highWatermark()
    {
        return reader.highWatermark();
    }

    /**
     * Deliver up to {@code max} committed records from the position.
     *
     * @return records delivered.
     * @throws OffsetOutOfRangeException with {@code auto.offset.reset=none}.
     */
    int poll(final RecordHandler handler, final int max)
    {
        for (int attempt = 0; attempt < 2; attempt++) // a second time after a reset by the policy
        {
            if (!resolve())
            {
                return 0;
            }
            final long start = reader.logStartOffset();
            if (start >= 0 && reader.position() < start)
            {
                outOfRange(OffsetOutOfRangeException.Reason.BELOW_LOG_START, "the leader's log starts at " + start);
                continue;
            }
            try
            {
                return reader.poll(handler, max);
            }
            catch (final StorageException ex)
            {
                if (ex.code() != StorageErrorCode.OFFSET_OUT_OF_RANGE)
                {
                    throw ex;
                }
                final long end = reader.logEndOffset();
                outOfRange(end >= 0 && reader.position() > end ? OffsetOutOfRangeException.Reason.ABOVE_LOG_END :
                    OffsetOutOfRangeException.Reason.LOG_DIVERGED, ex.getMessage());
            }
        }
        return 0;
    }

    private boolean resolve()
    {
        switch (pending)
        {
            case NONE:
                return true;
            case COMMITTED:
                return resolveCommitted();
            case EARLIEST:
                final long start = reader.logStartOffset();
                if (start < 0)
                {
                    return false;
                }
                reader.seek(start);
                break;
            case LATEST:
                try
                {
                    reader.seekToEnd();
                }
                catch (final StorageException ex)
                {
                    return false; // no leader, or a new leader not yet exposing a latest offset: retry next poll
                }
                break;
            case TIMESTAMP:
            default:
                if (reader.logStartOffset() < 0)
                {
                    return false;
                }
                final long offset = reader.offsetForTimestamp(timestamp);
                if (offset < 0)
                {
                    pending = Pending.LATEST;
                    return resolve();
                }
                reader.seek(offset);
                break;
        }
        pending = Pending.NONE;
        return true;
    }

    private boolean resolveCommitted()
    {
        final OffsetStore.Committed committed;
        try
        {
            committed = null == offsets ? null : offsets.read(tp);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot read the committed offset of " + tp, ex);
        }
        if (null != committed)
        {
            reader.seek(committed.offset(), committed.leaderEpoch()); // validated against the leader at the next poll
            pending = Pending.NONE;
            return true;
        }
        switch (policy)
        {
            case EARLIEST:
                pending = Pending.EARLIEST;
                return resolve();
            case LATEST:
                pending = Pending.LATEST;
                return resolve();
            case NONE:
            default:
                throw new OffsetOutOfRangeException(tp, -1, OffsetOutOfRangeException.Reason.NO_COMMITTED_OFFSET,
                    null == offsets ? "the consumer has no group.id" : "nothing committed in " + offsets.directory());
        }
    }

    private void outOfRange(final OffsetOutOfRangeException.Reason reason, final String detail)
    {
        final long position = reader.position();
        switch (policy)
        {
            case EARLIEST:
            case LATEST:
                pending = policy == ConsumerContext.AutoOffsetReset.EARLIEST ? Pending.EARLIEST : Pending.LATEST;
                LOGGER.log(System.Logger.Level.WARNING, "{0} for {1} at position {2} ({3}): resetting to the {4} " +
                    "offset as auto.offset.reset says", reason, tp, position, detail, policy);
                break;
            case NONE:
            default:
                throw new OffsetOutOfRangeException(tp, position, reason, detail);
        }
    }

    @Override
    public void close()
    {
        reader.close();
    }
}
