package io.tidemark.client;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.DirectBuffer;

import java.util.List;

/**
 * The producer's view of the cluster: a {@link ClusterConnection} and what the producer asks of it. Tests inject
 * faults by decorating the connection they give the producer. Thread-safe.
 */
final class ClusterChannel
{
    private final ClusterConnection connection;

    ClusterChannel(final ClusterConnection connection)
    {
        this.connection = connection;
    }

    int register(final ProduceListener listener)
    {
        return connection.register(listener);
    }

    void unregister(final int session)
    {
        connection.unregister(session);
    }

    ReplicationError send(final int session, final TopicPartition tp, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId, final short epoch,
        final int sequence, final DirectBuffer records, final int length)
    {
        return connection.send(session, tp, partitionId, correlationId, acks, timeoutMs, producerId, epoch, sequence,
            records, length);
    }

    /** Gather this thread's sends until {@link #flushSends} (one duty cycle of the producer). */
    void gatherSends()
    {
        connection.gatherSends();
    }

    /** Send what was gathered. */
    void flushSends()
    {
        connection.flushSends();
    }

    /** @return the host instance leading the partition now, or {@link ClusterConnection#NO_LEADER}. */
    long leaderInstance(final int partitionId)
    {
        return connection.leaderInstance(partitionId);
    }

    /** @return whether the partition has a leader right now (the partitioners prefer such partitions). */
    boolean hasLeader(final int partitionId)
    {
        return connection.leaderInstance(partitionId) != ClusterConnection.NO_LEADER;
    }

    /** @return whether that leader instance is gone (its queued requests will never be answered). */
    boolean isGone(final long leaderInstance)
    {
        return connection.isGone(leaderInstance);
    }

    List<PartitionState> partitions(final String topic)
    {
        return connection.partitions(topic);
    }

    long allocateProducerId()
    {
        return connection.allocateProducerId();
    }
}
