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
 * {@code tidemark-bench multiprocess}: the acks sweep on three replica hosts, each in its own JVM on loopback, with
 * ZooKeeper inside the bench JVM ({@link MultiProcessBench}). Every parameter is an option; the defaults take about
 * three minutes on 2 cores.
 * <p>
 * picocli builds one instance per execution; not thread-safe.
 */
@Command(
    name = "multiprocess",
    mixinStandardHelpOptions = true,
    description = {
        "Three replica hosts, each its own JVM (io.tidemark.host.HostMain from this jar) on loopback Aeron UDP, " +
            "ZooKeeper inside this JVM (nothing to install), one topic with RF=3 and min.insync.replicas=2; for " +
            "each acks mode: saturated throughput (async producer, batching) and latency at a fixed rate, open " +
            "loop (coordinated omission corrected), the acknowledged records of the latency phase read back. " +
            "Writes perf-results/<date>_multiprocess-<sha>/ with the issue's Kafka figures beside the results. " +
            "About three minutes on 2 cores with the defaults."})
public final class MultiProcessCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Option(names = "--results-dir", paramLabel = "DIR", defaultValue = "perf-results",
        description = "Where run directories are created (default: ${DEFAULT-VALUE}).")
    Path resultsDir;

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where the cluster's temporary directory goes: ZooKeeper data, host configurations and logs, " +
            "replica logs (default: java.io.tmpdir). Deleted at the end unless --keep-data.")
    Path dir;

    @Option(names = "--keep-data", description = "Keep the cluster's directory at the end.")
    boolean keepData;

    @Option(names = "--acks", split = ",", paramLabel = "LIST", defaultValue = "0,1,2,all",
        description = "Acks modes, in order (default: ${DEFAULT-VALUE}).")
    List<String> acks = new ArrayList<>();

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

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "1",
        description = "Partitions of the topic (default: ${DEFAULT-VALUE}).")
    int partitions;

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

    @Option(names = "--start-timeout", paramLabel = "TIME", defaultValue = "90s", converter = Durations.class,
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
            plan = new MultiProcessPlan(List.copyOf(modes), jitWarmupMs, warmupMs, throughputMs, latencyMs, rate,
                size, partitions, producers, minInsync, batchSize, lingerMs, latencyLingerMs, bufferMemory, runs,
                Map.copyOf(hostProperties),
                null == dir ? Path.of(System.getProperty("java.io.tmpdir")) : dir, keepData,
                null == hostClasspath ? classpathOfThisJvm() : hostClasspath, startTimeoutMs, stopTimeoutMs,
                settleTimeoutMs)
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
