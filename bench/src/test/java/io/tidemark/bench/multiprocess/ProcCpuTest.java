package io.tidemark.bench.multiprocess;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProcCpuTest
{
    @Test
    void readsThisProcessAndItsThreadsAndGroupsThemByKind()
    {
        Assumptions.assumeTrue(ProcCpu.available(), "no /proc here");
        final long pid = ProcessHandle.current().pid();
        final Map<String, Long> before = ProcCpu.threadNanos(pid);
        final long processBefore = ProcCpu.processNanos(pid);
        long x = 0;
        final long deadline = System.nanoTime() + 60_000_000_000L; // a busy machine gives this thread little CPU
        while (ProcCpu.processNanos(pid) - processBefore < 50_000_000L && System.nanoTime() < deadline)
        {
            for (int i = 0; i < 1_000_000; i++)
            {
                x += System.nanoTime() % 7;
            }
        }
        assertTrue(x >= 0);
        assertTrue(ProcCpu.processNanos(pid) - processBefore >= 50_000_000L, "50 ms of CPU within a minute");
        final Map<String, Long> delta = ProcCpu.delta(before, ProcCpu.threadNanos(pid));
        assertTrue(delta.values().stream().mapToLong(Long::longValue).sum() >= 40_000_000L, delta.toString());
        final long[] values = delta.values().stream().mapToLong(Long::longValue).toArray();
        for (int i = 1; i < values.length; i++)
        {
            assertTrue(values[i - 1] >= values[i], "largest first: " + delta);
        }
        assertEquals(Map.of("GC Thread", 3L, "main", 5L),
            ProcCpu.byKind(Map.of("GC Thread#0 (11)", 1L, "GC Thread#1 (12)", 2L, "main (1)", 5L)));
        assertEquals(0, ProcCpu.processNanos(Long.MAX_VALUE));
    }
}
