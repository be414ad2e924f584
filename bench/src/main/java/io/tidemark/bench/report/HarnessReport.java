package io.tidemark.bench.report;

import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.bench.peer.PeerResult;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;
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
import java.util.function.Function;

/**
 * Writes a harness run's report into its directory: one {@code .hgrm} file per scenario (and per peer measure, and
 * for the failover runs), {@value #JSON_FILE}, {@value PerfRun#SUMMARY_FILE}, the charts under {@value #CHARTS_DIR}/;
 * {@value PerfRun#ENV_FILE} is written by {@link PerfRun#writeEnvironment}.
 */
public final class HarnessReport
{
    /** The machine-readable summary. */
    public static final String JSON_FILE = "summary.json";
    /** Where the charts go. */
    public static final String CHARTS_DIR = "charts";
    /** Units of the .hgrm files: microseconds (histograms are recorded in nanoseconds). */
    public static final double HGRM_SCALE = 1_000.0;

    private final PerfRun run;
    private final HarnessData data;
    private final List<String> chartFiles = new ArrayList<>();
    private final List<String> chartProblems = new ArrayList<>();

    /**
     * @param run  the run directory.
     * @param data the measures.
     */
    public HarnessReport(final PerfRun run, final HarnessData data)
    {
        this.run = run;
        this.data = data;
    }

    /**
     * Write everything.
     *
     * @param facts the run's facts (date, git, command, load averages), as {@link PerfRun#facts()} gives them.
     */
    public void write(final Map<String, String> facts) throws IOException
    {
        writeHistograms();
        writeCharts();
        final List<Targets.Target> targets = Targets.evaluate(data);
        Files.writeString(run.directory().resolve(JSON_FILE), JsonWriter.write(json(facts, targets)),
            StandardCharsets.UTF_8);
        Files.writeString(run.summaryFile(), markdown(facts, targets), StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------------------------------------ histograms

    /**
     * @param scenario a scenario.
     * @return its .hgrm file name.
     */
    public static String hgrmName(final Scenario scenario)
    {
        return scenario.id() + ".hgrm";
    }

    static String peerHgrmName(final PeerComparison.Group g, final boolean tailer, final boolean main)
    {
        return "peer_" + g.peer() + "_" + g.size() + "B_" + (tailer ? "tailer" : "append") +
            (main ? "" : "_" + javaTag(g.javaVersion())) + ".hgrm";
    }

    static String failoverHgrmName(final int run)
    {
        return "failover_run" + run + ".hgrm";
    }

    private static String javaTag(final String version)
    {
        return "java" + (null == version ? "unknown" : version.replaceAll("[^0-9A-Za-z.]+", "-"));
    }

    private void writeHistograms() throws IOException
    {
        for (final ScenarioResult r : data.scenarios())
        {
            if (r.hasLatency())
            {
                writeHgrm(hgrmName(r.scenario()), r.combinedLatency());
            }
        }
        if (null != data.peer())
        {
            for (final PeerComparison.Group g : data.peer().groups())
            {
                final boolean main = g.equals(data.peer().main(g.peer(), g.size()));
                if (null != g.appendLatency())
                {
                    writeHgrm(peerHgrmName(g, false, main), g.appendLatency());
                }
                if (null != g.tailerLatency())
                {
                    writeHgrm(peerHgrmName(g, true, main), g.tailerLatency());
                }
            }
        }
        for (int i = 0; i < data.failover().size(); i++)
        {
            final Histogram h = data.failover().get(i).latency();
            if (null != h && h.getTotalCount() > 0)
            {
                writeHgrm(failoverHgrmName(i + 1), h);
            }
        }
    }

    private void writeHgrm(final String name, final Histogram histogram) throws IOException
    {
        try (PrintStream out = new PrintStream(Files.newOutputStream(run.directory().resolve(name)), false,
            StandardCharsets.UTF_8))
        {
            histogram.outputPercentileDistribution(out, HGRM_SCALE);
        }
    }

    // ---------------------------------------------------------------------------------------------------- charts

    private void writeCharts()
    {
        final Path dir = run.directory().resolve(CHARTS_DIR);
        try
        {
            Files.createDirectories(dir);
            bySweep(dir, Matrix.ACKS, "tps-by-acks.png", "Records/s by acks (RF=3, closed loop)", "acks",
                (s) -> "acks=" + s.acksName());
            bySweep(dir, Matrix.REPLICAS, "tps-by-replicas.png", "Records/s by replication factor (acks=all)",
                "replicas", (s) -> "RF=" + s.replicas());
            bySweep(dir, Matrix.MIN_INSYNC, "tps-by-min-insync.png",
                "Records/s by min.insync.replicas (acks=all, RF=3)", "min.insync.replicas",
                (s) -> "min.insync=" + s.minInsync());
            bySweep(dir, Matrix.FLUSH, "tps-by-flush.png", "Records/s by flush policy (RF=1, acks=1)",
                "flush.interval.messages", Scenario::flushName);
            bySweep(dir, Matrix.BATCH, "tps-by-batch.png", "Records/s by records per request (acks=all, RF=3)",
                "records per produce request", (s) -> Integer.toString(s.batchRecords()));
            final Map<String, Double> partitions = sweepValues(Matrix.PARTITIONS, (s) -> Integer.toString(
                s.partitions()));
            if (!partitions.isEmpty())
            {
                Charts.lines(dir.resolve("tps-by-partitions.png"), "Records/s by partitions (acks=all, RF=3)",
                    "partitions", "records/s (median)", Map.of("records/s", partitions));
                chartFiles.add(CHARTS_DIR + "/tps-by-partitions.png");
            }
            final List<Long> rates = data.scenarios().stream().filter((r) -> r.sweeps().contains(Matrix.LATENCY))
                .map((r) -> r.scenario().load() == Scenario.Load.OPEN ? r.scenario().rate() : 0L).distinct()
                .toList();
            for (final long rate : rates)
            {
                final Map<String, Histogram> curves = new LinkedHashMap<>();
                for (final ScenarioResult r : inSweep(Matrix.LATENCY))
                {
                    final boolean open = r.scenario().load() == Scenario.Load.OPEN;
                    if (open ? r.scenario().rate() == rate : rate == 0)
                    {
                        curves.put("acks=" + r.scenario().acksName(), r.combinedLatency());
                    }
                }
                final String file = "latency-by-acks-" + (rate == 0 ? "one-at-a-time" : Scenario.rateName(rate)) +
                    ".png";
                Charts.percentiles(dir.resolve(file), rate == 0 ?
                    "Append-to-ack latency by acks, RF=3, one request at a time" :
                    "Append-to-ack latency by acks, RF=3, open loop " + Scenario.rateName(rate) + " records/s",
                    curves);
                chartFiles.add(CHARTS_DIR + "/" + file);
            }
            if (null != data.peer())
            {
                for (final int size : data.peer().sizes())
                {
                    final Map<String, Histogram> curves = new LinkedHashMap<>();
                    for (final String peer : List.of(PeerMain.TIDEMARK, PeerMain.CHRONICLE, PeerMain.RAW_COPY))
                    {
                        final PeerComparison.Group g = data.peer().main(peer, size);
                        if (null != g && g.ok())
                        {
                            curves.put(peer + " append", g.appendLatency());
                            if (null != g.tailerLatency())
                            {
                                curves.put(peer + " write-to-tailer", g.tailerLatency());
                            }
                        }
                    }
                    final String file = "peer-latency-" + size + "B.png";
                    Charts.percentiles(dir.resolve(file), "Single-writer latency, " + size + " B records",
                        curves);
                    chartFiles.add(CHARTS_DIR + "/" + file);
                }
            }
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            chartProblems.add("charts could not be drawn: " + ex);
        }
    }

    private void bySweep(final Path dir, final String sweep, final String file, final String title,
        final String category, final Function<Scenario, String> label) throws IOException
    {
        final Map<String, Double> values = sweepValues(sweep, label);
        if (!values.isEmpty())
        {
            Charts.bars(dir.resolve(file), title, category, "records/s (median)", values);
            chartFiles.add(CHARTS_DIR + "/" + file);
        }
    }

    private Map<String, Double> sweepValues(final String sweep, final Function<Scenario, String> label)
    {
        final Map<String, Double> values = new LinkedHashMap<>();
        for (final ScenarioResult r : inSweep(sweep))
        {
            values.put(label.apply(r.scenario()), r.medianRecordsPerSecond());
        }
        return values;
    }

    private List<ScenarioResult> inSweep(final String sweep)
    {
        return data.scenarios().stream().filter((r) -> r.sweeps().contains(sweep))
            .sorted((a, b) -> Matrix.order(sweep).compare(a.scenario(), b.scenario())).toList();
    }

    // ------------------------------------------------------------------------------------------------------ json

    private Map<String, Object> json(final Map<String, String> facts, final List<Targets.Target> targets)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", data.kind());
        root.put("run", new LinkedHashMap<>(facts));
        root.put("settings", new LinkedHashMap<>(data.settings()));
        root.put("allVerified", data.allVerified());
        final List<Object> scenarios = new ArrayList<>();
        for (final ScenarioResult r : data.scenarios())
        {
            scenarios.add(scenarioJson(r));
        }
        root.put("scenarios", scenarios);
        root.put("peerComparison", peerJson());
        final List<Object> failover = new ArrayList<>();
        for (int i = 0; i < data.failover().size(); i++)
        {
            failover.add(failoverJson(data.failover().get(i), i + 1));
        }
        root.put("failover", failover);
        final List<Object> targetList = new ArrayList<>();
        for (final Targets.Target t : targets)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", t.name());
            m.put("target", t.target());
            m.put("measured", t.measured());
            m.put("status", t.status().name());
            m.put("note", t.note());
            targetList.add(m);
        }
        root.put("targets", targetList);
        root.put("charts", new ArrayList<Object>(chartFiles));
        if (!chartProblems.isEmpty())
        {
            root.put("chartProblems", new ArrayList<Object>(chartProblems));
        }
        return root;
    }

    private static Map<String, Object> scenarioJson(final ScenarioResult r)
    {
        final Scenario s = r.scenario();
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("sweeps", new ArrayList<Object>(r.sweeps()));
        final Map<String, Object> p = new LinkedHashMap<>();
        p.put("load", s.load() == Scenario.Load.CLOSED ? "closed-loop" : "open-loop");
        p.put("rate", s.load() == Scenario.Load.OPEN ? s.rate() : null);
        p.put("partitions", s.partitions());
        p.put("acks", s.acksName());
        p.put("replicas", s.replicas());
        p.put("minInsyncReplicas", s.minInsync());
        p.put("messageSize", s.messageSize());
        p.put("producerThreads", s.producerThreads());
        p.put("flush", s.flushName());
        p.put("batchRecords", s.batchRecords());
        p.put("maxInFlight", s.load() == Scenario.Load.CLOSED ? s.maxInFlight() : null);
        p.put("threading", s.threading().name());
        p.put("idle", s.busySpin() ? "busy-spin" : "backoff");
        m.put("parameters", p);
        m.put("recordsPerSec", r.medianRecordsPerSecond());
        m.put("recordsPerSecMin", r.minRecordsPerSecond());
        m.put("recordsPerSecMax", r.maxRecordsPerSecond());
        m.put("spreadPercent", r.spreadPercent());
        m.put("mbPerSec", r.medianMbPerSecond());
        m.put("appendedPerSec", r.medianAppendedPerSecond());
        m.put("cpusUsed", r.medianCpusUsed());
        m.put("loadAverage1m", r.medianLoadAverage());
        m.put("leaderElections", r.elections());
        m.put("latencyUs", latencyJson(r));
        m.put("hgrm", r.hasLatency() ? hgrmName(s) : null);
        m.put("verified", r.verified());
        m.put("verifiedRecords", r.verifiedRecords());
        m.put("problem", r.problem());
        final List<Object> runs = new ArrayList<>();
        for (final RunResult run : r.runs())
        {
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("recordsPerSec", run.recordsPerSecond());
            one.put("mbPerSec", run.mbPerSecond());
            one.put("appendedPerSec", run.appendedPerSecond());
            one.put("latencyUs", histogramJson(run.latency()));
            one.put("queuedRecords", run.queuedRecords());
            one.put("ackedRecords", run.ackedRecords());
            one.put("verifiedRecords", run.verifiedRecords());
            one.put("recordsInLogs", run.recordsInLogs());
            one.put("errors", new LinkedHashMap<String, Object>(run.errors()));
            one.put("cpusUsed", run.cpusUsed());
            one.put("loadAverage1m", run.loadAverage());
            if (null != run.machineBefore() && null != run.machineAfter())
            {
                one.put("loadAverage1mBefore", run.machineBefore().load1());
                one.put("dirtyKibBefore", run.machineBefore().dirtyKib());
                one.put("dirtyKibAfter", run.machineAfter().dirtyKib());
                one.put("writebackKibBefore", run.machineBefore().writebackKib());
                one.put("writebackKibAfter", run.machineAfter().writebackKib());
            }
            one.put("leaderElections", run.elections());
            one.put("verified", run.verified());
            one.put("problem", run.problem());
            runs.add(one);
        }
        m.put("runs", runs);
        return m;
    }

    private static Map<String, Object> latencyJson(final ScenarioResult r)
    {
        if (!r.hasLatency())
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, r.medianPercentileMicros(p)));
        m.put("max", r.maxMicros());
        m.put("count", r.combinedLatency().getTotalCount());
        return m;
    }

    private static Map<String, Object> histogramJson(final Histogram h)
    {
        if (null == h || h.getTotalCount() == 0)
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, h.getValueAtPercentile(p) / 1e3));
        m.put("max", h.getMaxValue() / 1e3);
        m.put("count", h.getTotalCount());
        return m;
    }

    private Map<String, Object> peerJson()
    {
        final PeerComparison peer = data.peer();
        if (null == peer)
        {
            return null;
        }
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("mainJavaHome", peer.mainJavaHome());
        final List<Object> groups = new ArrayList<>();
        for (final PeerComparison.Group g : peer.groups())
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("peer", g.peer());
            m.put("messageSize", g.size());
            m.put("javaVersion", g.javaVersion());
            m.put("javaHome", g.javaHome());
            m.put("jvmArgs", g.runs().get(0).jvmArgs());
            m.put("runs", g.runs().size());
            m.put("ok", g.ok());
            if (g.ok())
            {
                m.put("appendRecordsPerSec", g.medianRecordsPerSecond());
                m.put("appendRecordsPerSecMin", g.rangeRecordsPerSecond()[0]);
                m.put("appendRecordsPerSecMax", g.rangeRecordsPerSecond()[1]);
                m.put("appendMbPerSec", g.medianRecordsPerSecond() * g.size() / 1e6);
                m.put("appendLatencyUs", peerLatencyJson(g, false));
                m.put("tailerLatencyUs", peerLatencyJson(g, true));
                if (null != g.appendServiceTime())
                {
                    final Map<String, Object> service = new LinkedHashMap<>();
                    ScenarioResult.PERCENTILES.forEach((name, p) -> service.put(name,
                        g.medianServicePercentileMicros(p)));
                    service.put("max", g.appendServiceTime().getMaxValue() / 1e3);
                    m.put("appendServiceTimeUs", service);
                }
            }
            else
            {
                final PeerResult failure = g.firstFailure();
                m.put("failure", failure.failureSummary());
                m.put("failureDetail", failure.failure());
            }
            groups.add(m);
        }
        root.put("groups", groups);
        final List<Object> ratios = new ArrayList<>();
        for (final int size : peer.sizes())
        {
            ratios.add(ratioJson(peer, size));
        }
        root.put("ratios", ratios);
        return root;
    }

    private static Map<String, Object> peerLatencyJson(final PeerComparison.Group g, final boolean tailer)
    {
        if ((tailer ? g.tailerLatency() : g.appendLatency()) == null)
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, g.medianPercentileMicros(tailer, p)));
        m.put("max", g.maxMicros(tailer));
        return m;
    }

    private static Map<String, Object> ratioJson(final PeerComparison peer, final int size)
    {
        final PeerComparison.Group ours = peer.main(PeerMain.TIDEMARK, size);
        final PeerComparison.Group chronicle = peer.main(PeerMain.CHRONICLE, size);
        final PeerComparison.Group raw = peer.main(PeerMain.RAW_COPY, size);
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("messageSize", size);
        final boolean oursOk = null != ours && ours.ok();
        final boolean chronicleOk = null != chronicle && chronicle.ok();
        if (oursOk && chronicleOk)
        {
            m.put("chronicleMeasurable", true);
            m.put("appendThroughputTidemarkOverChronicle",
                ours.medianRecordsPerSecond() / chronicle.medianRecordsPerSecond());
            for (final Map.Entry<String, Double> e : ScenarioResult.PERCENTILES.entrySet())
            {
                m.put("appendLatency" + e.getKey() + "TidemarkOverChronicle",
                    ours.medianPercentileMicros(false, e.getValue()) /
                    chronicle.medianPercentileMicros(false, e.getValue()));
                m.put("tailerLatency" + e.getKey() + "TidemarkOverChronicle",
                    ours.medianPercentileMicros(true, e.getValue()) /
                    chronicle.medianPercentileMicros(true, e.getValue()));
            }
        }
        else
        {
            m.put("chronicleMeasurable", false);
            m.put("why", null == chronicle ? "not run" : null == chronicle.firstFailure() ? "failed" :
                "Chronicle Queue did not run with JVM arguments " + chronicle.firstFailure().jvmArgs() + ": " +
                chronicle.firstFailure().failureSummary());
        }
        if (oursOk && null != raw && raw.ok())
        {
            m.put("appendThroughputTidemarkOverRawCopy", ours.medianRecordsPerSecond() / raw.medianRecordsPerSecond());
        }
        return m;
    }

    private static Map<String, Object> failoverJson(final RunResult r, final int index)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", index);
        m.put("scenario", r.scenario().id());
        if (null != r.failover())
        {
            m.put("killedHost", r.failover().killedHost());
            m.put("newLeader", r.failover().newLeader());
            m.put("acksResumedAfterMs", r.failover().resumeNanos() < 0 ? null : r.failover().resumeNanos() / 1e6);
            m.put("lastAckBeforeKillMs", r.failover().lastAckBeforeNanos() / 1e6);
            m.put("ackedRecordsAfterKill", r.failover().ackedAfterKill());
            m.put("requestsLostInFlight", r.failover().lostInFlight());
        }
        m.put("latencyUs", histogramJson(r.latency()));
        m.put("hgrm", null == r.latency() || r.latency().getTotalCount() == 0 ? null : failoverHgrmName(index));
        m.put("errors", new LinkedHashMap<String, Object>(r.errors()));
        m.put("leaderElections", r.elections());
        m.put("verifiedRecords", r.verifiedRecords());
        m.put("verified", r.verified());
        m.put("problem", r.problem());
        return m;
    }

    // -------------------------------------------------------------------------------------------------- markdown

    private String markdown(final Map<String, String> facts, final List<Targets.Target> targets)
    {
        final StringBuilder md = new StringBuilder();
        md.append("# Tidemark bench: ").append(data.kind()).append(" run\n\n");
        md.append("- Date: ").append(facts.get("date")).append('\n');
        md.append("- Commit: ").append(facts.get("git")).append('\n');
        md.append("- Command: `").append(facts.get("command")).append("`\n");
        md.append("- Machine: ").append(facts.getOrDefault("machine", "see env.txt")).append('\n');
        md.append("- Load averages (1/5/15 min): ").append(facts.get("loadavg.start")).append(" at the start, ")
            .append(facts.get("loadavg.end")).append(" at the end. Other processes (other builds and test runs) ")
            .append("shared this machine during the run; a load above the core count means the benchmark threads ")
            .append("were competing for the CPUs.\n");
        data.settings().forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append("- Every acknowledged record verified in the log: **")
            .append(data.allVerified() ? "yes" : "NO, see the failed scenarios below").append("**\n\n");

        inShort(md);
        sweepTable(md, Matrix.ACKS, "Acks (RF=3, closed loop)", "acks", Scenario::acksName);
        sweepTable(md, Matrix.REPLICAS, "Replicas (acks=all, closed loop)", "RF", (s) -> "" + s.replicas());
        sweepTable(md, Matrix.MIN_INSYNC, "min.insync.replicas (acks=all, RF=3, closed loop)", "min.insync",
            (s) -> "" + s.minInsync());
        sweepTable(md, Matrix.PARTITIONS, "Partitions (acks=all, RF=3, closed loop)", "partitions",
            (s) -> "" + s.partitions());
        sweepTable(md, Matrix.FLUSH, "Flush policy (RF=1, acks=1, closed loop)", "flush", Scenario::flushName);
        sweepTable(md, Matrix.BATCH, "Records per request (acks=all, RF=3, closed loop)", "batch",
            (s) -> "" + s.batchRecords());
        sweepTable(md, Matrix.LATENCY, "Latency (RF=3, one record per request): one request at a time, and at " +
            "fixed rates (open loop, coordinated omission corrected)", "acks @ load", (s) -> s.acksName() + " @ " +
            (s.load() == Scenario.Load.OPEN ? Scenario.rateName(s.rate()) + "/s" : "one at a time"));
        final List<ScenarioResult> others = data.scenarios().stream().filter((r) -> r.sweeps().isEmpty() ||
            r.sweeps().stream().noneMatch(Matrix.ALL_SWEEPS::contains)).toList();
        if (!others.isEmpty())
        {
            table(md, "Scenarios", "scenario", others, Scenario::describe);
        }
        peerSection(md);
        failoverSection(md);
        if (null != data.jmhRows())
        {
            md.append("## JMH microbenchmarks\n\n").append(JmhSummary.table(data.jmhRows())).append('\n');
        }
        goals(md, targets);
        md.append("## Method\n\n");
        md.append("- **Closed loop** (maximum throughput): each producer thread keeps `in-flight` produce requests ")
            .append("of `batch` records outstanding (records encoded with `RecordEncoder`, sent with ")
            .append("`ReplicationCluster.produceRecords`; one record per request goes through `produce`). ")
            .append("records/s counts records acknowledged inside the measurement window (acks=0: records appended ")
            .append("to the leaders' logs, from their log end offsets). Its latency is the send-to-acknowledge time ")
            .append("of each request under saturation (a queueing time, not comparable with open-loop numbers).\n");
        md.append("- **Open loop** (fixed rate): one record is due every 1/rate s; latency is measured from the due ")
            .append("time, so a stall delays the records behind it and they count it (coordinated omission ")
            .append("corrected).\n");
        md.append("- **CPUs got**: CPU time the benchmark JVM received during the measurement window divided by ")
            .append("its length (median over runs). The design needs 2.00 on this 2-core machine (one busy-spinning ")
            .append("agent thread, one producer thread); less means other processes took CPU time from it. ")
            .append("**load**: the 1-minute load average at the window's end. **dirty MiB**: the machine's Dirty + ")
            .append("Writeback pages of /proc/meminfo at the window's start and end (each run, in order).\n");
        md.append("- MB/s is payload: records/s x message size. Latency percentiles are the median over the runs; ")
            .append("max is the largest of any run. Spread is (max - min) / median of the runs' records/s, shown ")
            .append("from ").append(ScenarioResult.MIN_RUNS_FOR_SPREAD).append(" runs on (`--runs`): with fewer ")
            .append("it says nothing about the noise.\n");
        md.append("- Each scenario run starts a fresh `ReplicationCluster` (one host per replica) in a new temporary ")
            .append("directory, warms up, measures, drains, then reads every partition back through ")
            .append("`ReplicationCluster.openReader` and checks that every acknowledged record is at the offset its ")
            .append("acknowledgement gave, with its producer's content, and (without failures) that the logs hold ")
            .append("exactly the records queued. A run that fails this check fails the scenario.\n");
        md.append("- `.hgrm` files: HdrHistogram percentile distributions in microseconds (all runs of a scenario ")
            .append("combined), plottable with the HdrHistogram plotter.\n");
        md.append("- Peers run in forked JVMs, one per peer, size and run. Tidemark's and the raw copy's JVMs get ")
            .append("exactly `--add-exports java.base/jdk.internal.misc=ALL-UNNAMED`; Chronicle Queue's JVM (Chronicle ")
            .append("code only) also gets the `--add-exports`/`--add-opens` flags Chronicle documents for Java 17, ")
            .append("without which it cannot map its files (`--chronicle-strict` leaves them out). Chronicle Queue ")
            .append("runs with its defaults (daily roll cycle, binary wire, one excerpt per record, no pretoucher). ")
            .append("Append throughput: one thread appending flat out. Append latency and ")
            .append("write-to-tailer latency: one record due every 1/rate s, timed from its due time (so time the ")
            .append("writer spent descheduled counts); the tailer is a busy-polling thread. Service time: the append ")
            .append("call alone, from its start to its return (what the store costs when the writer has the CPU).\n");
        md.append("- **One request at a time** (latency sweep): closed loop with one request in flight, one record ")
            .append("per request: the replication round trip by itself, without queueing behind other requests.\n\n");
        md.append("## Files\n\n");
        md.append("- `summary.json`: every scenario's parameters, records/s, MB/s, latency percentiles (us), runs; ")
            .append("the peer comparison and ratios; the failover runs; the targets.\n");
        md.append("- `env.txt`: CPU, cores, memory, JDK, JVM flags, OS, file system, load averages.\n");
        for (final String chart : chartFiles)
        {
            md.append("- `").append(chart).append("`\n");
        }
        for (final String problem : chartProblems)
        {
            md.append("- ").append(problem).append('\n');
        }
        return md.toString();
    }

    /** The figures a reader looks for first, before the tables they come from. */
    private void inShort(final StringBuilder md)
    {
        final List<String> lines = new ArrayList<>();
        final List<ScenarioResult> acks = inSweep(Matrix.ACKS);
        if (!acks.isEmpty())
        {
            final StringBuilder line = new StringBuilder("Replicated produce, RF=3, closed loop (records/s, median): ");
            for (int i = 0; i < acks.size(); i++)
            {
                line.append(i == 0 ? "" : ", ").append("acks=").append(acks.get(i).scenario().acksName()).append(' ')
                    .append(Targets.count(acks.get(i).medianRecordsPerSecond()));
            }
            lines.add(line.toString());
        }
        for (final ScenarioResult r : inSweep(Matrix.LATENCY))
        {
            if (r.scenario().load() == Scenario.Load.OPEN && r.hasLatency())
            {
                lines.add("Latency, RF=3, acks=" + r.scenario().acksName() + " at " +
                    Scenario.rateName(r.scenario().rate()) + " records/s (open loop): p50 " +
                    micros(r.medianPercentileMicros(50)) + " us, p99 " + micros(r.medianPercentileMicros(99)) +
                    " us");
            }
        }
        final PeerComparison peer = data.peer();
        if (null != peer)
        {
            for (final int size : peer.sizes())
            {
                final PeerComparison.Group ours = peer.main(PeerMain.TIDEMARK, size);
                final PeerComparison.Group chronicle = peer.main(PeerMain.CHRONICLE, size);
                if (null != ours && ours.ok())
                {
                    lines.add("Single writer, " + size + " B records: Tidemark " +
                        Targets.count(ours.medianRecordsPerSecond()) + " records/s" +
                        (null != chronicle && chronicle.ok() ? ", Chronicle Queue " +
                        Targets.count(chronicle.medianRecordsPerSecond()) + " records/s (" +
                        ratio(ours.medianRecordsPerSecond() / chronicle.medianRecordsPerSecond()) + ")" :
                        ", Chronicle Queue did not run"));
                }
            }
        }
        final double[] resumed = data.failover().stream().map(RunResult::failover)
            .filter((f) -> null != f && f.resumeNanos() >= 0).mapToDouble((f) -> f.resumeNanos() / 1e6).sorted()
            .toArray();
        if (resumed.length > 0)
        {
            lines.add("Leader killed under load: acknowledgements resumed after " +
                String.format(Locale.ROOT, "%.0f ms", resumed[resumed.length / 2]) +
                (resumed.length > 1 ? " (median of " + resumed.length + " kills)" : ""));
        }
        if (lines.isEmpty())
        {
            return;
        }
        md.append("## In short\n\n");
        lines.forEach((line) -> md.append("- ").append(line).append('\n'));
        md.append("\nThe tables below have every scenario; the project's performance goals, checked against these ")
            .append("numbers, come after them.\n\n");
    }

    /** The goals, in plain words, after what was measured. */
    private static void goals(final StringBuilder md, final List<Targets.Target> targets)
    {
        md.append("## Goals checked against this run\n\n");
        md.append("The project's performance goals, each compared with what this run measured. ")
            .append(Targets.tally(targets)).append(". A quick run measures a reduced matrix; the goals it does not ")
            .append("cover need `full`. On a shared 2-core machine a goal can be missed because other processes ")
            .append("took the CPUs (see the load and 'CPUs got' columns).\n\n");
        md.append("| Goal | Asked | Measured | Result | Note |\n|---|---|---|---|---|\n");
        for (final Targets.Target t : targets)
        {
            md.append("| ").append(cell(t.name())).append(" | ").append(cell(t.target())).append(" | ")
                .append(cell(t.measured())).append(" | ").append(Targets.words(t.status()))
                .append(" | ").append(cell(t.note())).append(" |\n");
        }
        md.append('\n');
    }

    private void sweepTable(final StringBuilder md, final String sweep, final String title, final String first,
        final Function<Scenario, String> label)
    {
        final List<ScenarioResult> rows = inSweep(sweep);
        if (!rows.isEmpty())
        {
            table(md, title, first, rows, label);
        }
    }

    private static void table(final StringBuilder md, final String title, final String first,
        final List<ScenarioResult> rows, final Function<Scenario, String> label)
    {
        md.append("### ").append(title).append("\n\n");
        md.append("Common: ").append(common(rows)).append("\n\n");
        md.append("| ").append(first).append(" | records/s | spread | MB/s | p50 us | p90 us | p99 us | p99.9 us | ")
            .append("p99.99 us | max us | CPUs got | load | dirty MiB | verified | .hgrm |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|\n");
        for (final ScenarioResult r : rows)
        {
            md.append("| ").append(cell(label.apply(r.scenario())))
                .append(" | ").append(Targets.count(r.medianRecordsPerSecond()))
                .append(" | ").append(Double.isNaN(r.spreadPercent()) ? "-" :
                    String.format(Locale.ROOT, "%.0f%%", r.spreadPercent()))
                .append(" | ").append(String.format(Locale.ROOT, "%.1f", r.medianMbPerSecond()));
            for (final double p : ScenarioResult.PERCENTILES.values())
            {
                md.append(" | ").append(micros(r.medianPercentileMicros(p)));
            }
            md.append(" | ").append(micros(r.maxMicros()))
                .append(" | ").append(Double.isNaN(r.medianCpusUsed()) ? "-" :
                    String.format(Locale.ROOT, "%.2f", r.medianCpusUsed()))
                .append(" | ").append(Double.isNaN(r.medianLoadAverage()) ? "-" :
                    String.format(Locale.ROOT, "%.1f", r.medianLoadAverage()))
                .append(" | ").append(r.dirtyMib())
                .append(" | ").append(r.verified() ? "yes (" + Targets.count((double)r.verifiedRecords()) + ")" :
                    "**FAILED**: " + cell(r.problem()))
                .append(r.elections() == 0 ? "" : "; **" + r.elections() + " leader election" +
                    (r.elections() == 1 ? "" : "s") + " during the runs** (a host session expired)")
                .append(" | ").append(r.hasLatency() ? "`" + hgrmName(r.scenario()) + "`" : "-")
                .append(" |\n");
        }
        md.append('\n');
    }

    private static String common(final List<ScenarioResult> rows)
    {
        final Scenario s = rows.get(0).scenario();
        final List<String> parts = new ArrayList<>();
        parts.add(s.messageSize() + " B values");
        parts.add(s.producerThreads() + " producer thread" + (s.producerThreads() == 1 ? "" : "s"));
        parts.add("batch " + s.batchRecords() + " record" + (s.batchRecords() == 1 ? "" : "s") + " per request");
        if (s.load() == Scenario.Load.CLOSED)
        {
            parts.add(s.maxInFlight() + " requests in flight per producer");
        }
        parts.add(s.threading() == ReplicationContext.ThreadingMode.LATENCY ?
            "LATENCY threading (one busy-spinning replication thread, the logs' agents on a parking thread)" :
            s.threading() + " threading, " + (s.busySpin() ? "busy-spin" : "backoff") + " idle");
        if (s.load() == Scenario.Load.OPEN)
        {
            parts.add("the producer " + (s.producerParks() ? "parks" : "spins") + " until each record is due");
        }
        parts.add(rows.get(0).runs().size() + " run" + (rows.get(0).runs().size() == 1 ? "" : "s") + " each");
        if (rows.stream().allMatch((r) -> r.scenario().acks() == Acks.NONE))
        {
            parts.add("no latency for acks=0 (never acknowledged)");
        }
        return String.join(", ", parts);
    }

    private void peerSection(final StringBuilder md)
    {
        final PeerComparison peer = data.peer();
        if (null == peer)
        {
            return;
        }
        md.append("## Single writer: Tidemark vs Chronicle Queue vs raw copy\n\n");
        md.append("| Peer | JVM | size | append records/s | MB/s | append latency p50 / p99 / p99.9 / p99.99 / max us ")
            .append("| append call alone (service time) p50 / p99 / p99.9 / p99.99 / max us ")
            .append("| write-to-tailer p50 / p99 / p99.9 / p99.99 / max us | status |\n");
        md.append("|---|---|---:|---:|---:|---|---|---|---|\n");
        for (final PeerComparison.Group g : peer.groups())
        {
            md.append("| ").append(g.peer()).append(" | ").append(cell(g.javaVersion())).append(" | ")
                .append(g.size()).append(" B | ");
            if (g.ok())
            {
                md.append(Targets.count(g.medianRecordsPerSecond())).append(" | ")
                    .append(String.format(Locale.ROOT, "%.0f", g.medianRecordsPerSecond() * g.size() / 1e6))
                    .append(" | ").append(peerPercentiles(g, false)).append(" | ")
                    .append(null == g.appendServiceTime() ? "n/a" : servicePercentiles(g)).append(" | ")
                    .append(null == g.tailerLatency() ? "n/a" : peerPercentiles(g, true)).append(" | ran (")
                    .append(g.runs().size()).append(" JVM").append(g.runs().size() == 1 ? "" : "s").append(") |\n");
            }
            else
            {
                md.append("- | - | - | - | - | **did not run**: ").append(cell(g.firstFailure().failureSummary()))
                    .append(" |\n");
            }
        }
        md.append('\n');
        md.append("Ratios (Tidemark / peer, same run, same JVM):\n\n");
        md.append("| size | append throughput vs Chronicle | append p99.9 vs Chronicle | append p99.99 vs Chronicle | ")
            .append("tailer p99 vs Chronicle | append throughput vs raw copy |\n|---:|---|---|---|---|---|\n");
        for (final int size : peer.sizes())
        {
            final PeerComparison.Group ours = peer.main(PeerMain.TIDEMARK, size);
            final PeerComparison.Group chronicle = peer.main(PeerMain.CHRONICLE, size);
            final PeerComparison.Group raw = peer.main(PeerMain.RAW_COPY, size);
            final boolean oursOk = null != ours && ours.ok();
            final boolean both = oursOk && null != chronicle && chronicle.ok();
            md.append("| ").append(size).append(" B | ")
                .append(both ? ratio(ours.medianRecordsPerSecond() / chronicle.medianRecordsPerSecond()) :
                    "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(false, 99.9) /
                    chronicle.medianPercentileMicros(false, 99.9)) : "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(false, 99.99) /
                    chronicle.medianPercentileMicros(false, 99.99)) : "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(true, 99) /
                    chronicle.medianPercentileMicros(true, 99)) : "not measurable")
                .append(" | ").append(oursOk && null != raw && raw.ok() ?
                    ratio(ours.medianRecordsPerSecond() / raw.medianRecordsPerSecond()) : "n/a")
                .append(" |\n");
        }
        md.append('\n');
        final List<PeerResult> failures = peer.results().stream().filter((r) -> !r.ok()).toList();
        if (!failures.isEmpty())
        {
            md.append("### Peers that did not run\n\n");
            md.append("What failed, with the JVM arguments it had (Tidemark's JVMs get exactly `--add-exports ")
                .append("java.base/jdk.internal.misc=ALL-UNNAMED`; Chronicle Queue's JVM also gets the flags ")
                .append("Chronicle documents for Java 17 unless `--chronicle-strict` was given):\n\n");
            final List<String> seen = new ArrayList<>();
            for (final PeerResult f : failures)
            {
                final String key = f.peer() + f.javaHome();
                if (seen.contains(key))
                {
                    continue;
                }
                seen.add(key);
                md.append("- ").append(f.peer()).append(" on Java ").append(f.javaVersion()).append(" (")
                    .append(f.javaHome()).append("), JVM arguments `").append(f.jvmArgs()).append("`:\n\n```\n")
                    .append(firstLines(f.failure(), 14)).append("\n```\n\n");
            }
        }
    }

    private static String servicePercentiles(final PeerComparison.Group g)
    {
        final StringBuilder text = new StringBuilder();
        for (final double p : ScenarioResult.PERCENTILES.values())
        {
            if (p != 90.0)
            {
                text.append(micros(g.medianServicePercentileMicros(p))).append(" / ");
            }
        }
        return text.append(micros(g.appendServiceTime().getMaxValue() / 1e3)).toString();
    }

    private static String peerPercentiles(final PeerComparison.Group g, final boolean tailer)
    {
        final StringBuilder text = new StringBuilder();
        for (final double p : ScenarioResult.PERCENTILES.values())
        {
            if (p == 90.0)
            {
                continue;
            }
            text.append(micros(g.medianPercentileMicros(tailer, p))).append(" / ");
        }
        return text.append(micros(g.maxMicros(tailer))).toString();
    }

    private void failoverSection(final StringBuilder md)
    {
        if (data.failover().isEmpty())
        {
            return;
        }
        final Scenario s = data.failover().get(0).scenario();
        md.append("## Leader failover\n\n");
        md.append(s.describe()).append(", default replication settings (host.session.timeout.ms=600, heartbeat ")
            .append("100 ms). During the run the host leading partition 0 is killed (`ReplicationCluster.killHost`: ")
            .append("its threads stop at once, its files stay as after a kill -9); the producer retries on ")
            .append("LEADER_NOT_AVAILABLE and keeps its schedule, so the outage shows in the latency.\n\n");
        md.append("| run | killed host | new leader | acks resumed after | last ack before the kill | acked after ")
            .append("the kill | requests lost in flight | p99 / max latency | verified |\n")
            .append("|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (int i = 0; i < data.failover().size(); i++)
        {
            final RunResult r = data.failover().get(i);
            final RunResult.Failover f = r.failover();
            md.append("| ").append(i + 1).append(" | ")
                .append(null == f ? "-" : f.killedHost()).append(" | ")
                .append(null == f ? "-" : f.newLeader()).append(" | ")
                .append(null == f || f.resumeNanos() < 0 ? "never" :
                    String.format(Locale.ROOT, "%.1f ms", f.resumeNanos() / 1e6)).append(" | ")
                .append(null == f ? "-" : String.format(Locale.ROOT, "%.2f ms before", f.lastAckBeforeNanos() / 1e6))
                .append(" | ").append(null == f ? "-" : Targets.count((double)f.ackedAfterKill())).append(" | ")
                .append(null == f ? "-" : f.lostInFlight()).append(" | ")
                .append(null == r.latency() || r.latency().getTotalCount() == 0 ? "n/a" :
                    micros(r.latency().getValueAtPercentile(99) / 1e3) + " / " +
                    micros(r.latency().getMaxValue() / 1e3) + " us")
                .append(" | ").append(r.verified() ? "yes (" + Targets.count((double)r.verifiedRecords()) + ")" :
                    "**FAILED**: " + cell(r.problem()))
                .append(" |\n");
        }
        md.append('\n');
    }

    private static String firstLines(final String text, final int n)
    {
        final String[] lines = text.split("\\R");
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(n, lines.length); i++)
        {
            out.append(i == 0 ? "" : "\n").append(lines[i]);
        }
        if (lines.length > n)
        {
            for (int i = n; i < lines.length; i++)
            {
                if (lines[i].startsWith("Caused by: "))
                {
                    out.append("\n...\n").append(lines[i]);
                }
            }
        }
        return out.toString();
    }

    private static String ratio(final double r)
    {
        return Double.isNaN(r) ? "n/a" : String.format(Locale.ROOT, "%.2fx", r);
    }

    static String micros(final double v)
    {
        if (Double.isNaN(v))
        {
            return "-";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%,.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    static String cell(final String text)
    {
        return null == text ? "" : text.replace("|", "\\|").replace("\n", " ");
    }
}
