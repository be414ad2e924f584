package io.tidemark.host;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.replication.Controller;
import io.tidemark.replication.TopicPartition;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The topic creation requests clients leave under {@code <root>/admin/create-topic}, carried out by the controller
 * this host runs: each is created over the hosts registered with the controller (after waiting up to
 * {@link #HOSTS_READY_WAIT_MS} for them), finished when a controller change cut it short, or marked refused (never
 * retried) when it breaks a bound or names nothing valid. The topic's partition ids are recorded under
 * {@code <root>/topics} before its partitions are created, so that a client refuses a topic that is not whole.
 * <p>
 * Owns the watch over the requests (a Curator cache whose listener counts changes), the time of the next read and
 * when each request waiting for hosts was first seen. Confined to the controller role's thread, except the count
 * of changes, which the cache's thread increments (an {@link AtomicLong}).
 */
final class TopicRequests implements AutoCloseable
{
    /**
     * How long a topic request waits for as many hosts as its replication factor to be registered in ZooKeeper, and for
     * those to register with the controller too, before it is decided (refused when there are still too few).
     */
    private static final long HOSTS_READY_WAIT_MS = 10_000;
    /** Between two reads of the requests while one waits for hosts, at least. */
    private static final long READ_INTERVAL_MS = 50;

    private final CuratorFramework client;
    private final String root;
    private final System.Logger logger = System.getLogger(ControllerRole.class.getName());
    private final CuratorCache adminRequests;
    private final AtomicLong adminChanges = new AtomicLong(1);
    private long adminChangesSeen;
    private long nextAdminCheckMs;
    private final Map<String, Long> firstSeenMs = new HashMap<>();

    /** Start watching the requests of the cluster under {@code root}. */
    TopicRequests(final CuratorFramework client, final String root)
    {
        this.client = client;
        this.root = root;
        this.adminRequests = CuratorCache.build(client, root + "/" + ClusterZNodes.CREATE_TOPIC);
        adminRequests.listenable().addListener(CuratorCacheListener.builder()
            .forAll((type, before, after) -> adminChanges.incrementAndGet()).build());
        adminRequests.start();
    }

    /**
     * Read and carry out the requests when the cache saw one come or change, while one waits for hosts (every
     * {@value #READ_INTERVAL_MS} ms), and once every {@link ControllerRole#RE_READ_MS} whatever happens.
     *
     * @param current the controller this host runs.
     * @param store   the store it runs over (fenced writes of this controller's epoch).
     * @return requests handled.
     */
    int poll(final Controller current, final ZooKeeperControllerStore store, final long now)
    {
        final long seen = adminChanges.get();
        if (now >= nextAdminCheckMs && (seen != adminChangesSeen || !firstSeenMs.isEmpty() ||
            now >= nextAdminCheckMs + ControllerRole.RE_READ_MS))
        {
            adminChangesSeen = seen;
            nextAdminCheckMs = now + READ_INTERVAL_MS;
            return createRequestedTopics(current, store, now);
        }
        return 0;
    }

    /** Carry out the topic creation requests waiting under {@code <root>/admin/create-topic}. */
    private int createRequestedTopics(final Controller current, final ZooKeeperControllerStore store, final long now)
    {
        final String dir = root + "/" + ClusterZNodes.CREATE_TOPIC;
        final List<String> topics;
        try
        {
            if (null == client.checkExists().forPath(dir))
            {
                return 0;
            }
            topics = client.getChildren().forPath(dir);
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException("cannot list topic requests at " + dir, ex);
        }
        int work = 0;
        // topics a controller change cut short first: the ids after their partitions must still be free
        final List<String> ordered = new ArrayList<>(topics);
        ordered.sort(Comparator.comparing((String t) -> !exists(current, t)));
        for (final String topic : ordered)
        {
            final String path = dir + "/" + topic;
            try
            {
                final String request = new String(client.getData().forPath(path), StandardCharsets.UTF_8);
                if (request.startsWith(ClusterZNodes.REFUSED))
                {
                    continue;
                }
                if (exists(current, topic))
                {
                    completeTopic(current, store, topic, request, path);
                    work++;
                    continue;
                }
                final String[] parts = request.split(":");
                try
                {
                    new TopicPartition(topic, 0); // a valid name, before anything is recorded
                    final int partitions = Integer.parseInt(parts[0]);
                    final int factor = Integer.parseInt(parts[1]);
                    final int[] hosts = registeredHosts();
                    final int[] ready = Arrays.stream(hosts).filter(current::hostRegistered).toArray();
                    if ((factor > hosts.length || ready.length < hosts.length) &&
                        now < firstSeenMs.computeIfAbsent(topic, (t) -> now) + HOSTS_READY_WAIT_MS)
                    {
                        // hosts in ZooKeeper not yet registered with this controller, or fewer hosts in ZooKeeper
                        // than the replication factor (a cluster still starting, a host re-registering after its
                        // session expired on a loaded machine): wait for them before deciding
                        continue;
                    }
                    firstSeenMs.remove(topic);
                    // Over the hosts the controller has heard from (all of them, unless some never came within the
                    // wait): a replica on a host that is still starting would be given leadership and lose it at
                    // once when its grace session runs out.
                    // the topic's partition ids, recorded before they are created: a client refuses the topic while
                    // any of them is damaged or missing, rather than spread its keys over fewer partitions
                    recordTopic(store, topic, store.size(), partitions);
                    current.createTopic(topic, partitions, factor, ready.length >= factor ? ready : hosts);
                    logger.log(System.Logger.Level.INFO, "created topic " + topic + " (" + partitions +
                        " partitions, replication factor " + factor + ") over hosts " +
                        Arrays.toString(ready.length >= factor ? ready : hosts));
                    store.fencedDelete(path);
                }
                catch (final IllegalArgumentException | ArrayIndexOutOfBoundsException ex)
                {
                    // refused before anything was created (bounds, a bad name, a bad request): marked, never retried
                    try
                    {
                        store.fencedDelete(root + "/" + ClusterZNodes.TOPICS + "/" + topic);
                    }
                    catch (final KeeperException.NoNodeException | IllegalArgumentException notRecorded)
                    {
                        // refused before its ids were recorded
                    }
                    store.fencedSetData(path,
                        (ClusterZNodes.REFUSED + ex.getMessage()).getBytes(StandardCharsets.UTF_8));
                    logger.log(System.Logger.Level.INFO, "refused topic request " + path + ": " + ex.getMessage());
                }
                work++;
            }
            catch (final KeeperException.NoNodeException ex)
            {
                // withdrawn by its client
            }
            catch (final RuntimeException ex)
            {
                throw ex;
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException("cannot handle the topic request at " + path, ex);
            }
        }
        return work;
    }

    /**
     * A topic whose request is still there although some of its partitions exist: the previous controller created
     * them and lost the election (or died) before it created the rest and removed the request. Its partitions are
     * created now, with the next ids; if that cannot be done (another topic took the ids, a partition is damaged)
     * the request is marked refused and the topic stays refused by clients until repaired.
     */
    private void completeTopic(final Controller current, final ZooKeeperControllerStore store, final String topic,
        final String request, final String path) throws Exception
    {
        try
        {
            final String[] parts = request.split(":");
            final int partitions = Integer.parseInt(parts[0]);
            final int factor = Integer.parseInt(parts[1]);
            if (partitions != recordedCount(topic))
            {
                // not the request that created it (a second request for an existing topic): nothing to finish
                store.fencedDelete(path);
                return;
            }
            final int[] hosts = registeredHosts();
            final int[] ready = Arrays.stream(hosts).filter(current::hostRegistered).toArray();
            final List<PartitionState> created = current.completeTopic(topic, partitions, factor,
                ready.length >= factor ? ready : hosts);
            if (!created.isEmpty())
            {
                logger.log(System.Logger.Level.INFO, "completed topic " + topic + ", cut short by a controller " +
                    "change: created partitions " + created.get(0).topicPartition().partition() + " to " +
                    (partitions - 1));
            }
            store.fencedDelete(path);
        }
        catch (final IllegalArgumentException | ArrayIndexOutOfBoundsException ex)
        {
            store.fencedSetData(path, (ClusterZNodes.REFUSED + ex.getMessage()).getBytes(StandardCharsets.UTF_8));
            logger.log(System.Logger.Level.WARNING, "controller: topic " + topic + " was cut short by a controller " +
                "change and cannot be completed: " + ex.getMessage() + "; clients refuse it until it is repaired");
        }
    }

    /** @return the partition count the controller recorded for a topic, or -1 when none is recorded. */
    private int recordedCount(final String topic) throws Exception
    {
        try
        {
            final String[] ids = new String(client.getData().forPath(root + "/" + ClusterZNodes.TOPICS + "/" + topic),
                StandardCharsets.UTF_8).trim().split(":");
            return Integer.parseInt(ids[1]);
        }
        catch (final KeeperException.NoNodeException | NumberFormatException | ArrayIndexOutOfBoundsException ex)
        {
            return -1;
        }
    }

    private void recordTopic(final ZooKeeperControllerStore store, final String topic, final int firstId,
        final int partitions) throws Exception
    {
        final String path = root + "/" + ClusterZNodes.TOPICS + "/" + topic;
        final byte[] data = (firstId + ":" + partitions).getBytes(StandardCharsets.UTF_8);
        store.fencedUpsert(path, data); // overwrites an earlier attempt cut short by a controller change
    }

    private static boolean exists(final Controller current, final String topic)
    {
        for (final PartitionState state : current.partitions())
        {
            if (state.topicPartition().topic().equals(topic))
            {
                return true;
            }
        }
        return false;
    }

    private int[] registeredHosts() throws Exception
    {
        final String hosts = root + "/" + ZooKeeperHostLiveness.HOSTS;
        return client.getChildren().forPath(hosts).stream().mapToInt(Integer::parseInt).sorted().toArray();
    }

    @Override
    public void close()
    {
        adminRequests.close();
    }
}
