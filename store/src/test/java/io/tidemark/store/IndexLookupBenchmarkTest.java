package io.tidemark.store;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link IndexLookupBenchmark} runs, and its lookups find floor entries (a smoke test, not a measurement). */
class IndexLookupBenchmarkTest
{
    private static final int OPS = 1_000;

    @Test
    void indexLookupsFindTheFloorEntry() throws Exception
    {
        final IndexLookupBenchmark bench = new IndexLookupBenchmark();
        bench.entries = 4_096;
        bench.build();
        try
        {
            for (int i = 0; i < OPS; i++)
            {
                final int position = bench.offsetIndexLookup();
                assertTrue(position >= 0 && position < 4_096 * 4_096 && position % 4_096 == 0, "" + position);
                final long offset = bench.timeIndexLookup();
                assertTrue(offset >= 1_000_000L, "" + offset);
            }
        }
        finally
        {
            bench.close();
        }
    }
}
