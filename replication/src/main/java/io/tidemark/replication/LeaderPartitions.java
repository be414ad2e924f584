package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.ProduceMessages;
import io.tidemark.store.LogReader;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.DirectBuffer;

/**
 * The partitions one replica host leads, as a server in front of the host sees them (the Kafka listener, a
 * gateway): produce onto a leader's queue, read its committed batches, and the offsets a client asks about (high
 * watermark, log start, log end, the latest offset a client may see, the end of a leader epoch). Every call answers
 * for this host only: a partition it does not lead (or has not yet taken up the role of leading) answers
 * {@code NOT_LEADER} or -1, and the caller points its client at the leader the metadata names.
 * <p>
 * Thread-safe: every method may be called from any thread; the replica's state is read through its volatile
 * fields.
 */
public final class LeaderPartitions
{
    /** Answer of {@link #latestOffset} while the partition has no readable latest offset here. */
    public static final long NO_OFFSET = -1;

    private final ReplicaHost host;

    LeaderPartitions(final ReplicaHost host)
    {
        this.host = host;
    }

    /** @return the host's id. */
    public int hostId()
    {
        return host.hostId();
    }

    private LeaderState leader(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? null : replica.leaderState;
    }

    /**
     * @param tp a topic partition.
     * @return its partition id when this host has a replica of it, else -1. Allocation-free.
     */
    public int partitionIdOf(final TopicPartition tp)
    {
        for (final Replica replica : host.replicas())
        {
            if (replica.topicPartition.equals(tp))
            {
                return replica.partitionId;
            }
        }
        return -1;
    }

    /** @return whether this host leads the partition and has taken up the role. */
    public boolean isLeading(final int partitionId)
    {
        return null != leader(partitionId);
    }

    /** @return the leader epoch this host's replica leads or follows, or -1 without a replica. */
    public int leaderEpoch(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? -1 : replica.leaderEpoch;
    }

    /**
     * Queue a run of records (encoded with {@code RecordEncoder}) for the leader's agent to append as one batch.
     * Non-blocking: the outcome arrives at the session's {@link ProduceListener} (never for acks=0).
     *
     * @return NONE when queued; NOT_LEADER when this host does not lead the partition; BACK_PRESSURED when the
     *         queue is full; INVALID_RECORDS when the request can never fit the queue or acks is out of range.
     */
    public ReplicationError produce(final int session, final int partitionId, final long correlationId,
        final int acks, final int timeoutMs, final long producerId, final short producerEpoch,
        final int baseSequence, final DirectBuffer records, final int offset, final int length)
    {
        final Replica replica = host.replica(partitionId);
        if (null == replica || null == replica.leaderState)
        {
            return ReplicationError.NOT_LEADER;
        }
        final PartitionState state = replica.state;
        if (null == state || acks < -1 || acks > state.assignedReplicas().length)
        {
            return ReplicationError.INVALID_RECORDS;
        }
        return ProduceMessages.enqueue(replica.produceRing, session, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, offset, length);
    }

    /**
     * Wake the leader's agent thread if it may be parked, after queuing one or more produce requests with
     * {@link #produce}: a server that queues the partitions of a request one by one calls this once for the whole
     * request. Without it a queued request waits until the thread's idle strategy next wakes it (up to 1 ms on a
     * host of the shared profile, more once the host was quiet). Cheap when the thread is busy (a volatile read).
     */
    public void wakeUp()
    {
        host.wakeUp();
    }

    /** @return the largest run of encoded records one produce request may carry (the queue's message limit). */
    public int maxProduceLength(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? 0 : replica.produceRing.maxMsgLength() - ProduceMessages.HEADER_LENGTH;
    }

    /**
     * Open a reader on the leader's log; read only below {@link #highWatermark}. The reader fails with
     * {@code CLOSED} once the log closes (the host stopped, or the replica moved).
     *
     * @return a reader, or null when this host does not lead the partition.
     */
    public LogReader openReader(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica || null == replica.leaderState ? null : replica.log.openReader();
    }

    /** @return the high watermark of a partition led here, or -1. */
    public long highWatermark(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica || null == replica.leaderState ? -1 : replica.highWatermark.get();
    }

    /**
     * @return the latest offset a client may see (the high watermark), or {@link #NO_OFFSET} while this host does
     *         not lead the partition or is a new leader whose high watermark has not reached its epoch start (so
     *         that offsets seen by clients never go backwards).
     */
    public long latestOffset(final int partitionId)
    {
        final LeaderState leader = leader(partitionId);
        if (null == leader)
        {
            return NO_OFFSET;
        }
        final long highWatermark = leader.highWatermark();
        return highWatermark < leader.epochStartOffset ? NO_OFFSET : highWatermark;
    }

    /** @return the log start offset of a partition led here, or -1. */
    public long logStartOffset(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica || null == replica.leaderState ? -1 : replica.log.logStartOffset();
    }

    /** @return the log end offset of a partition led here, or -1. */
    public long logEndOffset(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica || null == replica.leaderState ? -1 : replica.log.logEndOffset();
    }

    /**
     * @return the first committed offset whose record has a timestamp at or above {@code timestamp} (by the
     *         leader's time index), or -1 when there is none or this host does not lead the partition.
     */
    public long offsetForTimestamp(final int partitionId, final long timestamp)
    {
        final Replica replica = host.replica(partitionId);
        if (null == replica || null == replica.leaderState)
        {
            return -1;
        }
        final long offset = replica.log.offsetForTimestamp(timestamp);
        return offset >= 0 && offset < replica.highWatermark.get() ? offset : -1;
    }

    /**
     * Where a leader epoch ends in the leader's log (KIP-101/320): the largest epoch at or below
     * {@code epoch} and the offset where the next one starts (the log end for the latest epoch).
     *
     * @param answer receives the epoch in {@code answer[0]} (-1 when none is known) and its end offset in
     *               {@code answer[1]} (-1 when none).
     * @return false when this host does not lead the partition (nothing written).
     */
    public boolean endOffsetForEpoch(final int partitionId, final int epoch, final long[] answer)
    {
        final Replica replica = host.replica(partitionId);
        if (null == replica || null == replica.leaderState)
        {
            return false;
        }
        final LeaderEpochCache.EpochEndOffset end = replica.epochCache.endOffsetFor(epoch, replica.log.logEndOffset());
        answer[0] = end.epoch();
        answer[1] = end.endOffset();
        return true;
    }
}
