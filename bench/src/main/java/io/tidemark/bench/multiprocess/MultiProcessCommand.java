package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.Durations;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark-bench multiprocess}: Tidemark's three host processes beside a real three-broker Kafka on this
 * machine, the same cells for both ({@link MultiProcessBench}). Every parameter is an option; the defaults take
 * about twenty minutes on 2 cores.
 * <p>
 * picocli builds one instance per execution; not thread-safe.
 */
@Command(
    name = "multiprocess",
    mixinStandardHelpOptions = true,
    description = {
        "Tidemark across processes beside a real Kafka, in one invocation, one at a time: a real Apache Kafka " +
            "(3 KRaft nodes, each a JVM of its own from the Kafka server jars that module kafka-peer collects) " +
            "and Tidemark (3 host JVMs, io.tidemark.host.HostMain from this jar, on loopback Aeron UDP, with a " +
            "ZooKeeper JVM), RF=3, min.insync.replicas=2, produced to from this JVM with the same settings " +
            "(KafkaProducer / Tidemark's Producer). Cells: acks x partitions, each saturated and at a fixed rate " +
            "(open loop, coordinated omission corrected); one-at-a-time round trips at linger 0; an idle window " +
            "with every server process's CPU; JFR and per-thread CPU profiles of every server (idle, fixed rate, " +
            "saturated). Writes perf-results/local/<date>_multiprocess-<sha>/ with the ratios and the issue's goals. " +
            "About 20 minutes on 2 cores with the defaults."})
public final class MultiProcessCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Option(names = "--results-dir", paramLabel = "DIR", defaultValue = BenchMain.DEFAULT_RESULTS_DIR,
        description = "Where run directories are created (default: ${DEFAULT-VALUE}, ignored by git; the " +
            "project publishes runs with --results-dir perf-results).")
    Path resultsDir;

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where the cluster's temporary directory goes: ZooKeeper data, host configurations and logs, " +
            "replica logs (default: java.io.tmpdir). Deleted at the end unless --keep-data.")
    Path dir;

    @Option(names = "--keep-data", description = "Keep the cluster's directory at the end.")
    boolean keepData;

    @Option(names = "--targets", split = ",", paramLabel = "LIST", defaultValue = "kafka,tidemark",
        description = "Systems to run, in order: kafka, tidemark (default: ${DEFAULT-VALUE}).")
    List<String> targets = new ArrayList<>();

    @Option(names = "--acks", split = ",", paramLabel = "LIST", defaultValue = "0,1,all",
        description = "Acks modes, in order (default: ${DEFAULT-VALUE}).")
    List<String> acks = new ArrayList<>();

    @Option(names = "--round-trip-duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Window of the one-at-a-time round trips (linger 0, acks=all, 1 partition); 0 to skip " +
            "(default: ${DEFAULT-VALUE}).")
    long roundTripMs;

    @Option(names = "--idle", paramLabel = "TIME", defaultValue = "60s", converter = Durations.class,
        description = "Idle window: every server process's CPU with nothing sent; 0 to skip (default: " +
            "${DEFAULT-VALUE}).")
    long idleMs;

    @Option(names = "--profile", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Window of each profiled phase (JFR and per-thread CPU of every server process: idle, fixed " +
            "rate, saturated, acks=all, first partition count); 0 to skip (default: ${DEFAULT-VALUE}).")
    long profileMs;

    @Option(names = "--no-faults",
        description = "Skip Tidemark's fault phase (SIGKILL of a plain leader and of the controller's host, each " +
            "restarted at once; a ZooKeeper restart), which otherwise ends Tidemark's first run.")
    boolean noFaults;

    @Option(names = "--kafka-lib", paramLabel = "DIR",
        description = "The Kafka server's jars (default: kafka-peer/target/lib of this build).")
    Path kafkaLib;

    @Option(names = "--jit-warmup", paramLabel = "TIME", defaultValue = "5s", converter = Durations.class,
        description = "Unreported saturated run (acks=1) first, 0 to skip (default: ${DEFAULT-VALUE}).")
    long jitWarmupMs;

    @Option(names = "--warmup", paramLabel = "TIME", defaultValue = "2s", converter = Durations.class,
        description = "Unreported start of every phase (default: ${DEFAULT-VALUE}).")
    long warmupMs;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Measurement window of each saturated-throughput phase (default: ${DEFAULT-VALUE}).")
    long throughputMs;

    @Option(names = "--latency-duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Measurement window of each fixed-rate latency phase (default: ${DEFAULT-VALUE}).")
    long latencyMs;

    @Option(names = "--rate", paramLabel = "N", defaultValue = "10000",
        description = "Records/s of the latency phases (default: ${DEFAULT-VALUE}).")
    long rate;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100",
        description = "Value bytes per record (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--partitions", split = ",", paramLabel = "LIST", defaultValue = "1,4,16",
        description = "Partition counts, a topic each (default: ${DEFAULT-VALUE}).")
    List<Integer> partitions = new ArrayList<>();

    @Option(names = "--producers", paramLabel = "N", defaultValue = "1",
        description = "Sending threads of the saturated phases, sharing one producer (default: ${DEFAULT-VALUE}).")
    int producers;

    @Option(names = "--min-insync", paramLabel = "N", defaultValue = "2",
        description = "min.insync.replicas of the hosts (default: ${DEFAULT-VALUE}).")
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

    @Option(names = "--runs", paramLabel = "N", defaultValue = "1",
        description = "Rounds of the sweep, interleaved; the report gives the median and spread (default: " +
            "${DEFAULT-VALUE}).")
    int runs;

    @Option(names = "--host-property", paramLabel = "KEY=VALUE",
        description = "A replication setting for every host, e.g. replica.lag.time.max.ms=5000 (repeatable).")
    Map<String, String> hostProperties = new LinkedHashMap<>();

    @Option(names = "--host-classpath", paramLabel = "PATH",
        description = "Class path of the host JVMs (default: this JVM's, i.e. the bench jar).")
    String hostClasspath;

    @Option(names = "--start-timeout", paramLabel = "TIME", defaultValue = "180s", converter = Durations.class,
        description = "Longest wait for the hosts to register and for the topic (default: ${DEFAULT-VALUE}).")
    long startTimeoutMs;

    @Option(names = "--stop-timeout", paramLabel = "TIME", defaultValue = "30s", converter = Durations.class,
        description = "Longest wait for a host to exit after SIGTERM before SIGKILL (default: ${DEFAULT-VALUE}).")
    long stopTimeoutMs;

    @Option(names = "--settle-timeout", paramLabel = "TIME", defaultValue = "60s", converter = Durations.class,
        description = "Longest wait before a phase for every replica to be back in the ISR (a saturated phase can " +
            "leave a follower behind); the phase then runs anyway and the report says so (default: " +
            "${DEFAULT-VALUE}).")
    long settleTimeoutMs;

    @Override
    public Integer call() throws Exception
    {
        final MultiProcessPlan plan;
        try
        {
            final List<Integer> modes = new ArrayList<>();
            for (final String a : acks)
            {
                modes.add(MultiProcessPlan.parseAcks(a));
            }
            plan = new MultiProcessPlan(List.copyOf(targets), List.copyOf(modes), List.copyOf(partitions),
                jitWarmupMs, warmupMs, throughputMs, latencyMs, rate, roundTripMs, idleMs, profileMs, size, producers,
                minInsync, batchSize, lingerMs, latencyLingerMs, bufferMemory, runs, Map.copyOf(hostProperties),
                null == dir ? Path.of(System.getProperty("java.io.tmpdir")) : dir, keepData,
                null == hostClasspath ? classpathOfThisJvm() : hostClasspath, kafkaLib, startTimeoutMs,
                stopTimeoutMs, settleTimeoutMs, !noFaults)
                .validate();
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
        return new MultiProcessBench(plan, spec.commandLine().getOut()).run(resultsDir,
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()));
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
