package io.tidemark.client;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicaHost;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;

import java.util.List;

/**
 * A {@link ClusterConnection} to a {@link ReplicationCluster} of this JVM: requests go straight onto the leader's
 * produce queue. A leader instance is the host id in the top 16 bits and the incarnation below.
 */
final class InProcessConnection implements ClusterConnection
{
    /** Bytes of a produce request's header and framing that the leader's queue holds besides the records. */
    private static final int REQUEST_HEADER_ALLOWANCE = 64;

    private final ReplicationCluster cluster;

    InProcessConnection(final ReplicationCluster cluster)
    {
        this.cluster = cluster;
    }

    ReplicationCluster cluster()
    {
        return cluster;
    }

    @Override
    public int register(final ProduceListener listener)
    {
        return cluster.sessions().register(listener);
    }

    @Override
    public void unregister(final int session)
    {
        cluster.sessions().unregister(session);
    }

    @Override
    public ReplicationError send(final int session, final TopicPartition tp, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int length)
    {
        return cluster.produceRecords(session, partitionId, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, 0, length);
    }

    @Override
    public long leaderInstance(final int partitionId)
    {
        final PartitionState state = cluster.controller().partition(partitionId);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return NO_LEADER;
        }
        final ReplicaHost host = cluster.host(state.leader());
        return null == host ? NO_LEADER : instanceOf(host.hostId(), host.incarnation());
    }

    static long instanceOf(final int hostId, final long incarnation)
    {
        return ((long)hostId << 48) | (incarnation & 0xFFFF_FFFF_FFFFL);
    }

    @Override
    public boolean isGone(final long leaderInstance)
    {
        if (leaderInstance == NO_LEADER)
        {
            return false;
        }
        final ReplicaHost host = cluster.host((int)(leaderInstance >>> 48));
        return null == host || instanceOf(host.hostId(), host.incarnation()) != leaderInstance;
    }

    @Override
    public List<PartitionState> partitions(final String topic)
    {
        return cluster.partitions(topic);
    }

    @Override
    public long allocateProducerId()
    {
        return cluster.allocateProducerId();
    }

    @Override
    public int maxRequestBytes()
    {
        return cluster.context().produceRingBytes() / 8 - REQUEST_HEADER_ALLOWANCE;
    }

    @Override
    public Runnable waitAction()
    {
        return cluster.context().threadingMode() == ReplicationContext.ThreadingMode.INVOKER ?
            cluster::invokeAgents : Thread::yield;
    }

    @Override
    public EpochClock epochClock()
    {
        return cluster.context().epochClock();
    }
}
