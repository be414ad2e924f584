package io.tidemark.bench.report;

import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.format.RecordEncoder;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
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
    public static final String JSON_FILE = PerfRun.SUMMARY_JSON;
    /** Where the charts go. */
    public static final String CHARTS_DIR = "charts";
    /** Units of the .hgrm files: microseconds (histograms are recorded in nanoseconds). */
    public static final double HGRM_SCALE = 1_000.0;

    private final PerfRun run;
    private final HarnessData data;
    private final HarnessCharts charts;

    /**
     * @param run  the run directory.
     * @param data the measures.
     */
    public HarnessReport(final PerfRun run, final HarnessData data)
    {
        this.run = run;
        this.data = data;
        this.charts = new HarnessCharts(data);
    }

    /**
     * Write everything.
     *
     * @param facts the run's facts (date, git, command, load averages), as {@link PerfRun#facts()} gives them.
     */
    public void write(final Map<String, String> facts) throws IOException
    {
        writeHistograms();
        charts.write(run.directory());
        final List<Targets.Target> targets = Targets.evaluate(data);
        run.writeJson(new HarnessJson(data).tree(facts, targets, charts.files(), charts.problems()));
        run.writeSummary(markdown(facts, targets));
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
        run.writeHgrm(name, histogram, HGRM_SCALE);
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
        final HarnessSections sections = new HarnessSections(data);
        sections.peerSection(md);
        sections.failoverSection(md);
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
        for (final String chart : charts.files())
        {
            md.append("- `").append(chart).append("`\n");
        }
        for (final String problem : charts.problems())
        {
            md.append("- ").append(problem).append('\n');
        }
        return md.toString();
    }

    /** The figures a reader looks for first, before the tables they come from. */
    private void inShort(final StringBuilder md)
    {
        final List<String> lines = new ArrayList<>();
        final List<ScenarioResult> acks = data.inSweep(Matrix.ACKS);
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
        for (final ScenarioResult r : data.inSweep(Matrix.LATENCY))
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
        final List<ScenarioResult> rows = data.inSweep(sweep);
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

    static String ratio(final double r)
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
