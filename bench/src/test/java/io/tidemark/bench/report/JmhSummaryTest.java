package io.tidemark.bench.report;

import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JmhSummaryTest
{
    /** Two results as JMH 1.37 writes them (trimmed): one with the GC profiler's metrics, one without. */
    static final String SYNTHETIC_RESULT = """
        [
            {
                "jmhVersion" : "1.37",
                "benchmark" : "io.tidemark.bench.jmh.StoreAppendBenchmark.append",
                "mode" : "thrpt",
                "threads" : 1,
                "forks" : 1,
                "jvmArgs" : [ "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED" ],
                "params" : { "valueSize" : "100" },
                "primaryMetric" : {
                    "score" : 2197417.4371006032,
                    "scoreError" : 12345.6,
                    "scoreConfidence" : [ 2185071.8, 2209763.0 ],
                    "scoreUnit" : "ops/s",
                    "rawData" : [ [ 2190000.0, 2200000.0, 2202252.3 ] ]
                },
                "secondaryMetrics" : {
                    "gc.alloc.rate" : { "score" : 0.29, "scoreError" : "NaN", "scoreUnit" : "MB/sec" },
                    "gc.alloc.rate.norm" : { "score" : 1.5E-3, "scoreError" : "NaN", "scoreUnit" : "B/op" }
                }
            },
            {
                "jmhVersion" : "1.37",
                "benchmark" : "io.tidemark.bench.jmh.ConcurrentAppendBenchmark.ringBufferAppender",
                "mode" : "thrpt",
                "threads" : 2,
                "jvmArgs" : [ "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED" ],
                "params" : { "drainIdle" : "yielding", "valueSize" : "100" },
                "primaryMetric" : {
                    "score" : 3.5,
                    "scoreError" : "NaN",
                    "scoreUnit" : "ops/us"
                },
                "secondaryMetrics" : { }
            }
        ]
        """;

    @Test
    void parsesRowsFromJmhJson()
    {
        final List<JmhSummary.Row> rows = JmhSummary.parse(SYNTHETIC_RESULT);

        assertEquals(2, rows.size());
        final JmhSummary.Row append = rows.get(0);
        assertEquals("StoreAppendBenchmark.append", append.benchmark());
        assertEquals("valueSize=100", append.params());
        assertEquals("thrpt", append.mode());
        assertEquals(1, append.threads());
        assertEquals(2197417.4371006032, append.score());
        assertEquals(12345.6, append.error());
        assertEquals("ops/s", append.unit());
        assertEquals(0.0015, append.allocNorm());
        assertEquals("B/op", append.allocUnit());

        final JmhSummary.Row ring = rows.get(1);
        assertEquals("ConcurrentAppendBenchmark.ringBufferAppender", ring.benchmark());
        assertEquals("drainIdle=yielding, valueSize=100", ring.params());
        assertEquals(2, ring.threads());
        assertTrue(Double.isNaN(ring.error()));
        assertTrue(Double.isNaN(ring.allocNorm()));
    }

    @Test
    void rendersMarkdownTable()
    {
        final Map<String, String> facts = new LinkedHashMap<>();
        facts.put("Commit", "abc1234");
        final String md = JmhSummary.markdown("Results", facts, JmhSummary.parse(SYNTHETIC_RESULT));

        assertTrue(md.startsWith("# Results\n\n- Commit: abc1234\n"), md);
        assertTrue(md.contains("| Benchmark | Params | Mode | Threads | Score | Error | Units | gc.alloc.rate.norm |"),
            md);
        assertTrue(md.contains(
            "| StoreAppendBenchmark.append | valueSize=100 | thrpt | 1 | 2,197,417 | ± 12,346 | ops/s | 0.002 B/op |"),
            md);
        assertTrue(md.contains("| ConcurrentAppendBenchmark.ringBufferAppender | drainIdle=yielding, valueSize=100 " +
            "| thrpt | 2 | 3.500 | NaN | ops/us | n/a |"), md);
    }

    @Test
    void readsForkedJvmArgsAndVersion()
    {
        assertEquals(List.of("--add-exports java.base/jdk.internal.misc=ALL-UNNAMED"),
            JmhSummary.forkedJvmArgs(SYNTHETIC_RESULT));
        assertEquals("1.37", JmhSummary.jmhVersion(SYNTHETIC_RESULT));
    }

    @Test
    void emptyResultGivesPlaceholderRow()
    {
        assertTrue(JmhSummary.table(JmhSummary.parse("[]")).contains("(no results)"));
    }

    @Test
    void formatsBySize()
    {
        assertEquals("12,345,678", JmhSummary.format(12345678.4));
        assertEquals("123.5", JmhSummary.format(123.45));
        assertEquals("0.000", JmhSummary.format(0.0001));
        assertEquals("NaN", JmhSummary.format(Double.NaN));
    }

    @Test
    void shortensBenchmarkNames()
    {
        assertEquals("StoreReadBenchmark.randomLookup",
            JmhSummary.shortName("io.tidemark.bench.jmh.StoreReadBenchmark.randomLookup"));
        assertEquals("Plain.method", JmhSummary.shortName("Plain.method"));
        assertEquals("name", JmhSummary.shortName("name"));
    }

    @Test
    void jsonParserHandlesEscapesNumbersAndLiterals()
    {
        final Object parsed = Json.parse("{\"a\\\"b\\u0041\":[1,-2.5e2,true,false,null,\"x\\ny\"],\"e\":{}}");
        final Map<String, Object> map = Json.object(parsed);
        assertEquals(List.of("a\"bA", "e"), List.copyOf(map.keySet()));
        final List<Object> list = Json.array(map.get("a\"bA"));
        assertEquals(1.0, Json.number(list.get(0)));
        assertEquals(-250.0, Json.number(list.get(1)));
        assertEquals(Boolean.TRUE, list.get(2));
        assertEquals(Boolean.FALSE, list.get(3));
        assertEquals(null, list.get(4));
        assertEquals("x\ny", list.get(5));
        assertTrue(Double.isNaN(Json.number("NaN")));
        assertEquals(Map.of(), map.get("e"));
    }

    @Test
    void jsonParserRejectsMalformedInput()
    {
        assertThrows(IllegalArgumentException.class, () -> Json.parse("[1, 2"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("{\"a\" 1}"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("[1] x"));
        assertThrows(IllegalArgumentException.class, () -> Json.parse("nul"));
    }
}
