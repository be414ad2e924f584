package io.tidemark.bench;

import io.tidemark.bench.harness.Harness;
import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.Progress;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.report.HarnessData;
import io.tidemark.bench.report.HarnessReport;
import io.tidemark.bench.report.JmhSummary;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.bench.report.ResultsIndex;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The harness commands: {@code quick} (the whole matrix in reduced form, about two minutes on 2 cores), {@code full}
 * (the same matrix with longer runs, more runs, two record sizes for the peer) and {@code run} (one scenario, every
 * parameter on the command line). Each writes a report directory (see {@link HarnessReport}) and updates the results
 * index.
 */
final class HarnessCommands
{
    private HarnessCommands()
    {
    }

    /**
     * Defaults of a harness command.
     *
     * @param warmupMs         warm-up of each scenario run.
     * @param durationMs       measurement of each scenario run.
     * @param runs             runs per scenario.
     * @param globalWarmupMs   unreported warm-up first.
     * @param failoverRuns     leader-kill runs.
     * @param peerSizes        peer record sizes.
     * @param peerWarmupMs     peer warm-up.
     * @param peerThroughputMs peer throughput phase.
     * @param peerLatencyMs    each peer latency phase.
     * @param peerRuns         JVMs per peer and size.
     */
    record Profile(long warmupMs, long durationMs, int runs, long globalWarmupMs, int failoverRuns,
        List<Integer> peerSizes, long peerWarmupMs, long peerThroughputMs, long peerLatencyMs, int peerRuns)
    {
    }

    /** About two minutes on 2 cores. */
    static final Profile QUICK = new Profile(500, 1_500, 1, 2_000, 1, List.of(100), 1_000, 1_500, 1_500, 1);
    /** About 20 minutes on 2 cores. */
    static final Profile FULL = new Profile(2_000, 8_000, 3, 5_000, 3, List.of(100, 1024), 3_000, 5_000, 10_000, 3);

    /** Options of quick and full; unset ones take the command's profile defaults. */
    static final class HarnessOptions
    {
        @Mixin
        BenchOptions.Results results;

        @Option(names = "--work-dir", paramLabel = "DIR",
            description = "Where the temporary logs go (default: java.io.tmpdir). Page-cache durability: use a " +
                "real file system, not tmpfs, for the flush sweep to mean anything.")
        Path workDir;

        @Option(names = "--sweeps", split = ",", paramLabel = "LIST",
            description = "Sweeps to run: acks, replicas, min.insync, partitions, flush, batch, latency (default: " +
                "all).")
        List<String> sweeps;

        @Option(names = "--warmup", paramLabel = "TIME", converter = Durations.class,
            description = "Warm-up of each scenario run, e.g. 500ms, 2s (quick 500ms, full 2s).")
        Long warmupMs;

        @Option(names = "--duration", paramLabel = "TIME", converter = Durations.class,
            description = "Measurement window of each scenario run (quick 1.5s, full 8s).")
        Long durationMs;

        @Option(names = "--runs", paramLabel = "N", description = "Runs per scenario (quick 1, full 3).")
        Integer runs;

        @Option(names = "--jit-warmup", paramLabel = "TIME", converter = Durations.class,
            description = "Unreported closed-loop run first (quick 2s, full 5s; 0 to skip).")
        Long globalWarmupMs;

        @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100",
            description = "Value bytes per record (default: ${DEFAULT-VALUE}).")
        int size;

        @Option(names = "--batch", paramLabel = "N", defaultValue = "64",
            description = "Records per produce request in the closed-loop sweeps (default: ${DEFAULT-VALUE}); " +
                "the latency sweep sends one record per request.")
        int batch;

        @Option(names = "--in-flight", paramLabel = "N", defaultValue = "16",
            description = "Closed loop: requests outstanding per producer thread (default: ${DEFAULT-VALUE}).")
        int inFlight;

        @Option(names = "--producers", paramLabel = "N", defaultValue = "1",
            description = "Producer threads (default: ${DEFAULT-VALUE}; capped at the partition count).")
        int producers;

        @Option(names = "--partitions", paramLabel = "N", defaultValue = "1",
            description = "Partitions of every sweep but the partitions sweep (default: ${DEFAULT-VALUE}).")
        int partitions;

        @Option(names = "--min-insync", paramLabel = "N", defaultValue = "1",
            description = "min.insync.replicas of every sweep but the min.insync sweep (default: " +
                "${DEFAULT-VALUE}, the replication default).")
        int minInsync;

        @Option(names = "--threading", paramLabel = "MODE", defaultValue = "SHARED",
            description = "Replication agent threading: SHARED, PER_HOST or DEDICATED (default: ${DEFAULT-VALUE}: " +
                "one busy-spinning thread for every agent, which with one producer thread fills 2 cores).")
        ReplicationContext.ThreadingMode threading;

        @Option(names = "--idle", paramLabel = "spin|backoff", defaultValue = "spin",
            description = "Idle strategy of the agent threads (default: ${DEFAULT-VALUE}).")
        String idle;

        @Option(names = "--rates", split = ",", paramLabel = "LIST",
            description = "Records/s of the latency sweep (default: 10000,100000).")
        List<Long> rates;

        @Mixin
        BenchOptions.ReplicaLogs logs;

        @Option(names = "--failover-runs", paramLabel = "N",
            description = "Leader-kill runs (acks=all, RF=3, open loop 10k/s; quick 1, full 3; 0 to skip).")
        Integer failoverRuns;

        @Option(names = "--no-peer", description = "Skip the single-writer comparison with Chronicle Queue.")
        boolean noPeer;

        @Option(names = "--peer-sizes", split = ",", paramLabel = "LIST",
            description = "Record sizes of the peer comparison (quick 100, full 100,1024).")
        List<Integer> peerSizes;

        @Option(names = "--peer-warmup", paramLabel = "TIME", converter = Durations.class,
            description = "Peer warm-up (quick 1s, full 3s).")
        Long peerWarmupMs;

        @Option(names = "--peer-duration", paramLabel = "TIME", converter = Durations.class,
            description = "Peer append-throughput phase (quick 1.5s, full 5s).")
        Long peerThroughputMs;

        @Option(names = "--peer-latency-duration", paramLabel = "TIME", converter = Durations.class,
            description = "Each peer latency phase (quick 1.5s, full 10s).")
        Long peerLatencyMs;

        @Option(names = "--peer-rate", paramLabel = "N", defaultValue = "100000",
            description = "Records/s of the peer latency phases (default: ${DEFAULT-VALUE}).")
        long peerRate;

        @Option(names = "--peer-runs", paramLabel = "N", description = "JVMs per peer and size (quick 1, full 3).")
        Integer peerRuns;

        @Option(names = "--peer-jdk", paramLabel = "JAVA_HOME",
            description = "Also run Chronicle Queue on this JDK (repeatable), with the same flags.")
        List<Path> peerJdks = new ArrayList<>();

        @Option(names = "--chronicle-strict",
            description = "Give Chronicle Queue's JVM only Tidemark's one flag (--add-exports " +
                "java.base/jdk.internal.misc=ALL-UNNAMED) instead of the --add-exports/--add-opens flags Chronicle " +
                "documents for Java 17; on Java 17+ it then cannot map its files and the report says so.")
        boolean chronicleStrict;
    }

    /**
     * What {@code quick} and {@code full} share: the harness options, {@code --jmh}, and the run itself; each names
     * only its profile.
     */
    abstract static class MatrixCommand implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Mixin
        HarnessOptions options;

        @Option(names = "--jmh", description = "Also run the JMH microbenchmarks, shortened (1 fork, 1 warm-up and " +
            "2 measurement iterations of 1 s), into the same report (adds several minutes).")
        boolean jmh;

        private final Profile profile;
        private final String name;

        MatrixCommand(final Profile profile, final String name)
        {
            this.profile = profile;
            this.name = name;
        }

        @Override
        public Integer call() throws Exception
        {
            return execute(spec, options, profile, name, jmh);
        }
    }

    /** The README's main command. */
    @Command(
        name = "quick",
        mixinStandardHelpOptions = true,
        description = {
            "The whole matrix in reduced form on an embedded cluster in a temporary directory: acks, replicas, " +
                "min.insync, partitions and flush sweeps (closed loop), latency at 10k and 100k records/s (open " +
                "loop), a leader kill, and single-writer append vs Chronicle Queue and a raw mapped copy. About " +
                "two minutes on 2 cores. Writes perf-results/local/<date>_<sha>/ and prints where."})
    static final class Quick extends MatrixCommand
    {
        Quick()
        {
            super(QUICK, "quick");
        }
    }

    /** The full run whose report is committed. */
    @Command(
        name = "full",
        mixinStandardHelpOptions = true,
        description = {
            "The same matrix as quick with 2 s warm-up, 8 s measurement, 3 runs per scenario, 3 leader kills, and " +
                "the peer comparison at 100 B and 1 KiB in 3 JVMs each. About 20 minutes on 2 cores."})
    static final class Full extends MatrixCommand
    {
        Full()
        {
            super(FULL, "full");
        }
    }

    static int parseAcks(final String text)
    {
        return "all".equalsIgnoreCase(text) || "-1".equals(text) ? Acks.ALL : Integer.parseInt(text);
    }

    static long parseFlush(final String text)
    {
        return "none".equalsIgnoreCase(text) ? Scenario.FLUSH_NONE : Long.parseLong(text);
    }

    private static int execute(final CommandSpec spec, final HarnessOptions o, final Profile profile,
        final String kind, final boolean jmh) throws Exception
    {
        final Set<String> sweeps = new LinkedHashSet<>(null == o.sweeps ? Matrix.ALL_SWEEPS : o.sweeps);
        for (final String sweep : sweeps)
        {
            if (!Matrix.ALL_SWEEPS.contains(sweep))
            {
                throw new CommandLine.ParameterException(spec.commandLine(), "unknown sweep '" + sweep + "'; " +
                    "known: " + String.join(", ", Matrix.ALL_SWEEPS));
            }
        }
        final boolean spin = !"backoff".equalsIgnoreCase(o.idle);
        final Scenario base = new Scenario(Scenario.Load.CLOSED, o.partitions, Acks.ALL, 3,
            Math.min(o.minInsync, 3), o.size, Math.min(o.producers, o.partitions), Scenario.FLUSH_NONE, o.batch,
            o.inFlight, 0, o.threading, spin);
        final List<Long> rates = null == o.rates ? Matrix.DEFAULT_RATES : o.rates;
        final List<Matrix.Entry> entries = Matrix.build(base, sweeps, rates);
        final Scenario failover = new Scenario(Scenario.Load.OPEN, 1, Acks.ALL, 3, 1, o.size, 1, Scenario.FLUSH_NONE,
            1, 1, 10_000, o.threading, spin);
        final long warmupMs = or(o.warmupMs, profile.warmupMs());
        final long durationMs = or(o.durationMs, profile.durationMs());
        final int runs = null == o.runs ? profile.runs() : o.runs;
        final int failoverRuns = null == o.failoverRuns ? profile.failoverRuns() : o.failoverRuns;
        final List<Integer> peerSizes = o.noPeer ? List.of() : null == o.peerSizes ? profile.peerSizes() :
            o.peerSizes;
        final Harness.Plan plan = new Harness.Plan(entries, warmupMs, durationMs, runs,
            or(o.globalWarmupMs, profile.globalWarmupMs()), failoverRuns, failover, peerSizes,
            or(o.peerWarmupMs, profile.peerWarmupMs()), or(o.peerThroughputMs, profile.peerThroughputMs()),
            or(o.peerLatencyMs, profile.peerLatencyMs()), o.peerRate,
            null == o.peerRuns ? profile.peerRuns() : o.peerRuns, o.peerJdks, o.chronicleStrict);

        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put("Scenario runs", String.format(Locale.ROOT, "%d scenarios x %d runs, each %d ms warm-up + %d ms " +
            "measured, in a fresh cluster and temporary directory; runs interleaved (run 1 of every scenario, then " +
            "run 2, ...); an unreported %d ms warm-up first", entries.size(), runs, warmupMs, durationMs,
            plan.globalWarmupMs()));
        settings.put("Closed-loop load", base.batchRecords() + " records per request, " + base.maxInFlight() +
            " requests in flight, " + base.producerThreads() + " producer thread(s), " + base.messageSize() + " B values");
        settings.put("Threading", base.threading() + " with " + (spin ? "busy-spin" : "backoff") + " idle: every " +
            "agent of the controller and the hosts (host agents, follower fetchers, replica logs' agents) runs on " +
            "one thread; with the producer thread that fills the 2 cores exactly. PER_HOST (a thread per host plus " +
            "the controller's) oversubscribes 2 cores: a probe gave acks=all p50 about 4 us with SHARED and about " +
            "1.5 ms with PER_HOST (ReplicationLatencyBenchmark).");
        settings.put("Replica logs", o.logs.describe() +
            ", other store defaults (page-cache " +
            "durability unless the flush sweep says otherwise)");
        if (!peerSizes.isEmpty())
        {
            settings.put("Peer comparison", String.format(Locale.ROOT, "sizes %s B, %d JVM(s) per peer and size, " +
                "%d ms warm-up, %d ms append throughput, %d ms append latency and %d ms write-to-tailer latency at " +
                "%,d records/s", peerSizes, plan.peerRuns(), plan.peerWarmupMs(), plan.peerThroughputMs(),
                plan.peerLatencyMs(), plan.peerLatencyMs(), plan.peerRate()));
        }
        return runPlan(spec, o.results.dir(), o.workDir, o.logs, plan, settings, kind, jmh);
    }

    private static long or(final Long value, final long fallback)
    {
        return null == value ? fallback : value;
    }

    static int runPlan(final CommandSpec spec, final Path resultsDir, final Path workDirOption,
        final BenchOptions.ReplicaLogs logs, final Harness.Plan plan, final Map<String, String> settings,
        final String kind,
        final boolean jmh) throws IOException, InterruptedException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final Path workDir = null == workDirOption ? Path.of(System.getProperty("java.io.tmpdir")) : workDirOption;
        Files.createDirectories(workDir);
        final PerfRun run = PerfRun.start(resultsDir, Path.of("").toAbsolutePath(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()));
        out.println("tidemark-bench: report directory " + run.directory().toAbsolutePath());
        out.println("tidemark-bench: " + plan.steps() + " steps, about " +
            Math.round(plan.plannedSeconds()) + " s of measurement; logs in " + workDir);
        out.flush();
        final Harness.Outcome outcome;
        try (Progress progress = new Progress(err, Progress.isTerminal(), plan.steps(), plan.plannedSeconds()))
        {
            outcome = new Harness(workDir, logs.segmentBytes, progress).dirtyBytesMax(logs.dirtyBytesMax)
                .run(plan);
        }
        List<JmhSummary.Row> jmhRows = null;
        if (jmh)
        {
            jmhRows = runShortJmh(run, err);
        }
        final HarnessData data = new HarnessData(kind, settings, outcome.scenarios(), outcome.peer(),
            outcome.failover(), jmhRows);
        final Map<String, String> extra = new LinkedHashMap<>();
        extra.put("harness.threading", settings.getOrDefault("Threading", ""));
        extra.put("harness.work.dir", workDir + ": " + io.tidemark.bench.report.Environment.fileSystem(workDir));
        extra.put("harness.jdk.internal.misc.exported", Object.class.getModule().isExported("jdk.internal.misc",
            HarnessCommands.class.getModule()) + " (java -jar: from the jar manifest's Add-Exports, which is not " +
            "listed in jvm.flags.harness)");
        final List<String> forked = List.of(String.join(" ", JvmFlags.FORKED_JVM_ARGS) +
            " (peer JVMs" + (jmh ? " and JMH forks" : "") + ")");
        final Map<String, String> facts = run.writeEnvironment(run.facts(), forked, extra);
        new HarnessReport(run, data).write(facts);
        final Path index = ResultsIndex.update(resultsDir);

        out.println();
        out.println(headline(data));
        out.println("Report: " + run.summaryFile().toAbsolutePath());
        out.println("        " + run.directory().resolve(HarnessReport.JSON_FILE).toAbsolutePath());
        out.println("        " + run.envFile().toAbsolutePath());
        out.println("Index:  " + index.toAbsolutePath());
        out.flush();
        if (!data.allVerified())
        {
            err.println("tidemark-bench: some scenarios FAILED verification (see the report)");
            return 1;
        }
        return 0;
    }

    private static String headline(final HarnessData data)
    {
        final StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "%-70s %14s %9s %9s %9s%n", "scenario", "records/s", "p50 us",
            "p99 us", "p99.9 us"));
        for (final ScenarioResult r : data.scenarios())
        {
            text.append(String.format(Locale.ROOT, "%-70s %,14.0f %9s %9s %9s%s%n", r.scenario().describe(),
                r.medianRecordsPerSecond(), fmt(r.medianPercentileMicros(50)), fmt(r.medianPercentileMicros(99)),
                fmt(r.medianPercentileMicros(99.9)), r.verified() ? "" : "  FAILED: " + r.problem()));
        }
        return text.toString();
    }

    private static String fmt(final double v)
    {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, v >= 100 ? "%,.0f" : "%.1f", v);
    }

    private static List<JmhSummary.Row> runShortJmh(final PerfRun run, final PrintWriter err) throws IOException
    {
        final OptionsBuilder options = new OptionsBuilder();
        options.include(BenchMain.STORE_BENCHMARKS)
            .forks(1)
            .warmupIterations(1)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(2)
            .measurementTime(TimeValue.seconds(1))
            .addProfiler(GCProfiler.class)
            .jvmArgsAppend(JvmFlags.FORKED_JVM_ARGS.toArray(new String[0]))
            .resultFormat(ResultFormatType.JSON)
            .result(run.jsonFile().toString())
            .shouldFailOnError(true);
        try
        {
            new Runner(options.build()).run();
        }
        catch (final RunnerException ex)
        {
            err.println("tidemark-bench: the JMH run failed: " + ex.getMessage());
        }
        return Files.exists(run.jsonFile()) ?
            JmhSummary.parse(Files.readString(run.jsonFile(), java.nio.charset.StandardCharsets.UTF_8)) : List.of();
    }
}
