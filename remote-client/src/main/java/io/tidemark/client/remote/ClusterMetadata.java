package io.tidemark.client.remote;

import io.tidemark.client.ClusterConnection;
import io.tidemark.client.ProducerErrorCode;
import io.tidemark.client.ProducerException;
import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.replication.RateLimitedLog;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.agrona.CloseHelper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

import java.io.IOException;
import java.io.StringReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The cluster as this client sees it in ZooKeeper: the partitions (leader, epoch, ISR) and those whose znode is
 * damaged, each topic's partition ids as the controller recorded them, the topics being created, the bounds the
 * controller published, and the registered hosts (endpoint and incarnation). A cache of the root fed on Curator's
 * thread; read by any thread. A partition's state by id is an array read ({@link #partition}): the producer's path
 * does not allocate.
 */
final class ClusterMetadata implements AutoCloseable
{
    private static final int DEFAULT_TOPIC_PARTITIONS_MAX = new ReplicationContext().topicPartitionsMax();
    private static final int DEFAULT_HOST_REPLICAS_MAX = new ReplicationContext().hostReplicasMax();
    private static final int MAX_PARTITION_ID = 1 << 24;

    /** A host as registered in ZooKeeper. */
    record HostInfo(long incarnation, String endpoint)
    {
    }

    private final CuratorFramework zk;
    private final String root;
    private final String partitionsDir;
    private final String hostsDir;
    private final String topicsDir;
    private final String requestsDir;
    private final CuratorCache cache;
    private final Map<Integer, PartitionState> partitions = new ConcurrentHashMap<>();
    /** Partitions whose znode could not be read, with why: their topic is refused. */
    private final Map<Integer, String> damaged = new ConcurrentHashMap<>();
    /** Each topic's partition ids as the controller recorded them: first id and count. */
    private final Map<String, int[]> topicIds = new ConcurrentHashMap<>();
    /** Topics whose creation request waits for the controller (not refused): their partitions are being created. */
    private final Set<String> creating = ConcurrentHashMap.newKeySet();
    private final Map<Integer, HostInfo> hosts = new ConcurrentHashMap<>();
    /** The same hosts by id, for the lookups of the producer's every duty cycle: no hashing, no boxing. */
    private final AtomicReferenceArray<HostInfo> hostsById = new AtomicReferenceArray<>(PartitionState.MAX_HOSTS);
    /** The bounds the controller published: topic.partitions.max, host.replicas.max. */
    private volatile int[] limits = { DEFAULT_TOPIC_PARTITIONS_MAX, DEFAULT_HOST_REPLICAS_MAX };
    /** The partitions by id, rebuilt from {@link #partitions} on a change (rare), so that lookups do not box. */
    private volatile PartitionState[] partitionsById = new PartitionState[0];
    private final RateLimitedLog remoteLog = new RateLimitedLog(System.getLogger(TidemarkClient.class.getName()));

    /**
     * Read the cluster under {@code root} and keep following it.
     *
     * @param initTimeoutMs how long the first read may take.
     * @throws ZooKeeperStoreException when it is not read in time, or the thread is interrupted.
     */
    ClusterMetadata(final CuratorFramework zk, final String root, final long initTimeoutMs)
    {
        this.zk = zk;
        this.root = root;
        this.partitionsDir = root + "/" + ZooKeeperControllerStore.PARTITIONS + "/";
        this.hostsDir = root + "/" + ZooKeeperHostLiveness.HOSTS + "/";
        this.topicsDir = root + "/" + ClusterZNodes.TOPICS + "/";
        this.requestsDir = root + "/" + ClusterZNodes.CREATE_TOPIC + "/";
        this.cache = CuratorCache.build(zk, root);
        final CountDownLatch initialized = new CountDownLatch(1);
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreatesAndChanges((before, node) -> onNode(node, true))
            .forDeletes((node) -> onNode(node, false))
            .forInitialized(initialized::countDown)
            .build());
        cache.start();
        try
        {
            if (!initialized.await(initTimeoutMs, TimeUnit.MILLISECONDS))
            {
                throw new ZooKeeperStoreException("cannot read the cluster state under " + root, null);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            CloseHelper.quietClose(cache);
            throw new ZooKeeperStoreException("interrupted while connecting", ex);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(cache);
            throw ex;
        }
    }

    private void onNode(final ChildData node, final boolean present)
    {
        final String path = node.getPath();
        try
        {
            if (isChild(path, requestsDir))
            {
                onTopicRequest(path.substring(requestsDir.length()), present, node.getData());
            }
            else if (isChild(path, partitionsDir))
            {
                onPartition(path, Integer.parseInt(path.substring(partitionsDir.length())), present, node);
            }
            else if (isChild(path, topicsDir))
            {
                final String topic = path.substring(topicsDir.length());
                if (present && null != node.getData())
                {
                    final String[] parts = new String(node.getData(), StandardCharsets.UTF_8).trim().split(":");
                    topicIds.put(topic, new int[]{ Integer.parseInt(parts[0]), Integer.parseInt(parts[1]) });
                }
                else if (!present)
                {
                    topicIds.remove(topic);
                }
            }
            else if (path.equals(root + "/" + ClusterZNodes.LIMITS) && present && null != node.getData())
            {
                onLimits(node.getData());
            }
            else if (isChild(path, hostsDir))
            {
                onHost(Integer.parseInt(path.substring(hostsDir.length())), present, node.getData());
            }
        }
        catch (final RuntimeException | IOException ex)
        {
            remoteLog.log(System.Logger.Level.WARNING, "client unreadable-znode", "ignoring unreadable znode " + path +
                ": " + ex);
        }
    }

    private static boolean isChild(final String path, final String dir)
    {
        return path.startsWith(dir) && path.indexOf('/', dir.length()) < 0;
    }

    private void onTopicRequest(final String topic, final boolean present, final byte[] data)
    {
        if (present && (null == data || !new String(data, StandardCharsets.UTF_8).startsWith(ClusterZNodes.REFUSED)))
        {
            creating.add(topic);
        }
        else
        {
            creating.remove(topic);
        }
    }

    private void onPartition(final String path, final int id, final boolean present, final ChildData node)
    {
        if (id < 0 || id > MAX_PARTITION_ID)
        {
            throw new IllegalArgumentException("not a partition id");
        }
        if (present)
        {
            try
            {
                final ByteBuffer in = ByteBuffer.wrap(null == node.getData() ? new byte[0] : node.getData());
                final PartitionState decoded = PartitionStateCodec.decode(in);
                if (decoded.partitionId() != id || in.hasRemaining())
                {
                    throw new IllegalArgumentException("claims partition " + decoded.partitionId() +
                        (in.hasRemaining() ? ", with trailing bytes" : ""));
                }
                final PartitionState state = new PartitionState(decoded.partitionId(),
                    decoded.topicPartition(), decoded.assignedReplicas(), decoded.isr(), decoded.eligible(),
                    decoded.recovering(), decoded.leader(), decoded.leaderEpoch(), node.getStat().getVersion());
                damaged.remove(id);
                partitions.put(id, state);
            }
            catch (final RuntimeException ex)
            {
                // damaged: the partition's topic is refused (partitions(topic)) until it is repaired
                damaged.put(id, ex.getMessage());
                partitions.remove(id);
                remoteLog.log(System.Logger.Level.WARNING, "client damaged-partition", "partition state " +
                    path + " is damaged (" + ex.getMessage() + "): its topic is refused until it is repaired");
            }
        }
        else
        {
            damaged.remove(id);
            partitions.remove(id);
        }
        publishPartitions();
    }

    private void onLimits(final byte[] data) throws IOException
    {
        final Properties published = new Properties();
        published.load(new StringReader(new String(data, StandardCharsets.UTF_8)));
        limits = new int[]{
            Integer.parseInt(published.getProperty(ReplicationContext.TOPIC_PARTITIONS_MAX,
                Integer.toString(limits[0])).trim()),
            Integer.parseInt(published.getProperty(ReplicationContext.HOST_REPLICAS_MAX,
                Integer.toString(limits[1])).trim())};
    }

    private void onHost(final int id, final boolean present, final byte[] data)
    {
        if (id < 0 || id >= PartitionState.MAX_HOSTS)
        {
            throw new IllegalArgumentException("host id outside [0, " + PartitionState.MAX_HOSTS + ")");
        }
        final ZooKeeperHostLiveness.Registration registration = present ?
            ZooKeeperHostLiveness.Registration.parse(data) : null;
        if (null != registration)
        {
            final HostInfo info = new HostInfo(registration.incarnation(), registration.endpoint());
            hosts.put(id, info);
            hostsById.set(id, info);
        }
        else if (!present)
        {
            hosts.remove(id);
            hostsById.set(id, null);
        }
    }

    /** Rebuild the by-id array from the map (on a ZooKeeper change: rare), so that lookups do not box. */
    private synchronized void publishPartitions()
    {
        final int size = partitions.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        final PartitionState[] next = new PartitionState[size];
        partitions.forEach((id, state) -> next[id] = state);
        partitionsById = next;
    }

    /** @return the partition state last seen, or null; allocation-free (the producer's path). */
    PartitionState partition(final int partitionId)
    {
        final PartitionState[] current = partitionsById;
        return partitionId >= 0 && partitionId < current.length ? current[partitionId] : null;
    }

    /** @return the host as registered now, or null; allocation-free (the producer's path). */
    HostInfo host(final int hostId)
    {
        return hostId >= 0 && hostId < PartitionState.MAX_HOSTS ? hostsById.get(hostId) : null;
    }

    /** @return the ids of the registered hosts (a live view). */
    Set<Integer> hostIds()
    {
        return hosts.keySet();
    }

    /** @return the bounds the controller published: topic.partitions.max, host.replicas.max. */
    int[] limits()
    {
        return limits;
    }

    /** @return as {@link ClusterConnection#leaderInstance}. */
    long leaderInstance(final int partitionId)
    {
        final PartitionState state = partition(partitionId);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return ClusterConnection.NO_LEADER;
        }
        final HostInfo info = host(state.leader());
        return null == info ? ClusterConnection.NO_LEADER : instanceOf(state.leader(), info.incarnation());
    }

    private static long instanceOf(final int hostId, final long incarnation)
    {
        return ((long)hostId << 48) | (incarnation & 0xFFFF_FFFF_FFFFL);
    }

    /** @return as {@link ClusterConnection#isGone}. */
    boolean isGone(final long leaderInstance)
    {
        if (leaderInstance == ClusterConnection.NO_LEADER)
        {
            return false;
        }
        final int hostId = (int)(leaderInstance >>> 48);
        final HostInfo info = host(hostId);
        return null == info || instanceOf(hostId, info.incarnation()) != leaderInstance;
    }

    /**
     * @return as {@link ClusterConnection#partitions}.
     * @throws ProducerException DAMAGED_METADATA when a partition of the topic is damaged or missing.
     */
    List<PartitionState> partitions(final String topic)
    {
        final List<PartitionState> states = knownPartitions(topic);
        final String damage = damage(topic, states);
        if (null != damage)
        {
            if (inCreation(topic))
            {
                return List.of(); // not there yet: as for a topic that does not exist
            }
            throw new ProducerException(ProducerErrorCode.DAMAGED_METADATA, ReplicationError.NONE, null, false,
                "topic " + topic + " is refused: " + damage + " (repair: tidemark partition repair)");
        }
        return states;
    }

    /**
     * @return whether the topic's recorded partitions are only missing, none damaged, because they are being
     *         created: its creation request still waits, or the missing znodes exist in ZooKeeper and this client's
     *         view has not caught up with them (the controller records a topic's ids before it creates them and
     *         deletes the request after).
     */
    private boolean inCreation(final String topic)
    {
        final int[] ids = topicIds.get(topic);
        if (null == ids)
        {
            return false;
        }
        for (int id = ids[0]; id < ids[0] + ids[1]; id++)
        {
            if (damaged.containsKey(id))
            {
                return false;
            }
        }
        if (creating.contains(topic))
        {
            return true;
        }
        try
        {
            for (int id = ids[0]; id < ids[0] + ids[1]; id++)
            {
                if (null == partition(id) && null == zk.checkExists().forPath(partitionsDir + id))
                {
                    return false;
                }
            }
            return true;
        }
        catch (final Exception ex)
        {
            return false;
        }
    }

    /** @return the readable partitions of a topic, by partition number (damaged ones left out). */
    List<PartitionState> knownPartitions(final String topic)
    {
        return partitions.values().stream().filter((s) -> s.topicPartition().topic().equals(topic))
            .sorted(Comparator.comparingInt((PartitionState s) -> s.topicPartition().partition())).toList();
    }

    /** @return whether the topic has a readable partition or ids recorded by the controller. */
    boolean topicExists(final String topic)
    {
        return !knownPartitions(topic).isEmpty() || topicIds.containsKey(topic);
    }

    /** @return the partitions whose state in ZooKeeper is damaged, by id, with why. */
    Map<Integer, String> damagedPartitions()
    {
        return new TreeMap<>(damaged);
    }

    /**
     * @return why a topic is damaged (a partition of its recorded ids damaged or missing, a gap in its partition
     *         numbers, a damaged partition beside its ids), or null when it is whole.
     */
    private String damage(final String topic, final List<PartitionState> states)
    {
        final int[] ids = topicIds.get(topic);
        if (null != ids)
        {
            for (int id = ids[0]; id < ids[0] + ids[1]; id++)
            {
                final PartitionState state = partition(id);
                if (damaged.containsKey(id) || null == state || !state.topicPartition().topic().equals(topic))
                {
                    return "partition id " + id + " of its " + ids[1] + " is " + (damaged.containsKey(id) ?
                        "damaged (" + damaged.get(id) + ")" : "missing");
                }
            }
            return null;
        }
        // a topic from before ids were recorded: its ids are contiguous and its numbers 0..n-1
        for (int i = 0; i < states.size(); i++)
        {
            if (states.get(i).topicPartition().partition() != i)
            {
                return "partition " + i + " is missing";
            }
        }
        for (final PartitionState state : states)
        {
            for (final int id : new int[]{ state.partitionId() - 1, state.partitionId() + 1 })
            {
                if (damaged.containsKey(id) && !recorded(id))
                {
                    return "partition id " + id + " beside its ids is damaged and may be one of its partitions";
                }
            }
        }
        return null;
    }

    /** @return whether a partition id belongs to a topic whose ids the controller recorded. */
    private boolean recorded(final int partitionId)
    {
        for (final int[] ids : topicIds.values())
        {
            if (partitionId >= ids[0] && partitionId < ids[0] + ids[1])
            {
                return true;
            }
        }
        return false;
    }

    /** @return the names of every topic (with a readable partition, or recorded by the controller). */
    List<String> topics()
    {
        return Stream.concat(partitions.values().stream().map((s) -> s.topicPartition().topic()),
            topicIds.keySet().stream()).distinct().sorted().toList();
    }

    /** @return the registered hosts: id to endpoint. */
    Map<Integer, String> hosts()
    {
        final Map<Integer, String> endpoints = new TreeMap<>();
        hosts.forEach((id, info) -> endpoints.put(id, info.endpoint()));
        return endpoints;
    }

    /** @return how many replicas each host holds, by the partitions last seen. */
    Map<Integer, Integer> replicasPerHost()
    {
        final Map<Integer, Integer> held = new HashMap<>();
        partitions.values().forEach((s) -> Arrays.stream(s.assignedReplicas()).forEach((h) -> held.merge(h, 1,
            Integer::sum)));
        return held;
    }

    @Override
    public void close()
    {
        CloseHelper.quietClose(cache);
    }
}
