package io.tidemark.host;

import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.exceptions.AeronException;
import io.tidemark.aeron.AeronMedia;
import io.tidemark.aeron.AeronTransport;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.QuietIdleStrategy;
import io.tidemark.replication.RateLimitedLog;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.ProducerSessions;
import io.tidemark.replication.ReplicaNode;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZNodes;
import io.tidemark.zookeeper.ZooKeeperCounters;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperRootCheck;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SystemEpochClock;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.IntToLongFunction;
import java.util.function.UnaryOperator;

/**
 * A replica host in its own process, or embedded in an application: it serves its replicas (leader or follower)
 * with fetches over Aeron UDP, keeps its liveness as an ephemeral znode in ZooKeeper, takes part in the controller
 * election (the elected host runs the controller over partition state in ZooKeeper), and answers clients
 * ({@link io.tidemark.client.remote.TidemarkClient}) on its Aeron endpoint.
 * <pre>{@code
 * try (TidemarkHost host = TidemarkHost.start(HostConfig.load(Path.of("host-0.properties"))))
 * {
 *     host.awaitShutdown();
 * }
 * }</pre>
 * Starting checks, before it serves anything: the configuration ({@link HostConfig#validate()}), that ZooKeeper
 * answers and accepts the credentials, that the ZooKeeper root belongs to this {@code cluster.id} (the first host
 * claims it), that nothing under the root grants anything to {@code world:anyone} ({@link ZooKeeperRootCheck}:
 * repaired when the credentials allow, else a {@link io.tidemark.zookeeper.ZooKeeperAclException} naming the
 * node), that no other live process holds this host id, and that the Aeron endpoint can be bound. Each failure
 * is a typed exception ({@link ConfigException} naming the key, {@link ZooKeeperStoreException}, or
 * {@link HostStartException}) and leaves nothing running.
 * <p>
 * The incarnation of each start comes from a counter in ZooKeeper, so it grows across processes and machines.
 * Thread-safe.
 * <p>
 * The host wires its parts together and owns their order of closing; each part owns its own state:
 * {@link HostLivenessNode} (this host's liveness node), {@link ProcessExitWatch} (its liveness listener and its
 * watch over the other hosts' processes), {@link HostDuty} (the one thread of the shared profile),
 * {@link ControlLinkOverAeron} (the control streams to the other hosts), {@link ControllerRole}, {@link HostGateway}
 * and the {@link ReplicaNode}.
 */
public final class TidemarkHost implements AutoCloseable
{
    /** Child of the root holding each host id's incarnation counter. */
    static final String INCARNATIONS = "incarnations";
    /** The file a running host holds locked in its directory. */
    static final String LOCK_FILE = "host.lock";
    /**
     * Shared profile: once the log-maintenance thread has had no work for this long, it parks
     * {@link #LOG_MAINTENANCE_IDLE_PARK_MS} at a time.
     */
    static final long LOG_MAINTENANCE_DEEPER_AFTER_MS = 1000;
    /**
     * Shared profile: the log-maintenance thread's park after a quiet second. Its work (pre-faulting ahead of the
     * writer, writeback under {@code dirty.bytes.max}, the next segment, {@code flush.interval.ms}, retention) may
     * wait that long after a pause: the pages just ahead of the writer were pre-faulted before the pause, and a roll
     * without a prepared segment makes its own.
     */
    static final long LOG_MAINTENANCE_IDLE_PARK_MS = 100;

    private final HostConfig config;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private final System.Logger logger = System.getLogger(TidemarkHost.class.getName());
    // client and channel: package-private for the tests' fault drills (DrillHostMain), which cut the host's control
    // channel or expire its ZooKeeper session from test sources, without a hook in this class
    final CuratorFramework client;
    private final String root;
    private final long incarnation;
    private final AeronMedia media;
    final AeronTransport transport;
    final ControlChannel channel;
    private final ReplicaNode node;
    private final HostGateway gateway;
    private final EdgeCounters edge;
    private final ControllerRole role;
    private final ExecutorService zooKeeperTasks;
    private volatile KafkaGateway kafka;
    private final HostLivenessNode livenessNode;
    private final java.util.concurrent.CompletableFuture<Throwable> ended = new java.util.concurrent.CompletableFuture<>();
    private boolean closed;

    private TidemarkHost(final HostConfig config, final UnaryOperator<Transport> replicationTransport)
    {
        this.config = config.validate();
        final int hostId = config.hostId();
        // agent errors can be triggered from outside: each kind is logged at most once per interval
        final ErrorHandler errorHandler = new RateLimitedLog(logger).errorHandler("host " + hostId);
        final long startNs = System.nanoTime();
        MediaStart mediaStart = null;
        try
        {
            lockHostDir(config.hostDir());
            final String dirToken = HostDirToken.readOrCreate(config.hostDir(), logger);
            this.client = config.zooKeeper().connectClient();
            resources.push(client);
            this.root = config.zooKeeper().rootPath();
            claimClusterId(client, root, config.clusterId());
            this.incarnation = ZooKeeperCounters.incrementAndGet(client, root + "/" + INCARNATIONS + "/" + hostId);
            // The liveness listener is bound before the registration that advertises its port: a peer that reads the
            // registration can connect at once (ProcessExitWatch)
            final int clusterHash = GatewayMessages.clusterHash(config.clusterId());
            final ClusterSecret secret = config.secret();
            final ProcessExitWatch exits = new ProcessExitWatch(hostId, incarnation, config.endpoints(),
                config.livenessPort(), clusterHash, secret);
            resources.push(exits);
            // Registered before anything runs: a second process with this host id fails here, before its
            // registration with the controller could pass for a restart of the live one. A registration left by a
            // killed process in this directory (its token; the directory's lock says that process is gone) is
            // taken over at once instead of waited out until its session expires.
            this.livenessNode = new HostLivenessNode(client, root, hostId, incarnation, config.endpoints().get(hostId),
                dirToken, exits.port(), 2L * config.zooKeeper().sessionTimeoutMs());
            livenessNode.register();
            final long registeredNs = System.nanoTime();
            // The registration comes first: it is what tells the controller that a killed previous incarnation is
            // gone, so that its leaderships move (a restart's failover waits for it; started beside the ZooKeeper
            // connection, the driver took CPU from it on a loaded 2-core machine and the registration came later).
            // The media driver and the Aeron client need nothing from ZooKeeper: they start on a thread of their own
            // while the root check walks ZooKeeper. The host reports itself running only once both succeeded; a
            // failure of either closes what the other started (see MediaStart).
            mediaStart = MediaStart.begin(config, errorHandler, this::onTransportDeath);
            // Meanwhile: nothing under the root may be open to anyone (a root made by hand with zkCli, say): repaired
            // when these credentials may, else a typed error naming the node. The walk reads every node under the
            // root, two round trips each (most of the registration's 0.6 s measured on a loaded machine); the host
            // serves nothing until it passed.
            ZooKeeperRootCheck.check(client, root, config.zooKeeper().acl(), logger);
            final long checkedNs = System.nanoTime();
            // and the other hosts' registrations, read from ZooKeeper
            final ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(client, root);
            resources.push(liveness);
            liveness.awaitInitialized(config.zooKeeper().connectionTimeoutMs());
            liveness.onChange(exits::registrationsChanged);
            exits.watch(liveness::registration);
            final HostExitLiveness hostLiveness = new HostExitLiveness(liveness, exits);
            final MediaStart started = mediaStart;
            mediaStart = null; // from here on its parts are in resources, closed with the rest
            this.media = started.await(resources);
            final HostDuty duty = started.duty();
            final long mediaNs = System.nanoTime();
            final long mediaStartedMs = started.tookMs();
            final boolean shared = config.threading() == AeronMedia.Profile.SHARED;
            final Aeron aeron = media.aeron();
            final int maxHosts = config.maxHosts();
            if (!secret.authenticates())
            {
                logger.log(System.Logger.Level.WARNING, ClusterSettings.insecureWarning("host " + hostId));
            }
            // every incarnation on the wire is checked against what the hosts registered in ZooKeeper
            final long ownIncarnation = incarnation;
            final IntToLongFunction registry = (h) -> h == hostId ? ownIncarnation : liveness.registeredIncarnation(h);
            this.edge = new EdgeCounters(null, "host=" + hostId, new RateLimitedLog(logger));
            this.transport = new AeronTransport(aeron, false, maxHosts, (h) -> channelOf(config, h), clusterHash,
                secret, registry, edge);
            resources.push(transport);
            final Publication[] control = new Publication[maxHosts];
            for (int h = 0; h < maxHosts; h++)
            {
                if (h != hostId)
                {
                    control[h] = aeron.addPublication(channelOf(config, h), GatewayMessages.CONTROL_STREAM_ID);
                    resources.push(control[h]);
                }
            }
            final ControlLinkOverAeron link = new ControlLinkOverAeron(control, clusterHash, secret, hostId,
                incarnation, registry);
            this.channel = new ControlChannel(maxHosts, (h) -> h == hostId, link);
            final ReplicationContext ctx = config.replication().hostLiveness(hostLiveness)
                .threadingMode(shared ? ReplicationContext.ThreadingMode.INVOKER :
                    ReplicationContext.ThreadingMode.PER_HOST)
                .idleStrategySupplier(shared ? AeronMedia::sharedIdleStrategy : BusySpinIdleStrategy::new)
                // the duty thread waits for a datagram on the embedded driver's sockets, which an unpark does not end:
                // a produce queued by the Kafka listener rings the wait's doorbell too
                .dutyWakeUp(null != duty ? media::wakeDatagramWait : () ->
                {
                })
                .logMaintenanceThread(true) // pre-faulting and writeback never delay the duty cycle (issue 15)
                // shared: 10 wake-ups a second once without work for a second (each runs every partition's log
                // agent: 1 % of a core per idle host at 100 a second, 17 partitions); latency: 100 a second
                .logMaintenanceIdleStrategySupplier(shared ? () -> new QuietIdleStrategy(QuietIdleStrategy.DEEP_PARK_MS,
                    LOG_MAINTENANCE_DEEPER_AFTER_MS, LOG_MAINTENANCE_IDLE_PARK_MS) : QuietIdleStrategy::new)
                .conclude();
            final ProducerSessions sessions = new ProducerSessions();
            final long replicasStartNs = System.nanoTime();
            this.node = ReplicaNode.start(hostId, config.hostDir(), incarnation, maxHosts, ctx,
                replicationTransport.apply(transport), channel, sessions, errorHandler, edge::attach);
            resources.push(node);
            final long replicasNs = System.nanoTime();
            this.gateway = new HostGateway(hostId, incarnation, clusterHash, secret, aeron, channelOf(config, hostId),
                node, channel, sessions, SystemEpochClock.INSTANCE, registry, edge, config.clientLimits(),
                config.transportMtu());
            // shared: the embedded driver, the Aeron client, the gateway and every agent of the replica host on one
            // thread that parks when idle (with an external driver, all but the driver and the client's conductor);
            // latency: the gateway busy-spins on a thread of its own, the host's agents on another
            if (null != duty)
            {
                duty.attach(new CompositeAgent(gateway, new NodeAgent(node)));
                resources.push(duty::detach);
            }
            else
            {
                final AgentRunner runner = shared ?
                    new AgentRunner(AeronMedia.sharedIdleStrategy(), errorHandler, null,
                        new CompositeAgent(gateway, new NodeAgent(node))) :
                    new AgentRunner(new BusySpinIdleStrategy(), errorHandler, null, gateway);
                AgentRunner.startOnThread(runner);
                resources.push(runner);
            }
            this.zooKeeperTasks = Executors.newSingleThreadExecutor((r) ->
            {
                final Thread thread = new Thread(r, "tidemark-zookeeper-" + hostId);
                thread.setDaemon(true);
                return thread;
            });
            resources.push(zooKeeperTasks::shutdownNow);
            client.getConnectionStateListenable().addListener((c, state) ->
            {
                if (state == ConnectionState.RECONNECTED)
                {
                    zooKeeperTasks.execute(livenessNode::reRegister);
                    zooKeeperTasks.execute(() ->
                    {
                        final KafkaGateway gateway = kafka;
                        if (null != gateway)
                        {
                            gateway.reRegister();
                        }
                    });
                }
            });
            this.role = new ControllerRole(hostId, client, root, ctx, hostLiveness::processExited, channel,
                errorHandler, config.endpoints().size());
            link.role = role;
            exits.onExit(role::wake);
            resources.push(role);
            role.start();
            this.kafka = null == config.kafka() ? null : KafkaGateway.start(config.kafka(), client, root,
                config.clusterId(), node, sessions, role::controllerHost, ctx, errorHandler);
            if (null != kafka)
            {
                resources.push(kafka);
            }
            logger.log(System.Logger.Level.INFO, "host " + hostId + " of cluster " + config.clusterId() +
                " started: incarnation " + incarnation + ", endpoint " + config.endpoints().get(hostId) +
                ", directory " + config.hostDir() + (null == kafka ? "" : ", Kafka listener " +
                kafka.listener().advertised().host() + ":" + kafka.listener().advertised().port() + " " +
                kafka.listener().securityDescription()) + "; in " + (System.nanoTime() - startNs) / 1_000_000 +
                " ms (ZooKeeper connection and registration " + (registeredNs - startNs) / 1_000_000 +
                " ms; then beside the media driver's start (" + mediaStartedMs + " ms) the ZooKeeper root check " +
                (checkedNs - registeredNs) / 1_000_000 + " ms, the media waited for until " +
                (mediaNs - registeredNs) / 1_000_000 + " ms; replica logs " +
                (replicasNs - replicasStartNs) / 1_000_000 + " ms)");
        }
        catch (final AeronException ex)
        {
            MediaStart.abandon(mediaStart);
            closeResources();
            throw new HostStartException("host " + hostId + ": Aeron refused endpoint " +
                config.endpoints().get(hostId) + " (in use, or not an address of this machine): " + ex.getMessage(),
                ex);
        }
        catch (final java.io.IOException ex)
        {
            MediaStart.abandon(mediaStart);
            closeResources();
            throw new HostStartException("host " + hostId + ": cannot use directory " + config.hostDir() + ": " +
                ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            MediaStart.abandon(mediaStart);
            closeResources();
            throw ex;
        }
    }

    /**
     * Start a host.
     *
     * @param config its configuration.
     * @return the running host.
     * @throws ConfigException         for a bad configuration value, a cluster id that does not match the one in
     *                                 ZooKeeper, or credentials ZooKeeper refuses.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be reached, or another live process holds this host id.
     * @throws HostStartException      when the endpoint cannot be bound or the directory created.
     */
    public static TidemarkHost start(final HostConfig config)
    {
        return new TidemarkHost(config, UnaryOperator.identity());
    }

    /**
     * Start a host whose replicas reach the other hosts through {@code replicationTransport} applied to its Aeron
     * transport: the tests' fault drills decorate it to cut the host off the network (DrillHostMain).
     */
    static TidemarkHost start(final HostConfig config, final UnaryOperator<Transport> replicationTransport)
    {
        return new TidemarkHost(config, replicationTransport);
    }

    /**
     * Hold {@code host.lock} in the host's directory for the life of the host: a second process (or a second host
     * in this one) on the same directory is refused.
     */
    private void lockHostDir(final Path dir) throws java.io.IOException
    {
        Files.createDirectories(dir);
        final java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(dir.resolve(LOCK_FILE),
            java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
        java.nio.channels.FileLock lock = null;
        try
        {
            lock = channel.tryLock();
        }
        catch (final java.nio.channels.OverlappingFileLockException ex)
        {
            // held in this JVM
        }
        if (null == lock)
        {
            channel.close();
            throw new HostStartException("host directory " + dir + " is in use by another running host", null);
        }
        resources.push(channel);
    }

    /**
     * @return the channel of this host's subscriptions for its own id, of its publications to {@code host} for
     *         another's, each sized for its path ({@link io.tidemark.aeron.UdpChannels}); null for an unknown host.
     */
    static String channelOf(final HostConfig config, final int host)
    {
        final String endpoint = config.endpoints().get(host);
        if (null == endpoint)
        {
            return null;
        }
        return host == config.hostId() ? io.tidemark.aeron.UdpChannels.subscription(endpoint, config.transportMtu()) :
            io.tidemark.aeron.UdpChannels.publication(endpoint, config.transportMtu());
    }

    static Path embeddedAeronDir(final HostConfig config)
    {
        final String prefix = embeddedAeronPrefix(config.clusterId(), config.hostId());
        ClusterSettings.removeStaleAeronDirs(prefix);
        return ClusterSettings.embeddedAeronDir(prefix + ProcessHandle.current().pid());
    }

    static String embeddedAeronPrefix(final String clusterId, final int hostId)
    {
        return "tidemark-aeron-" + clusterId + "-host-" + hostId + "-";
    }

    /**
     * The first host of a cluster writes its {@code cluster.id} under the root; every later one must match it.
     */
    static void claimClusterId(final CuratorFramework client, final String root, final String clusterId)
    {
        final String path = root + "/" + ClusterZNodes.CLUSTER_ID;
        try
        {
            if (ZNodes.createIfAbsent(client, path, clusterId.getBytes(StandardCharsets.UTF_8)))
            {
                return;
            }
            // another host claimed it first: check it is ours
            final String existing = new String(client.getData().forPath(path), StandardCharsets.UTF_8);
            if (!existing.equals(clusterId))
            {
                throw new ConfigException(HostConfig.CLUSTER_ID, "ZooKeeper root " + root + " belongs to cluster '" +
                    existing + "', not '" + clusterId + "'");
            }
        }
        catch (final KeeperException.NoAuthException ex)
        {
            throw new ConfigException(io.tidemark.zookeeper.ZooKeeperSettings.PASSWORD, "ZooKeeper refused access " +
                "to " + root + " for these credentials (zookeeper.user / zookeeper.password)");
        }
        catch (final ConfigException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the cluster id at " + path, ex);
        }
    }

    /**
     * The Aeron client lost its media driver (the driver died, or the client's conductor was starved for longer than
     * the driver's timeout): every send fails from now on. The host cannot serve; {@link #awaitEnd()} returns the
     * cause, and {@link HostMain} stops the process with a clear error.
     */
    private void onTransportDeath(final Throwable cause)
    {
        logger.log(System.Logger.Level.ERROR, "host " + config.hostId() + ": the Aeron transport died (" + cause +
            "); the host cannot serve and stops");
        ended.complete(cause);
    }

    /**
     * Wait until the host has stopped: closed ({@code null}), or its transport died (the cause).
     *
     * @return null after {@link #close()}, or why the host cannot serve any more.
     */
    public Throwable awaitEnd() throws InterruptedException
    {
        try
        {
            return ended.get();
        }
        catch (final java.util.concurrent.ExecutionException ex)
        {
            return ex.getCause();
        }
    }

    /** @return this host's id. */
    public int hostId()
    {
        return config.hostId();
    }

    /** @return this start's incarnation. */
    public long incarnation()
    {
        return incarnation;
    }

    /** @return whether this host runs the cluster's controller now. */
    public boolean isController()
    {
        return role.isController();
    }

    /** @return the host id running the controller, as this host last heard, or -1. */
    public int controllerHost()
    {
        return role.controllerHost();
    }

    /** @return the Kafka listener, or null when the host has none ({@code kafka.listener}). */
    public io.tidemark.kafka.KafkaListener kafkaListener()
    {
        return null == kafka ? null : kafka.listener();
    }

    /** @return the replica host served by this process. */
    public ReplicaNode node()
    {
        return node;
    }

    /** @return messages dropped for carrying another cluster's id. */
    public long foreignMessages()
    {
        long total = 0;
        for (final EdgeCounters.Stream stream : EdgeCounters.Stream.values())
        {
            total += edge.dropped(stream, EdgeCounters.Reason.FOREIGN_CLUSTER);
        }
        return total;
    }

    /** @return what this host dropped at its network edge, by stream and reason (also in {@code tidemark stat}). */
    public EdgeCounters droppedMessages()
    {
        return edge;
    }

    /** @return clients this host serves now. */
    public int clientCount()
    {
        return gateway.clientCount();
    }

    /** Stop cleanly: leadership moves away, logs close cleanly, the ZooKeeper session ends. */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        closeResources();
        ended.complete(null);
        logger.log(System.Logger.Level.INFO, "host " + config.hostId() + " stopped");
    }

    private void closeResources()
    {
        while (!resources.isEmpty())
        {
            final AutoCloseable resource = resources.pop();
            if (resource instanceof ReplicaNode replicaNode)
            {
                replicaNode.close();
                waitForController(); // a controller of this process hears of the clean stop before it stops
                continue;
            }
            CloseHelper.quietClose(resource);
        }
    }

    private void waitForController()
    {
        if (null != role && role.isController())
        {
            try
            {
                Thread.sleep(100);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
