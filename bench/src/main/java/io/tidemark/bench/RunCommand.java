package io.tidemark.bench;

import io.tidemark.bench.harness.Harness;
import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.replication.ReplicationContext;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark-bench run}: one scenario of the harness, every parameter settable, with the report the matrix
 * runs write. picocli builds one instance per execution; not thread-safe.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = "Run one scenario (every parameter settable) and write a report.")
final class RunCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Mixin
    BenchOptions.Results results;

    @Option(names = "--work-dir", paramLabel = "DIR", description = "Where the temporary logs go.")
    Path workDir;

    @Option(names = "--load", paramLabel = "closed|open", defaultValue = "closed",
        description = "closed: maximum throughput; open: a fixed --rate (default: ${DEFAULT-VALUE}).")
    String load;

    @Option(names = "--rate", paramLabel = "N", defaultValue = "10000",
        description = "Open loop: records/s (default: ${DEFAULT-VALUE}).")
    long rate;

    @Option(names = "--partitions", paramLabel = "N", defaultValue = "1", description = "Default: 1.")
    int partitions;

    @Option(names = "--acks", paramLabel = "0|1|N|all", defaultValue = "all", description = "Default: all.")
    String acks;

    @Option(names = "--replicas", paramLabel = "N", defaultValue = "3",
        description = "Replication factor and host count (default: ${DEFAULT-VALUE}).")
    int replicas;

    @Option(names = "--min-insync", paramLabel = "N", defaultValue = "1", description = "Default: 1.")
    int minInsync;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100", description = "Default: 100.")
    int size;

    @Option(names = "--producers", paramLabel = "N", defaultValue = "1", description = "Default: 1.")
    int producers;

    @Option(names = "--flush", paramLabel = "none|N", defaultValue = "none",
        description = "flush.interval.messages of every replica log (default: ${DEFAULT-VALUE}).")
    String flush;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "64",
        description = "Records per request (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--in-flight", paramLabel = "N", defaultValue = "16",
        description = "Closed loop: requests in flight per producer (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Option(names = "--threading", paramLabel = "MODE", defaultValue = "SHARED", description = "Default: SHARED.")
    ReplicationContext.ThreadingMode threading;

    @Option(names = "--idle", paramLabel = "spin|backoff", defaultValue = "spin", description = "Default: spin.")
    String idle;

    @Option(names = "--warmup", paramLabel = "TIME", defaultValue = "2s", converter = Durations.class,
        description = "Default: 2s.")
    long warmupMs;

    @Option(names = "--duration", paramLabel = "TIME", defaultValue = "5s", converter = Durations.class,
        description = "Default: 5s.")
    long durationMs;

    @Mixin
    BenchOptions.Runs runs = new BenchOptions.Runs(3);

    @Option(names = "--kill-leader", description = "Kill partition 0's leader host 1 s into each run (the " +
        "measurement window is then at least 3 s).")
    boolean killLeader;

    @Mixin
    BenchOptions.ReplicaLogs logs;

    @Override
    public Integer call() throws Exception
    {
        final Scenario scenario = new Scenario(
            "open".equalsIgnoreCase(load) ? Scenario.Load.OPEN : Scenario.Load.CLOSED, partitions,
            HarnessCommands.parseAcks(acks), replicas, minInsync, size, Math.min(producers, partitions), HarnessCommands.parseFlush(flush), batch,
            inFlight, rate, threading, !"backoff".equalsIgnoreCase(idle));
        final Harness.Plan plan = new Harness.Plan(
            killLeader ? List.of() : List.of(new Matrix.Entry(scenario, List.of())), warmupMs, durationMs,
            runs.runs(), 0, killLeader ? runs.runs() : 0, scenario, List.of(), 0, 0, 0, 1, 1, List.of(), false);
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put("Scenario", scenario.describe());
        settings.put("Timing", warmupMs + " ms warm-up, " + durationMs + " ms measured, " + runs.runs() +
            " runs");
        settings.put("Replica logs", logs.describe());
        return HarnessCommands.runPlan(spec, results.dir(), workDir, logs, plan, settings, "run", false);
    }
}
