package io.tidemark.replication;

import io.tidemark.store.LogReader;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;

/**
 * Reads a partition's committed records: from its current leader's log, never at or above the leader's high
 * watermark. Follows leadership changes (re-opening on the new leader at the same position). A new leader whose
 * high watermark has not yet reached the start of its epoch exposes no "latest offset" ({@link #seekToEnd()} fails
 * with LEADER_NOT_AVAILABLE-like OFFSET_OUT_OF_RANGE until it has), so offsets seen by clients never go backwards.
 * <p>
 * <b>Truncation detection</b> (KIP-320). The reader remembers the leader epoch of the record before its position
 * ({@link #lastEpoch()}). Whenever it (re)opens on a leader (the first poll, or a leader or epoch change), it checks
 * the position against that leader before reading: a position above the leader's log end, or a last epoch that
 * ends on the leader before the position (the leader's log diverged from what was read, as after an unclean
 * election), fails the poll with OFFSET_OUT_OF_RANGE instead of silently skipping records. After a clean election
 * this never happens: the new leader holds every record below the old high watermark.
 * <p>
 * One reader per thread; zero-copy records as {@link LogReader}.
 */
public final class PartitionReader implements AutoCloseable
{
    private final ReplicationCluster cluster;
    private final TopicPartition tp;
    private Replica replica;
    private int replicaEpoch = -1;
    private LogReader reader;
    private long position;
    private int lastEpoch = LeaderEpochCache.UNDEFINED_EPOCH;

    PartitionReader(final ReplicationCluster cluster, final TopicPartition tp)
    {
        this.cluster = cluster;
        this.tp = tp;
    }

    /** @return the next offset to read. */
    public long position()
    {
        return position;
    }

    /**
     * @return the leader epoch of the record before {@link #position()}, as recorded by the last poll or given to
     *         {@link #seek(long, int)}; -1 when unknown.
     */
    public int lastEpoch()
    {
        return lastEpoch;
    }

    /** @param offset next offset to read (the epoch of the record before it becomes unknown). */
    public void seek(final long offset)
    {
        seek(offset, LeaderEpochCache.UNDEFINED_EPOCH);
    }

    /**
     * Move to an offset whose preceding record is known to carry {@code lastEpoch} (e.g. a committed position): the
     * next poll validates it against the leader's log (see the class comment).
     *
     * @param offset    next offset to read.
     * @param lastEpoch leader epoch of the record at {@code offset - 1}, or -1 when unknown.
     */
    public void seek(final long offset, final int lastEpoch)
    {
        position = offset;
        this.lastEpoch = lastEpoch;
        if (null != reader)
        {
            reader.seek(offset);
        }
    }

    /**
     * Move to the partition's high watermark (the "latest offset").
     *
     * @throws StorageException OFFSET_OUT_OF_RANGE while there is no leader, or while a new leader's high watermark
     *                          is below its epoch start.
     */
    public void seekToEnd()
    {
        final Replica leader = cluster.leaderReplica(tp);
        final LeaderState state = null == leader ? null : leader.leaderState;
        if (null == state || state.highWatermark() < state.epochStartOffset)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE,
                "no latest offset available for " + tp + " (no leader, or a new leader still catching up)");
        }
        seek(state.highWatermark());
    }

    /**
     * @return the high watermark of the current leader (the latest offset, up to which records are committed); -1
     *         without a leader, and -1 while a new leader's high watermark is still below the start of its epoch (it
     *         starts behind the old leader's, and an offset shown to clients never goes back: the guard of
     *         {@link #seekToEnd()}).
     */
    public long highWatermark()
    {
        final Replica leader = cluster.leaderReplica(tp);
        final LeaderState state = null == leader ? null : leader.leaderState;
        return null == state ? -1 : exposedHighWatermark(state);
    }

    /** @return the leader's high watermark, or -1 while it is below the start of the leader's epoch. */
    static long exposedHighWatermark(final LeaderState state)
    {
        final long hw = state.highWatermark();
        return hw < state.epochStartOffset ? -1 : hw;
    }

    /** @return the current leader's log start offset (the earliest readable offset), or -1 without a leader. */
    public long logStartOffset()
    {
        final Replica leader = cluster.leaderReplica(tp);
        return null == leader ? -1 : leader.log.logStartOffset();
    }

    /** @return the current leader's log end offset, or -1 without a leader. */
    public long logEndOffset()
    {
        final Replica leader = cluster.leaderReplica(tp);
        return null == leader ? -1 : leader.log.logEndOffset();
    }

    /**
     * Find, by the current leader's time index, the first committed record whose timestamp is at or above
     * {@code timestamp}.
     *
     * @return its offset; -1 when no committed record is that recent, or there is no leader.
     */
    public long offsetForTimestamp(final long timestamp)
    {
        final Replica leader = cluster.leaderReplica(tp);
        if (null == leader)
        {
            return -1;
        }
        final long offset = leader.log.offsetForTimestamp(timestamp);
        return offset >= 0 && offset < leader.highWatermark.get() ? offset : -1;
    }

    /**
     * Deliver committed records from the current position.
     *
     * @return records delivered; 0 when nothing committed is new, or there is no leader right now.
     * @throws StorageException OFFSET_OUT_OF_RANGE when the position is not in the leader's log: above its log end,
     *                          or past the point where its log diverged from the records read (see the class comment).
     */
    public int poll(final RecordHandler handler, final int maxRecords)
    {
        final Replica leader = cluster.leaderReplica(tp);
        if (null == leader)
        {
            return 0;
        }
        try
        {
            final int leaderEpoch = leader.leaderEpoch;
            if (leader != replica || null == reader || leaderEpoch != replicaEpoch)
            {
                close();
                validate(leader, leaderEpoch);
                reader = leader.log.openReader();
                replica = leader;
                replicaEpoch = leaderEpoch;
                reader.seek(Math.max(position, leader.log.logStartOffset()));
            }
            final int delivered = reader.poll(handler, leader.highWatermark.get(), maxRecords);
            position = reader.position();
            if (delivered > 0)
            {
                lastEpoch = leader.epochCache.epochForOffset(position - 1);
            }
            return delivered;
        }
        catch (final StorageException ex)
        {
            if (ex.code() == StorageErrorCode.CLOSED)
            {
                close(); // the leader's host went down under us: the next poll finds the new leader
                return 0;
            }
            throw ex;
        }
    }

    private void validate(final Replica leader, final int leaderEpoch)
    {
        final long end = leader.log.logEndOffset();
        if (position > end)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "position " + position + " of " + tp +
                " is above the log end " + end + " of its leader (host " + leader.hostId + ", epoch " + leaderEpoch +
                "): the log was truncated");
        }
        if (lastEpoch == LeaderEpochCache.UNDEFINED_EPOCH || position <= leader.log.logStartOffset())
        {
            return;
        }
        final LeaderEpochCache.EpochEndOffset answer = leader.epochCache.endOffsetFor(lastEpoch, end);
        if (answer.epoch() == LeaderEpochCache.UNDEFINED_EPOCH || answer.epoch() < lastEpoch ||
            answer.endOffset() < position)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "position " + position + " of " + tp +
                " (after a record of leader epoch " + lastEpoch + ") is not in the log of its leader (host " +
                leader.hostId + ", epoch " + leaderEpoch + "), whose epoch " + answer.epoch() + " ends at " +
                answer.endOffset() + ": the log diverged (an unclean election)");
        }
    }

    @Override
    public void close()
    {
        if (null != reader)
        {
            reader.close();
            reader = null;
            replica = null;
        }
    }
}
