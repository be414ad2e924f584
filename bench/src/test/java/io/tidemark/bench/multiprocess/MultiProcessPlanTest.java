package io.tidemark.bench.multiprocess;

import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.Acks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MultiProcessPlanTest
{
    @TempDir
    Path tmp;

    private static MultiProcessPlan plan(final List<Integer> acks, final int size, final int minInsync,
        final Map<String, String> hostProperties)
    {
        return plan(List.of("kafka", "tidemark"), acks, List.of(1, 4, 16), size, minInsync, hostProperties);
    }

    private static MultiProcessPlan plan(final List<String> targets, final List<Integer> acks,
        final List<Integer> partitions, final int size, final int minInsync, final Map<String, String> hostProperties)
    {
        return new MultiProcessPlan(targets, acks, partitions, 5_000, 2_000, 10_000, 10_000, 10_000, 10_000, 60_000,
            10_000, size, 1, minInsync, 16_384, 5, 0, 33_554_432L, 1, hostProperties, Path.of("/tmp"), false, "cp",
            null, 90_000, 30_000, 60_000, false);
    }

    @Test
    void acksAreParsedAsTheReferenceWritesThem()
    {
        assertEquals(Acks.ALL, MultiProcessPlan.parseAcks("all"));
        assertEquals(Acks.ALL, MultiProcessPlan.parseAcks("-1"));
        assertEquals(0, MultiProcessPlan.parseAcks("0"));
        assertEquals(1, MultiProcessPlan.parseAcks(" 1 "));
        assertThrows(IllegalArgumentException.class, () -> MultiProcessPlan.parseAcks("most"));
    }

    @Test
    void validationNamesTheOption()
    {
        plan(List.of(0, 1, Acks.ALL), 100, 2, Map.of()).validate();
        assertMessage("--acks", () -> plan(List.of(2), 100, 2, Map.of()).validate());
        assertMessage("--targets", () -> plan(List.of("kafka", "pulsar"), List.of(1), List.of(1), 100, 2, Map.of())
            .validate());
        assertMessage("--targets", () -> plan(List.of("kafka", "kafka"), List.of(1), List.of(1), 100, 2, Map.of())
            .validate());
        assertMessage("--partitions", () -> plan(List.of("kafka"), List.of(1), List.of(1, 1), 100, 2, Map.of())
            .validate());
        assertMessage("--partitions", () -> plan(List.of("kafka"), List.of(1), List.of(0), 100, 2, Map.of())
            .validate());
        assertMessage("--acks", () -> plan(List.of(1, 1), 100, 2, Map.of()).validate());
        assertMessage("--size", () -> plan(List.of(1), 7, 2, Map.of()).validate());
        assertMessage("--min-insync", () -> plan(List.of(1), 100, 0, Map.of()).validate());
        assertMessage("--host-property", () -> plan(List.of(1), 100, 2,
            Map.of("min.insync.replicas", "1")).validate());
    }

    private static void assertMessage(final String option, final Runnable call)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(ex.getMessage().startsWith(option), ex.getMessage());
    }

    @Test
    void latencyPhaseSchedulesWarmupAndWindowAtTheRate()
    {
        assertEquals(120_000, plan(List.of(1), 100, 2, Map.of()).latencyRecords(10_000));
        // per target: 5 s JIT warm-up + 9 cells x 24 s + 10 s round trips + 60 s idle + 3 x 10 s + 2 x 2 s profiles
        assertEquals(2 * (5 + 9 * 24.0 + 10 + 60 + 34), plan(List.of(0, 1, Acks.ALL), 100, 2, Map.of())
            .plannedSeconds(), 1e-9);
    }

    @Test
    void recordIdsKeepTagThreadAndSequenceApart()
    {
        final long id = RecordValues.id(65_535, 255, (1L << 40) - 1);
        assertEquals(65_535, RecordValues.tag(id));
        assertEquals((1L << 40) - 1, RecordValues.sequence(id));
        assertEquals(7, RecordValues.tag(RecordValues.id(7, 3, 42)));
        assertEquals(42, RecordValues.sequence(RecordValues.id(7, 3, 42)));
        assertEquals('a' + 8 % 26, RecordValues.filled(100).getByte(8));
    }

    @Test
    void runDirectoriesAreNamedByDateKindAndCommitAndNeverReused() throws Exception
    {
        final LocalDate date = LocalDate.of(2026, 11, 29);
        final Path first = PerfRun.createDirectory(tmp, date, "abc1234", Comparison.MULTIPROCESS.kind());
        assertEquals("2026-11-29_multiprocess-abc1234", first.getFileName().toString());
        Files.writeString(first.resolve("summary.json"), "{}");
        assertEquals("2026-11-29_multiprocess-abc1234-2",
            PerfRun.createDirectory(tmp, date, "abc1234", "multiprocess").getFileName().toString());
        assertEquals("2026-11-29_kafka-clients-abc1234",
            PerfRun.createDirectory(tmp, date, "abc1234", Comparison.KAFKA_CLIENTS.kind()).getFileName().toString());
    }
}
