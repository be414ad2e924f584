package io.tidemark.bench.multiprocess;

import io.tidemark.bench.JvmFlags;
import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.HarnessReport;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a multiprocess run's report into its directory: {@value PerfRun#SUMMARY_FILE} (the side-by-side tables, the
 * issue's goals with the measured ratios, every run's cells, setup and method), {@value PerfRun#SUMMARY_JSON}, one
 * {@code .hgrm} file per latency cell and target under {@value #HGRM_DIR}/ (every run's window together, in
 * microseconds), {@value PerfRun#ENV_FILE}; the server logs are already in {@code hosts/} and the profile summaries
 * in {@code profiles/}.
 */
final class MultiProcessReport
{
    /** Where the histograms go. */
    static final String HGRM_DIR = "hgrm";
    private static final String KAFKA = Comparison.KAFKA;
    private static final String TIDEMARK = Comparison.TIDEMARK;

    private final PerfRun run;
    private final Comparison comparison;
    private final MultiProcessPlan plan;
    private final List<CellResult> cells;
    private final CellStats stats;
    private final Map<String, MultiProcessBench.Idle> idle;
    private final Map<String, String> descriptions;
    private final Map<String, List<String>> stops;
    private final Map<String, List<String>> profiles;
    private final List<FaultPhase.Outcome> faults;
    private final List<String> runProblems;
    private final List<String> notes;
    private final double wallSeconds;

    MultiProcessReport(final PerfRun run, final Comparison comparison, final MultiProcessPlan plan,
        final List<CellResult> cells,
        final Map<String, MultiProcessBench.Idle> idle, final Map<String, String> descriptions,
        final Map<String, List<String>> stops, final Map<String, List<String>> profiles,
        final List<FaultPhase.Outcome> faults, final List<String> runProblems, final List<String> notes,
        final double wallSeconds)
    {
        this.run = run;
        this.comparison = comparison;
        this.plan = plan;
        this.cells = List.copyOf(cells);
        this.stats = new CellStats(cells);
        this.idle = idle;
        this.descriptions = descriptions;
        this.stops = stops;
        this.profiles = profiles;
        this.faults = List.copyOf(faults);
        this.runProblems = List.copyOf(runProblems);
        this.notes = List.copyOf(notes);
        this.wallSeconds = wallSeconds;
    }

    private double rps(final String target, final String kind, final int acks, final int partitions)
    {
        return stats.rps(target, kind, acks, partitions);
    }

    private double cpuPerRecord(final String target, final String kind, final int acks, final int partitions)
    {
        return stats.cpuPerRecord(target, kind, acks, partitions);
    }

    private Histogram latency(final String target, final String kind, final int acks, final int partitions)
    {
        return stats.latency(target, kind, acks, partitions);
    }

    private static double ms(final Histogram h, final double percentile)
    {
        return CellStats.ms(h, percentile);
    }

    // --------------------------------------------------------------------------------------------------- writing

    /**
     * Write everything.
     *
     * @param facts the run's facts: date, git, command, load averages.
     * @return the summary file.
     */
    Path write(final Map<String, String> facts) throws IOException
    {
        writeHistograms();
        final String machine = writeEnvironment(facts);
        run.writeJson(new MultiProcessJson(comparison, plan, cells, idle, descriptions, stops, profiles, faults,
            notes, wallSeconds).tree(facts, goals(), problems()));
        return run.writeSummary(markdown(facts, machine));
    }

    static String hgrmName(final String target, final String kind, final int acks, final int partitions)
    {
        return HGRM_DIR + "/" + target + "_" + kind + "_acks-" + Acks.describe(acks) + "_p" + partitions + ".hgrm";
    }

    private void writeHistograms() throws IOException
    {
        for (final String target : plan.targets())
        {
            for (final int acks : plan.acks())
            {
                for (final int partitions : plan.partitions())
                {
                    final Histogram h = latency(target, CellResult.RATE, acks, partitions);
                    if (h.getTotalCount() > 0)
                    {
                        run.writeHgrm(hgrmName(target, CellResult.RATE, acks, partitions), h,
                            HarnessReport.HGRM_SCALE);
                    }
                }
            }
            final Histogram rt = latency(target, CellResult.ROUND_TRIP, Acks.ALL, 1);
            if (rt.getTotalCount() > 0)
            {
                run.writeHgrm(hgrmName(target, CellResult.ROUND_TRIP, Acks.ALL, 1), rt, HarnessReport.HGRM_SCALE);
            }
        }
    }

    private String writeEnvironment(final Map<String, String> facts) throws IOException
    {
        final String hostFlags = String.join(" ", JvmFlags.FORKED_JVM_ARGS) + " (the Tidemark host JVMs; no other " +
            "flag)";
        final Map<String, String> env = Environment.describe(facts, List.of(hostFlags));
        descriptions.forEach((target, text) -> env.put("multiprocess." + target, text));
        env.put("multiprocess.cluster.dir", plan.workDir() + ": " + Environment.fileSystem(plan.workDir()) +
            " (the replica logs and Kafka's data live here)");
        env.put("note", "other processes (builds and test runs of other work) shared this machine during the run: " +
            "see loadavg.start and loadavg.end; with 2 CPUs the bench JVM, the server JVMs and anything else " +
            "compete for the same 2 CPUs");
        return run.writeEnvironment(env);
    }

    // ---------------------------------------------------------------------------------------------------- goals

    /** @return the goals with what this run measured. */
    List<Comparison.Goal> goals()
    {
        return comparison.goals(stats, plan, idle);
    }

    private static String ratio(final double r)
    {
        return Comparison.ratio(r);
    }

    // ------------------------------------------------------------------------------------------------- markdown

    private String markdown(final Map<String, String> facts, final String machine)
    {
        final StringBuilder md = new StringBuilder();
        md.append("# ").append(comparison.title()).append("\n\n");
        md.append("- Date: ").append(facts.get("date")).append('\n');
        md.append("- Commit: ").append(facts.get("git")).append('\n');
        md.append("- Command: `").append(facts.get("command")).append("`\n");
        md.append("- Machine: ").append(machine).append('\n');
        md.append(String.format(Locale.ROOT, "- Took: %.0f s%n", wallSeconds));
        md.append("- Load average (1, 5, 15 min): ").append(facts.get("loadavg.start")).append(" at the start, ")
            .append(facts.get("loadavg.end")).append(" at the end (other work shared this 2-core machine: compare " +
            "the ratios, measured in the same run, more than the absolute numbers)\n");
        final List<String> problems = problems();
        md.append("- Outcome: ").append(problems.isEmpty() ? "clean: every phase ran, no send failed, every " +
            "acknowledged record of Tidemark's fixed-rate phases was read back" : "**problems**: " +
            String.join("; ", problems)).append("\n\n");
        for (final Map.Entry<String, String> e : descriptions.entrySet())
        {
            md.append("- **").append(e.getKey()).append("**: ").append(e.getValue()).append('\n');
        }
        md.append('\n');

        md.append("## The issue's goals, measured in this run\n\n| goal | measured | met |\n|---|---|---|\n");
        for (final Comparison.Goal g : goals())
        {
            md.append("| ").append(g.goal()).append(" | ").append(g.measured()).append(" | ")
                .append(null == g.met() ? "not measured" : g.met() ? "yes" : "**no**").append(" |\n");
        }
        md.append('\n');

        md.append("## Saturated throughput and server CPU per record\n\n");
        md.append(String.format(Locale.ROOT, "Records/s completed inside a %d s window (median of %d run(s)), %d B " +
            "values, batch.size=%d, linger.ms=%d, %d in flight; CPU: the server processes' (Kafka: 3 brokers; " +
            "Tidemark: 3 hosts + ZooKeeper) user+system time over the window per record.%n%n",
            plan.throughputMs() / 1000, plan.runs(), plan.recordSize(), plan.batchSize(), plan.lingerMs(),
            ProducerSettings.MAX_IN_FLIGHT));
        md.append("| partitions | acks | Kafka records/s | Tidemark records/s | Tidemark/Kafka | Kafka CPU us/record " +
            "| Tidemark CPU us/record | Tidemark/Kafka |\n|---:|---|---:|---:|---:|---:|---:|---:|\n");
        for (final int partitions : plan.partitions())
        {
            for (final int acks : plan.acks())
            {
                final double k = rps(KAFKA, CellResult.SATURATED, acks, partitions);
                final double t = rps(TIDEMARK, CellResult.SATURATED, acks, partitions);
                final double kc = cpuPerRecord(KAFKA, CellResult.SATURATED, acks, partitions);
                final double tc = cpuPerRecord(TIDEMARK, CellResult.SATURATED, acks, partitions);
                md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %s | %s |%n", partitions,
                    Acks.describe(acks), count(k), count(t), ratio(t / k), decimal(kc), decimal(tc), ratio(tc / kc)));
            }
        }
        md.append('\n');

        md.append("## Latency at a fixed rate\n\n");
        md.append(String.format(Locale.ROOT, "Open loop at %,d records/s: each record's latency from its scheduled " +
            "send time to its acknowledgement (coordinated omission corrected), every run's %d s window together, " +
            "milliseconds; linger.ms=%d. Ratio: Tidemark's p99 over Kafka's (below 1: Tidemark lower).%n%n",
            plan.rate(), plan.latencyMs() / 1000, plan.latencyLingerMs()));
        md.append("| partitions | acks | Kafka p50 | Kafka p99 | Kafka p99.9 | Tidemark p50 | Tidemark p99 | " +
            "Tidemark p99.9 | p99 Tidemark/Kafka | Kafka CPU us/record | Tidemark CPU us/record |\n" +
            "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (final int partitions : plan.partitions())
        {
            for (final int acks : plan.acks())
            {
                final Histogram k = latency(KAFKA, CellResult.RATE, acks, partitions);
                final Histogram t = latency(TIDEMARK, CellResult.RATE, acks, partitions);
                md.append(String.format(Locale.ROOT, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
                    partitions, Acks.describe(acks), decimal(ms(k, 50)), decimal(ms(k, 99)), decimal(ms(k, 99.9)),
                    decimal(ms(t, 50)), decimal(ms(t, 99)), decimal(ms(t, 99.9)), ratio(ms(t, 99) / ms(k, 99)),
                    decimal(cpuPerRecord(KAFKA, CellResult.RATE, acks, partitions)),
                    decimal(cpuPerRecord(TIDEMARK, CellResult.RATE, acks, partitions))));
            }
        }
        md.append('\n');

        if (plan.roundTripMs() > 0)
        {
            md.append("## One record at a time, linger.ms=0, acks=all, 1 partition\n\n");
            md.append("The bench's thread sends a record and waits for its acknowledgement before the next " +
                "(synchronous send), microseconds from the send call to the acknowledgement.\n\n");
            md.append("| target | round trips/s | p50 us | p90 us | p99 us | p99.9 us | max us |\n" +
                "|---|---:|---:|---:|---:|---:|---:|\n");
            for (final String target : plan.targets())
            {
                final Histogram h = latency(target, CellResult.ROUND_TRIP, Acks.ALL, 1);
                md.append(String.format(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", target,
                    count(rps(target, CellResult.ROUND_TRIP, Acks.ALL, 1)), us(h, 50), us(h, 90), us(h, 99),
                    us(h, 99.9), h.getTotalCount() == 0 ? "-" : count(h.getMaxValue() / 1e3)));
            }
            md.append('\n');
        }

        if (!idle.isEmpty())
        {
            md.append("## Idle cost\n\n");
            md.append(String.format(Locale.ROOT, "%d s with nothing sent (the bench's client still connected), " +
                "each server process's CPU (user+system, /proc) as a share of one core.%n%n", plan.idleMs() / 1000));
            md.append("| target | together | each process |\n|---|---:|---|\n");
            for (final Map.Entry<String, MultiProcessBench.Idle> e : idle.entrySet())
            {
                md.append(String.format(Locale.ROOT, "| %s | %.2f%% | %s |%n", e.getKey(),
                    e.getValue().usage().serverPercentOfCore(), percentages(e.getValue().usage())));
            }
            md.append("\nBusiest threads while idle, per process (share of one core):\n\n");
            for (final Map.Entry<String, MultiProcessBench.Idle> e : idle.entrySet())
            {
                final long wall = e.getValue().usage().wallNanos();
                for (final Map.Entry<String, Map<String, Long>> server : e.getValue().byThread().entrySet())
                {
                    final List<String> top = new ArrayList<>();
                    for (final Map.Entry<String, Long> t : server.getValue().entrySet())
                    {
                        if (top.size() == 6 || t.getValue() == 0)
                        {
                            break;
                        }
                        top.add(String.format(Locale.ROOT, "%s %.2f%%", t.getKey(), 100.0 * t.getValue() / wall));
                    }
                    md.append("- ").append(e.getKey()).append(' ').append(server.getKey()).append(": ")
                        .append(top.isEmpty() ? "nothing measurable" : String.join(", ", top)).append('\n');
                }
            }
            md.append('\n');
        }

        if (!faults.isEmpty())
        {
            md.append("## Availability under faults (Tidemark)\n\n");
            md.append("An idempotent acks=all producer sends 1,000 records/s (linger 0) to one partition of topic `" +
                FaultPhase.TOPIC + "` while the fault is injected; the pause is the longest time after the fault " +
                "without an acknowledgement. Killed hosts are started again at once or after the measured window, as " +
                "each row says. Goals: acknowledgements resume " +
                "within 1 s after the kill of any single host, the controller's included; a restarted host serves " +
                "again within 2 s; a ZooKeeper restart costs no controller. Default settings throughout " +
                "(ZooKeeper session 18 s, host heartbeat session 6 s, controller timeout 1 s; a killed process's exit " +
                "is seen at once through its peers' liveness connections).\n\n");
            md.append("| fault | acks paused ms | restarted host back in the ISR after ms | acknowledged | failed | " +
                "controller epoch | what happened |\n|---|---:|---:|---:|---:|---|---|\n");
            for (final FaultPhase.Outcome o : faults)
            {
                md.append(String.format(Locale.ROOT, "| %s | %d | %s | %d | %d | %s | %s |%n", o.fault(), o.pauseMs(),
                    o.recoveryMs() >= 0 ? Long.toString(o.recoveryMs()) : "-", o.acked(), o.failed(), o.epochs(),
                    o.note()));
            }
            md.append('\n');
        }

        if (!profiles.isEmpty())
        {
            md.append("## Profiles\n\n");
            profiles.forEach((target, files) -> files.forEach((f) -> md.append("- ").append(target).append(": [")
                .append(f).append("](").append(f).append(")\n")));
            md.append('\n');
        }

        md.append("## Every cell of every run\n\n");
        md.append("| target | kind | partitions | acks | run | records/s | p50 ms | p99 ms | p99.9 ms | server CPU " +
            "us/record | client CPU us/record | failed | min ISR | leader changes | read back |\n" +
            "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (final CellResult c : cells)
        {
            final Histogram h = c.latency();
            md.append(String.format(Locale.ROOT, "| %s | %s | %d | %s | %d | %s | %s | %s | %s | %s | %s | %d | %s " +
                "| %d | %s |%n", c.target(), c.kind(), c.partitions(), Acks.describe(c.acks()), c.run(),
                count(c.recordsPerSecond()), null == h ? "-" : decimal(ms(h, 50)), null == h ? "-" :
                decimal(ms(h, 99)), null == h ? "-" : decimal(ms(h, 99.9)), decimal(c.serverMicrosPerRecord()),
                decimal(c.clientMicrosPerRecord()), c.failed(), c.cluster().minIsr() == Integer.MAX_VALUE ? "-" :
                Integer.toString(c.cluster().minIsr()), c.cluster().leaderChanges(), null == c.readBack() ? "-" :
                c.readBack().describe()));
        }
        md.append('\n');
        for (final CellResult c : cells)
        {
            if (!c.clean())
            {
                md.append("- ").append(describe(c)).append(": ").append(null != c.failure() ? c.failure() :
                    c.firstError()).append('\n');
            }
        }
        if (!notes.isEmpty())
        {
            md.append("\nNotes:\n\n");
            notes.forEach((n) -> md.append("- ").append(n).append('\n'));
        }
        md.append('\n');

        md.append("## Servers\n\n");
        stops.forEach((target, list) -> list.forEach((s) -> md.append("- ").append(target).append(' ').append(s)
            .append('\n')));
        md.append("\nServer logs are in `hosts/` (Tidemark's hosts and ZooKeeper; Kafka's brokers as " +
            "`kafka-N.log`). Exit code 143 is the JVM's after SIGTERM once its shutdown hook closed it.\n\n");

        md.append("## Method\n\n");
        md.append("- **One target at a time.** Kafka's three brokers run, are measured and stop; then Tidemark's " +
            "three hosts and ZooKeeper (in the next run the order is reversed). Never both at once: they would " +
            "share the two cores. Each server is a JVM of its own on loopback; the producer is in the bench's JVM " +
            "(Kafka's KafkaProducer; for Tidemark " + comparison.tidemarkProducer() + ") with the same settings: " +
            "acks, batch.size, linger.ms, buffer.memory, 5 in flight, idempotence on for acks=all only, no " +
            "compression, null keys (both producers spread null-key records over the partitions).\n");
        md.append("- **Topics:** one per partition count, RF=3, min.insync.replicas=" + plan.minInsync() + ".\n");
        md.append("- **Saturated:** " + plan.producerThreads() + " thread(s) send asynchronously in a loop (a full " +
            "buffer.memory blocks); the measure is the records whose callback reported success inside the window. " +
            "acks=0 counts records handed to the leader.\n");
        md.append("- **Fixed rate:** one pacing thread sends record i at start + i/rate (parking between records); " +
            "latency is from the due time to the callback, so a stall is charged to every record behind it. " +
            "HdrHistogram, 3 significant digits; `.hgrm` files in microseconds.\n");
        md.append("- **Server CPU per record:** user+system CPU time of the server processes over the window (from " +
            "/proc/<pid>/stat) divided by the records completed in it. Tidemark's ZooKeeper is counted with its " +
            "hosts. The client's (the bench JVM's) CPU is shown apart.\n");
        md.append("- **Read back:** Tidemark's fixed-rate phases' acknowledged records are read back from their " +
            "leaders at their acknowledged offsets with their bytes; Kafka's are not read back by this bench.\n");
        md.append(String.format(Locale.ROOT, "- **Timing:** %d s JIT warm-up per target (acks=1, not reported); " +
            "each phase a %d s warm-up, then its window.%n", plan.jitWarmupMs() / 1000, plan.warmupMs() / 1000));
        return md.toString();
    }

    private static String count(final double v)
    {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, "%,.0f", v);
    }

    private static String decimal(final double v)
    {
        return Double.isNaN(v) ? "-" : String.format(Locale.ROOT, v >= 100 ? "%.0f" : "%.2f", v);
    }

    private static String us(final Histogram h, final double percentile)
    {
        return h.getTotalCount() == 0 ? "-" : String.format(Locale.ROOT, "%.0f",
            h.getValueAtPercentile(percentile) / 1e3);
    }

    /** @return each server's share of one core, in words. */
    static String percentages(final CpuMeter.Usage usage)
    {
        final List<String> parts = new ArrayList<>();
        usage.byServer().forEach((name, nanos) -> parts.add(String.format(Locale.ROOT, "%s %.2f%%", name,
            usage.percentOfCore(name))));
        return String.join(", ", parts);
    }

    /** @return one line about a cell, for the console. */
    static String describe(final CellResult c)
    {
        final StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "  %s %s acks=%s partitions=%d " +
            "run %d: %,.0f records/s", c.target(), c.kind(), Acks.describe(c.acks()), c.partitions(), c.run(),
            c.recordsPerSecond()));
        if (null != c.latency() && c.latency().getTotalCount() > 0)
        {
            line.append(String.format(Locale.ROOT, ", p50 %.2f ms, p99 %.2f ms, p99.9 %.2f ms", ms(c.latency(), 50),
                ms(c.latency(), 99), ms(c.latency(), 99.9)));
        }
        line.append(String.format(Locale.ROOT, ", server CPU %.2f us/record", c.serverMicrosPerRecord()));
        if (c.failed() > 0)
        {
            line.append(", ").append(c.failed()).append(" failed");
        }
        if (null != c.failure())
        {
            line.append(", stopped: ").append(c.failure());
        }
        return line.toString();
    }

    /** @return the goals, for the console. */
    String consoleTable()
    {
        final StringBuilder out = new StringBuilder("Goals (Tidemark against Kafka, this run):\n");
        for (final Comparison.Goal g : goals())
        {
            out.append("  ").append(null == g.met() ? "[ n/a ] " : g.met() ? "[ met ] " : "[ MISS] ")
                .append(g.goal()).append(": ").append(g.measured()).append('\n');
        }
        return out.toString();
    }

    /** @return what went wrong, in words; empty for a clean run. */
    List<String> problems()
    {
        final List<String> problems = new ArrayList<>(runProblems);
        for (final CellResult c : cells)
        {
            if (!c.clean())
            {
                problems.add(c.target() + " " + c.kind() + " acks=" + Acks.describe(c.acks()) + " partitions=" +
                    c.partitions() + " run " + c.run() + ": " + (null != c.failure() ? c.failure() :
                    c.failed() > 0 ? c.failed() + " failed sends (" + c.firstError() + ")" :
                    null != c.readBack() && !c.readBack().ok() ? "read-back: " + c.readBack().problem() :
                    c.windowRecords() == 0 ? "no record completed in the window" : "not every record was sent"));
            }
        }
        return problems;
    }
}
