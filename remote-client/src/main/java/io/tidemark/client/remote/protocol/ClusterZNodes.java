package io.tidemark.client.remote.protocol;

import io.tidemark.zookeeper.ZNodes;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.apache.curator.framework.CuratorFramework;

import java.nio.charset.StandardCharsets;

/**
 * The children of a cluster's ZooKeeper root that hosts write and remote clients read, beside those of the
 * zookeeper module ({@code partitions}, {@code hosts}, {@code producer-ids}, {@code consumer-offsets}): one name
 * each, so that the host's controller and the client cannot disagree about where a topic request or a limit lives.
 * <pre>
 *  cluster-id                    the cluster's name (the first host writes it; every host and client checks it)
 *  topics/&lt;topic&gt;                 firstId:count, the topic's partition ids (the controller)
 *  admin/create-topic/&lt;topic&gt;     partitions:factor, a client's request; "refused: why" once refused
 *  limits                        properties: topic.partitions.max, host.replicas.max (the controller)
 *  kafka-brokers/&lt;hostId&gt;        host:port, a host's advertised Kafka listener
 * </pre>
 */
public final class ClusterZNodes
{
    /** Child of the root holding the cluster's name. */
    public static final String CLUSTER_ID = "cluster-id";
    /** Child of the root where the controller records each topic's partition ids: data {@code firstId:count}. */
    public static final String TOPICS = "topics";
    /** Child of the root where clients ask for topics: one znode per topic, data {@code partitions:factor}. */
    public static final String CREATE_TOPIC = "admin/create-topic";
    /** Prefix of a request's data once the controller refused it. */
    public static final String REFUSED = "refused: ";
    /** Child of the root where the controller publishes the cluster's bounds for clients. */
    public static final String LIMITS = "limits";
    /** Child of the root holding each host's advertised Kafka listener. */
    public static final String KAFKA_BROKERS = "kafka-brokers";

    private ClusterZNodes()
    {
    }

    /**
     * A client's side of topic creation: write the request znode for {@code topic} (a request there already, from
     * anyone, is left as it is: the caller waits for it).
     *
     * @return the request's znode, to watch with {@link #takeRefusal}.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be written.
     */
    public static String requestTopic(final CuratorFramework zk, final String root, final String topic,
        final int partitionCount, final int replicationFactor)
    {
        final String path = root + "/" + CREATE_TOPIC + "/" + topic;
        try
        {
            ZNodes.createIfAbsent(zk, path,
                (partitionCount + ":" + replicationFactor).getBytes(StandardCharsets.UTF_8));
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot request topic " + topic + " at " + path, ex);
        }
        return path;
    }

    /**
     * @return the controller's reason when it refused the topic request at {@code path} (the request is then
     *         removed, so that it may be asked again), or null while it is pending or once carried out and removed.
     */
    public static String takeRefusal(final CuratorFramework zk, final String path)
    {
        final String data;
        try
        {
            data = new String(zk.getData().forPath(path), StandardCharsets.UTF_8);
        }
        catch (final Exception ex)
        {
            return null; // carried out and removed
        }
        if (!data.startsWith(REFUSED))
        {
            return null;
        }
        try
        {
            zk.delete().quietly().forPath(path);
        }
        catch (final Exception ignore)
        {
            // another client cleared it
        }
        return data.substring(REFUSED.length());
    }
}
