package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchOptions;
import io.tidemark.bench.Durations;
import picocli.CommandLine.Option;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The options of the commands that run Kafka's brokers and Tidemark's hosts as processes ({@code multiprocess},
 * {@code kafka-clients}): the clusters (directory, Kafka's jars, the hosts' settings and class path, time-outs) and
 * the producer workload (record size, producer settings, fixed rate, profiles), as one picocli mixin, and the plan
 * they make with the command's own choices.
 * <p>
 * Filled in by picocli, one instance per execution; not thread-safe.
 */
final class ClusterOptions
{
    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where the cluster's temporary directory goes: ZooKeeper data, host configurations and logs, " +
            "replica logs, Kafka's data (default: java.io.tmpdir). Deleted at the end unless --keep-data.")
    Path dir;

    @Option(names = "--keep-data", description = "Keep the cluster's directory at the end.")
    boolean keepData;

    @Option(names = "--kafka-lib", paramLabel = "DIR",
        description = "The Kafka server's jars (default: kafka-peer/target/lib of this build).")
    Path kafkaLib;

    @Option(names = "--jit-warmup", paramLabel = "TIME", defaultValue = "5s", converter = Durations.class,
        description = "Unreported saturated run (acks=1) first, 0 to skip (default: ${DEFAULT-VALUE}).")
    long jitWarmupMs;

    @Option(names = "--latency-duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Measurement window of each fixed-rate latency phase (default: ${DEFAULT-VALUE}).")
    long latencyMs;

    @Option(names = "--rate", paramLabel = "N", defaultValue = "10000",
        description = "Records/s of the latency phases (default: ${DEFAULT-VALUE}).")
    long rate;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100",
        description = "Value bytes per record (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--profile", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Window of each profiled phase (JFR and per-thread CPU of every server process: idle, fixed " +
            "rate, saturated, acks=all, first partition count); 0 to skip (default: ${DEFAULT-VALUE}).")
    long profileMs;

    @Option(names = "--producers", paramLabel = "N", defaultValue = "1",
        description = "Sending threads of the saturated phases, sharing one producer (default: ${DEFAULT-VALUE}).")
    int producers;

    @Option(names = "--min-insync", paramLabel = "N", defaultValue = "2",
        description = "min.insync.replicas of the hosts and the brokers (default: ${DEFAULT-VALUE}).")
    int minInsync;

    @Option(names = "--batch-size", paramLabel = "BYTES", defaultValue = "16384",
        description = "Producer batch.size (default: ${DEFAULT-VALUE}).")
    int batchSize;

    @Option(names = "--linger-ms", paramLabel = "MS", defaultValue = "5",
        description = "Producer linger.ms of the saturated phases (default: ${DEFAULT-VALUE}, the producer's).")
    long lingerMs;

    @Option(names = "--latency-linger-ms", paramLabel = "MS", defaultValue = "5",
        description = "Producer linger.ms of the latency phases (default: ${DEFAULT-VALUE}, the producer's). With " +
            "0 every record becomes a batch of its own, and those batches queue behind the 5 requests in flight.")
    long latencyLingerMs;

    @Option(names = "--buffer-memory", paramLabel = "BYTES", defaultValue = "33554432",
        description = "Producer buffer.memory (default: ${DEFAULT-VALUE}).")
    long bufferMemory;

    @Option(names = "--host-property", paramLabel = "KEY=VALUE",
        description = "A setting for every host, e.g. replica.lag.time.max.ms=5000 (repeatable).")
    Map<String, String> hostProperties = new LinkedHashMap<>();

    @Option(names = "--host-classpath", paramLabel = "PATH",
        description = "Class path of the host JVMs (default: this JVM's, i.e. the bench jar).")
    String hostClasspath;

    @Option(names = "--start-timeout", paramLabel = "TIME", defaultValue = "180s", converter = Durations.class,
        description = "Longest wait for the servers to start and register, and for a topic (default: " +
            "${DEFAULT-VALUE}).")
    long startTimeoutMs;

    @Option(names = "--stop-timeout", paramLabel = "TIME", defaultValue = "30s", converter = Durations.class,
        description = "Longest wait for a server to exit after SIGTERM before SIGKILL (default: ${DEFAULT-VALUE}).")
    long stopTimeoutMs;

    @Option(names = "--settle-timeout", paramLabel = "TIME", defaultValue = "60s", converter = Durations.class,
        description = "Longest wait before a phase for every replica to be back in the ISR (a saturated phase can " +
            "leave a follower behind); the phase then runs anyway and the report says so (default: " +
            "${DEFAULT-VALUE}).")
    long settleTimeoutMs;

    /**
     * @param targets      systems to run, in order.
     * @param acks         acks modes, in order.
     * @param partitions   partition counts.
     * @param roundTripMs  one-at-a-time round trips window, 0 to skip.
     * @param idleMs       idle window, 0 to skip.
     * @param faults       run Tidemark's fault phase.
     * @param extraHost    settings every host gets unless {@code --host-property} sets them.
     * @param window       warm-up and window of the saturated phases.
     * @param runs         rounds.
     * @return the plan, not yet validated.
     */
    MultiProcessPlan plan(final List<String> targets, final List<Integer> acks, final List<Integer> partitions,
        final long roundTripMs, final long idleMs, final boolean faults, final Map<String, String> extraHost,
        final BenchOptions.Window window, final BenchOptions.Runs runs)
    {
        final Map<String, String> host = new LinkedHashMap<>(extraHost);
        host.putAll(hostProperties);
        return new MultiProcessPlan(List.copyOf(targets), List.copyOf(acks), List.copyOf(partitions), jitWarmupMs,
            window.warmupMs(), window.durationMs(), latencyMs, rate, roundTripMs, idleMs, profileMs, size, producers,
            minInsync, batchSize, lingerMs, latencyLingerMs, bufferMemory, runs.runs(), Map.copyOf(host),
            null == dir ? Path.of(System.getProperty("java.io.tmpdir")) : dir, keepData,
            null == hostClasspath ? classpathOfThisJvm() : hostClasspath, kafkaLib, startTimeoutMs, stopTimeoutMs,
            settleTimeoutMs, faults);
    }

    /** @return this JVM's class path, absolute: the bench jar under {@code java -jar}. */
    static String classpathOfThisJvm()
    {
        final List<String> entries = new ArrayList<>();
        for (final String entry : System.getProperty("java.class.path").split(File.pathSeparator))
        {
            if (!entry.isEmpty())
            {
                entries.add(Path.of(entry).toAbsolutePath().toString());
            }
        }
        return String.join(File.pathSeparator, entries);
    }
}
