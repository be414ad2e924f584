package io.tidemark.bench.kafka;

import io.tidemark.bench.ServerStop;
import io.tidemark.bench.harness.TempDirs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;

/**
 * A real Apache Kafka cluster on this machine, for the bench to measure Tidemark against: {@code brokers} KRaft
 * nodes, each both broker and controller (a static quorum of all of them), each in a JVM of its own on loopback
 * ports, started from the Kafka server's own jars (module {@code kafka-peer} collects them from Maven Central into
 * {@code kafka-peer/target/lib}). Every broker runs as Kafka's {@code kafka-server-start.sh} runs it: the
 * {@link #KAFKA_JVM_ARGS heap and G1 settings of that script}, {@code kafka.Kafka server.properties}, log4j2 at INFO
 * into the broker's log file; the storage directories are formatted first with Kafka's {@code StorageTool}. The
 * broker settings are Kafka's defaults except the listeners, directories, replication factors of the internal
 * topics, and the KRaft quorum's election, fetch and request timeouts (5 s, 10 s, 10 s), raised so that a quorum
 * forms on a loaded machine.
 * <pre>{@code
 * try (KafkaPeerCluster kafka = KafkaPeerCluster.start(KafkaPeerCluster.settings(dir, KafkaLib.find(null))))
 * {
 *     kafka.createTopic("bench", 4, 3, 2, 60_000);
 *     // a KafkaProducer / KafkaConsumer / Admin with bootstrap.servers = kafka.bootstrapServers()
 * }
 * }</pre>
 * {@link #close()} stops every broker (SIGTERM, SIGKILL after the stop timeout), keeps their logs where
 * {@link Settings#logCopies()} says, and deletes the data directories unless asked to keep them; a JVM shutdown hook
 * does the same if this JVM is stopped first. Used by the multiprocess bench, and meant for any bench mode that needs
 * a real Kafka beside Tidemark (the Kafka clients against Tidemark's Kafka protocol, for one).
 * <p>
 * Thread-safe: {@link #close()} may race with the shutdown hook.
 */
public final class KafkaPeerCluster implements AutoCloseable
{
    /** The JVM settings of Kafka's {@code kafka-server-start.sh} and {@code kafka-run-class.sh} (heap, G1). */
    public static final List<String> KAFKA_JVM_ARGS = List.of("-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC",
        "-XX:MaxGCPauseMillis=20", "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
        "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true");
    /** The broker's entry point. */
    public static final String MAIN_CLASS = "kafka.Kafka";
    /** Kafka's storage formatting tool. */
    public static final String STORAGE_TOOL = "kafka.tools.StorageTool";

    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    private final Settings settings;
    private final String clusterId = Uuid.randomUuid().toString();
    private final List<Broker> brokers = new ArrayList<>();
    private final Thread shutdownHook;
    private volatile boolean inShutdownHook;
    private Admin admin;
    private String bootstrapServers;
    private boolean closed;
    private final List<Stop> stops = new ArrayList<>();

    /**
     * How to run the cluster.
     *
     * @param dir              the cluster's directory (configurations, logs, data), created; deleted at close
     *                         unless {@code keepData}.
     * @param lib              the Kafka server's jars.
     * @param brokers          how many nodes (each broker and controller).
     * @param brokerProperties further {@code server.properties} settings of every broker
     *                         ({@code min.insync.replicas}, ...).
     * @param startTimeoutMs   longest wait for the brokers to form the cluster.
     * @param stopTimeoutMs    longest wait for a broker to exit after SIGTERM before SIGKILL.
     * @param logCopies        where the brokers' logs are copied at close, or null.
     * @param keepData         keep {@code dir} at close.
     */
    public record Settings(Path dir, Path lib, int brokers, Map<String, String> brokerProperties,
        long startTimeoutMs, long stopTimeoutMs, Path logCopies, boolean keepData)
    {
    }

    /**
     * How a broker's JVM ended.
     *
     * @param nodeId   the node id.
     * @param exitCode its exit code (143 after a clean stop on SIGTERM), or -1 when it could not be killed.
     * @param forced   it did not exit within the stop timeout and was killed.
     * @param exitedEarlier it had exited before the stop.
     * @param millis   from SIGTERM to exit.
     */
    public record Stop(int nodeId, int exitCode, boolean forced, boolean exitedEarlier, long millis)
    {
    }

    /** One broker's JVM. */
    private record Broker(int nodeId, int port, int controllerPort, Path config, Path log, Process process)
    {
    }

    private KafkaPeerCluster(final Settings settings)
    {
        this.settings = settings;
        this.shutdownHook = new Thread(() ->
        {
            inShutdownHook = true;
            close();
        }, "tidemark-bench-kafka-stop");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /**
     * @param dir the cluster's directory.
     * @param lib the Kafka server's jars ({@link KafkaLib#find}).
     * @return settings for three brokers with {@code min.insync.replicas=2}, a 120 s start and 30 s stop timeout.
     */
    public static Settings settings(final Path dir, final Path lib)
    {
        return new Settings(dir, lib, 3, Map.of("min.insync.replicas", "2"), 120_000, 30_000, null, false);
    }

    /**
     * Format the brokers' storage, start them, and wait until all of them are in the cluster.
     *
     * @param settings how.
     * @return the running cluster.
     * @throws IllegalStateException when a broker exits or the cluster does not form in time (the end of its log in
     *                               the message); everything started is stopped again.
     */
    public static KafkaPeerCluster start(final Settings settings)
    {
        final KafkaPeerCluster cluster = new KafkaPeerCluster(settings);
        try
        {
            cluster.launch();
            return cluster;
        }
        catch (final IOException ex)
        {
            cluster.close();
            throw new UncheckedIOException("cannot start Kafka: " + ex.getMessage(), ex);
        }
        catch (final RuntimeException ex)
        {
            cluster.close();
            throw ex;
        }
    }

    private void launch() throws IOException
    {
        Files.createDirectories(settings.dir());
        final int[] ports = new int[settings.brokers()];
        final int[] controllerPorts = new int[settings.brokers()];
        final StringBuilder voters = new StringBuilder();
        final StringBuilder bootstrap = new StringBuilder();
        for (int id = 0; id < settings.brokers(); id++)
        {
            ports[id] = KafkaNodeFiles.freeTcpPort();
            controllerPorts[id] = KafkaNodeFiles.freeTcpPort();
            voters.append(id == 0 ? "" : ",").append(id).append("@127.0.0.1:").append(controllerPorts[id]);
            bootstrap.append(id == 0 ? "" : ",").append("127.0.0.1:").append(ports[id]);
        }
        bootstrapServers = bootstrap.toString();
        final Path log4j = KafkaNodeFiles.writeLog4j(settings.dir());
        final List<Process> formats = new ArrayList<>();
        for (int id = 0; id < settings.brokers(); id++)
        {
            final Path config = KafkaNodeFiles.writeConfig(settings, id, ports[id], controllerPorts[id],
                voters.toString());
            formats.add(new ProcessBuilder(command(List.of(), STORAGE_TOOL, "format", "-t", clusterId, "-c",
                config.toString()))
                .redirectErrorStream(true)
                .redirectOutput(settings.dir().resolve("format-" + id + ".log").toFile())
                .start());
        }
        for (int id = 0; id < formats.size(); id++)
        {
            KafkaNodeFiles.awaitExit(formats.get(id), "formatting the storage of Kafka node " + id,
                settings.dir().resolve("format-" + id + ".log"), settings.startTimeoutMs());
        }
        for (int id = 0; id < settings.brokers(); id++)
        {
            final Path logDir = settings.dir().resolve("logs-" + id);
            Files.createDirectories(logDir);
            final Path config = settings.dir().resolve("server-" + id + ".properties");
            final Path out = settings.dir().resolve("broker-" + id + ".out");
            final List<String> jvm = new ArrayList<>(KAFKA_JVM_ARGS);
            jvm.add("-Dlog4j2.configurationFile=" + log4j.toAbsolutePath());
            jvm.add("-Dkafka.logs.dir=" + logDir.toAbsolutePath());
            final Process process = new ProcessBuilder(command(jvm, MAIN_CLASS, config.toString()))
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
            brokers.add(new Broker(id, ports[id], controllerPorts[id], config, logDir.resolve("server.log"),
                process));
        }
        final Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
        adminConfig.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        adminConfig.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
        admin = Admin.create(adminConfig);
        awaitBrokers();
    }

    private List<String> command(final List<String> jvmArgs, final String mainClass, final String... args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmArgs);
        command.add("-cp");
        command.add(settings.lib().toAbsolutePath() + File.separator + "*");
        command.add(mainClass);
        command.addAll(List.of(args));
        return command;
    }

    private void awaitBrokers()
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.startTimeoutMs());
        String last = "no answer yet";
        while (true)
        {
            checkAlive("start-up");
            try
            {
                final int registered = admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size();
                if (registered == settings.brokers())
                {
                    return;
                }
                last = registered + " of " + settings.brokers() + " brokers registered";
            }
            catch (final ExecutionException | TimeoutException ex)
            {
                last = ex.toString();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for Kafka", ex);
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("Kafka did not form a cluster of " + settings.brokers() +
                    " brokers within " + settings.startTimeoutMs() + " ms (" + last + "); the end of broker 0's " +
                    "log:\n" + KafkaNodeFiles.tail(brokers.get(0).log(), 20));
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /**
     * @param phase what the caller was doing, for the message.
     * @throws IllegalStateException when a broker's JVM has exited, with the end of its log.
     */
    public void checkAlive(final String phase)
    {
        for (final Broker broker : brokers)
        {
            if (!broker.process().isAlive())
            {
                final Path out = settings.dir().resolve("broker-" + broker.nodeId() + ".out");
                throw new IllegalStateException("Kafka broker " + broker.nodeId() + " exited during " + phase +
                    " (exit code " + broker.process().exitValue() + "); the end of its output:\n" + KafkaNodeFiles.tail(out, 15) +
                    "\nand of its log:\n" + KafkaNodeFiles.tail(broker.log(), 15));
            }
        }
    }

    /**
     * Create a topic and wait until every partition has a leader and its full ISR.
     *
     * @param topic             its name.
     * @param partitions        partitions.
     * @param replicationFactor replicas of each.
     * @param minInsync         its {@code min.insync.replicas}.
     * @param timeoutMs         longest wait.
     */
    public void createTopic(final String topic, final int partitions, final int replicationFactor,
        final int minInsync, final long timeoutMs)
    {
        try
        {
            admin.createTopics(List.of(new NewTopic(topic, partitions, (short)replicationFactor)
                .configs(Map.of("min.insync.replicas", Integer.toString(minInsync)))))
                .all().get(timeoutMs, TimeUnit.MILLISECONDS);
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            throw new IllegalStateException("cannot create Kafka topic " + topic + ": " + ex, ex);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
        if (!awaitFullIsr(topic, replicationFactor, timeoutMs))
        {
            throw new IllegalStateException("Kafka topic " + topic + " did not get a full ISR within " + timeoutMs +
                " ms");
        }
    }

    /**
     * @return whether every partition of {@code topic} got a leader and {@code replicas} in its ISR within the time.
     */
    public boolean awaitFullIsr(final String topic, final int replicas, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true)
        {
            checkAlive("waiting for the ISR of " + topic);
            final int[] isr = isrSizes(topic);
            boolean full = isr.length > 0;
            for (final int size : isr)
            {
                full &= size >= replicas;
            }
            if (full)
            {
                return true;
            }
            if (System.nanoTime() - deadline > 0)
            {
                return false;
            }
            LockSupport.parkNanos(POLL_NANOS);
        }
    }

    /**
     * @return the ISR size of each partition of {@code topic} (0 for a partition without a leader), or an empty
     *         array when the topic cannot be described now.
     */
    public int[] isrSizes(final String topic)
    {
        try
        {
            final TopicDescription description = admin.describeTopics(Set.of(topic)).allTopicNames()
                .get(10, TimeUnit.SECONDS).get(topic);
            final int[] sizes = new int[description.partitions().size()];
            for (final TopicPartitionInfo info : description.partitions())
            {
                sizes[info.partition()] = null == info.leader() ? 0 : info.isr().size();
            }
            return sizes;
        }
        catch (final ExecutionException | TimeoutException ex)
        {
            return new int[0];
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return new int[0];
        }
    }

    /** @return {@code host:port,...} of the brokers, for {@code bootstrap.servers}. */
    public String bootstrapServers()
    {
        return bootstrapServers;
    }

    /** @return the process id of each broker, by node id. */
    public List<Long> pids()
    {
        return brokers.stream().map((b) -> b.process().pid()).toList();
    }

    /** @return the Kafka version run. */
    public String version()
    {
        return KafkaLib.version(settings.lib());
    }

    /** @return the command line of node 0's JVM. */
    public List<String> brokerCommand()
    {
        return brokers.isEmpty() ? List.of() : brokers.get(0).process().info().arguments()
            .map((args) -> List.of(args)).orElse(List.of());
    }

    /** @return the cluster's admin client (closed with the cluster). */
    public Admin admin()
    {
        return admin;
    }

    /** @return how each broker's JVM ended, by node id; empty before {@link #close()}. */
    public synchronized List<Stop> stops()
    {
        return List.copyOf(stops);
    }

    /**
     * Stop every broker (SIGTERM to all, each waited for up to the stop timeout, then SIGKILL), copy their logs,
     * delete the directory unless kept. Idempotent.
     */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != admin)
        {
            admin.close(java.time.Duration.ofSeconds(5));
        }
        final long stopNanos = System.nanoTime();
        final boolean[] exitedEarlier = new boolean[brokers.size()];
        for (final Broker broker : brokers)
        {
            exitedEarlier[broker.nodeId()] = !broker.process().isAlive();
            broker.process().destroy();
        }
        for (final Broker broker : brokers)
        {
            final Process process = broker.process();
            final boolean forced = ServerStop.awaitOrKill(process,
                TimeUnit.MILLISECONDS.toNanos(settings.stopTimeoutMs()) - (System.nanoTime() - stopNanos));
            stops.add(new Stop(broker.nodeId(), process.isAlive() ? -1 : process.exitValue(), forced,
                exitedEarlier[broker.nodeId()], TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopNanos)));
        }
        final Map<Integer, Path> logs = new LinkedHashMap<>();
        brokers.forEach((b) -> logs.put(b.nodeId(), b.log()));
        KafkaNodeFiles.copyLogs(settings, logs);
        if (!settings.keepData())
        {
            try
            {
                TempDirs.deleteRecursively(settings.dir());
            }
            catch (final UncheckedIOException ex)
            {
                System.err.println("tidemark-bench: " + ex.getMessage());
            }
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

    /** @return the brokers' properties actually written, for the report. */
    public Map<String, String> brokerSettings()
    {
        final Map<String, String> all = new LinkedHashMap<>();
        all.put("process.roles", "broker,controller");
        all.put("nodes", Integer.toString(settings.brokers()));
        all.putAll(settings.brokerProperties());
        return all;
    }
}
