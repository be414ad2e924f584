package io.tidemark.client;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;

import java.util.List;

/**
 * What a {@link Producer} needs of a cluster: its topics' partitions, the leader of each, a way to send produce
 * requests to that leader and to hear their outcomes, and producer ids. {@link #of(ReplicationCluster)} connects to
 * a cluster in this JVM; module {@code host} connects to hosts in other processes over Aeron and ZooKeeper.
 * Implementations are thread-safe.
 */
public interface ClusterConnection
{
    /** {@link #leaderInstance} of a partition without a leader. */
    long NO_LEADER = -1;

    /**
     * Register a listener for the outcomes of produce requests sent under the returned session.
     *
     * @return the session id.
     */
    int register(ProduceListener listener);

    /** Forget a session: outcomes of its requests still in flight are dropped. */
    void unregister(int session);

    /**
     * Send a run of records (encoded with {@code RecordEncoder}) to the partition's current leader. Non-blocking:
     * the outcome arrives at the session's listener (never for acks=0).
     *
     * @return NONE when sent; a retriable error (LEADER_NOT_AVAILABLE, BACK_PRESSURED, NOT_LEADER) when it was not
     *         sent, so certainly not appended; INVALID_RECORDS when it can never be sent.
     */
    ReplicationError send(int session, TopicPartition tp, int partitionId, long correlationId, int acks,
        int timeoutMs, long producerId, short producerEpoch, int baseSequence, DirectBuffer records, int length);

    /**
     * From now until {@link #flushSends}, this thread's {@link #send}s may be gathered into fewer requests (one per
     * leader host) that leave at the flush: a producer gathers over one duty cycle. A gathered send returns NONE;
     * should its request then be refused, its outcome is that (retriable) error, at the session's listener, like
     * any answer. A connection that sends at once ignores it (the default).
     */
    default void gatherSends()
    {
    }

    /** Send what this thread gathered since {@link #gatherSends}, and send at once again. */
    default void flushSends()
    {
    }

    /**
     * @return an id of the host instance (host id and incarnation) leading the partition now, or {@link #NO_LEADER}.
     */
    long leaderInstance(int partitionId);

    /**
     * @return whether that host instance is gone (stopped, killed, restarted): requests sent to it will never be
     *         answered.
     */
    boolean isGone(long leaderInstance);

    /** @return a topic's partitions by partition number; empty for an unknown topic. */
    List<PartitionState> partitions(String topic);

    /** @return a producer id never handed out before in this cluster. */
    long allocateProducerId();

    /** @return the largest run of records one produce request may carry, in bytes. */
    int maxRequestBytes();

    /** @return the clock of the cluster's timeouts. */
    EpochClock epochClock();

    /**
     * @return what a thread waiting on the cluster runs between checks: by default it yields; a cluster whose agents
     *         are invoked by the caller (INVOKER threading) invokes them.
     */
    default Runnable waitAction()
    {
        return Thread::yield;
    }

    /**
     * @param cluster a cluster of this JVM.
     * @return a connection to it.
     */
    static ClusterConnection of(final ReplicationCluster cluster)
    {
        return new InProcessConnection(cluster);
    }
}
