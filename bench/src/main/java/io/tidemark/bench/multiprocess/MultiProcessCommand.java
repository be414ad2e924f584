package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.BenchOptions;
import io.tidemark.bench.Durations;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
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

    @Mixin
    BenchOptions.Results results;

    @Mixin
    BenchOptions.Runs runs;

    @Mixin
    BenchOptions.Window window;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--targets", split = ",", paramLabel = "LIST", defaultValue = "kafka,tidemark",
        description = "Systems to run, in order: kafka, tidemark (default: ${DEFAULT-VALUE}).")
    List<String> targets = new ArrayList<>();

    @Option(names = "--acks", split = ",", paramLabel = "LIST", defaultValue = "0,1,all",
        description = "Acks modes, in order (default: ${DEFAULT-VALUE}).")
    List<String> acks = new ArrayList<>();

    @Option(names = "--partitions", split = ",", paramLabel = "LIST", defaultValue = "1,4,16",
        description = "Partition counts, a topic each (default: ${DEFAULT-VALUE}).")
    List<Integer> partitions = new ArrayList<>();

    @Option(names = "--round-trip-duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
        description = "Window of the one-at-a-time round trips (linger 0, acks=all, 1 partition); 0 to skip " +
            "(default: ${DEFAULT-VALUE}).")
    long roundTripMs;

    @Option(names = "--idle", paramLabel = "TIME", defaultValue = "60s", converter = Durations.class,
        description = "Idle window: every server process's CPU with nothing sent; 0 to skip (default: " +
            "${DEFAULT-VALUE}).")
    long idleMs;

    @Option(names = "--no-faults",
        description = "Skip Tidemark's fault phase (SIGKILL of a plain leader and of the controller's host, each " +
            "restarted at once, then each restarted only after the measured window; a ZooKeeper restart), which " +
            "otherwise ends Tidemark's first run.")
    boolean noFaults;

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
            plan = cluster.plan(targets, modes, partitions, roundTripMs, idleMs, !noFaults, Map.of(), window, runs)
                .validate();
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
        return new MultiProcessBench(plan, spec.commandLine().getOut()).run(results.dir(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()));
    }
}
