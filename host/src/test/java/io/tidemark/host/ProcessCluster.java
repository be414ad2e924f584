package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntPredicate;

/**
 * Test fixture: a ZooKeeper server in this JVM (curator-test's, with a short tick so that sessions can be short)
 * and N replica hosts, each its own JVM ({@link DrillHostMain}) on a loopback UDP endpoint, plus a
 * {@link TidemarkClient} in this JVM. Hosts can be killed (SIGKILL), restarted, and sent drill commands.
 */
final class ProcessCluster implements AutoCloseable
{
    static final String USER = "tidemark";
    static final String PASSWORD = "s3cret-for-tests";
    static final String CLUSTER = "drill";

    private final Path dir;
    private final int hostCount;
    private final TestingServer zooKeeper;
    /** ZooKeeper session and connection timeouts of the hosts and the client: short, or a host's defaults. */
    private final int sessionTimeoutMs;
    private final int connectionTimeoutMs;
    private final String endpoints;
    private final Properties extra;
    private final HostProcess[] hosts;
    private int[] kafkaPorts;
    private TidemarkClient client;

    /** One host's JVM with its output lines queued. */
    static final class HostProcess
    {
        final int id;
        final Process process;
        final PrintWriter commands;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> log = java.util.Collections.synchronizedList(new ArrayList<>());

        HostProcess(final int id, final Process process)
        {
            this.id = id;
            this.process = process;
            this.commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
            final Thread reader = new Thread(() ->
            {
                try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
                {
                    String line;
                    while (null != (line = in.readLine()))
                    {
                        log.add(line);
                        lines.add(line);
                    }
                }
                catch (final IOException ignore)
                {
                    // the process died
                }
            }, "host-" + id + "-output");
            reader.setDaemon(true);
            reader.start();
        }

        /** @return everything the process printed so far. */
        String output()
        {
            synchronized (log)
            {
                return String.join("\n", log);
            }
        }

        String awaitLine(final String prefix, final long timeoutMs) throws InterruptedException
        {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (System.nanoTime() < deadline)
            {
                final String line = lines.poll(50, TimeUnit.MILLISECONDS);
                if (null != line && line.startsWith(prefix))
                {
                    return line;
                }
                if (null == line && !process.isAlive())
                {
                    break;
                }
            }
            throw new AssertionError("host " + id + " did not print '" + prefix + "' within " + timeoutMs +
                " ms; its output:\n" + String.join("\n", log));
        }

        void command(final String command) throws InterruptedException
        {
            commands.println(command);
            awaitLine("ok " + command, 20_000);
        }
    }

    /**
     * @param extra replication settings for every host (e.g. {@code replica.lag.time.max.ms}).
     */
    ProcessCluster(final Path dir, final int hostCount, final Properties extra) throws Exception
    {
        this(dir, hostCount, extra, 250);
    }

    /**
     * @param extra  replication settings for every host (e.g. {@code replica.lag.time.max.ms}).
     * @param tickMs the ZooKeeper server's tick: sessions may last from 2 to 20 ticks (250 ms: 500 ms to 5 s, and
     *               the hosts' and the client's sessions are 2 s; above 250 ms they are a host's defaults, an 18 s
     *               session and a 15 s connection timeout).
     */
    ProcessCluster(final Path dir, final int hostCount, final Properties extra, final int tickMs) throws Exception
    {
        for (int id = 0; id < hostCount; id++)
        {
            ClusterSettings.removeStaleAeronDirs(TidemarkHost.embeddedAeronPrefix(CLUSTER, id)); // of earlier runs
        }
        this.dir = dir;
        this.hostCount = hostCount;
        this.extra = extra;
        this.sessionTimeoutMs = tickMs > 250 ? 18_000 : 2_000;
        this.connectionTimeoutMs = tickMs > 250 ? 15_000 : 2_000;
        // tick 250 ms: ZooKeeper accepts session timeouts from 500 ms to 5 s
        this.zooKeeper = new TestingServer(new InstanceSpec(dir.resolve("zk").toFile(), -1, -1, -1, true, -1, tickMs,
            -1), true);
        final StringBuilder list = new StringBuilder();
        for (int id = 0; id < hostCount; id++)
        {
            list.append(id == 0 ? "" : ",").append(id).append("@127.0.0.1:").append(freeUdpPort());
        }
        this.endpoints = list.toString();
        this.hosts = new HostProcess[hostCount];
        io.tidemark.aeron.ClusterSecret.generate(secretFile());
    }

    /** @return the cluster's secret file (hosts and client share it). */
    Path secretFile()
    {
        return dir.resolve("cluster.secret");
    }

    /** Give every host a Kafka listener on a free loopback TCP port (before {@link #start()}). */
    ProcessCluster withKafka() throws IOException
    {
        kafkaPorts = new int[hostCount];
        for (int id = 0; id < hostCount; id++)
        {
            try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
            {
                kafkaPorts[id] = socket.getLocalPort();
            }
        }
        return this;
    }

    /** @return {@code bootstrap.servers} for Kafka clients: every host's listener. */
    String kafkaBootstrap()
    {
        final StringBuilder servers = new StringBuilder();
        for (int id = 0; id < hostCount; id++)
        {
            servers.append(id == 0 ? "" : ",").append("127.0.0.1:").append(kafkaPorts[id]);
        }
        return servers.toString();
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    String connectString()
    {
        return zooKeeper.getConnectString();
    }

    Properties zooKeeperProperties()
    {
        final Properties p = new Properties();
        p.setProperty("zookeeper.connect", zooKeeper.getConnectString());
        p.setProperty("zookeeper.root", "/tidemark/" + CLUSTER);
        p.setProperty("zookeeper.user", USER);
        p.setProperty("zookeeper.password", PASSWORD);
        p.setProperty("zookeeper.session.timeout.ms", Integer.toString(sessionTimeoutMs));
        p.setProperty("zookeeper.connection.timeout.ms", Integer.toString(connectionTimeoutMs));
        p.setProperty("cluster.secret.file", secretFile().toString());
        return p;
    }

    Path hostDir(final int id)
    {
        return dir.resolve("host-" + id);
    }

    Path configFile(final int id) throws IOException
    {
        final Properties p = zooKeeperProperties();
        p.setProperty("host.id", Integer.toString(id));
        p.setProperty("host.dir", hostDir(id).toString());
        p.setProperty("cluster.id", CLUSTER);
        p.setProperty("cluster.hosts", endpoints);
        // The heartbeat session these tests were written for (a host process defaults to 6 s): failovers in ~1 s.
        p.setProperty("host.session.timeout.ms", "600");
        p.setProperty("host.heartbeat.interval.ms", "100");
        p.putAll(extra);
        if (null != kafkaPorts)
        {
            p.setProperty("kafka.listener", "127.0.0.1:" + kafkaPorts[id]);
            p.setProperty("kafka.group.initial.rebalance.delay.ms", "0");
        }
        final Path file = dir.resolve("host-" + id + ".properties");
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8))
        {
            p.store(out, "host " + id);
        }
        return file;
    }

    /** Start every host, then the client. */
    void start() throws Exception
    {
        for (int id = 0; id < hostCount; id++)
        {
            launch(id);
        }
        for (int id = 0; id < hostCount; id++)
        {
            hosts[id].awaitLine("ready", 60_000);
        }
        final Properties p = zooKeeperProperties();
        p.setProperty("cluster.id", CLUSTER);
        client = TidemarkClient.connect(ClientConfig.fromProperties(p));
    }

    HostProcess launch(final int id) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--add-exports");
        command.add("java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("-Xmx192m");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(DrillHostMain.class.getName());
        command.add(configFile(id).toString());
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        hosts[id] = new HostProcess(id, process);
        return hosts[id];
    }

    /** Restart a killed or stopped host and wait until it is up. */
    void restart(final int id) throws Exception
    {
        launch(id).awaitLine("ready", 60_000);
    }

    HostProcess host(final int id)
    {
        return hosts[id];
    }

    int hostCount()
    {
        return hostCount;
    }

    /**
     * Create a topic replicated on every host and wait until each of its partitions has every replica in sync: where
     * a drill starts.
     */
    void createTopicInSync(final String topic, final int partitions) throws Exception
    {
        // "ready" hosts may not all be registered yet: the controller would refuse a factor above the hosts it sees
        if (!await(() -> client.hosts().size() == hostCount, 60_000))
        {
            throw new AssertionError("registered hosts: " + client.hosts());
        }
        if (client.createTopic(topic, partitions, hostCount, 30_000).size() != partitions)
        {
            throw new AssertionError(topic + ": not " + partitions + " partitions");
        }
        for (int p = 0; p < partitions; p++)
        {
            final int partition = p;
            if (!await(() -> state(topic, partition).isr().length == hostCount, 30_000))
            {
                throw new AssertionError("not every replica in sync: " + state(topic, partition));
            }
        }
    }

    TidemarkClient client()
    {
        return client;
    }

    /** kill -9. */
    void kill(final int id) throws InterruptedException
    {
        hosts[id].process.destroyForcibly();
        hosts[id].process.waitFor(30, TimeUnit.SECONDS);
    }

    /** A clean stop. */
    void stop(final int id) throws InterruptedException
    {
        if (hosts[id].process.isAlive())
        {
            hosts[id].commands.println("stop");
            if (!hosts[id].process.waitFor(30, TimeUnit.SECONDS))
            {
                hosts[id].process.destroyForcibly();
            }
        }
    }

    static boolean await(final BooleanSupplier condition, final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    /** @return the partition's state as the client sees it in ZooKeeper. */
    PartitionState state(final String topic, final int partition)
    {
        return client.partitions(topic).get(partition);
    }

    /** @return the host whose {@code status} command says it runs the controller. */
    int controllerHost() throws Exception
    {
        for (int id = 0; id < hosts.length; id++)
        {
            host(id).commands.println("status");
            if (host(id).awaitLine("status", 10_000).contains("controller=true"))
            {
                return id;
            }
        }
        throw new AssertionError("no host runs the controller");
    }

    /** @return the first of the topic's partitions whose leader, as the client sees it, passes {@code leader}. */
    int partitionLedBy(final String topic, final IntPredicate leader)
    {
        final List<PartitionState> partitions = client.partitions(topic);
        for (int p = 0; p < partitions.size(); p++)
        {
            if (leader.test(state(topic, p).leader()))
            {
                return p;
            }
        }
        throw new AssertionError("no such partition: " + client.partitions(topic));
    }

    /**
     * The checker's re-read, after the hosts have stopped: every record of a replica's log, by offset.
     */
    Map<Long, String> readReplica(final int id, final String topic, final int partition)
    {
        final Map<Long, String> records = new HashMap<>();
        final Path logDir = hostDir(id).resolve(topic + "-" + partition);
        if (!Files.isDirectory(logDir))
        {
            return records;
        }
        try (Log log = Log.open(new LogContext().logDir(logDir));
            LogReader reader = log.openReader())
        {
            reader.seek(log.logStartOffset());
            while (reader.poll((r) -> records.put(r.offset(), r.valueAsString()), log.logEndOffset(), 10_000) > 0)
            {
                // until the end
            }
        }
        return records;
    }

    @Override
    public void close() throws IOException
    {
        if (null != client)
        {
            client.close();
        }
        for (final HostProcess host : hosts)
        {
            if (null != host && host.process.isAlive())
            {
                host.process.destroyForcibly();
                try
                {
                    host.process.waitFor(30, TimeUnit.SECONDS);
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                }
            }
        }
        for (int id = 0; id < hostCount; id++)
        {
            ClusterSettings.removeStaleAeronDirs(TidemarkHost.embeddedAeronPrefix(CLUSTER, id)); // of killed hosts
        }
        zooKeeper.close();
    }
}
