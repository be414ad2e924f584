package io.tidemark.host;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.Controller;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.zookeeper.ControllerFencedException;
import io.tidemark.zookeeper.ZooKeeperControllerElection;
import io.tidemark.zookeeper.ZooKeeperControllerFailover;
import io.tidemark.zookeeper.ZooKeeperControllerStandby;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.IdleStrategy;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.LockSupport;

/**
 * This host's part in the controller election, on a thread of its own (the controller's calls to ZooKeeper block):
 * it keeps {@link #controllerHost()} current for the control channel, and while this host is elected it runs a
 * {@link Controller} over a {@link ZooKeeperControllerStore} (opening it bumps the controller epoch, which fences
 * the previous controller's writes) and carries out topic creation requests. Losing the election, or a write
 * fenced by a newer controller, stops the controller at once. Meanwhile it keeps a warm copy of the controller state
 * ({@link ZooKeeperControllerStandby}), which the store takes over on election where its claim proves it current,
 * and the election wakes the role's thread: a successor starts within a round trip or two of the depose.
 * <p>
 * <b>Damaged state.</b> A partition whose stored state cannot be read is quarantined by the store: the controller
 * serves the rest, names each damaged one in a warning once a minute, and reads it again every
 * {@link DamagedStateWatch#RECHECK_MS}; once it reads (repaired with {@code tidemark partition repair}) the
 * controller restarts over the store, which serves it again. A controller that cannot load at all (ZooKeeper
 * refuses, the partitions node cannot be listed) backs off between attempts, doubling from {@link #FIRST_RETRY_MS}
 * up to {@link #MAX_RETRY_MS}, without bumping the controller epoch (the store claims it only after a successful
 * read), and after {@link #STEP_DOWN_AFTER} failures in a row leaves the election for a while, so that another host
 * can take over.
 * <p>
 * <b>Failover without the ZooKeeper session.</b> While this host runs the controller, a thread of its own announces
 * it to every host every {@link #ANNOUNCE_INTERVAL_MS} ({@link Controller#announce}), as long as this role's duty
 * cycle has run within {@link #STUCK_MS} (a cycle slow in ZooKeeper is not a dead controller; one stuck for good is).
 * While another host runs it, this role watches the announcements the control channel records
 * ({@link ControlChannel#controllerHeardNanos}); after {@code controller.timeout.ms} of silence it votes against the
 * controller and deposes it once a majority agrees, by the rule and failure cases of
 * {@link ZooKeeperControllerFailover}; a controller whose process was seen to exit ({@link ProcessExitWatch}) is
 * voted against at once, without waiting for the timeout. A host whose own duty cycle was held up for half the timeout starts watching
 * afresh (its silence may be its own), and so does one that sees a new controller elected (it gets a whole timeout to
 * load and speak). A controller that finds itself deposed stops at once (its store is fenced already) and joins the
 * election again at the end of the line; the new controller moves the deposed host's leaderships at once
 * ({@link #DEPOSED_GRACE_MS}) instead of after a whole session. A lost ZooKeeper connection does not stop the controller: its election lives
 * as long as its session (writes meanwhile fail and are decided again), so a ZooKeeper restart costs no controller
 * and no epoch.
 * <p>
 * <b>Defaults and why.</b> Announcements every 100 ms and a timeout of 1,000 ms: a scheduler stall of several
 * hundred ms (the load of this 2-core machine) on the controller's host is ridden out, a stall of a voter is
 * discounted (see above), and a false suspicion needs a majority of hosts to miss ten announcements in a row.
 * <p>
 * The role owns the election, the controller's lifecycle (start with back-off, stop) and the announcer; its parts
 * own the rest of its state: {@link TopicRequests} (the topic creation requests), {@link ControllerWatch} (the
 * watch over another host's controller and this host's failover votes) and {@link DamagedStateWatch}. All run on
 * the role's thread but the announcer, which reads only volatile fields.
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
    private final Thread thread;
    private final System.Logger logger = System.getLogger(ControllerRole.class.getName());
    private final io.tidemark.replication.RateLimitedLog remoteLog = new io.tidemark.replication.RateLimitedLog(logger);
    private volatile int controllerHost = -1;
    private volatile boolean running = true;
    private volatile Controller controller;
    private ZooKeeperControllerStore store;
    private long nextElectionCheckMs;
    private long nextControllerReadMs;
    private long electionChangesSeen = -1;
    private long electionChangesChecked = -1;
    private boolean limitsToPublish;
    /** The warm copy of the controller state this candidate opens its store from when elected. */
    private final ZooKeeperControllerStandby standby;
    private final TopicRequests topicRequests;
    private final DamagedStateWatch damagedStates = new DamagedStateWatch();
    /** Longest between two reads of the election and of the topic requests with no change seen (a safety net). */
    static final long RE_READ_MS = 1_000;
    static final long FIRST_RETRY_MS = 100;
    static final long MAX_RETRY_MS = 30_000;
    static final int STEP_DOWN_AFTER = 3;

    /** How often the controller announces itself to the hosts. */
    static final long ANNOUNCE_INTERVAL_MS = 100;
    /**
     * How long the host of a deposed controller has to heartbeat to its successor before its leaderships move: none.
     * A majority of the hosts did not hear it for {@code controller.timeout.ms} already, which is the evidence a
     * session's expiry would give; waiting two heartbeat intervals more (as before) kept a killed controller's
     * partitions without a leader for a second longer (bench fault phase: 2.5 s, now 1.6 to 2.2 s on a loaded
     * machine; docs/multi-host.md), and kept the leaderships
     * only of a host that was cut off from the other hosts yet reached its successor. A deposed host that is alive
     * registers with its successor, and its replicas rejoin as followers, as after a restart.
     */
    static final long DEPOSED_GRACE_MS = 0;
    /** The role thread's park once quiet while this host is not the controller. */
    private static final long WATCH_PARK_MS = 50;
    /** A duty cycle stuck for longer stops the announcements, so that the hosts depose this controller. */
    static final long STUCK_MS = 10_000;

    private final ControllerWatch controllerWatch;
    private final Thread announcer;
    private volatile long dutyStartedNs = System.nanoTime();

    private int failedStarts;
    private long nextStartMs;
    private long rejoinElectionMs;

    /**
     * @param ctx           replication configuration (its host liveness answers for the controller this role runs).
     * @param processExited whether a host's process, in the incarnation registered now, was seen to exit
     *                      ({@link HostExitLiveness#processExited}): evidence against a controller on that host.
     */
    ControllerRole(final int hostId, final CuratorFramework client, final String root,
        final ReplicationContext ctx, final java.util.function.IntPredicate processExited,
        final ControlChannel channel, final ErrorHandler errorHandler, final int clusterSize)
    {
        this.hostId = hostId;
        this.client = client;
        this.root = root;
        this.channel = channel;
        this.errorHandler = errorHandler;
        this.ctx = ctx;
        this.controllerWatch = new ControllerWatch(hostId, channel, new ZooKeeperControllerFailover(client, root,
            hostId, clusterSize, 2 * ctx.controllerTimeoutMs()), ctx.controllerTimeoutMs(), ANNOUNCE_INTERVAL_MS,
            processExited);
        clearStaleCandidacies();
        this.standby = new ZooKeeperControllerStandby(client, root);
        this.election = joinElection();
        this.topicRequests = new TopicRequests(client, root);
        this.thread = new Thread(this, "tidemark-controller-role-" + hostId);
        thread.setDaemon(true);
        this.announcer = new Thread(this::announce, "tidemark-controller-announcer-" + hostId);
        announcer.setDaemon(true);
    }

    /**
     * Join the election with a listener that wakes the role thread when this host wins or loses, so that an elected
     * successor opens its store at once instead of after its watching park.
     */
    private ZooKeeperControllerElection joinElection()
    {
        return new ZooKeeperControllerElection(client, root, hostId, new LeaderLatchListener()
        {
            @Override
            public void isLeader()
            {
                wake();
            }

            @Override
            public void notLeader()
            {
                wake();
            }
        });
    }

    /**
     * Run the role's duty cycle now: this host won or lost the election, or a host's process exited (a vote against
     * its controller is due at once).
     */
    void wake()
    {
        final Thread roleThread = thread;
        if (null != roleThread)
        {
            LockSupport.unpark(roleThread);
        }
    }

    /** A previous incarnation of this host, killed, may have left its candidacy: it must not wait out a session. */
    private void clearStaleCandidacies()
    {
        try
        {
            final int cleared = controllerWatch.clearStaleCandidacies(client.getZookeeperClient().getZooKeeper()
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
            election = joinElection();
            logger.log(System.Logger.Level.INFO, "host " + hostId + " joins the controller election again");
        }
        if (null != election && election.deposed())
        {
            logger.log(System.Logger.Level.WARNING, "host " + hostId + " was deposed as controller by a majority of " +
                "hosts that could not hear it; it stops and joins the election again");
            stopController();
            election.close();
            election = joinElection();
            controllerHost = -1;
            work++;
        }
        if (null != election && (now >= nextElectionCheckMs || election.changes() != electionChangesChecked))
        {
            nextElectionCheckMs = now + 20;
            electionChangesChecked = election.changes();
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
            if (limitsToPublish)
            {
                // after the first duty cycle: the elections a failover owes come first, the limits only inform clients
                limitsToPublish = false;
                publishLimits();
            }
            work += topicRequests.poll(current, store, now);
            if (null != store && damagedStates.repaired(store, now))
            {
                stopController();
                nextStartMs = 0;
                work++;
            }
        }
        else
        {
            work += controllerWatch.watch(System.nanoTime(), controllerHost);
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
        final long openStartNs = System.nanoTime();
        store = new ZooKeeperControllerStore(client, root, false, channel.maxHosts(), standby);
        final long openMs = java.util.concurrent.TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - openStartNs);
        controller = new Controller(store, ctx, channel);
        controllerHost = hostId;
        controllerWatch.withdraw();
        final int deposed = ZooKeeperControllerFailover.deposedBefore(client, root, store.controllerEpoch());
        if (deposed >= 0 && deposed != hostId)
        {
            // a majority did not hear that host for controller.timeout.ms: it is treated as dead, and its leaderships
            // move now (see DEPOSED_GRACE_MS)
            controller.shortenGrace(deposed, DEPOSED_GRACE_MS);
            logger.log(System.Logger.Level.INFO, "controller: host " + deposed + ", the deposed controller, has " +
                DEPOSED_GRACE_MS + " ms to heartbeat before its leaderships move");
        }
        damagedStates.controllerStarted(System.currentTimeMillis());
        limitsToPublish = true;
        logger.log(System.Logger.Level.INFO, "host " + hostId + " is the controller (epoch " +
            store.controllerEpoch() + "; state " + (store.openedFromStandby() ? "taken over from its warm copy" :
            "read from ZooKeeper") + " in " + openMs + " ms)" + (store.damaged().isEmpty() ? "" : "; damaged partition states, " +
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
        topicRequests.close();
        standby.close();
        final ZooKeeperControllerElection current = election;
        if (null != current)
        {
            current.close();
        }
    }
}
