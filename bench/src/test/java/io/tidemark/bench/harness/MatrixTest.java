package io.tidemark.bench.harness;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;
import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MatrixTest
{
    static final Scenario BASE = new Scenario(Scenario.Load.CLOSED, 1, Acks.ALL, 3, 1, 100, 1, Scenario.FLUSH_NONE,
        64, 16, 0, ReplicationContext.ThreadingMode.SHARED, true);

    @Test
    void theStudysSweepsWithSharedScenariosRunOnce()
    {
        final List<Matrix.Entry> entries = Matrix.build(BASE, new HashSet<>(Matrix.ALL_SWEEPS),
            Matrix.DEFAULT_RATES);
        // acks 4 + replicas 2 more + min.insync 2 more + partitions 5 more + flush 3 + batch 3 more
        // + latency (one at a time + 2 rates) x 3 acks
        assertEquals(28, entries.size());
        final Set<String> ids = entries.stream().map((e) -> e.scenario().id()).collect(Collectors.toSet());
        assertEquals(entries.size(), ids.size(), "no duplicates");

        final Matrix.Entry base = entries.stream().filter((e) -> e.scenario().id().equals(BASE.id())).findFirst()
            .orElseThrow();
        assertEquals(List.of(Matrix.ACKS, Matrix.REPLICAS, Matrix.MIN_INSYNC, Matrix.PARTITIONS, Matrix.BATCH),
            base.sweeps());
        assertEquals(Matrix.BATCH_SIZES, sweep(entries, Matrix.BATCH).stream().sorted(Matrix.order(Matrix.BATCH))
            .map(Scenario::batchRecords).toList());

        assertEquals(List.of(0, 1, 2, -1), sweep(entries, Matrix.ACKS).stream().map(Scenario::acks).toList());
        assertEquals(List.of(1, 2, 3), sweep(entries, Matrix.REPLICAS).stream().map(Scenario::replicas).sorted()
            .toList());
        assertTrue(sweep(entries, Matrix.REPLICAS).stream().allMatch((s) -> s.acks() == Acks.ALL));
        assertEquals(List.of(1, 2, 3), sweep(entries, Matrix.MIN_INSYNC).stream().map(Scenario::minInsync)
            .sorted().toList());
        assertEquals(Matrix.PARTITION_COUNTS, sweep(entries, Matrix.PARTITIONS).stream()
            .sorted(Matrix.order(Matrix.PARTITIONS)).map(Scenario::partitions).toList());
        assertEquals(List.of(1, 2, 3), sweep(entries, Matrix.REPLICAS).stream()
            .sorted(Matrix.order(Matrix.REPLICAS)).map(Scenario::replicas).toList());
        final List<Scenario> flush = sweep(entries, Matrix.FLUSH);
        assertEquals(Matrix.FLUSH_POLICIES, flush.stream().map(Scenario::flush).toList());
        assertTrue(flush.stream().allMatch((s) -> s.replicas() == 1 && s.acks() == Acks.LEADER));
        final List<Scenario> latency = sweep(entries, Matrix.LATENCY);
        assertEquals(9, latency.size());
        assertTrue(latency.stream().allMatch((s) -> s.batchRecords() == 1 && s.replicas() == 3));
        assertEquals(3, latency.stream().filter((s) -> s.load() == Scenario.Load.CLOSED && s.maxInFlight() == 1)
            .count());
    }

    @Test
    void sweepsCanBeChosen()
    {
        final List<Matrix.Entry> entries = Matrix.build(BASE, Set.of(Matrix.FLUSH), List.of(1_000L));
        assertEquals(3, entries.size());
        assertTrue(entries.stream().allMatch((e) -> e.sweeps().equals(List.of(Matrix.FLUSH))));
    }

    @Test
    void scenarioIdsAndValidation()
    {
        assertEquals("closed_p1_rf3_acks-all_isr1_100B_t1_flush-none_b64x16", BASE.id());
        assertEquals("open-10k_p4_rf2_acks-1_isr1_100B_t1_flush-1_b1",
            BASE.withPartitions(4).withReplicas(2).withAcks(1).withFlush(1).withBatch(1)
                .withLoad(Scenario.Load.OPEN, 10_000).id());
        assertEquals("1.5M", Scenario.rateName(1_500_000));
        assertEquals("100k", Scenario.rateName(100_000));
        assertEquals("750", Scenario.rateName(750));
        assertEquals("every message", Scenario.flushName(1));
        assertThrows(IllegalArgumentException.class, () -> BASE.withAcks(3).withReplicas(2));
        assertThrows(IllegalArgumentException.class, () -> BASE.withMinInsync(4));
        assertThrows(IllegalArgumentException.class, () -> BASE.withLoad(Scenario.Load.OPEN, 0));
        assertThrows(IllegalArgumentException.class, () -> new Scenario(Scenario.Load.CLOSED, 1, 1, 1, 1, 8, 1,
            Scenario.FLUSH_NONE, 1, 1, 0, ReplicationContext.ThreadingMode.SHARED, true));
    }

    @Test
    void progressBarLine()
    {
        assertEquals("2m05s", Progress.duration(125));
        assertEquals("45s", Progress.duration(45));
        final java.io.StringWriter text = new java.io.StringWriter();
        try (Progress progress = new Progress(new java.io.PrintWriter(text), false, 2, 10))
        {
            progress.startStep("first", 5);
            progress.phase("measure");
            assertTrue(progress.line().contains(" 1/2 "), progress.line());
            assertTrue(progress.line().endsWith("first: measure"), progress.line());
            progress.endStep();
        }
        assertTrue(text.toString().contains("first"), text.toString());
    }

    private static List<Scenario> sweep(final List<Matrix.Entry> entries, final String sweep)
    {
        return entries.stream().filter((e) -> e.sweeps().contains(sweep)).map(Matrix.Entry::scenario).toList();
    }
}
