package io.tidemark.client;

import io.tidemark.replication.PartitionState;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicaHost;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.DirectBuffer;

/**
 * The producer's view of the cluster: produce to a partition's leader, find the host an attempt went to and whether
 * that host has gone since (killed, stopped or restarted: its queued requests will never be answered), and the
 * partitions of a topic. Faults are injected here in tests ({@link ProduceFaults}). Thread-safe.
 */
final class ClusterChannel
{
    private final ReplicationCluster cluster;
    private final ProduceFaults faults;

    ClusterChannel(final ReplicationCluster cluster, final ProduceFaults faults)
    {
        this.cluster = cluster;
        this.faults = faults;
    }

    ReplicationCluster cluster()
    {
        return cluster;
    }

    int register(final ProduceListener listener)
    {
        return cluster.sessions().register((tp, correlationId, baseOffset, error) ->
        {
            if (!faults.dropResponse(tp, correlationId, error))
            {
                listener.onComplete(tp, correlationId, baseOffset, error);
            }
        });
    }

    void unregister(final int session)
    {
        cluster.sessions().unregister(session);
    }

    ReplicationError send(final int session, final TopicPartition tp, final long correlationId, final int acks,
        final int timeoutMs, final long producerId, final short epoch, final int sequence, final int attempt,
        final DirectBuffer records, final int length)
    {
        if (faults.dropRequest(tp, correlationId, attempt, sequence))
        {
            return ReplicationError.NONE;
        }
        return cluster.produceRecords(session, tp, correlationId, acks, timeoutMs, producerId, epoch, sequence,
            records, 0, length);
    }

    /** @return the host leading the partition now, or null without a running leader. */
    ReplicaHost leaderHost(final int partitionId)
    {
        final PartitionState state = cluster.controller().partition(partitionId);
        return null == state || state.leader() == PartitionState.NO_LEADER ? null : cluster.host(state.leader());
    }

    /** @return whether the partition has a leader right now (the partitioners prefer such partitions). */
    boolean hasLeader(final int partitionId)
    {
        final PartitionState state = cluster.controller().partition(partitionId);
        return null != state && state.leader() != PartitionState.NO_LEADER;
    }

    /** @return whether {@code host} is no longer running (its queued requests will never be answered). */
    boolean isGone(final ReplicaHost host)
    {
        return null != host && cluster.host(host.hostId()) != host;
    }

    long allocateProducerId()
    {
        return cluster.allocateProducerId();
    }
}
