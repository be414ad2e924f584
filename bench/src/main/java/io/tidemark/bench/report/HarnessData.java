package io.tidemark.bench.report;

import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;

import java.util.List;
import java.util.Map;

/**
 * Everything one harness run measured, for the report.
 *
 * @param kind      "quick", "full" or "run".
 * @param settings  how it was run (warm-up, measurement, runs, threading, ...), listed in the report.
 * @param scenarios the replication scenarios.
 * @param peer      the peer comparison, or null when not run.
 * @param failover  the leader-kill runs (empty when not run).
 * @param jmhRows   JMH results when the run included JMH, else null.
 */
public record HarnessData(
    String kind,
    Map<String, String> settings,
    List<ScenarioResult> scenarios,
    PeerComparison peer,
    List<RunResult> failover,
    List<JmhSummary.Row> jmhRows)
{
    /** @return whether every scenario and failover run verified. */
    public boolean allVerified()
    {
        return scenarios.stream().allMatch(ScenarioResult::verified) && failover.stream().allMatch(RunResult::verified);
    }

    /** @return the scenarios of one sweep, in the sweep's order ({@link Matrix#order}). */
    public List<ScenarioResult> inSweep(final String sweep)
    {
        return scenarios.stream().filter((r) -> r.sweeps().contains(sweep))
            .sorted((a, b) -> Matrix.order(sweep).compare(a.scenario(), b.scenario())).toList();
    }
}
