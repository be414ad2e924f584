package io.tidemark.host;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.Controller;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.zookeeper.ControllerFencedException;
import io.tidemark.zookeeper.ZooKeeperControllerElection;
import io.tidemark.zookeeper.ZooKeeperControllerFailover;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
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
 * <p>
 * <b>Failover without the ZooKeeper session.</b> While this host runs the controller, a thread of its own announces
 * it to every host every {@link #ANNOUNCE_INTERVAL_MS} ({@link Controller#announce}), as long as this role's duty
 * cycle has run within {@link #STUCK_MS} (a cycle slow in ZooKeeper is not a dead controller; one stuck for good is).
 * While another host runs it, this role watches the announcements the control channel records
 * ({@link ControlChannel#controllerHeardNanos}); after {@code controller.timeout.ms} of silence it votes against the
 * controller and deposes it once a majority agrees, by the rule and failure cases of
 * {@link ZooKeeperControllerFailover}. A host whose own duty cycle was held up for half the timeout starts watching
 * afresh (its silence may be its own), and so does one that sees a new controller elected (it gets a whole timeout to
 * load and speak). A controller that finds itself deposed stops at once (its store is fenced already) and joins the
 * election again at the end of the line; the new controller gives the deposed host a grace of two heartbeat
 * intervals instead of a whole session. A lost ZooKeeper connection does not stop the controller: its election lives
 * as long as its session (writes meanwhile fail and are decided again), so a ZooKeeper restart costs no controller
 * and no epoch.
 * <p>
 * <b>Defaults and why.</b> Announcements every 100 ms and a timeout of 1,000 ms: a scheduler stall of several
 * hundred ms (the load of this 2-core machine) on the controller's host is ridden out, a stall of a voter is
 * discounted (see above), and a false suspicion needs a majority of hosts to miss ten announcements in a row.
 * The grace of the deposed host (two heartbeat intervals, 1 s for a host process) lets a controller that was merely
 * cut off from the other hosts, but reaches the new controller, keep its leaderships.
 */
final class ControllerRole implements Runnable, AutoCloseable
{
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
    /**
     * How long a topic request waits for as many hosts as its replication factor to be registered in ZooKeeper, and for
     * those to register with the controller too, before it is decided (refused when there are still too few).
     */
    private static final long HOSTS_READY_WAIT_MS = 10_000;
    static final long FIRST_RETRY_MS = 100;
    static final long MAX_RETRY_MS = 30_000;
    static final int STEP_DOWN_AFTER = 3;
    static final long RECHECK_MS = 5_000;
    static final long NAME_DAMAGED_EVERY_MS = 60_000;

    /** How often the controller announces itself to the hosts. */
    static final long ANNOUNCE_INTERVAL_MS = 100;
    /** The role thread's park once quiet while this host is not the controller. */
    private static final long WATCH_PARK_MS = 50;
    /** A duty cycle stuck for longer stops the announcements, so that the hosts depose this controller. */
    static final long STUCK_MS = 10_000;
    /**
     * Silence from a controller this host has not heard since it began watching it is suspected only after this many
     * controller timeouts. At a cluster's start the hosts' control streams connect over a few seconds while the JVMs
     * start and compile (a measured run: a controller elected at start was deposed 4 s later, its announcements
     * dropped by hosts that did not know its endpoint yet); once heard, the plain timeout applies.
     */
    static final int FIRST_WORD_TIMEOUTS = 5;

    private final ZooKeeperControllerFailover failover;
    private final long controllerTimeoutNs;
    private final Thread announcer;
    private volatile long dutyStartedNs = System.nanoTime();
    private int watchedController = -1;
    private long watchedSinceNs;
    private long lastWatchNs = System.nanoTime();
    private long nextVoteNs;

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
        final ErrorHandler errorHandler, final int clusterSize)
    {
        this.hostId = hostId;
        this.client = client;
        this.root = root;
        this.channel = channel;
        this.errorHandler = errorHandler;
        this.liveness = liveness;
        this.ctx = ctx;
        this.controllerTimeoutNs = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ctx.controllerTimeoutMs());
        this.failover = new ZooKeeperControllerFailover(client, root, hostId, clusterSize,
            2 * ctx.controllerTimeoutMs());
        clearStaleCandidacies();
        this.election = new ZooKeeperControllerElection(client, root, hostId, null);
        this.adminRequests = org.apache.curator.framework.recipes.cache.CuratorCache.build(client,
            root + "/" + ClusterZNodes.CREATE_TOPIC);
        adminRequests.listenable().addListener(org.apache.curator.framework.recipes.cache.CuratorCacheListener
            .builder().forAll((type, before, after) -> adminChanges.incrementAndGet()).build());
        adminRequests.start();
        this.thread = new Thread(this, "tidemark-controller-role-" + hostId);
        thread.setDaemon(true);
        this.announcer = new Thread(this::announce, "tidemark-controller-announcer-" + hostId);
        announcer.setDaemon(true);
    }

    /** A previous incarnation of this host, killed, may have left its candidacy: it must not wait out a session. */
    private void clearStaleCandidacies()
    {
        try
        {
            final int cleared = failover.deleteStaleCandidacies(client.getZookeeperClient().getZooKeeper()
                .getSessionId());
            if (cleared > 0)
            {
                logger.log(System.Logger.Level.INFO, "host " + hostId + " removed " + cleared + " controller " +
                    "candidacy left by its previous incarnation (the controller epoch moved past it)");
            }
        }
        catch (final Exception ex)
        {
            logger.log(System.Logger.Level.WARNING, "host " + hostId + ": cannot clear the candidacy of its " +
                "previous incarnation (it ends with that session): " + ex);
        }
    }

    void start()
    {
        refreshControllerHost();
        thread.start();
        announcer.start();
    }

    /** The announcer thread: {@link Controller#announce} every {@link #ANNOUNCE_INTERVAL_MS} while not stuck. */
    private void announce()
    {
        final long stuckNs = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(STUCK_MS);
        while (running)
        {
            final Controller current = controller;
            if (null != current && System.nanoTime() - dutyStartedNs < stuckNs)
            {
                try
                {
                    current.announce();
                }
                catch (final RuntimeException ex)
                {
                    errorHandler.onError(ex);
                }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(
                java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ANNOUNCE_INTERVAL_MS));
        }
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
        // 1 ms at most while it has work; once quiet, 10 ms while this host runs the controller (it answers the
        // hosts' ISR changes) and 50 ms while it only watches the election and the controller's announcements (timeouts
        // of a second: a vote comes at most 50 ms later). An idle host's role thread woke 130 times a second with
        // 10 ms parks, about 1 % of a core.
        final IdleStrategy controlling = new io.tidemark.aeron.QuietIdleStrategy();
        final IdleStrategy watching = new io.tidemark.aeron.QuietIdleStrategy(WATCH_PARK_MS);
        while (running)
        {
            dutyStartedNs = System.nanoTime();
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
            (null != controller ? controlling : watching).idle(work);
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
        if (null != election && election.deposed())
        {
            logger.log(System.Logger.Level.WARNING, "host " + hostId + " was deposed as controller by a majority of " +
                "hosts that could not hear it; it stops and joins the election again");
            stopController();
            election.close();
            election = new ZooKeeperControllerElection(client, root, hostId, null);
            controllerHost = -1;
            work++;
        }
        if (null != election && now >= nextElectionCheckMs)
        {
            nextElectionCheckMs = now + 20;
            // not the connection: a controller cut off from ZooKeeper for less than its session stays the controller
            // (its writes fail meanwhile and are decided again), so that a ZooKeeper restart costs no controller
            final boolean elected = election.isController();
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
        else
        {
            work += watchController(System.nanoTime());
        }
        return work;
    }

    /**
     * Watch the elected controller's announcements; after the controller timeout of silence, vote against it and
     * depose it once a majority agrees ({@link ZooKeeperControllerFailover}); withdraw the vote when it speaks again.
     * A controller not heard since the watch began gets {@link #FIRST_WORD_TIMEOUTS} timeouts.
     */
    private int watchController(final long nowNs)
    {
        final long gapNs = nowNs - lastWatchNs;
        lastWatchNs = nowNs;
        final int current = controllerHost;
        if (current < 0 || current == hostId)
        {
            watchedController = -1;
            failover.withdraw();
            return 0;
        }
        if (current != watchedController || gapNs > controllerTimeoutNs / 2 ||
            nowNs - channel.readingNanos() > controllerTimeoutNs / 4)
        {
            // a new controller gets a whole timeout to load and speak; after a stall of this host's own (this thread,
            // or the serving thread that reads the control stream: creating a new topic's logs on a busy machine),
            // its silence may be ours: watch afresh
            watchedController = current;
            watchedSinceNs = nowNs;
        }
        final long heard = channel.controllerHeardNanos(hostId);
        final boolean heardIt = 0 != heard && heard - watchedSinceNs > 0;
        final long lastSign = heardIt ? heard : watchedSinceNs;
        if (nowNs - lastSign <= (heardIt ? controllerTimeoutNs : FIRST_WORD_TIMEOUTS * controllerTimeoutNs))
        {
            failover.withdraw();
            return 0;
        }
        if (nowNs - nextVoteNs < 0)
        {
            return 0;
        }
        nextVoteNs = nowNs + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(ANNOUNCE_INTERVAL_MS);
        final ZooKeeperControllerFailover.Incumbent incumbent = failover.incumbent();
        if (null == incumbent || incumbent.hostId() != current)
        {
            return 0; // the election moved: the next read of it catches up
        }
        failover.suspect(incumbent);
        if (failover.tryDepose(incumbent))
        {
            logger.log(System.Logger.Level.WARNING, "host " + hostId + " deposed the controller on host " + current +
                ": a majority of the cluster's hosts did not hear it for " + ctx.controllerTimeoutMs() + " ms");
        }
        return 1;
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
        failover.withdraw();
        final int deposed = ZooKeeperControllerFailover.deposedBefore(client, root, store.controllerEpoch());
        if (deposed >= 0 && deposed != hostId)
        {
            // a majority could not hear that host: it keeps its leaderships only if it heartbeats to us soon
            controller.shortenGrace(deposed, 2 * ctx.hostHeartbeatIntervalMs());
            logger.log(System.Logger.Level.INFO, "controller: host " + deposed + ", the deposed controller, has " +
                2 * ctx.hostHeartbeatIntervalMs() + " ms to heartbeat before its leaderships move");
        }
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
        final String path = root + "/" + ClusterZNodes.LIMITS;
        try
        {
            store.fencedUpsert(path, data);
        }
        catch (final ControllerFencedException ex)
        {
            throw ex;
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
        final List<String> ordered = new java.util.ArrayList<>(topics);
        ordered.sort(java.util.Comparator.comparing((String t) -> !exists(current, t)));
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
                    recordTopic(topic, store.size(), partitions);
                    current.createTopic(topic, partitions, factor, ready.length >= factor ? ready : hosts);
                    logger.log(System.Logger.Level.INFO, "created topic " + topic + " (" + partitions +
                        " partitions, replication factor " + factor + ") over hosts " +
                        java.util.Arrays.toString(ready.length >= factor ? ready : hosts));
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
                store.fencedDelete(path);
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

    private void recordTopic(final String topic, final int firstId, final int partitions) throws Exception
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
        running = false;
        try
        {
            announcer.join(1_000);
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
