package io.tidemark.client.remote;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.protocol.PartitionState;
import org.apache.curator.framework.CuratorFramework;

import java.util.List;
import java.util.Map;

/**
 * Topic creation from a client: the request checked here against the bounds the controller published (the
 * controller checks again), written as a request znode, and waited for until every partition has a leader or the
 * controller refuses it.
 */
final class TopicAdmin
{
    private final CuratorFramework zk;
    private final String root;
    private final ClusterMetadata metadata;

    TopicAdmin(final CuratorFramework zk, final String root, final ClusterMetadata metadata)
    {
        this.zk = zk;
        this.root = root;
        this.metadata = metadata;
    }

    /** @return as {@link TidemarkClient#createTopic}. */
    List<PartitionState> createTopic(final String topic, final int partitionCount, final int replicationFactor,
        final long timeoutMs)
    {
        if (null == topic || !topic.matches("[A-Za-z0-9._-]{1,200}"))
        {
            throw new IllegalArgumentException("topic names are 1 to 200 of A-Z a-z 0-9 . _ -: '" + topic + "'");
        }
        if (partitionCount < 1 || replicationFactor < 1)
        {
            throw new IllegalArgumentException("need at least one partition and one replica");
        }
        if (timeoutMs < 1 || timeoutMs > ReplicationContext.MAX_TIMEOUT_MS)
        {
            throw new IllegalArgumentException("timeout must be in [1, " + ReplicationContext.MAX_TIMEOUT_MS +
                "] ms: " + timeoutMs);
        }
        if (metadata.topicExists(topic))
        {
            throw new IllegalArgumentException("topic exists: " + topic);
        }
        checkBounds(partitionCount, replicationFactor);
        final String path = ClusterZNodes.requestTopic(zk, root, topic, partitionCount, replicationFactor);
        final long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline)
        {
            final List<PartitionState> states = metadata.partitions(topic);
            if (states.size() == partitionCount &&
                states.stream().allMatch((s) -> s.leader() != PartitionState.NO_LEADER))
            {
                return states;
            }
            final String refusal = ClusterZNodes.takeRefusal(zk, path);
            if (null != refusal)
            {
                throw new IllegalArgumentException("the controller refused topic " + topic + ": " + refusal);
            }
            sleep(20);
        }
        throw new IllegalStateException("topic " + topic + " was not created within " + timeoutMs + " ms (is a " +
            "controller running?)");
    }

    /**
     * The bounds the controller enforces, checked here first (the controller checks again): at most
     * {@code topic.partitions.max} partitions, and no registered host above {@code host.replicas.max} replicas once
     * the topic's are spread over them.
     */
    private void checkBounds(final int partitionCount, final int replicationFactor)
    {
        final int[] bounds = metadata.limits();
        if (partitionCount > bounds[0])
        {
            throw new IllegalArgumentException(partitionCount + " partitions is more than the cluster's " +
                ReplicationContext.TOPIC_PARTITIONS_MAX + "=" + bounds[0]);
        }
        final int hostCount = metadata.hostIds().size();
        if (hostCount > 0 && replicationFactor <= hostCount)
        {
            final Map<Integer, Integer> held = metadata.replicasPerHost();
            final long added = (long)partitionCount * replicationFactor;
            final long most = held.values().stream().mapToLong(Integer::longValue).max().orElse(0) +
                (added + hostCount - 1) / hostCount;
            if (most > bounds[1])
            {
                throw new IllegalArgumentException("the topic's " + added + " replicas would put more than the " +
                    "cluster's " + ReplicationContext.HOST_REPLICAS_MAX + "=" + bounds[1] + " replicas on a host");
            }
        }
    }

    private static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }
}
