package io.tidemark.bench.multiprocess;

import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.bench.report.ResultsIndex;
import io.tidemark.host.TidemarkClient;
import io.tidemark.replication.Acks;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The multiprocess bench: three replica hosts, each in its own JVM on loopback ({@link LoopbackCluster}), one topic
 * with RF=3, and for each acks mode a saturated-throughput phase ({@link ThroughputPhase}) and a fixed-rate latency
 * phase ({@link LatencyPhase}), produced from this JVM through a {@link TidemarkClient}. Rounds are interleaved
 * (round 1 of every acks mode, then round 2, ...); before each phase the run waits until the ISR is full again. The
 * report ({@link MultiProcessReport}) goes to {@code <results>/<date>_multiprocess-<sha>/} and the results index is
 * updated.
 * <p>
 * Not thread-safe: one run per instance.
 */
public final class MultiProcessBench
{
    /** The topic every phase writes. */
    public static final String TOPIC = "bench";
    /** Where the host logs are copied, under the report directory. */
    static final String HOSTS_DIR = "hosts";

    private final MultiProcessPlan plan;
    private final PrintWriter out;
    private final Map<Integer, List<ThroughputResult>> throughput = new LinkedHashMap<>();
    private final Map<Integer, List<LatencyResult>> latency = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private int nextTag = 1;

    /**
     * @param plan what to run, validated.
     * @param out  progress and the final table.
     */
    public MultiProcessBench(final MultiProcessPlan plan, final PrintWriter out)
    {
        this.plan = plan.validate();
        this.out = out;
        for (final int acks : plan.acks())
        {
            throughput.put(acks, new ArrayList<>());
            latency.put(acks, new ArrayList<>());
        }
    }

    /**
     * Run the sweep and write the report.
     *
     * @param resultsDir  the results root.
     * @param commandLine the command line, for the record.
     * @return 0 for a clean run; 1 when a phase failed or lost records, the run stopped early, or a host did not stop
     *         cleanly (the report says which).
     */
    public int run(final Path resultsDir, final String commandLine) throws IOException
    {
        final ZonedDateTime started = ZonedDateTime.now();
        final long startNanos = System.nanoTime();
        final Path cwd = Path.of("").toAbsolutePath();
        final String sha = PerfRun.gitShortSha(cwd);
        final boolean dirty = !PerfRun.NO_GIT.equals(sha) && ResultsDirectory.gitDirty(cwd);
        final String loadAtStart = Environment.loadAverage();
        final Path reportDir = ResultsDirectory.create(resultsDir, started.toLocalDate(), sha);
        Files.createDirectories(plan.workDir());
        final Path runDir = Files.createTempDirectory(plan.workDir(), "tidemark-multiprocess-");
        out.println("tidemark-bench: report directory " + reportDir.toAbsolutePath());
        out.println(String.format(Locale.ROOT, "tidemark-bench: %d acks modes x %d run(s), about %.0f s of " +
            "sending; cluster directory %s", plan.acks().size(), plan.runs(), plan.plannedSeconds(), runDir));
        out.flush();

        final MultiProcessOutcome outcome = runCluster(runDir, reportDir, startNanos);

        final Map<String, String> facts = new LinkedHashMap<>();
        facts.put("date", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(started.withNano(0)) + " to " +
            DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(ZonedDateTime.now().withNano(0)));
        facts.put("git", sha + (dirty ? " (work tree has uncommitted changes)" : ""));
        facts.put("command", commandLine);
        facts.put("loadavg.start", loadAtStart);
        facts.put("loadavg.end", Environment.loadAverage());
        final Path summary = new MultiProcessReport(reportDir, outcome).write(facts);
        final Path index = ResultsIndex.update(resultsDir);

        out.println();
        out.println(MultiProcessReport.consoleTable(outcome));
        out.println(String.format(Locale.ROOT, "Took %.0f s. Report: %s", outcome.wallSeconds(),
            summary.toAbsolutePath()));
        out.println("Index:  " + index.toAbsolutePath());
        final List<String> problems = outcome.problems();
        for (final String problem : problems)
        {
            out.println("PROBLEM: " + problem);
        }
        out.flush();
        return problems.isEmpty() ? 0 : 1;
    }

    /** Start the cluster, sweep, stop the cluster: whatever fails, the hosts are stopped and the outcome says why. */
    private MultiProcessOutcome runCluster(final Path runDir, final Path reportDir, final long startNanos)
    {
        String failure = null;
        LoopbackCluster cluster = null;
        MultiProcessOutcome.ClusterSetup setup = null;
        try
        {
            cluster = LoopbackCluster.create(runDir, plan, reportDir.resolve(HOSTS_DIR));
            cluster.start(out);
            setup = new MultiProcessOutcome.ClusterSetup(cluster.zooKeeperConnect(), cluster.endpoints(),
                cluster.hostCommand(), runDir.toString());
            sweep(cluster);
        }
        catch (final Exception ex)
        {
            failure = null == ex.getMessage() ? ex.toString() : ex.getClass().getSimpleName() + ": " + ex.getMessage();
            out.println("tidemark-bench: the run stopped early: " + failure);
            out.flush();
        }
        finally
        {
            if (null != cluster)
            {
                out.println("tidemark-bench: stopping the hosts (SIGTERM)");
                out.flush();
                cluster.close();
            }
        }
        return new MultiProcessOutcome(plan, results(), failure, setup,
            null == cluster ? List.of() : cluster.stops(), null == cluster ? List.of() : cluster.logSummaries(),
            List.copyOf(notes), (System.nanoTime() - startNanos) / 1e9);
    }

    private void sweep(final LoopbackCluster cluster)
    {
        final TidemarkClient client = cluster.client();
        client.createTopic(TOPIC, plan.partitions(), LoopbackCluster.HOSTS, plan.startTimeoutMs());
        if (!cluster.awaitFullIsr(TOPIC, plan.startTimeoutMs()))
        {
            throw new IllegalStateException("the ISR of topic " + TOPIC + " did not reach " + LoopbackCluster.HOSTS +
                " replicas within " + plan.startTimeoutMs() + " ms: " + client.partitions(TOPIC));
        }
        final ClusterWatch watch = new ClusterWatch(cluster, TOPIC);
        if (plan.jitWarmupMs() > 0)
        {
            final ThroughputResult warm = new ThroughputPhase(client, plan, TOPIC, Acks.LEADER, nextTag++)
                .run(watch, 0, 0, plan.jitWarmupMs());
            out.println(String.format(Locale.ROOT, "  JIT warm-up (acks=1, not reported): %,.0f records/s",
                warm.recordsPerSecond()));
            out.flush();
        }
        for (int run = 1; run <= plan.runs(); run++)
        {
            for (final int acks : plan.acks())
            {
                settle(cluster, acks, run, "throughput");
                final ThroughputResult t = new ThroughputPhase(client, plan, TOPIC, acks, nextTag++)
                    .run(watch, run, plan.warmupMs(), plan.throughputMs());
                throughput.get(acks).add(t);
                out.println(MultiProcessReport.describe(t));
                out.flush();
                settle(cluster, acks, run, "latency");
                final LatencyResult l = new LatencyPhase(client, plan, TOPIC, acks, nextTag++).run(watch, run);
                latency.get(acks).add(l);
                out.println(MultiProcessReport.describe(l, plan.rate()));
                out.flush();
            }
        }
    }

    private void settle(final LoopbackCluster cluster, final int acks, final int run, final String phase)
    {
        if (!cluster.awaitFullIsr(TOPIC, plan.settleTimeoutMs()))
        {
            final String note = "run " + run + ", acks=" + Acks.describe(acks) + ", " + phase + ": the ISR was not " +
                "full after " + plan.settleTimeoutMs() + " ms; the phase ran anyway: " +
                cluster.client().partitions(TOPIC);
            notes.add(note);
            out.println("  note: " + note);
        }
    }

    private List<AcksResult> results()
    {
        final List<AcksResult> results = new ArrayList<>();
        for (final int acks : plan.acks())
        {
            if (!throughput.get(acks).isEmpty() || !latency.get(acks).isEmpty())
            {
                results.add(new AcksResult(acks, List.copyOf(throughput.get(acks)), List.copyOf(latency.get(acks))));
            }
        }
        return results;
    }
}
