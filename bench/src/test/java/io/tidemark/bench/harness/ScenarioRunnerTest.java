package io.tidemark.bench.harness;

import io.tidemark.replication.Acks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Short real runs on an embedded cluster. Counts and verification only, never timings.
 */
class ScenarioRunnerTest
{
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    private final List<String> phases = new ArrayList<>();

    private ScenarioRunner runner()
    {
        return new ScenarioRunner(tmp, 8L << 20, phases::add);
    }

    /**
     * A runner whose clusters keep their leaders and ISRs on a busy machine: the in-process defaults (600 ms sessions,
     * 1 s lag) moved a leader and shrank an ISR during settling at load 28, which the runner rightly reports as
     * produce errors. For the tests that check the runner's accounting, not a failover.
     *
     * @param lagMs replica.lag.time.max.ms, or 0 for the default.
     */
    private ScenarioRunner steadyRunner(final long lagMs)
    {
        return runner().tuning((ctx) -> lagMs > 0 ? ctx.hostSessionTimeoutMs(6_000).replicaLagTimeMaxMs(lagMs) :
            ctx.hostSessionTimeoutMs(6_000));
    }

    @Test
    void closedLoopAcksAllIsVerifiedAndLeavesNothingBehind() throws Exception
    {
        final Scenario s = MatrixTest.BASE.withPartitions(2).withBatch(16).withMinInsync(2);
        final RunResult r = steadyRunner(6_000).run(s, 50 * MS, 200 * MS);
        assertTrue(r.verified(), r.problem());
        assertNull(r.problem());
        assertTrue(r.recordsPerSecond() > 0);
        assertTrue(r.ackedRecords() > 0);
        assertEquals(r.queuedRecords(), r.ackedRecords(), "every queued record acknowledged");
        assertEquals(r.ackedRecords(), r.verifiedRecords());
        assertEquals(r.queuedRecords(), r.recordsInLogs());
        assertTrue(r.latency().getTotalCount() > 0);
        assertEquals(0, r.unanswered());
        assertTrue(phases.containsAll(List.of("settle", "warm-up", "measure", "drain", "verify")), phases.toString());
        try (Stream<Path> left = Files.list(tmp))
        {
            assertEquals(0, left.count(), "the run's directory is deleted");
        }
    }

    @Test
    void acksZeroCountsAppendsAndStillChecksTheLog() throws Exception
    {
        final RunResult r = steadyRunner(0).run(MatrixTest.BASE.withAcks(Acks.NONE).withBatch(8), 50 * MS, 200 * MS);
        assertTrue(r.verified(), r.problem());
        assertTrue(r.recordsPerSecond() > 0, "records/s " + r.recordsPerSecond() + ", queued " + r.queuedRecords());
        assertEquals(0, r.latency().getTotalCount(), "acks=0 is never acknowledged");
        assertEquals(r.queuedRecords(), r.recordsInLogs(), "every queued record appended once");
        assertEquals(8, r.verifiedRecords(), "only the settling request was acknowledged");
    }

    @Test
    void openLoopAtAFixedRateOneRecordPerRequest() throws Exception
    {
        final Scenario s = MatrixTest.BASE.withAcks(Acks.LEADER).withBatch(1).withReplicas(2)
            .withLoad(Scenario.Load.OPEN, 2_000);
        final RunResult r = steadyRunner(0).run(s, 50 * MS, 300 * MS);
        assertTrue(r.verified(), r.problem());
        // 2,000/s for 300 ms: about 600 latency samples (the schedule is kept, whatever the machine's load)
        assertTrue(r.latency().getTotalCount() >= 500 && r.latency().getTotalCount() <= 700,
            "samples: " + r.latency().getTotalCount());
        assertEquals(r.queuedRecords(), r.verifiedRecords());
    }

    @Test
    void leaderKillIsSurvivedAndEveryAcknowledgedRecordIsOnTheNewLeader() throws Exception
    {
        final Scenario s = MatrixTest.BASE.withBatch(1).withLoad(Scenario.Load.OPEN, 2_000);
        final RunResult r = runner().run(s, 50 * MS, 2_000 * MS, 200 * MS);
        assertTrue(r.verified(), r.problem());
        final RunResult.Failover f = r.failover();
        assertNotNull(f);
        assertTrue(f.killedHost() >= 0);
        assertTrue(f.newLeader() >= 0 && f.newLeader() != f.killedHost(), f.toString());
        assertTrue(f.resumeNanos() > 0, f.toString());
        assertTrue(f.ackedAfterKill() > 0, f.toString());
        assertTrue(r.elections() >= 1, "the kill caused an election");
        assertTrue(r.verifiedRecords() > 0);
    }
}
