package io.tidemark.bench.report;

import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.bench.peer.PeerResult;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report from synthetic measures: files, JSON content, tables, charts, index, targets. */
class HarnessReportTest
{
    @TempDir
    Path tmp;

    private static final Scenario BASE = new Scenario(Scenario.Load.CLOSED, 1, Acks.ALL, 3, 1, 100, 1,
        Scenario.FLUSH_NONE, 64, 16, 0, ReplicationContext.ThreadingMode.SHARED, true);

    private static Histogram latency(final long micros)
    {
        final Histogram h = new Histogram(3);
        for (int i = 1; i <= 1_000; i++)
        {
            h.recordValue(micros * 1_000 + i);
        }
        return h;
    }

    private static RunResult run(final Scenario s, final double rps, final long micros)
    {
        return new RunResult(s, 1_000_000_000L, rps, rps, rps * s.messageSize() / 1e6,
            s.acknowledged() ? latency(micros) : new Histogram(3), 1_000, 1_000, Map.of(), 0, 1_000, 1_000, true, null,
            null, 1.9, 2.5, 0, null, null);
    }

    static HarnessData data()
    {
        final List<ScenarioResult> scenarios = new ArrayList<>();
        double rps = 3e6;
        for (final Matrix.Entry e : Matrix.build(BASE, new HashSet<>(Matrix.ALL_SWEEPS), Matrix.DEFAULT_RATES))
        {
            final Scenario s = e.scenario();
            scenarios.add(new ScenarioResult(s, e.sweeps(), List.of(run(s, rps, 10), run(s, rps * 1.1, 12))));
            rps *= 0.9;
        }
        final Scenario kill = BASE.withBatch(1).withLoad(Scenario.Load.OPEN, 10_000);
        final RunResult failover = new RunResult(kill, 3_000_000_000L, 9_000, 9_000, 0.9, latency(20), 30_000,
            29_990, Map.of(), 10, 29_990, 29_990, true, null, new RunResult.Failover(0, 1, 640_000_000L, 50_000L,
            20_000, 10), 1.9, 2.5, 1, null, null);
        final String home = System.getProperty("java.home");
        final PeerComparison peer = new PeerComparison(home, List.of(
            new PeerResult(PeerMain.TIDEMARK, 100, "17", home, "--add-exports x", true, null, 4e6, latency(1),
                latency(2), latency(1)),
            new PeerResult(PeerMain.CHRONICLE, 100, "17", home, "--add-exports x", false,
                "java.lang.AssertionError: boom\n\tat x\nCaused by: java.lang.IllegalAccessException: nope", Double.NaN,
                null, null, null),
            new PeerResult(PeerMain.RAW_COPY, 100, "17", home, "--add-exports x", true, null, 3e7, latency(1), null,
                latency(1))));
        final Map<String, String> settings = new LinkedHashMap<>();
        settings.put("Threading", "SHARED");
        return new HarnessData("quick", settings, scenarios, peer, List.of(failover), null);
    }

    @Test
    void writesEveryFileOfTheReport() throws Exception
    {
        final Path results = tmp.resolve("perf-results");
        final PerfRun run = PerfRun.start(results, Files.createDirectories(tmp.resolve("work")), "tidemark-bench quick");
        final HarnessData data = data();
        final Map<String, String> facts = run.writeEnvironment(run.facts(), List.of("--add-exports x"),
            Map.of("harness.threading", "SHARED"));
        new HarnessReport(run, data).write(facts);
        ResultsIndex.update(results);

        final Path dir = run.directory();
        for (final ScenarioResult r : data.scenarios())
        {
            assertEquals(r.hasLatency(), Files.exists(dir.resolve(HarnessReport.hgrmName(r.scenario()))),
                r.scenario().id());
        }
        final String hgrm = Files.readString(dir.resolve(HarnessReport.hgrmName(BASE)), StandardCharsets.UTF_8);
        assertTrue(hgrm.contains("Value     Percentile TotalCount 1/(1-Percentile)"), hgrm);
        assertTrue(hgrm.contains("#[Mean"), hgrm);
        assertTrue(Files.exists(dir.resolve("failover_run1.hgrm")));
        assertTrue(Files.exists(dir.resolve("peer_tidemark_100B_append.hgrm")));
        assertTrue(Files.exists(dir.resolve("peer_tidemark_100B_tailer.hgrm")));
        for (final String chart : List.of("tps-by-acks.png", "tps-by-replicas.png", "tps-by-partitions.png",
            "tps-by-min-insync.png", "tps-by-flush.png", "tps-by-batch.png", "latency-by-acks-one-at-a-time.png", "latency-by-acks-10k.png", "latency-by-acks-100k.png",
            "peer-latency-100B.png"))
        {
            assertTrue(Files.size(dir.resolve("charts").resolve(chart)) > 1_000, chart);
        }

        final Map<String, Object> json = Json.object(Json.parse(Files.readString(dir.resolve("summary.json"),
            StandardCharsets.UTF_8)));
        assertEquals("quick", json.get("kind"));
        assertEquals(Boolean.TRUE, json.get("allVerified"));
        final List<Object> scenarios = Json.array(json.get("scenarios"));
        assertEquals(data.scenarios().size(), scenarios.size());
        final Map<String, Object> first = Json.object(scenarios.get(0));
        assertEquals("0", Json.object(first.get("parameters")).get("acks"));
        final Map<String, Object> base = Json.object(scenarios.stream().filter((s) ->
            BASE.id().equals(Json.object(s).get("id"))).findFirst().orElseThrow());
        assertTrue(Json.number(base.get("recordsPerSec")) > 0);
        assertTrue(Json.number(base.get("mbPerSec")) > 0);
        final Map<String, Object> lat = Json.object(base.get("latencyUs"));
        for (final String p : List.of("p50", "p90", "p99", "p99.9", "p99.99", "max"))
        {
            assertTrue(Json.number(lat.get(p)) >= 10, p + " " + lat);
        }
        final Map<String, Object> peer = Json.object(json.get("peerComparison"));
        final Map<String, Object> ratio = Json.object(Json.array(peer.get("ratios")).get(0));
        assertEquals(Boolean.FALSE, ratio.get("chronicleMeasurable"));
        assertTrue(String.valueOf(ratio.get("why")).contains("IllegalAccessException"), ratio.toString());
        assertTrue(Json.number(ratio.get("appendThroughputTidemarkOverRawCopy")) > 0.1);
        final List<Object> targets = Json.array(json.get("targets"));
        assertTrue(targets.stream().anyMatch((t) -> "NOT_MEASURABLE".equals(Json.object(t).get("status"))));
        final Map<String, Object> failover = Json.object(Json.array(json.get("failover")).get(0));
        assertEquals(640.0, Json.number(failover.get("acksResumedAfterMs")), 0.001);

        final String md = Files.readString(run.summaryFile(), StandardCharsets.UTF_8);
        assertTrue(md.startsWith("# Tidemark bench: quick run"), md);
        assertTrue(md.contains("## In short\n\n- Replicated produce, RF=3, closed loop (records/s, median): acks=0 "),
            md);
        assertTrue(md.contains("- Single writer, 100 B records: Tidemark 4,000,000 records/s, Chronicle Queue did not " +
            "run"), md);
        assertTrue(md.contains("- Leader killed under load: acknowledgements resumed after 640 ms"), md);
        final int goals = md.indexOf("## Goals checked against this run");
        assertTrue(goals > md.indexOf("### Acks (RF=3, closed loop)") && goals > md.indexOf("## Leader failover"),
            "what was measured comes first, the goals after it: " + md);
        assertTrue(md.contains(" goals reached, "), md);
        assertTrue(md.contains("| not reached |") && md.contains("| reached |"), md);
        assertFalse(md.contains("MISSED") || md.contains("NOT_MEASURABLE") || md.contains("NOT RUN"), md);
        assertFalse(md.matches("(?s).*\\| [0-9]+% \\|.*"), "no spread with 2 runs: " + md);
        assertTrue(md.contains("### Acks (RF=3, closed loop)"), md);
        assertTrue(md.contains("### Partitions (acks=all, RF=3, closed loop)"), md);
        assertTrue(md.contains("### Peers that did not run"), md);
        assertTrue(md.contains("Caused by: java.lang.IllegalAccessException: nope"), md);
        assertTrue(md.contains("## Leader failover"), md);
        assertTrue(md.contains("| 1 | 0 | 1 | 640.0 ms |"), md);
        assertFalse(md.contains("NaN"), md);

        final String env = Files.readString(run.envFile(), StandardCharsets.UTF_8);
        assertTrue(env.contains("loadavg.start: "), env);
        assertTrue(env.contains("harness.threading: SHARED"), env);
        final String index = Files.readString(results.resolve("README.md"), StandardCharsets.UTF_8);
        assertTrue(index.contains("| [" + dir.getFileName() + "](" + dir.getFileName() + "/summary.md) | quick |"),
            index);
    }

    @Test
    void targetsAreEvaluatedFromTheMeasures()
    {
        final Map<String, Targets.Target> byName = new LinkedHashMap<>();
        Targets.evaluate(data()).forEach((t) -> byName.put(t.name(), t));
        assertEquals(Targets.Status.NOT_MEASURABLE,
            byName.get("Single-writer append, 100 B, page cache vs Chronicle Queue").status());
        assertEquals(Targets.Status.MISSED, byName.get("Single-writer append, 100 B, page cache vs raw copy").status());
        assertEquals(Targets.Status.MET,
            byName.get("Acknowledgements resume after the leader's host is killed").status());
        assertEquals(Targets.Status.MET, byName.get("RF=3 acks=all p99 append-to-ack at 10k records/s").status());
        assertEquals(Targets.Status.MET, byName.get("TPS shape (project notes): acks").status());
    }

    @Test
    void percentileAxisLabelsAndJson()
    {
        assertEquals("0%", Charts.PercentileFormat.label(1));
        assertEquals("90%", Charts.PercentileFormat.label(10));
        assertEquals("99.9%", Charts.PercentileFormat.label(1_000));
        final Map<String, Object> tree = new LinkedHashMap<>();
        tree.put("a", 1.5);
        tree.put("b", List.of(1L, "x\"y", Double.NaN));
        tree.put("c", null);
        final Map<String, Object> back = Json.object(Json.parse(Json.write(tree)));
        assertEquals(1.5, Json.number(back.get("a")));
        assertEquals("x\"y", Json.array(back.get("b")).get(1));
        assertEquals(null, Json.array(back.get("b")).get(2));
        assertTrue(back.containsKey("c"));
        // the summaries' number rule: three decimals, integral values without a fraction, non-finite as null
        final Map<String, Object> numbers = new LinkedHashMap<>();
        numbers.put("x", 1.23456);
        numbers.put("y", 2.0);
        numbers.put("z", Double.POSITIVE_INFINITY);
        numbers.put("n", 7L);
        numbers.put("path", java.nio.file.Path.of("a", "b"));
        assertEquals("{\n  \"x\": 1.235,\n  \"y\": 2,\n  \"z\": null,\n  \"n\": 7,\n  \"path\": \"a/b\"\n}\n",
            Json.write(numbers));
    }
}
