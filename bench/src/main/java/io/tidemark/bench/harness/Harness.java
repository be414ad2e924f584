package io.tidemark.bench.harness;

import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.bench.peer.PeerResult;
import io.tidemark.bench.peer.PeerRunner;
import io.tidemark.replication.Acks;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a plan: a warm-up, the matrix's scenarios (run r of every scenario, then run r + 1 of every scenario, so that
 * a change of the machine's background load spreads over all scenarios instead of biasing one), the leader-kill
 * runs, and the peer comparison in forked JVMs. Failures of a scenario are recorded, never thrown: the report says
 * what failed.
 */
public final class Harness
{
    /**
     * What to run.
     *
     * @param entries         the scenarios.
     * @param warmupMs        warm-up of each scenario run.
     * @param durationMs      measurement window of each scenario run.
     * @param runs            runs of each scenario.
     * @param globalWarmupMs  an unreported closed-loop run first, so the JIT has compiled the paths.
     * @param failoverRuns    leader-kill runs (0: none).
     * @param failover        the leader-kill scenario.
     * @param peerSizes       record sizes of the peer comparison (empty: none).
     * @param peerWarmupMs    peer warm-up.
     * @param peerThroughputMs peer throughput phase.
     * @param peerLatencyMs   each peer latency phase.
     * @param peerRate        records/s of the peer latency phases.
     * @param peerRuns        JVMs per peer and size.
     * @param extraPeerJdks   further JDK homes on which Chronicle Queue is tried (with the same flags).
     * @param chronicleStrict Chronicle Queue's JVM gets only Tidemark's one flag, not the flags Chronicle documents.
     */
    public record Plan(
        List<Matrix.Entry> entries,
        long warmupMs,
        long durationMs,
        int runs,
        long globalWarmupMs,
        int failoverRuns,
        Scenario failover,
        List<Integer> peerSizes,
        long peerWarmupMs,
        long peerThroughputMs,
        long peerLatencyMs,
        long peerRate,
        int peerRuns,
        List<Path> extraPeerJdks,
        boolean chronicleStrict)
    {
        /** @return planned seconds of measured work, for the progress bar. */
        public double plannedSeconds()
        {
            double total = globalWarmupMs / 1e3 + 1;
            total += entries.size() * runs * ((warmupMs + durationMs) / 1e3 + SCENARIO_OVERHEAD_S);
            total += failoverRuns * ((warmupMs + Math.max(durationMs, FAILOVER_MIN_MS)) / 1e3 + SCENARIO_OVERHEAD_S);
            total += peerSizes.size() * (peerRuns * 2 + 1 + extraPeerJdks.size()) * peerSeconds();
            return total;
        }

        double peerSeconds()
        {
            return (peerWarmupMs * 1.5 + peerThroughputMs + 2 * peerLatencyMs) / 1e3 + 1.5;
        }

        /** @return the number of progress steps. */
        public int steps()
        {
            return 1 + entries.size() * runs + failoverRuns + peerSizes.size() * (peerRuns * 3 + extraPeerJdks.size());
        }
    }

    /** Rough set-up, drain and verification time of one scenario run, for the progress estimate. */
    static final double SCENARIO_OVERHEAD_S = 0.7;
    /** Shortest measurement window of a leader-kill run: the kill comes 1 s in, and 2 s follow it. */
    static final long FAILOVER_MIN_MS = 3_000;
    private static final long KILL_AFTER_MS = 1_000;

    private final Path workDir;
    private final long segmentBytes;
    private long dirtyBytesMax = io.tidemark.store.LogContext.DEFAULT_DIRTY_BYTES_MAX;
    private final Progress progress;

    /**
     * @param workDir      where temporary logs go.
     * @param segmentBytes {@code segment.bytes} of the replica logs.
     * @param progress     the progress bar.
     */
    public Harness(final Path workDir, final long segmentBytes, final Progress progress)
    {
        this.workDir = workDir;
        this.segmentBytes = segmentBytes;
        this.progress = progress;
    }

    /** @param bytes {@code dirty.bytes.max} of every replica log. @return this */
    public Harness dirtyBytesMax(final long bytes)
    {
        dirtyBytesMax = bytes;
        return this;
    }

    /**
     * The measures of a plan.
     *
     * @param scenarios the scenarios' results.
     * @param failover  the leader-kill runs.
     * @param peer      the peer comparison, or null.
     */
    public record Outcome(List<ScenarioResult> scenarios, List<RunResult> failover, PeerComparison peer)
    {
    }

    /**
     * @param plan what to run.
     * @return what it measured.
     */
    public Outcome run(final Plan plan) throws InterruptedException
    {
        final ScenarioRunner runner = new ScenarioRunner(workDir, segmentBytes, progress::phase)
            .dirtyBytesMax(dirtyBytesMax);
        if (plan.globalWarmupMs() > 0 && !plan.entries().isEmpty())
        {
            final Scenario warm = plan.entries().get(0).scenario().withLoad(Scenario.Load.CLOSED, 0)
                .withAcks(Acks.ALL);
            progress.startStep("JIT warm-up (not reported): " + warm.describe(), plan.globalWarmupMs() / 1e3 + 1);
            runOnce(runner, warm, 0, plan.globalWarmupMs(), -1);
            progress.endStep();
        }
        final Map<String, List<RunResult>> runs = new LinkedHashMap<>();
        for (final Matrix.Entry e : plan.entries())
        {
            runs.put(e.scenario().id(), new ArrayList<>());
        }
        for (int r = 0; r < plan.runs(); r++)
        {
            for (final Matrix.Entry e : plan.entries())
            {
                progress.startStep(e.scenario().describe() + " [run " + (r + 1) + "/" + plan.runs() + "]",
                    (plan.warmupMs() + plan.durationMs()) / 1e3 + SCENARIO_OVERHEAD_S);
                final RunResult result = runOnce(runner, e.scenario(), plan.warmupMs(), plan.durationMs(), -1);
                runs.get(e.scenario().id()).add(result);
                if (!result.verified())
                {
                    progress.message("FAILED: " + e.scenario().describe() + ": " + result.problem());
                }
                progress.endStep();
            }
        }
        final List<ScenarioResult> scenarios = new ArrayList<>();
        for (final Matrix.Entry e : plan.entries())
        {
            scenarios.add(new ScenarioResult(e.scenario(), e.sweeps(), runs.get(e.scenario().id())));
        }

        final List<RunResult> failover = new ArrayList<>();
        for (int r = 0; r < plan.failoverRuns(); r++)
        {
            final long window = Math.max(plan.durationMs(), FAILOVER_MIN_MS);
            progress.startStep("leader kill: " + plan.failover().describe() + " [run " + (r + 1) + "/" +
                plan.failoverRuns() + "]", (plan.warmupMs() + window) / 1e3 + SCENARIO_OVERHEAD_S);
            final RunResult result = runOnce(runner, plan.failover(), plan.warmupMs(), window, KILL_AFTER_MS);
            failover.add(result);
            if (!result.verified())
            {
                progress.message("FAILED: leader kill: " + result.problem());
            }
            progress.endStep();
        }

        PeerComparison peer = null;
        if (!plan.peerSizes().isEmpty())
        {
            peer = peers(plan);
        }
        return new Outcome(scenarios, failover, peer);
    }

    private PeerComparison peers(final Plan plan) throws InterruptedException
    {
        final PeerRunner runner = new PeerRunner(workDir, plan.chronicleStrict());
        final List<PeerResult> results = new ArrayList<>();
        final Path java = PeerRunner.currentJava();
        for (int r = 0; r < plan.peerRuns(); r++)
        {
            for (final int size : plan.peerSizes())
            {
                for (final String peer : List.of(PeerMain.TIDEMARK, PeerMain.CHRONICLE, PeerMain.RAW_COPY))
                {
                    results.add(peer(plan, runner, java, peer, size, r));
                }
            }
        }
        for (final Path jdk : plan.extraPeerJdks())
        {
            for (final int size : plan.peerSizes())
            {
                results.add(peer(plan, runner, PeerRunner.javaIn(jdk), PeerMain.CHRONICLE, size, 0));
            }
        }
        return new PeerComparison(System.getProperty("java.home"), results);
    }

    private PeerResult peer(final Plan plan, final PeerRunner runner, final Path java, final String peer,
        final int size, final int run) throws InterruptedException
    {
        progress.startStep("peer " + peer + " " + size + " B on " + java + " [run " + (run + 1) + "/" +
            plan.peerRuns() + "]", plan.peerSeconds());
        progress.phase("forked JVM");
        PeerResult result;
        try
        {
            result = runner.run(java, peer, size, plan.peerWarmupMs(), plan.peerThroughputMs(), plan.peerLatencyMs(),
                plan.peerRate());
        }
        catch (final IOException ex)
        {
            result = new PeerResult(peer, size, "unknown", java.toString(), "", false, "could not start: " + ex,
                Double.NaN, null, null, null);
        }
        if (!result.ok() && run == 0)
        {
            progress.message("peer " + peer + " (" + java + ") did not run: " + result.failureSummary());
        }
        progress.endStep();
        return result;
    }

    private RunResult runOnce(final ScenarioRunner runner, final Scenario scenario, final long warmupMs,
        final long durationMs, final long killAfterMs)
    {
        try
        {
            return runner.run(scenario, warmupMs * 1_000_000L, durationMs * 1_000_000L,
                killAfterMs < 0 ? -1 : killAfterMs * 1_000_000L);
        }
        catch (final IOException | RuntimeException ex)
        {
            return new RunResult(scenario, durationMs * 1_000_000L, 0, 0, 0, null, 0, 0, Map.of(), 0, 0, 0, false,
                "the run failed: " + ex, null, Double.NaN, Double.NaN, 0, null, null);
        }
    }
}
