package io.tidemark.bench.multiprocess;

import io.tidemark.bench.JvmFlags;
import io.tidemark.bench.report.Charts;
import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.HarnessReport;
import io.tidemark.bench.report.JsonWriter;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a multiprocess run's report into its directory: one {@code .hgrm} file per acks mode (the latency of every
 * run's window, in microseconds), {@value #JSON_FILE}, {@value PerfRun#SUMMARY_FILE} ({@link SummaryMarkdown}),
 * {@value PerfRun#ENV_FILE} (the machine, as the harness describes it, with the host JVMs' command line) and two
 * charts under {@value #CHARTS_DIR}/. The host logs are already in {@code hosts/} ({@link LoopbackCluster#close()}).
 */
final class MultiProcessReport
{
    /** The machine-readable summary. */
    static final String JSON_FILE = "summary.json";
    /** Where the charts go. */
    static final String CHARTS_DIR = "charts";
    /** The percentiles reported, by name. */
    static final Map<String, Double> PERCENTILES = percentiles();

    private final Path dir;
    private final MultiProcessOutcome outcome;
    private final List<String> chartFiles = new ArrayList<>();
    private final List<String> chartProblems = new ArrayList<>();

    /**
     * @param dir     the report directory.
     * @param outcome what the run produced.
     */
    MultiProcessReport(final Path dir, final MultiProcessOutcome outcome)
    {
        this.dir = dir;
        this.outcome = outcome;
    }

    private static Map<String, Double> percentiles()
    {
        final Map<String, Double> p = new LinkedHashMap<>();
        p.put("p50", 50.0);
        p.put("p90", 90.0);
        p.put("p99", 99.0);
        p.put("p99.9", 99.9);
        return p;
    }

    /**
     * Write everything.
     *
     * @param facts the run's facts: date, git, command, load averages.
     * @return the summary file.
     */
    Path write(final Map<String, String> facts) throws IOException
    {
        for (final AcksResult r : outcome.results())
        {
            if (!r.latency().isEmpty())
            {
                writeHgrm(hgrmName(r, outcome.plan().rate()), r.combinedLatency());
            }
        }
        writeCharts();
        final String machine = writeEnvironment(facts);
        Files.writeString(dir.resolve(JSON_FILE), JsonWriter.write(json(facts)), StandardCharsets.UTF_8);
        final Path summary = dir.resolve(PerfRun.SUMMARY_FILE);
        Files.writeString(summary, new SummaryMarkdown(outcome, facts, machine, chartFiles, chartProblems).render(),
            StandardCharsets.UTF_8);
        return summary;
    }

    /** @return the .hgrm file name of an acks mode's latency. */
    static String hgrmName(final AcksResult r, final long rate)
    {
        return "latency_acks-" + r.name() + "_" + rate + "rps.hgrm";
    }

    private void writeHgrm(final String name, final Histogram histogram) throws IOException
    {
        try (PrintStream out = new PrintStream(Files.newOutputStream(dir.resolve(name)), false,
            StandardCharsets.UTF_8))
        {
            histogram.outputPercentileDistribution(out, HarnessReport.HGRM_SCALE);
        }
    }

    private void writeCharts()
    {
        final Map<String, Double> bars = new LinkedHashMap<>();
        final Map<String, Histogram> curves = new LinkedHashMap<>();
        for (final AcksResult r : outcome.results())
        {
            if (!r.throughput().isEmpty())
            {
                bars.put("acks=" + r.name(), r.medianRecordsPerSecond());
            }
            curves.put("acks=" + r.name(), r.combinedLatency());
        }
        bars.put("Kafka acks=all *", KafkaReference.SATURATED_RECORDS_PER_SECOND);
        chart("throughput_by_acks.png", (file) -> Charts.bars(file, "Saturated records/s, 3 host JVMs, RF=3, " +
            outcome.plan().recordSize() + " B records (* Kafka: the issue's figure, not measured here)", "acks",
            "records/s", bars));
        chart("latency_by_acks.png", (file) -> Charts.percentiles(file, String.format(Locale.ROOT, "Latency at " +
            "%,d records/s, open loop (coordinated omission corrected), 3 host JVMs, RF=3", outcome.plan().rate()),
            curves));
    }

    /** Draws one chart. */
    @FunctionalInterface
    private interface ChartWriter
    {
        void write(Path file) throws IOException;
    }

    private void chart(final String name, final ChartWriter writer)
    {
        try
        {
            Files.createDirectories(dir.resolve(CHARTS_DIR));
            writer.write(dir.resolve(CHARTS_DIR).resolve(name));
            chartFiles.add(CHARTS_DIR + "/" + name);
        }
        catch (final IOException | RuntimeException | LinkageError ex)
        {
            chartProblems.add(name + ": " + ex);
        }
    }

    /** @return the one-line machine description for the summary. */
    private String writeEnvironment(final Map<String, String> facts) throws IOException
    {
        final String hostFlags = String.join(" ", JvmFlags.FORKED_JVM_ARGS) + " (the 3 host JVMs; no other flag)";
        final Map<String, String> env = Environment.describe(facts, List.of(hostFlags));
        final MultiProcessOutcome.ClusterSetup setup = outcome.setup();
        if (null != setup)
        {
            env.put("multiprocess.host.command", String.join(" ", setup.hostCommand()));
            env.put("multiprocess.host.endpoints", String.join(", ", setup.endpoints()) + " (Aeron UDP, loopback)");
            env.put("multiprocess.zookeeper", setup.zooKeeperConnect() + " (curator-test TestingServer in the " +
                "bench JVM)");
            env.put("multiprocess.cluster.dir", setup.runDirectory() + ": " +
                Environment.fileSystem(outcome.plan().workDir()) + " (the replica logs live here)");
        }
        env.put("harness.jdk.internal.misc.exported", String.valueOf(Object.class.getModule().isExported(
            "jdk.internal.misc", MultiProcessReport.class.getModule())));
        env.put("note", "other processes (builds and test runs of other work) shared this machine during the run: " +
            "see loadavg.start and loadavg.end; with 2 CPUs the bench JVM, the three host JVMs and anything else " +
            "compete for the same 2 CPUs");
        Files.writeString(dir.resolve(PerfRun.ENV_FILE), Environment.format(env), StandardCharsets.UTF_8);
        return env.get("cpu.model") + ", " + env.get("cpu.available.to.jvm") + " CPUs, " +
            env.get("memory.total").replaceFirst(" \\(.*", "") + " RAM, JDK " + env.get("jdk.version") + ", " +
            env.get("os") + " (details in " + PerfRun.ENV_FILE + ")";
    }

    // ------------------------------------------------------------------------------------------------------- json

    private Map<String, Object> json(final Map<String, String> facts)
    {
        final MultiProcessPlan plan = outcome.plan();
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", ResultsDirectory.KIND);
        root.put("allVerified", outcome.allVerified());
        root.put("targets", List.of());
        root.putAll(facts);
        root.put("wallSeconds", outcome.wallSeconds());
        root.put("settings", settingsJson(plan));
        root.put("kafkaReference", kafkaJson());
        final List<Object> acks = new ArrayList<>();
        for (final AcksResult r : outcome.results())
        {
            acks.add(acksJson(r));
        }
        root.put("acks", acks);
        root.put("hosts", hostsJson());
        root.put("failure", outcome.failure());
        root.put("problems", outcome.problems());
        root.put("notes", outcome.notes());
        root.put("charts", chartFiles);
        return root;
    }

    private static Map<String, Object> settingsJson(final MultiProcessPlan plan)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("hosts", LoopbackCluster.HOSTS);
        m.put("replicationFactor", LoopbackCluster.HOSTS);
        m.put("minInsyncReplicas", plan.minInsync());
        m.put("partitions", plan.partitions());
        m.put("recordBytes", plan.recordSize());
        m.put("acks", plan.acks().stream().map(Acks::describe).toList());
        m.put("runs", plan.runs());
        m.put("jitWarmupMs", plan.jitWarmupMs());
        m.put("warmupMs", plan.warmupMs());
        m.put("throughputMs", plan.throughputMs());
        m.put("latencyMs", plan.latencyMs());
        m.put("latencyRate", plan.rate());
        m.put("producerThreads", plan.producerThreads());
        m.put("batchSize", plan.batchSize());
        m.put("lingerMs", plan.lingerMs());
        m.put("latencyLingerMs", plan.latencyLingerMs());
        m.put("bufferMemory", plan.bufferMemory());
        m.put("settleTimeoutMs", plan.settleTimeoutMs());
        m.put("hostProperties", new LinkedHashMap<String, Object>(plan.hostProperties()));
        return m;
    }

    private static Map<String, Object> kafkaJson()
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("source", KafkaReference.SOURCE);
        m.put("acks", KafkaReference.ACKS);
        m.put("saturatedRecordsPerSecond", KafkaReference.SATURATED_RECORDS_PER_SECOND);
        m.put("p99Millis", KafkaReference.P99_MILLIS);
        m.put("p99Rate", KafkaReference.P99_RATE);
        return m;
    }

    private Map<String, Object> acksJson(final AcksResult r)
    {
        final MultiProcessPlan plan = outcome.plan();
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("acks", r.name());
        final Map<String, Object> t = new LinkedHashMap<>();
        t.put("medianRecordsPerSecond", r.medianRecordsPerSecond());
        t.put("megabytesPerSecond", r.medianRecordsPerSecond() * plan.recordSize() / 1e6);
        t.put("spread", r.spread());
        t.put("vsKafkaAcksAll", KafkaReference.throughputRatio(r.medianRecordsPerSecond()));
        t.put("runs", r.throughput().stream().map(MultiProcessReport::throughputRunJson).toList());
        m.put("throughput", t);
        final Map<String, Object> l = new LinkedHashMap<>(latencyJson(r.combinedLatency()));
        l.put("rate", plan.rate());
        l.put("unit", "microseconds, from each record's due time");
        l.put("p99VsKafkaAcksAll", KafkaReference.latencyRatio(r.combinedLatency().getValueAtPercentile(99) / 1e6,
            plan.rate()));
        l.put("hgrm", r.latency().isEmpty() ? null : hgrmName(r, plan.rate()));
        l.put("runs", r.latency().stream().map(MultiProcessReport::latencyRunJson).toList());
        m.put("latency", l);
        m.put("minIsr", r.minIsr());
        m.put("leaderChanges", r.leaderChanges());
        m.put("failedSends", r.failedSends());
        m.put("clean", r.clean(plan.runs()));
        return m;
    }

    private static Map<String, Object> latencyJson(final Histogram h)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        PERCENTILES.forEach((name, p) -> m.put(name, h.getTotalCount() == 0 ? null : h.getValueAtPercentile(p) / 1e3));
        m.put("max", h.getTotalCount() == 0 ? null : h.getMaxValue() / 1e3);
        m.put("count", h.getTotalCount());
        return m;
    }

    private static Map<String, Object> throughputRunJson(final ThroughputResult t)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", t.run());
        m.put("recordsPerSecond", t.recordsPerSecond());
        m.put("windowRecords", t.windowRecords());
        m.put("completed", t.completed());
        m.put("failed", t.failed());
        m.put("errors", new LinkedHashMap<String, Object>(t.errors()));
        m.put("firstError", t.firstError());
        m.put("failure", t.failure());
        m.put("minIsr", t.cluster().minIsr());
        m.put("leaderChanges", t.cluster().leaderChanges());
        return m;
    }

    private static Map<String, Object> latencyRunJson(final LatencyResult l)
    {
        final Map<String, Object> m = new LinkedHashMap<>(latencyJson(l.latency()));
        m.put("run", l.run());
        m.put("scheduled", l.scheduled());
        m.put("sent", l.sent());
        m.put("acknowledged", l.acknowledged());
        m.put("failed", l.failed());
        m.put("errors", new LinkedHashMap<String, Object>(l.errors()));
        m.put("firstError", l.firstError());
        m.put("maxSendLagMicros", l.maxSendLagNs() / 1e3);
        m.put("readBack", l.readBack().describe());
        m.put("readBackOk", l.readBack().ok());
        m.put("failure", l.failure());
        m.put("minIsr", l.cluster().minIsr());
        m.put("leaderChanges", l.cluster().leaderChanges());
        return m;
    }

    private List<Object> hostsJson()
    {
        final List<Object> hosts = new ArrayList<>();
        for (int id = 0; id < LoopbackCluster.HOSTS; id++)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("endpoint", null == outcome.setup() ? null : outcome.setup().endpoints().get(id));
            final HostProcess.Stop stop = id < outcome.stops().size() ? outcome.stops().get(id) : null;
            m.put("stop", null == stop ? null : stop.describe());
            m.put("exitCode", null == stop ? null : stop.exitCode());
            final HostProcess.LogSummary log = id < outcome.logs().size() ? outcome.logs().get(id) : null;
            m.put("log", MultiProcessBench.HOSTS_DIR + "/host-" + id + ".log");
            m.put("severeLines", null == log ? null : log.severe());
            m.put("warningLines", null == log ? null : log.warnings());
            m.put("firstProblems", null == log ? List.of() : log.first());
            hosts.add(m);
        }
        return hosts;
    }

    // ---------------------------------------------------------------------------------------------------- console

    /** @return a console line for a throughput phase. */
    static String describe(final ThroughputResult t)
    {
        return String.format(Locale.ROOT, "  run %d acks=%-3s saturated: %,12.0f records/s%s (min ISR %d, %d leader " +
            "changes)%s", t.run(), Acks.describe(t.acks()), t.recordsPerSecond(),
            t.acks() == Acks.NONE ? " sent" : " acknowledged", t.cluster().minIsr(), t.cluster().leaderChanges(),
            problemText(t.failed(), t.firstError(), t.failure()));
    }

    /** @return a console line for a latency phase. */
    static String describe(final LatencyResult l, final long rate)
    {
        final Histogram h = l.latency();
        return String.format(Locale.ROOT, "  run %d acks=%-3s at %,d records/s: p50 %s p90 %s p99 %s p99.9 %s max %s " +
            "ms; read back: %s%s", l.run(), Acks.describe(l.acks()), rate, millis(h, 50), millis(h, 90),
            millis(h, 99), millis(h, 99.9), millis(h, 100), l.readBack().ok() ? "ok" : l.readBack().describe(),
            problemText(l.failed(), l.firstError(), l.failure()));
    }

    private static String problemText(final long failed, final String firstError, final String failure)
    {
        return (failed > 0 ? "; " + failed + " failed sends, the first: " + firstError : "") +
            (null != failure ? "; FAILED: " + failure : "");
    }

    /** @return the final table for the console. */
    static String consoleTable(final MultiProcessOutcome outcome)
    {
        final StringBuilder text = new StringBuilder();
        text.append(String.format(Locale.ROOT, "%-6s %14s   %9s %9s %9s %9s %9s   (latency ms at %,d records/s)%n",
            "acks", "records/s", "p50", "p90", "p99", "p99.9", "max", outcome.plan().rate()));
        for (final AcksResult r : outcome.results())
        {
            final Histogram h = r.combinedLatency();
            text.append(String.format(Locale.ROOT, "%-6s %,14.0f   %9s %9s %9s %9s %9s%n", r.name(),
                r.medianRecordsPerSecond(), millis(h, 50), millis(h, 90), millis(h, 99), millis(h, 99.9),
                millis(h, 100)));
        }
        text.append(String.format(Locale.ROOT, "Kafka, 3 brokers, acks=all (%s): ~%,.0f records/s, p99 ~%.0f ms at " +
            "%,d records/s", KafkaReference.SOURCE, KafkaReference.SATURATED_RECORDS_PER_SECOND,
            KafkaReference.P99_MILLIS, KafkaReference.P99_RATE));
        return text.toString();
    }

    /**
     * @param h          a histogram in nanoseconds.
     * @param percentile the percentile; 100 for the maximum.
     * @return the value in milliseconds, to three significant digits or so; "-" for an empty histogram.
     */
    static String millis(final Histogram h, final double percentile)
    {
        if (h.getTotalCount() == 0)
        {
            return "-";
        }
        final double ms = (percentile >= 100 ? h.getMaxValue() : h.getValueAtPercentile(percentile)) / 1e6;
        return String.format(Locale.ROOT, ms < 1 ? "%.3f" : ms < 100 ? "%.2f" : "%,.0f", ms);
    }
}
