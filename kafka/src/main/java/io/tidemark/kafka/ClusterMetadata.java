package io.tidemark.kafka;

import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.protocol.PartitionState;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a Kafka listener tells clients about the cluster: the live brokers (hosts with a Kafka listener), every
 * partition's leader, epoch, replicas and ISR, and who coordinates consumer groups. An in-process cluster answers
 * from its controller; a host process from the partition state and registrations in ZooKeeper.
 * <p>
 * Implementations are thread-safe and answer from memory (no blocking I/O): the listener calls them on its agent
 * thread.
 */
public interface ClusterMetadata
{
    /** @return the cluster's id, as clients see it in metadata responses. */
    String clusterId();

    /** @return the live brokers. */
    List<KafkaBroker> brokers();

    /** @return the broker id of the controller, or -1 when none is known. */
    int controllerId();

    /** @return the broker id coordinating consumer groups (one for the cluster), or -1 when none is live. */
    int coordinatorId();

    /** @return every partition's latest known state. */
    Collection<PartitionState> partitions();

    /** @return configuration of topics, as Kafka names it, for DescribeConfigs (read-only). */
    Map<String, String> topicConfigs();

    /**
     * @param replication the cluster's replication settings.
     * @return the topic configuration a Tidemark cluster with these settings has, as Kafka names it: what every
     *         implementation's {@link #topicConfigs()} answers.
     */
    static Map<String, String> topicConfigsOf(final ReplicationContext replication)
    {
        final Map<String, String> configs = new LinkedHashMap<>();
        configs.put("cleanup.policy", "delete");
        configs.put("compression.type", "producer");
        configs.put("message.timestamp.type", "CreateTime");
        configs.put("min.insync.replicas", Integer.toString(replication.minInsyncReplicas()));
        configs.put("unclean.leader.election.enable", Boolean.toString(replication.uncleanLeaderElectionEnable()));
        configs.put("replica.lag.time.max.ms", Long.toString(replication.replicaLagTimeMaxMs()));
        return configs;
    }
}
