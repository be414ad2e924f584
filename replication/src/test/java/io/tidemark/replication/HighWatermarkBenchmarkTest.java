package io.tidemark.replication;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link HighWatermarkBenchmark} runs, and each operation moves the high watermark (a smoke test, not a
 * measurement).
 */
class HighWatermarkBenchmarkTest
{
    private static final int OPS = 1_000;

    @Test
    void highWatermarkAdvances() throws Exception
    {
        final HighWatermarkBenchmark bench = new HighWatermarkBenchmark();
        bench.start();
        try
        {
            for (int i = 0; i < OPS; i++)
            {
                assertTrue(bench.advanceTo());
                assertTrue(bench.leaderRule());
            }
            final HighWatermarkBenchmark.Candidate a = new HighWatermarkBenchmark.Candidate();
            final HighWatermarkBenchmark.Candidate b = new HighWatermarkBenchmark.Candidate();
            a.value = 3L * OPS;
            b.value = 3L * OPS;
            assertTrue(bench.contendedAdvanceTo(a));
            assertFalse(bench.contendedAdvanceTo(b), "the same candidate does not move it twice");
        }
        finally
        {
            bench.stop();
        }
    }
}
