package io.tidemark.bench.multiprocess;

import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.Acks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The multiprocess bench: Tidemark across processes beside a real Kafka, on this machine, with the same producer
 * workload. Each target ({@link KafkaTarget}, {@link TidemarkTarget}) runs as three server JVMs on loopback; the
 * bench's JVM produces to it. For each target in turn (never both at once: they would share the two cores): start,
 * a topic per partition count (RF=3), an unreported JIT warm-up, then for each partition count and acks mode a
 * saturated phase ({@link ThroughputPhase}) and a fixed-rate phase ({@link LatencyPhase}), one-at-a-time round trips
 * at linger 0 ({@link RoundTripPhase}), an idle window with every server process's CPU, and profiled phases (idle,
 * fixed rate, saturated: {@link Profiler}); then stop. With several runs the targets alternate in order, so that
 * neither always runs on a cooler machine. The report ({@link MultiProcessReport}) goes to
 * {@code <results>/<date>_multiprocess-<sha>/}.
 * <p>
 * Not thread-safe: one run per instance.
 */
public final class MultiProcessBench
{
    /** Prefix of the topics; the partition count follows. */
    public static final String TOPIC = "bench-p";
    /** Where the host logs are copied, under the report directory. */
    static final String HOSTS_DIR = "hosts";
    /** Where the profile summaries go, under the report directory. */
    static final String PROFILES_DIR = "profiles";
    /** The name under which the profiles show the bench's own JVM: the producer's side of every cell. */
    static final String BENCH_CLIENT = "bench-client";

    private final Comparison comparison;
    private final MultiProcessPlan plan;
    private final PrintWriter out;
    private final List<CellResult> cells = new ArrayList<>();
    private final Map<String, Idle> idle = new LinkedHashMap<>();
    private final Map<String, String> descriptions = new LinkedHashMap<>();
    private final Map<String, List<String>> stops = new LinkedHashMap<>();
    private final Map<String, List<String>> profiles = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final List<FaultPhase.Outcome> faults = new ArrayList<>();
    private int nextTag = 1;
    private final java.util.Set<LoadTarget> madeOnePartition = new java.util.HashSet<>();

    /**
     * CPU of every server process of a target over its idle window.
     *
     * @param usage     per process and in total.
     * @param byThread  per process, CPU nanoseconds by kind of thread.
     */
    record Idle(CpuMeter.Usage usage, Map<String, Map<String, Long>> byThread)
    {
    }

    /**
     * @param plan what to run, validated.
     * @param out  progress and the final table.
     */
    public MultiProcessBench(final MultiProcessPlan plan, final PrintWriter out)
    {
        this(Comparison.MULTIPROCESS, plan, out);
    }

    /**
     * @param comparison what is compared: Tidemark's producer, or Kafka's through Tidemark's Kafka listener.
     * @param plan       what to run, validated.
     * @param out        progress and the final table.
     */
    MultiProcessBench(final Comparison comparison, final MultiProcessPlan plan, final PrintWriter out)
    {
        this.comparison = comparison;
        this.plan = plan.validate();
        this.out = out;
    }

    /**
     * Run everything and write the report.
     *
     * @param resultsDir  the results root.
     * @param commandLine the command line, for the record.
     * @return 0 for a clean run; 1 when a phase failed or lost records, a target stopped early, or a server did not
     *         stop cleanly (the report says which).
     */
    public int run(final Path resultsDir, final String commandLine) throws IOException
    {
        final long startNanos = System.nanoTime();
        final PerfRun perfRun = PerfRun.start(resultsDir, Path.of("").toAbsolutePath(), commandLine,
            comparison.kind());
        final Path reportDir = perfRun.directory();
        Files.createDirectories(plan.workDir());
        final Path runDir = Files.createTempDirectory(plan.workDir(), "tidemark-" + comparison.kind() + "-");
        out.println("tidemark-bench: report directory " + reportDir.toAbsolutePath());
        out.println(String.format(Locale.ROOT, "tidemark-bench: targets %s, acks %s, partitions %s, %d run(s), " +
            "about %.0f s of sending and idling; cluster directory %s", plan.targets(), acksNames(), plan.partitions(),
            plan.runs(), plan.plannedSeconds(), runDir));
        out.flush();
        try
        {
            for (int run = 1; run <= plan.runs(); run++)
            {
                final List<String> order = new ArrayList<>(plan.targets());
                if (run % 2 == 0)
                {
                    java.util.Collections.reverse(order);
                }
                for (final String name : order)
                {
                    runTarget(name, run, runDir, reportDir);
                }
            }
        }
        finally
        {
            if (!plan.keepData())
            {
                deleteQuietly(runDir);
            }
        }
        final Map<String, String> facts = perfRun.facts();
        final MultiProcessReport report = new MultiProcessReport(perfRun, comparison, plan, cells, idle,
            descriptions, stops, profiles, faults, problems, notes, (System.nanoTime() - startNanos) / 1e9);
        final Path summary = report.write(facts);
        final Path index = perfRun.updateIndex();
        out.println();
        out.println(report.consoleTable());
        out.println(String.format(Locale.ROOT, "Took %.0f s. Report: %s", (System.nanoTime() - startNanos) / 1e9,
            summary.toAbsolutePath()));
        out.println("Index:  " + index.toAbsolutePath());
        final List<String> all = report.problems();
        for (final String problem : all)
        {
            out.println("PROBLEM: " + problem);
        }
        out.flush();
        return all.isEmpty() ? 0 : 1;
    }

    private String acksNames()
    {
        return plan.acks().stream().map(Acks::describe).toList().toString();
    }

    private LoadTarget target(final String name, final Path dir, final Path reportDir)
    {
        return Comparison.KAFKA.equals(name) ? new KafkaTarget(plan, dir, reportDir.resolve(HOSTS_DIR)) :
            comparison.tidemark(plan, dir, reportDir.resolve(HOSTS_DIR));
    }

    /** One target, one run: whatever fails, its servers are stopped and the report says why. */
    private void runTarget(final String name, final int run, final Path runDir, final Path reportDir)
    {
        final LoadTarget target = target(name, runDir.resolve(name + "-" + run), reportDir);
        out.println("tidemark-bench: " + name + ", run " + run + ": starting");
        out.flush();
        try
        {
            target.start(out);
            descriptions.put(name, target.describe());
            for (final int partitions : plan.partitions())
            {
                target.createTopic(TOPIC + partitions, partitions);
            }
            out.println("tidemark-bench: " + name + ": " + target.servers());
            out.flush();
            sweep(target, run, reportDir);
        }
        catch (final Exception ex)
        {
            final String failure = null == ex.getMessage() ? ex.toString() :
                ex.getClass().getSimpleName() + ": " + ex.getMessage();
            problems.add(name + ", run " + run + " stopped early: " + failure);
            out.println("tidemark-bench: " + name + ", run " + run + " stopped early: " + failure);
            out.flush();
        }
        finally
        {
            out.println("tidemark-bench: " + name + ": stopping the servers (SIGTERM)");
            out.flush();
            target.close();
            stops.computeIfAbsent(name, (n) -> new ArrayList<>()).addAll(target.stops().all());
            for (final String problem : target.stops().problems())
            {
                problems.add(name + ": " + problem);
            }
        }
    }

    private void sweep(final LoadTarget target, final int run, final Path reportDir) throws Exception
    {
        final int firstPartitions = plan.partitions().get(0);
        final String firstTopic = TOPIC + firstPartitions;
        final ClusterWatch firstWatch = target.watch(firstTopic);
        if (plan.jitWarmupMs() > 0)
        {
            final CellResult warm = new ThroughputPhase(target, plan, firstTopic, firstPartitions, Acks.LEADER,
                nextTag++).run(firstWatch, 0, 0, plan.jitWarmupMs(), null);
            out.println(String.format(Locale.ROOT, "  %s JIT warm-up (acks=1, not reported): %,.0f records/s",
                target.name(), warm.recordsPerSecond()));
            out.flush();
        }
        for (final int partitions : plan.partitions())
        {
            final String topic = TOPIC + partitions;
            final ClusterWatch watch = target.watch(topic);
            for (final int acks : plan.acks())
            {
                settle(target, topic, run, acks, "saturated");
                add(new ThroughputPhase(target, plan, topic, partitions, acks, nextTag++)
                    .run(watch, run, plan.warmupMs(), plan.throughputMs(), null));
                settle(target, topic, run, acks, "rate");
                add(new LatencyPhase(target, plan, topic, partitions, acks, nextTag++, plan.latencyMs())
                    .run(watch, run, null));
            }
        }
        if (plan.roundTripMs() > 0)
        {
            settle(target, firstTopic, run, Acks.ALL, "round trips");
            final String topic = ensureOnePartition(target);
            add(new RoundTripPhase(target, plan, topic, nextTag++).run(target.watch(topic), run));
        }
        if (run == 1 && plan.idleMs() > 0)
        {
            idle(target, firstTopic);
        }
        if (run == 1 && plan.profileMs() > 0)
        {
            profile(target, firstTopic, firstPartitions, reportDir);
        }
        if (run == 1 && plan.faults() && target instanceof TidemarkTarget tidemark)
        {
            out.println("  tidemark: fault phase");
            out.flush();
            faults.addAll(new FaultPhase(tidemark.cluster(), plan, out).run());
        }
    }

    /** The round trips run on a one-partition topic: made here when the sweep has none. */
    private String ensureOnePartition(final LoadTarget target)
    {
        if (!plan.partitions().contains(1) && target.servers().size() > 0 && !madeOnePartition.contains(target))
        {
            madeOnePartition.add(target);
            target.createTopic(TOPIC + 1, 1);
        }
        return TOPIC + 1;
    }

    private void add(final CellResult result)
    {
        cells.add(result);
        out.println(MultiProcessReport.describe(result));
        out.flush();
    }

    private void settle(final LoadTarget target, final String topic, final int run, final int acks,
        final String phase)
    {
        if (!target.awaitFullIsr(topic, plan.settleTimeoutMs()))
        {
            final String note = target.name() + " run " + run + ", " + topic + ", acks=" + Acks.describe(acks) +
                ", " + phase + ": the ISR was not full after " + plan.settleTimeoutMs() + " ms; the phase ran anyway";
            notes.add(note);
            out.println("  note: " + note);
        }
    }

    /** The idle window: nothing sent, the bench's client still connected; every server process's CPU. */
    private void idle(final LoadTarget target, final String topic)
    {
        out.println("  " + target.name() + ": idle for " + plan.idleMs() / 1000 + " s");
        out.flush();
        final CpuMeter cpu = new CpuMeter(target.servers());
        final Profiler threads = new Profiler(target.servers(), null, "idle");
        final ClusterWatch watch = target.watch(topic);
        watch.begin();
        cpu.begin();
        threads.begin();
        watch.sampleUntil(System.nanoTime() + plan.idleMs() * 1_000_000L, target.name() + " idle");
        final CpuMeter.Usage usage = cpu.end();
        threads.end();
        watch.end();
        idle.put(target.name(), new Idle(usage, threads.threadCpuByServer()));
        out.println(String.format(Locale.ROOT, "  %s idle: servers together %.2f%% of one core %s",
            target.name(), usage.serverPercentOfCore(), MultiProcessReport.percentages(usage)));
        out.flush();
    }

    /** Idle, fixed-rate and saturated phases again, each under JFR with per-thread CPU, acks=all. */
    private void profile(final LoadTarget target, final String topic, final int partitions, final Path reportDir)
        throws IOException
    {
        final Path recordings = plan.workDir().resolve("jfr-" + ProcessHandle.current().pid());
        final StringBuilder md = new StringBuilder();
        md.append("# Profiles: ").append(descriptions.get(target.name())).append("\n\n")
            .append("Each server process of ").append(target.name()).append(" profiled in three phases on topic `")
            .append(topic).append("` (").append(partitions).append(" partition(s), RF=3, acks=all): idle, ")
            .append(plan.rate()).append(" records/s, saturated; each ").append(plan.profileMs() / 1000)
            .append(" s. The bench's own JVM, which runs the producer, is profiled beside them as `")
            .append(BENCH_CLIENT).append("` (its CPU is never counted as the system's). CPU by thread is from /proc " +
            "over the window; the JFR summary covers the phase with its warm-up. These phases are not the measured " +
            "cells: JFR's own cost is in them.\n\n");
        final List<LoadTarget.Server> profiled = new ArrayList<>(target.servers());
        profiled.add(new LoadTarget.Server(BENCH_CLIENT, ProcessHandle.current().pid()));
        final String[] labels = {"idle", "rate", "saturated"};
        for (final String label : labels)
        {
            final Profiler profiler = new Profiler(profiled, recordings, target.name() + "-" + label);
            out.println("  " + target.name() + ": profiling " + label);
            out.flush();
            settle(target, topic, 1, Acks.ALL, "profile " + label);
            profiler.startRecordings();
            try
            {
                final ClusterWatch watch = target.watch(topic);
                if ("idle".equals(label))
                {
                    watch.begin();
                    profiler.begin();
                    watch.sampleUntil(System.nanoTime() + plan.profileMs() * 1_000_000L, "profile idle");
                    profiler.end();
                    watch.end();
                }
                else if ("rate".equals(label))
                {
                    new LatencyPhase(target, plan, topic, partitions, Acks.ALL, nextTag++, plan.profileMs())
                        .run(watch, 0, profiler);
                }
                else
                {
                    new ThroughputPhase(target, plan, topic, partitions, Acks.ALL, nextTag++)
                        .run(watch, 0, plan.warmupMs(), plan.profileMs(), profiler);
                }
            }
            finally
            {
                profiler.stopRecordings();
            }
            md.append(profiler.summary(target.name() + ", " + ("rate".equals(label) ? plan.rate() + " records/s" :
                label)));
        }
        final String file = PROFILES_DIR + "/" + target.name() + ".md";
        Profiler.write(reportDir.resolve(file), md.toString());
        profiles.computeIfAbsent(target.name(), (n) -> new ArrayList<>()).add(file);
        if (!plan.keepData())
        {
            deleteQuietly(recordings);
        }
    }

    private static void deleteQuietly(final Path dir)
    {
        try
        {
            io.tidemark.bench.harness.TempDirs.deleteRecursively(dir);
        }
        catch (final RuntimeException ex)
        {
            System.err.println("tidemark-bench: " + ex.getMessage());
        }
    }
}
