package io.tidemark.host;

import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.Controller;
import io.tidemark.replication.PartitionState;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.zookeeper.ControllerFencedException;
import io.tidemark.zookeeper.ZooKeeperControllerElection;
import io.tidemark.zookeeper.ZNodes;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.IdleStrategy;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * This host's part in the controller election, on a thread of its own (the controller's calls to ZooKeeper block):
 * it keeps {@link #controllerHost()} current for the control channel, and while this host is elected it runs a
 * {@link Controller} over a {@link ZooKeeperControllerStore} (opening it bumps the controller epoch, which fences
 * the previous controller's writes) and carries out topic creation requests. Losing the election, or a write
 * fenced by a newer controller, stops the controller at once.
 * <p>
 * <b>Damaged state.</b> A partition whose stored state cannot be read is quarantined by the store: the controller
 * serves the rest, names each damaged one in a warning once a minute, and reads it again every
 * {@link #RECHECK_MS}; once it reads (repaired with {@code tidemark partition repair}) the controller restarts
 * over the store, which serves it again. A controller that cannot load at all (ZooKeeper refuses, the partitions node
 * cannot be listed) backs off between attempts, doubling from {@link #FIRST_RETRY_MS} up to {@link #MAX_RETRY_MS},
 * without bumping the controller epoch (the store claims it only after a successful read), and after
 * {@link #STEP_DOWN_AFTER} failures in a row leaves the election for a while, so that another host can take over.
 */
final class ControllerRole implements Runnable, AutoCloseable
{
    /** Child of the root where clients ask for topics: one znode per topic, data {@code partitions:factor}. */
    static final String CREATE_TOPIC = "admin/create-topic";
    /** Prefix of a request's data once the controller refused it. */
    static final String REFUSED = "refused: ";

    /**
     * A client's side of topic creation: write the request znode for {@code topic} (a request there already, from
     * anyone, is left as it is: the caller waits for it).
     *
     * @return the request's znode, to watch with {@link #takeRefusal}.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be written.
     */
    static String requestTopic(final CuratorFramework zk, final String root, final String topic,
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
    static String takeRefusal(final CuratorFramework zk, final String path)
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

    private final int hostId;
    private final CuratorFramework client;
    private final String root;
    private final ReplicationContext ctx;
    private final ControlChannel channel;
    private final ErrorHandler errorHandler;
    private volatile ZooKeeperControllerElection election;
    private final ZooKeeperHostLiveness liveness;
    private final Thread thread;
    private final System.Logger logger = System.getLogger(ControllerRole.class.getName());
    private final io.tidemark.replication.RateLimitedLog remoteLog = new io.tidemark.replication.RateLimitedLog(logger);
    private volatile int controllerHost = -1;
    private volatile boolean running = true;
    private volatile Controller controller;
    private ZooKeeperControllerStore store;
    private long nextElectionCheckMs;
    private long nextAdminCheckMs;
    private long nextControllerReadMs;
    private long electionChangesSeen = -1;
    private final java.util.concurrent.atomic.AtomicLong adminChanges = new java.util.concurrent.atomic.AtomicLong(1);
    private long adminChangesSeen;
    private final org.apache.curator.framework.recipes.cache.CuratorCache adminRequests;
    /** Longest between two reads of the election and of the topic requests with no change seen (a safety net). */
    private static final long RE_READ_MS = 1_000;
    private final java.util.Map<String, Long> firstSeenMs = new java.util.HashMap<>();
    /** How long a topic request waits for hosts registered in ZooKeeper to register with the controller too. */
    private static final long HOSTS_READY_WAIT_MS = 10_000;
    /** Child of the root where the controller records each topic's partition ids: data {@code firstId:count}. */
    static final String TOPICS = "topics";
    /** Child of the root where the controller publishes the cluster's bounds for clients. */
    static final String LIMITS = "limits";
    static final long FIRST_RETRY_MS = 100;
    static final long MAX_RETRY_MS = 30_000;
    static final int STEP_DOWN_AFTER = 3;
    static final long RECHECK_MS = 5_000;
    static final long NAME_DAMAGED_EVERY_MS = 60_000;

    private int failedStarts;
    private long nextStartMs;
    private long rejoinElectionMs;
    private long nextRecheckMs;
    private long nextNamingMs;

    /**
     * @param ctx replication configuration whose host liveness is {@code liveness}.
     */
    ControllerRole(final int hostId, final CuratorFramework client, final String root,
        final ReplicationContext ctx, final ZooKeeperHostLiveness liveness, final ControlChannel channel,
        final ErrorHandler errorHandler)
    {
        this.hostId = hostId;
        this.client = client;
        this.root = root;
        this.channel = channel;
        this.errorHandler = errorHandler;
        this.liveness = liveness;
        this.ctx = ctx;
        this.election = new ZooKeeperControllerElection(client, root, hostId, null);
        this.adminRequests = org.apache.curator.framework.recipes.cache.CuratorCache.build(client,
            root + "/" + CREATE_TOPIC);
        adminRequests.listenable().addListener(org.apache.curator.framework.recipes.cache.CuratorCacheListener
            .builder().forAll((type, before, after) -> adminChanges.incrementAndGet()).build());
        adminRequests.start();
        this.thread = new Thread(this, "tidemark-controller-role-" + hostId);
        thread.setDaemon(true);
    }

    void start()
    {
        refreshControllerHost();
        thread.start();
    }

    /** @return the host id whose process runs the controller, or -1 while none is known. */
    int controllerHost()
    {
        return controllerHost;
    }

    /** @return whether this host runs the controller now. */
    boolean isController()
    {
        return null != controller;
    }

    /** @return the controller this host runs now, or null. */
    Controller controller()
    {
        return controller;
    }

    @Override
    public void run()
    {
        // 1 ms at most while it has work, 10 ms once quiet: an idle host's controller role wakes 100 times a second,
        // not 1,000 (the largest cost of an idle host after the change of its duty thread's idle strategy)
        final IdleStrategy idle = new io.tidemark.aeron.QuietIdleStrategy();
        while (running)
        {
            int work = 0;
            try
            {
                work += duty(System.currentTimeMillis());
            }
            catch (final ControllerFencedException ex)
            {
                logger.log(System.Logger.Level.WARNING, "host " + hostId + ": a newer controller took over: " +
                    ex.getMessage());
                stopController();
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
                final ZooKeeperControllerElection current = election;
                if (null != controller && (null == current || !current.isController()))
                {
                    stopController();
                }
            }
            idle.idle(work);
        }
        stopController();
    }

    private int duty(final long now)
    {
        int work = 0;
        if (null == election && now >= rejoinElectionMs)
        {
            election = new ZooKeeperControllerElection(client, root, hostId, null);
            logger.log(System.Logger.Level.INFO, "host " + hostId + " joins the controller election again");
        }
        if (null != election && now >= nextElectionCheckMs)
        {
            nextElectionCheckMs = now + 20;
            final boolean elected = election.isController() && client.getZookeeperClient().isConnected();
            if (elected && null == controller && now >= nextStartMs)
            {
                tryStartController(now);
                work++;
            }
            else if (!elected && null != controller)
            {
                logger.log(System.Logger.Level.INFO, "host " + hostId + " is no longer the controller");
                stopController();
                work++;
            }
            refreshControllerHost();
        }
        final Controller current = controller;
        if (null != current)
        {
            work += current.doWork();
            // topic requests: read when the cache saw one come or change, while one waits for hosts (every 50 ms),
            // and once a second whatever happens
            final long seen = adminChanges.get();
            if (now >= nextAdminCheckMs && (seen != adminChangesSeen || !firstSeenMs.isEmpty() ||
                now >= nextAdminCheckMs + RE_READ_MS))
            {
                adminChangesSeen = seen;
                nextAdminCheckMs = now + 50;
                work += createRequestedTopics(current, now);
            }
            work += watchDamaged(now);
        }
        return work;
    }

    /**
     * Start the controller; on failure back off (doubling) and, after {@link #STEP_DOWN_AFTER} failures in a row,
     * leave the election until the back-off has passed.
     */
    private void tryStartController(final long now)
    {
        try
        {
            startController();
            failedStarts = 0;
        }
        catch (final ControllerFencedException ex)
        {
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            stopController();
            failedStarts++;
            final long backoff = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS << Math.min(20, failedStarts - 1));
            nextStartMs = now + backoff;
            remoteLog.log(System.Logger.Level.ERROR, "controller cannot-load", "host " + hostId + " is elected but " +
                "cannot load the controller state (attempt " + failedStarts + ", next in " + backoff + " ms): " + ex);
            if (failedStarts >= STEP_DOWN_AFTER && null != election)
            {
                logger.log(System.Logger.Level.WARNING, "host " + hostId + " steps down from the controller " +
                    "election for " + backoff + " ms after " + failedStarts + " failed loads");
                election.close();
                election = null;
                controllerHost = -1;
                rejoinElectionMs = now + backoff;
            }
        }
    }

    /**
     * Name the damaged partitions once a minute, and read them again every {@link #RECHECK_MS}: once one reads, the
     * controller restarts over the store (one epoch bump per repair, not per attempt), which then serves it.
     */
    private int watchDamaged(final long now)
    {
        final ZooKeeperControllerStore current = store;
        if (null == current)
        {
            return 0;
        }
        final java.util.Map<Integer, String> damaged = current.damaged();
        if (damaged.isEmpty())
        {
            return 0;
        }
        if (now >= nextNamingMs)
        {
            nextNamingMs = now + NAME_DAMAGED_EVERY_MS;
            damaged.forEach((id, why) -> logger.log(System.Logger.Level.WARNING, id == ZooKeeperControllerStore.STRAY ?
                "controller: " + why : "controller: partition state " + current.partitionPath(id) + " is damaged (" +
                why + "): quarantined, not served; the other partitions are. Repair it from a host's view: tidemark " +
                "partition repair --config FILE --partition-id " + id + " --host-dir DIR"));
        }
        if (now < nextRecheckMs)
        {
            return 0;
        }
        nextRecheckMs = now + RECHECK_MS;
        for (final int id : damaged.keySet())
        {
            if (id != ZooKeeperControllerStore.STRAY && null == current.checkDamaged(id))
            {
                logger.log(System.Logger.Level.INFO, "controller: partition state " + current.partitionPath(id) +
                    " reads again; the controller restarts over the store to serve it");
                stopController();
                nextStartMs = 0;
                return 1;
            }
        }
        return 0;
    }

    private void refreshControllerHost()
    {
        if (null != controller)
        {
            controllerHost = hostId;
            return;
        }
        // read the election from ZooKeeper only when it may have changed, or once a second (it used to be read
        // every 20 ms by every host: most of an idle cluster's ZooKeeper traffic)
        final ZooKeeperControllerElection current = election;
        // stepped down (no election of its own): read once a second
        final long changes = null != current ? current.changes() : electionChangesSeen;
        final long now = System.currentTimeMillis();
        if (changes == electionChangesSeen && controllerHost >= 0 && now < nextControllerReadMs)
        {
            return;
        }
        electionChangesSeen = changes;
        nextControllerReadMs = now + RE_READ_MS;
        try
        {
            // stepped down: still follow who leads, for this host's control messages
            controllerHost = null != current ? current.controllerHostId() :
                ZooKeeperControllerElection.controllerHostId(client, root);
        }
        catch (final RuntimeException ex)
        {
            controllerHost = -1;
        }
    }

    private void startController()
    {
        store = new ZooKeeperControllerStore(client, root, false, channel.maxHosts());
        controller = new Controller(store, ctx, channel);
        controllerHost = hostId;
        nextNamingMs = 0;
        nextRecheckMs = System.currentTimeMillis() + RECHECK_MS;
        publishLimits();
        logger.log(System.Logger.Level.INFO, "host " + hostId + " is the controller (epoch " +
            store.controllerEpoch() + ")" + (store.damaged().isEmpty() ? "" : "; damaged partition states, " +
            "quarantined: " + store.damaged().keySet()));
    }

    /**
     * Publish the bounds topics must respect ({@code topic.partitions.max}, {@code host.replicas.max}) under
     * {@code <root>/limits}, so that clients check them before asking.
     */
    private void publishLimits()
    {
        final byte[] data = (ReplicationContext.TOPIC_PARTITIONS_MAX + "=" + ctx.topicPartitionsMax() + "\n" +
            ReplicationContext.HOST_REPLICAS_MAX + "=" + ctx.hostReplicasMax() + "\n")
            .getBytes(StandardCharsets.UTF_8);
        final String path = root + "/" + LIMITS;
        try
        {
            try
            {
                client.setData().forPath(path, data);
            }
            catch (final KeeperException.NoNodeException ex)
            {
                client.create().forPath(path, data);
            }
        }
        catch (final Exception ex)
        {
            logger.log(System.Logger.Level.WARNING, "controller: cannot publish the limits at " + path + ": " + ex);
        }
    }

    private void stopController()
    {
        controller = null;
        if (null != store)
        {
            store.close();
            store = null;
        }
    }

    /** Carry out the topic creation requests waiting under {@code <root>/admin/create-topic}. */
    private int createRequestedTopics(final Controller current, final long now)
    {
        final String dir = root + "/" + CREATE_TOPIC;
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
        final List<String> ordered = new java.util.ArrayList<>(topics);
        ordered.sort(java.util.Comparator.comparing((String t) -> !exists(current, t)));
        for (final String topic : ordered)
        {
            final String path = dir + "/" + topic;
            try
            {
                final String request = new String(client.getData().forPath(path), StandardCharsets.UTF_8);
                if (request.startsWith(REFUSED))
                {
                    continue;
                }
                if (exists(current, topic))
                {
                    completeTopic(current, topic, request, path);
                    work++;
                    continue;
                }
                final String[] parts = request.split(":");
                try
                {
                    new io.tidemark.replication.TopicPartition(topic, 0); // a valid name, before anything is recorded
                    final int partitions = Integer.parseInt(parts[0]);
                    final int factor = Integer.parseInt(parts[1]);
                    final int[] hosts = registeredHosts();
                    final int[] ready = java.util.Arrays.stream(hosts).filter(current::hostRegistered).toArray();
                    if (factor <= hosts.length && ready.length < hosts.length &&
                        now < firstSeenMs.computeIfAbsent(topic, (t) -> now) + HOSTS_READY_WAIT_MS)
                    {
                        continue; // hosts in ZooKeeper not yet registered with this controller: wait for them
                    }
                    firstSeenMs.remove(topic);
                    // Over the hosts the controller has heard from (all of them, unless some never came within the
                    // wait): a replica on a host that is still starting would be given leadership and lose it at
                    // once when its grace session runs out.
                    // the topic's partition ids, recorded before they are created: a client refuses the topic while
                    // any of them is damaged or missing, rather than spread its keys over fewer partitions
                    recordTopic(topic, store.size(), partitions);
                    current.createTopic(topic, partitions, factor, ready.length >= factor ? ready : hosts);
                    logger.log(System.Logger.Level.INFO, "created topic " + topic + " (" + partitions +
                        " partitions, replication factor " + factor + ") over hosts " +
                        java.util.Arrays.toString(ready.length >= factor ? ready : hosts));
                    client.delete().forPath(path);
                }
                catch (final IllegalArgumentException | ArrayIndexOutOfBoundsException ex)
                {
                    // refused before anything was created (bounds, a bad name, a bad request): marked, never retried
                    try
                    {
                        client.delete().forPath(root + "/" + TOPICS + "/" + topic);
                    }
                    catch (final KeeperException.NoNodeException | IllegalArgumentException notRecorded)
                    {
                        // refused before its ids were recorded
                    }
                    client.setData().forPath(path, (REFUSED + ex.getMessage()).getBytes(StandardCharsets.UTF_8));
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
    private void completeTopic(final Controller current, final String topic, final String request, final String path)
        throws Exception
    {
        try
        {
            final String[] parts = request.split(":");
            final int partitions = Integer.parseInt(parts[0]);
            final int factor = Integer.parseInt(parts[1]);
            if (partitions != recordedCount(topic))
            {
                // not the request that created it (a second request for an existing topic): nothing to finish
                client.delete().forPath(path);
                return;
            }
            final int[] hosts = registeredHosts();
            final int[] ready = java.util.Arrays.stream(hosts).filter(current::hostRegistered).toArray();
            final List<PartitionState> created = current.completeTopic(topic, partitions, factor,
                ready.length >= factor ? ready : hosts);
            if (!created.isEmpty())
            {
                logger.log(System.Logger.Level.INFO, "completed topic " + topic + ", cut short by a controller " +
                    "change: created partitions " + created.get(0).topicPartition().partition() + " to " +
                    (partitions - 1));
            }
            client.delete().forPath(path);
        }
        catch (final IllegalArgumentException | ArrayIndexOutOfBoundsException ex)
        {
            client.setData().forPath(path, (REFUSED + ex.getMessage()).getBytes(StandardCharsets.UTF_8));
            logger.log(System.Logger.Level.WARNING, "controller: topic " + topic + " was cut short by a controller " +
                "change and cannot be completed: " + ex.getMessage() + "; clients refuse it until it is repaired");
        }
    }

    /** @return the partition count the controller recorded for a topic, or -1 when none is recorded. */
    private int recordedCount(final String topic) throws Exception
    {
        try
        {
            final String[] ids = new String(client.getData().forPath(root + "/" + TOPICS + "/" + topic),
                StandardCharsets.UTF_8).trim().split(":");
            return Integer.parseInt(ids[1]);
        }
        catch (final KeeperException.NoNodeException | NumberFormatException | ArrayIndexOutOfBoundsException ex)
        {
            return -1;
        }
    }

    private void recordTopic(final String topic, final int firstId, final int partitions) throws Exception
    {
        final String path = root + "/" + TOPICS + "/" + topic;
        final byte[] data = (firstId + ":" + partitions).getBytes(StandardCharsets.UTF_8);
        ZNodes.upsert(client, path, data); // overwrites an earlier attempt cut short by a controller change
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
        running = false;
        try
        {
            thread.join(5_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        adminRequests.close();
        final ZooKeeperControllerElection current = election;
        if (null != current)
        {
            current.close();
        }
    }
}
