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
 * One reader per thread; zero-copy records as {@link LogReader}.
 */
public final class PartitionReader implements AutoCloseable
{
    private final ReplicationCluster cluster;
    private final TopicPartition tp;
    private Replica replica;
    private LogReader reader;
    private long position;

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

    /** @param offset next offset to read. */
    public void seek(final long offset)
    {
        position = offset;
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

    /** @return the high watermark of the current leader, or -1 without one. */
    public long highWatermark()
    {
        final Replica leader = cluster.leaderReplica(tp);
        return null == leader ? -1 : leader.highWatermark.get();
    }

    /**
     * Deliver committed records from the current position.
     *
     * @return records delivered; 0 when nothing committed is new, or there is no leader right now.
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
            if (leader != replica || null == reader)
            {
                close();
                reader = leader.log.openReader();
                replica = leader;
                reader.seek(Math.max(position, leader.log.logStartOffset()));
            }
            final int delivered = reader.poll(handler, leader.highWatermark.get(), maxRecords);
            position = reader.position();
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
