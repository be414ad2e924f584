package io.tidemark.bench.multiprocess;

import io.tidemark.bench.harness.TempDirs;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperStoreException;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Three replica hosts, each in a JVM of its own ({@link HostProcess}) on a loopback UDP endpoint, with a ZooKeeper
 * server in a JVM of its own ({@link ZooKeeperProcess}) and a {@link TidemarkClient} in this JVM that the bench
 * produces through.
 * <p>
 * The ZooKeeper server is ZooKeeper's own, from the bench's class path: running it needs no ZooKeeper installed.
 * The run's directory holds the ZooKeeper data, each host's configuration file
 * ({@code host-N.properties}), output ({@code host-N.log}) and replica logs ({@code host-N/}).
 * <p>
 * <b>No JVM left behind.</b> {@link #close()} stops the hosts (SIGTERM, then SIGKILL after the stop timeout), then
 * ZooKeeper; a JVM shutdown hook does the same when this JVM is stopped first (Ctrl-C, SIGTERM) or the run fails.
 * Only a SIGKILL of this JVM can leave hosts running (they then lose ZooKeeper and keep running until stopped).
 * <p>
 * Thread-safe: {@link #close()} may race with the shutdown hook.
 */
final class LoopbackCluster implements AutoCloseable
{
    /** Host JVMs, and the replication factor of the topic. */
    static final int HOSTS = 3;
    /** The cluster's name (also in ZooKeeper and on every Aeron message). */
    static final String CLUSTER_ID = "bench-multiprocess";

    private static final String ROOT = "/tidemark/" + CLUSTER_ID;
    private static final String USER = "tidemark-bench";
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Path dir;
    private final boolean insecure;
    private final MultiProcessPlan plan;
    private final Path logCopies;
    private final String password = HexFormat.of().formatHex(new SecureRandom().generateSeed(12));
    private final ZooKeeperProcess zooKeeper;
    private final List<String> endpoints = new ArrayList<>();
    private final HostProcess[] hosts = new HostProcess[HOSTS];
    private final HostProcess.Stop[] stops = new HostProcess.Stop[HOSTS];
    private final Thread shutdownHook;
    private volatile TidemarkClient client;
    private volatile boolean inShutdownHook;
    /** Set while a fault drill has ZooKeeper stopped on purpose. */
    volatile boolean zooKeeperStopped;
    /** Hosts a fault drill has killed on purpose, by id (not reported as having exited). */
    private final java.util.Set<Integer> killed = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final int[] launches = new int[HOSTS];
    private boolean closed;

    private LoopbackCluster(final Path dir, final MultiProcessPlan plan, final Path logCopies,
        final boolean insecure) throws Exception
    {
        this.insecure = insecure;
        this.dir = dir;
        this.plan = plan;
        this.logCopies = logCopies;
        for (int id = 0; id < HOSTS; id++)
        {
            endpoints.add("127.0.0.1:" + freeUdpPort());
        }
        Files.deleteIfExists(dir.resolve("cluster.secret")); // a run's own secret
        io.tidemark.aeron.ClusterSecret.generate(dir.resolve("cluster.secret"));
        this.zooKeeper = new ZooKeeperProcess(dir.resolve("zookeeper"), dir.resolve("zookeeper.log"),
            plan.hostClasspath());
        this.shutdownHook = new Thread(() ->
        {
            inShutdownHook = true;
            close();
        }, "tidemark-bench-multiprocess-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * Register the shutdown hook; {@link #start} starts ZooKeeper and the hosts.
     *
     * @param dir       the run's directory (created).
     * @param plan      the run's settings.
     * @param logCopies where {@link #close()} copies the host logs (the report directory).
     */
    static LoopbackCluster create(final Path dir, final MultiProcessPlan plan, final Path logCopies) throws Exception
    {
        return create(dir, plan, logCopies, false);
    }

    /**
     * As {@link #create(Path, MultiProcessPlan, Path)}; {@code insecure}: hosts and client run with
     * {@code cluster.insecure=true} (no secret, no tags), to measure what authentication costs.
     */
    static LoopbackCluster create(final Path dir, final MultiProcessPlan plan, final Path logCopies,
        final boolean insecure) throws Exception
    {
        Files.createDirectories(dir);
        return new LoopbackCluster(dir, plan, logCopies, insecure);
    }

    /**
     * Start the three host JVMs and wait until the client sees all three registered in ZooKeeper.
     *
     * @param out progress.
     * @throws IllegalStateException when a host exits, or they do not all register within the start timeout (a
     *                               host's log tail in the message). The caller closes the cluster.
     */
    void start(final PrintWriter out) throws IOException
    {
        zooKeeper.start(plan.startTimeoutMs());
        out.println("tidemark-bench: ZooKeeper at " + zooKeeper.connectString() + "; starting " + HOSTS +
            " host JVMs on " + endpoints);
        out.flush();
        for (int id = 0; id < HOSTS; id++)
        {
            hosts[id] = HostProcess.launch(id, plan.hostClasspath(), writeConfig(id),
                dir.resolve("host-" + id + ".log"));
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(plan.startTimeoutMs());
        client = connectClient(deadline);
        awaitRegistered(deadline);
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    private Properties zooKeeperProperties()
    {
        final Properties p = new Properties();
        p.setProperty("cluster.id", CLUSTER_ID);
        p.setProperty("zookeeper.connect", zooKeeper.connectString());
        p.setProperty("zookeeper.root", ROOT);
        p.setProperty("zookeeper.user", USER);
        p.setProperty("zookeeper.password", password);
        if (insecure)
        {
            p.setProperty("cluster.insecure", "true");
        }
        else
        {
            p.setProperty("cluster.secret.file", dir.resolve("cluster.secret").toString());
        }
        return p;
    }

    private Path writeConfig(final int id) throws IOException
    {
        final Properties p = zooKeeperProperties();
        p.setProperty("host.id", Integer.toString(id));
        p.setProperty("host.dir", dir.resolve("host-" + id).toString());
        p.setProperty("cluster.hosts", clusterHosts());
        p.setProperty("min.insync.replicas", Integer.toString(plan.minInsync()));
        plan.hostProperties().forEach(p::setProperty);
        final Path file = dir.resolve("host-" + id + ".properties");
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8))
        {
            p.store(writer, "tidemark-bench multiprocess: host " + id);
        }
        return file;
    }

    private String clusterHosts()
    {
        final StringBuilder list = new StringBuilder();
        for (int id = 0; id < HOSTS; id++)
        {
            list.append(id == 0 ? "" : ",").append(id).append('@').append(endpoints.get(id));
        }
        return list.toString();
    }

    /** The first host to start claims the cluster's root in ZooKeeper; until then a client is refused. */
    private TidemarkClient connectClient(final long deadline)
    {
        while (true)
        {
            checkHostsAlive("start-up");
            try
            {
                return TidemarkClient.connect(ClientConfig.fromProperties(zooKeeperProperties()));
            }
            catch (final ConfigException | ZooKeeperStoreException ex)
            {
                if (System.nanoTime() - deadline > 0)
                {
                    throw new IllegalStateException("the client could not connect within " + plan.startTimeoutMs() +
                        " ms: " + ex.getMessage(), ex);
                }
                LockSupport.parkNanos(POLL_NANOS);
            }
        }
    }

    private void awaitRegistered(final long deadline)
    {
        while (client.hosts().size() < HOSTS)
        {
            checkHostsAlive("start-up");
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("only hosts " + client.hosts().keySet() + " registered in " +
                    "ZooKeeper within " + plan.startTimeoutMs() + " ms");
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /**
     * @param phase what the run was doing, for the message.
     * @throws IllegalStateException when a host's JVM has exited, with the end of its log.
     */
    void checkHostsAlive(final String phase)
    {
        if (zooKeeper.pid() >= 0 && !zooKeeper.isAlive() && !zooKeeperStopped)
        {
            throw new IllegalStateException("ZooKeeper exited during " + phase);
        }
        for (final HostProcess host : hosts)
        {
            if (null != host && !host.isAlive() && !killed.contains(host.hostId()))
            {
                throw new IllegalStateException(host + " exited during " + phase + "; the end of its log " +
                    host.log() + ":\n" + host.tail(25));
            }
        }
    }

    /**
     * SIGKILL a host (a fault drill): it is not reported as having exited until {@link #relaunch} starts it again.
     */
    void kill(final int id) throws InterruptedException
    {
        killed.add(id);
        if (!hosts[id].kill())
        {
            throw new IllegalStateException("host " + id + " did not die within 10 s of SIGKILL");
        }
    }

    /** Start a killed host again, a new process (its output goes to {@code host-N-<launch>.log}). */
    synchronized void relaunch(final int id) throws IOException
    {
        launches[id]++;
        hosts[id] = HostProcess.launch(id, plan.hostClasspath(), dir.resolve("host-" + id + ".properties"),
            dir.resolve("host-" + id + "-" + (launches[id] + 1) + ".log"));
        killed.remove(id);
    }

    /** Stop ZooKeeper (SIGTERM) for a fault drill; {@link #startZooKeeper} starts it again on the same port. */
    void stopZooKeeper()
    {
        zooKeeperStopped = true;
        zooKeeper.stop(false, plan.stopTimeoutMs());
    }

    /** Start ZooKeeper again after {@link #stopZooKeeper}. */
    void startZooKeeper() throws IOException
    {
        zooKeeper.start(plan.startTimeoutMs());
        zooKeeperStopped = false;
    }

    /** @return the ZooKeeper settings of the cluster (a fault drill's own ZooKeeper client). */
    Properties zooKeeperSettings()
    {
        return zooKeeperProperties();
    }

    /** @return the cluster's ZooKeeper root. */
    static String root()
    {
        return ROOT;
    }

    /** @return the process id of a host's JVM. */
    long hostPid(final int hostId)
    {
        return hosts[hostId].pid();
    }

    /** @return the client every phase produces through. */
    TidemarkClient client()
    {
        return client;
    }

    /** @return the ZooKeeper server's connect string. */
    String zooKeeperConnect()
    {
        return zooKeeper.connectString();
    }

    /** @return the ZooKeeper server's process. */
    ZooKeeperProcess zooKeeper()
    {
        return zooKeeper;
    }

    /** @return the host processes, by host id (null entries before {@link #start}). */
    List<HostProcess> hosts()
    {
        return Arrays.asList(hosts.clone());
    }

    /** @return each host's {@code address:port}, by host id. */
    List<String> endpoints()
    {
        return List.copyOf(endpoints);
    }

    /** @return the command line of host 0's JVM (the others differ only in the configuration file). */
    List<String> hostCommand()
    {
        return null == hosts[0] ? List.of() : hosts[0].command();
    }

    /**
     * Wait until every one of a topic's {@code partitions} has a leader and all {@link #HOSTS} replicas in its ISR.
     *
     * @return whether that happened within {@code timeoutMs}.
     */
    boolean awaitFullIsr(final String topic, final int partitions, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!fullIsr(topic, partitions))
        {
            checkHostsAlive("waiting for the ISR");
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
        return true;
    }

    private boolean fullIsr(final String topic, final int partitions)
    {
        final List<PartitionState> states = client.partitions(topic);
        if (states.size() < Math.max(1, partitions))
        {
            return false;
        }
        for (final PartitionState state : states)
        {
            if (state.leader() == PartitionState.NO_LEADER || state.isr().length < HOSTS)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * @return how each host's JVM ended, by host id (null for one never started); empty before {@link #close()}.
     */
    synchronized List<HostProcess.Stop> stops()
    {
        return closed ? Arrays.asList(stops.clone()) : List.of();
    }

    /** @return what each host's log says went wrong, by host id (null for one never started). */
    List<HostProcess.LogSummary> logSummaries()
    {
        final List<HostProcess.LogSummary> summaries = new ArrayList<>();
        for (final HostProcess host : hosts)
        {
            summaries.add(null == host ? null : host.scanLog());
        }
        return summaries;
    }

    /**
     * Stop everything: the client, the hosts (SIGTERM to all three, each waited for up to the stop timeout, then
     * SIGKILL), ZooKeeper; copy the host logs to the report directory; delete the run's directory unless it is to be
     * kept. Idempotent.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != client)
        {
            client.close();
        }
        for (final HostProcess host : hosts)
        {
            if (null != host)
            {
                host.requestStop(); // all three at once: each stops while the others do
            }
        }
        for (int id = 0; id < HOSTS; id++)
        {
            if (null != hosts[id])
            {
                stops[id] = hosts[id].stop(plan.stopTimeoutMs());
                if (stops[id].forced())
                {
                    removeEmbeddedMediaDriver(hosts[id]);
                }
            }
        }
        closeZooKeeper();
        ServerLogs.copyAll(dir, hosts, launches, logCopies);
        if (!plan.keepData())
        {
            deleteQuietly(dir);
        }
        if (!inShutdownHook)
        {
            try
            {
                Runtime.getRuntime().removeShutdownHook(shutdownHook);
            }
            catch (final IllegalStateException ex)
            {
                // the JVM is shutting down: the hook runs and finds this closed
            }
        }
    }

    /**
     * A host killed by SIGKILL leaves its embedded media driver's directory behind; TidemarkHost names it
     * {@code tidemark-aeron-<cluster>-host-<id>-<pid>} under /dev/shm (or java.io.tmpdir).
     */
    private static void removeEmbeddedMediaDriver(final HostProcess host)
    {
        final String name = "tidemark-aeron-" + CLUSTER_ID + "-host-" + host.hostId() + "-" + host.pid();
        deleteQuietly(Path.of("/dev/shm", name));
        deleteQuietly(Path.of(System.getProperty("java.io.tmpdir"), name));
    }

    private void closeZooKeeper()
    {
        zooKeeper.stop(false, plan.stopTimeoutMs());
    }

    private static void deleteQuietly(final Path path)
    {
        try
        {
            TempDirs.deleteRecursively(path);
        }
        catch (final UncheckedIOException ex)
        {
            System.err.println("tidemark-bench: " + ex.getMessage());
        }
    }
}
