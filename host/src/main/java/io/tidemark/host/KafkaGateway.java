package io.tidemark.host;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.kafka.ClusterMetadata;
import io.tidemark.kafka.GroupCoordinator;
import io.tidemark.kafka.GroupOffsetStore;
import io.tidemark.kafka.KafkaBroker;
import io.tidemark.kafka.KafkaContext;
import io.tidemark.kafka.KafkaListener;
import io.tidemark.kafka.TopicAdmin;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.replication.ProducerSessions;
import io.tidemark.replication.ReplicaNode;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperCounters;
import io.tidemark.zookeeper.ZooKeeperGroupOffsets;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.CreateMode;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;

/**
 * A host's Kafka listener ({@code kafka.listener} in its configuration) and what it needs from the cluster: the
 * partition states and the other hosts' listeners, from ZooKeeper (a Curator cache under the root; each host
 * registers its advertised listener as an ephemeral {@code <root>/kafka-brokers/<id>}); topic creation through the
 * controller's request znodes; producer ids from the cluster's counter; and consumer groups, coordinated by the host
 * that runs the controller, with committed offsets in ZooKeeper where {@code TidemarkClient.commitOffset} keeps
 * them ({@code <root>/consumer-offsets/<group>/<topic>-<partition>}: the offset, then the leader epoch on a second
 * line), so Kafka and Tidemark consumers of one group share them. Thread-safe.
 */
final class KafkaGateway implements AutoCloseable
{

    private final CuratorFramework zk;
    private final String root;
    private final String clusterId;
    private final int hostId;
    private final IntSupplier controllerHost;
    private final CuratorCache cache;
    private final Map<Integer, PartitionState> partitions = new ConcurrentHashMap<>();
    private final Map<Integer, KafkaBroker> brokers = new ConcurrentHashMap<>();
    private final Map<Integer, Boolean> hosts = new ConcurrentHashMap<>();
    private final ReplicationContext replication;
    private final KafkaListener listener;
    private final System.Logger logger = System.getLogger(KafkaGateway.class.getName());

    private KafkaGateway(final KafkaContext ctx, final CuratorFramework zk, final String root, final String clusterId,
        final ReplicaNode node, final ProducerSessions sessions, final IntSupplier controllerHost,
        final ReplicationContext replication, final ErrorHandler errorHandler)
    {
        this.zk = zk;
        this.root = root;
        this.clusterId = clusterId;
        this.hostId = node.hostId();
        this.controllerHost = controllerHost;
        this.replication = replication;
        this.cache = CuratorCache.build(zk, root);
        // the cache fills in the background: until it has, clients see no topics and ask again
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreatesAndChanges((before, data) -> onNode(data, true))
            .forDeletes((data) -> onNode(data, false))
            .build());
        cache.start();
        try
        {
            final Metadata metadata = new Metadata();
            final GroupCoordinator groups = new GroupCoordinator(ctx, new ZooKeeperOffsets(), false);
            this.listener = KafkaListener.start(ctx, hostId, metadata, node::leaderPartitions, sessions, groups,
                new Admin(), errorHandler);
            final KafkaBroker advertised = listener.advertised();
            final String path = root + "/" + ClusterZNodes.KAFKA_BROKERS + "/" + hostId;
            try
            {
                zk.delete().quietly().forPath(path);
                zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path,
                    (advertised.host() + ":" + advertised.port()).getBytes(StandardCharsets.UTF_8));
            }
            catch (final Exception ex)
            {
                listener.close();
                throw new ZooKeeperStoreException("cannot register the Kafka listener at " + path, ex);
            }
        }
        catch (final RuntimeException ex)
        {
            cache.close();
            throw ex;
        }
    }

    static KafkaGateway start(final KafkaContext ctx, final CuratorFramework zk, final String root,
        final String clusterId, final ReplicaNode node, final ProducerSessions sessions,
        final IntSupplier controllerHost, final ReplicationContext replication, final ErrorHandler errorHandler)
    {
        return new KafkaGateway(ctx, zk, root, clusterId, node, sessions, controllerHost, replication,
            errorHandler);
    }

    /** @return the listener. */
    KafkaListener listener()
    {
        return listener;
    }

    /** Register this host's listener again after a lost ZooKeeper session. */
    void reRegister()
    {
        final KafkaBroker advertised = listener.advertised();
        final String path = root + "/" + ClusterZNodes.KAFKA_BROKERS + "/" + hostId;
        try
        {
            if (null == zk.checkExists().forPath(path))
            {
                zk.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL).forPath(path,
                    (advertised.host() + ":" + advertised.port()).getBytes(StandardCharsets.UTF_8));
            }
        }
        catch (final Exception ex)
        {
            logger.log(System.Logger.Level.ERROR, "cannot register the Kafka listener again at " + path, ex);
        }
    }

    private void onNode(final ChildData node, final boolean present)
    {
        final String path = node.getPath();
        final String partitionsDir = root + "/" + ZooKeeperControllerStore.PARTITIONS + "/";
        final String brokersDir = root + "/" + ClusterZNodes.KAFKA_BROKERS + "/";
        final String hostsDir = root + "/" + ZooKeeperHostLiveness.HOSTS + "/";
        try
        {
            if (path.startsWith(partitionsDir) && path.indexOf('/', partitionsDir.length()) < 0)
            {
                final int id = Integer.parseInt(path.substring(partitionsDir.length()));
                if (present && null != node.getData() && node.getData().length > 0)
                {
                    partitions.put(id, PartitionStateCodec.decode(ByteBuffer.wrap(node.getData())));
                }
                else if (!present)
                {
                    partitions.remove(id);
                }
            }
            else if (path.startsWith(brokersDir) && path.indexOf('/', brokersDir.length()) < 0)
            {
                final int id = Integer.parseInt(path.substring(brokersDir.length()));
                if (present && null != node.getData())
                {
                    final String endpoint = new String(node.getData(), StandardCharsets.UTF_8).trim();
                    final int colon = endpoint.lastIndexOf(':');
                    brokers.put(id, new KafkaBroker(id, endpoint.substring(0, colon),
                        Integer.parseInt(endpoint.substring(colon + 1))));
                }
                else if (!present)
                {
                    brokers.remove(id);
                }
            }
            else if (path.startsWith(hostsDir) && path.indexOf('/', hostsDir.length()) < 0)
            {
                final int id = Integer.parseInt(path.substring(hostsDir.length()));
                if (present)
                {
                    hosts.put(id, Boolean.TRUE);
                }
                else
                {
                    hosts.remove(id);
                }
            }
        }
        catch (final RuntimeException ex)
        {
            logger.log(System.Logger.Level.WARNING, "ignoring unreadable znode " + path + ": " + ex);
        }
    }

    @Override
    public void close()
    {
        CloseHelper.quietClose(listener);
        try
        {
            zk.delete().quietly().forPath(root + "/" + ClusterZNodes.KAFKA_BROKERS + "/" + hostId);
        }
        catch (final Exception ignore)
        {
            // the session ends with the host: the ephemeral node goes with it
        }
        CloseHelper.quietClose(cache);
    }

    /** The cluster as ZooKeeper holds it. */
    private final class Metadata implements ClusterMetadata
    {
        @Override
        public String clusterId()
        {
            return clusterId;
        }

        @Override
        public List<KafkaBroker> brokers()
        {
            final List<KafkaBroker> live = new ArrayList<>();
            for (final KafkaBroker broker : brokers.values())
            {
                if (hosts.containsKey(broker.id()))
                {
                    live.add(broker);
                }
            }
            live.sort(java.util.Comparator.comparingInt(KafkaBroker::id));
            return live;
        }

        @Override
        public int controllerId()
        {
            // Admin sends CreateTopics to the controller; any host can carry it out (a request znode), so while this
            // host has not heard who the controller is, it names the lowest live broker rather than none
            final int controller = controllerHost.getAsInt();
            final List<KafkaBroker> live = brokers();
            for (final KafkaBroker broker : live)
            {
                if (broker.id() == controller)
                {
                    return controller;
                }
            }
            return live.isEmpty() ? -1 : live.get(0).id();
        }

        @Override
        public int coordinatorId()
        {
            final int controller = controllerHost.getAsInt();
            final List<KafkaBroker> live = brokers();
            for (final KafkaBroker broker : live)
            {
                if (broker.id() == controller)
                {
                    return controller;
                }
            }
            return -1;
        }

        @Override
        public Collection<PartitionState> partitions()
        {
            return partitions.values();
        }

        @Override
        public Map<String, String> topicConfigs()
        {
            return ClusterMetadata.topicConfigsOf(replication);
        }
    }

    /** Topic creation by the controller's request znodes (as TidemarkClient.createTopic), producer ids. */
    private final class Admin implements TopicAdmin
    {
        @Override
        public void createTopic(final String topic, final int partitionCount, final int replicationFactor,
            final long timeoutMs)
        {
            final String path = ClusterZNodes.requestTopic(zk, root, topic, partitionCount, replicationFactor);
            final long deadline = System.currentTimeMillis() + timeoutMs;
            while (System.currentTimeMillis() < deadline)
            {
                int led = 0;
                for (final PartitionState state : partitions.values())
                {
                    if (state.topicPartition().topic().equals(topic) && state.leader() != PartitionState.NO_LEADER)
                    {
                        led++;
                    }
                }
                if (led == partitionCount)
                {
                    return;
                }
                final String refusal = ClusterZNodes.takeRefusal(zk, path);
                if (null != refusal)
                {
                    throw new IllegalArgumentException("the controller refused topic " + topic + ": " + refusal);
                }
                try
                {
                    Thread.sleep(20);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", ex);
                }
            }
            throw new IllegalStateException("topic " + topic + " was not created within " + timeoutMs + " ms");
        }

        @Override
        public int hostCount()
        {
            return hosts.size();
        }

        @Override
        public long allocateProducerId()
        {
            return ZooKeeperCounters.incrementAndGet(zk, root + "/" + ZooKeeperControllerStore.PRODUCER_IDS) - 1;
        }
    }

    /** Group offsets in ZooKeeper, where TidemarkClient keeps them. */
    private final class ZooKeeperOffsets implements GroupOffsetStore
    {
        private final ZooKeeperGroupOffsets offsets = new ZooKeeperGroupOffsets(zk, root);

        @Override
        public void commit(final String group, final TopicPartition partition, final long offset,
            final int leaderEpoch)
        {
            offsets.commit(group, partition, offset, leaderEpoch);
        }

        @Override
        public Committed fetch(final String group, final TopicPartition partition)
        {
            final ZooKeeperGroupOffsets.Committed committed = offsets.read(group, partition);
            return null == committed ? null : new Committed(committed.offset(), committed.leaderEpoch());
        }
    }
}
