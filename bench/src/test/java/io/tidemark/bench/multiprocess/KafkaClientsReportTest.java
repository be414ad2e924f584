package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.report.Json;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The kafka-clients report from made-up cells: the goals' ratios (medians over runs, latency histograms of the runs
 * added together), what is met and what is not, and the files with their fields. The mode end to end starts six
 * server JVMs and a ZooKeeper JVM, longer than this suite allows; its smoke command is in docs/benchmarks.md.
 */
class KafkaClientsReportTest
{
    @TempDir
    Path tmp;

    private static final MultiProcessPlan PLAN = new MultiProcessPlan(List.of("kafka", "tidemark"), List.of(Acks.ALL),
        List.of(1, 16), 0, 1_000, 10_000, 10_000, 10_000, 0, 0, 0, 100, 1, 2, 16_384, 5, 5, 33_554_432L, 2,
        Map.of(TidemarkTarget.KAFKA_LISTENER, KafkaClientsCommand.LOOPBACK_LISTENER), Path.of("/tmp"), false, "cp",
        null, 90_000, 30_000, 60_000, false).validate();

    private static CellResult cell(final String target, final String kind, final int partitions, final int run,
        final double rps, final long latencyMicros, final long serverCpuNanos)
    {
        Histogram latency = null;
        if (CellResult.RATE.equals(kind))
        {
            latency = new Histogram(3);
            for (int i = 0; i < 1_000; i++)
            {
                latency.recordValue(latencyMicros * 1_000);
            }
        }
        final long records = (long)(rps * 10);
        return new CellResult(target, kind, Acks.ALL, partitions, run, rps, records, latency,
            new CpuMeter.Usage(Map.of("server", serverCpuNanos), serverCpuNanos, 0, 10_000_000_000L),
            CellResult.RATE.equals(kind) ? 100 : 0, CellResult.RATE.equals(kind) ? 100 : records, 0, Map.of(), null, 0,
            null, null, new ClusterWatch.Summary(3, 0, 10));
    }

    private static List<CellResult> cells()
    {
        final List<CellResult> cells = new ArrayList<>();
        for (int run = 1; run <= 2; run++)
        {
            // Kafka: 40k and 60k records/s over the runs (median 50k), p99 4 ms; Tidemark: 110k/130k (median 120k)
            // with 1 partition, 90k/90k with 16; p99 1.5 ms with 1 partition, 3 ms with 16
            cells.add(cell("kafka", CellResult.SATURATED, 1, run, run == 1 ? 40_000 : 60_000, 0, 4_000_000_000L));
            cells.add(cell("kafka", CellResult.RATE, 1, run, 10_000, 4_000, 1_000_000_000L));
            cells.add(cell("kafka", CellResult.SATURATED, 16, run, 50_000, 0, 4_000_000_000L));
            cells.add(cell("kafka", CellResult.RATE, 16, run, 10_000, 4_000, 1_000_000_000L));
            cells.add(cell("tidemark", CellResult.SATURATED, 1, run, run == 1 ? 110_000 : 130_000, 0,
                2_000_000_000L));
            cells.add(cell("tidemark", CellResult.RATE, 1, run, 10_000, 1_500, 500_000_000L));
            cells.add(cell("tidemark", CellResult.SATURATED, 16, run, 90_000, 0, 2_000_000_000L));
            cells.add(cell("tidemark", CellResult.RATE, 16, run, 10_000, 3_000, 500_000_000L));
        }
        return cells;
    }

    @Test
    void goalsAreTheIssuesRatiosOfMediansOverRuns()
    {
        final List<Comparison.Goal> goals = Comparison.KAFKA_CLIENTS.goals(new CellStats(cells()), PLAN, Map.of());
        assertEquals(4, goals.size(), goals.toString());
        assertEquals("acks=all saturated records/s, 1 partition(s): >= 2x Kafka's", goals.get(0).goal());
        assertEquals(2.4, goals.get(0).value(), 1e-9);
        assertEquals(Boolean.TRUE, goals.get(0).met());
        assertEquals(1.8, goals.get(1).value(), 1e-9);
        assertEquals(Boolean.FALSE, goals.get(1).met());
        assertEquals("acks=all p99 at 10,000 records/s, 1 partition: <= 1/2 of Kafka's", goals.get(2).goal());
        assertEquals(1.5 / 4, goals.get(2).value(), 0.01);
        assertEquals(Boolean.TRUE, goals.get(2).met());
        assertEquals("acks=all p99 at 10,000 records/s, 16 partitions: <= 1/2 of Kafka's", goals.get(3).goal());
        assertEquals(0.75, goals.get(3).value(), 0.01);
        assertEquals(Boolean.FALSE, goals.get(3).met());
    }

    @Test
    void withOneTargetTheGoalsAreNotMeasured()
    {
        final List<CellResult> kafkaOnly = cells().stream().filter((c) -> c.target().equals("kafka")).toList();
        for (final Comparison.Goal goal : Comparison.KAFKA_CLIENTS.goals(new CellStats(kafkaOnly), PLAN, Map.of()))
        {
            assertNull(goal.met(), goal.toString());
        }
    }

    @Test
    void theReportHasTheRatiosCpuPerRecordAndTheFields() throws Exception
    {
        final PerfRun run = PerfRun.start(tmp.resolve("results"), tmp, "tidemark-bench kafka-clients --runs 2",
            Comparison.KAFKA_CLIENTS.kind());
        final Path dir = run.directory();
        assertTrue(dir.getFileName().toString().matches("\\d{4}-\\d{2}-\\d{2}_kafka-clients-.+"), dir.toString());
        final Map<String, String> descriptions = new LinkedHashMap<>();
        descriptions.put("kafka", "Apache Kafka");
        descriptions.put("tidemark", "Tidemark through its Kafka listener");
        final MultiProcessReport report = new MultiProcessReport(run, Comparison.KAFKA_CLIENTS, PLAN, cells(),
            Map.of(), descriptions, Map.of(), Map.of(), List.of(), List.of(), List.of(), 42);
        final Map<String, String> facts = new LinkedHashMap<>();
        facts.put("date", "2026-12-01T23:00:00Z to 2026-12-01T23:10:00Z");
        facts.put("git", "abc1234");
        facts.put("command", "tidemark-bench kafka-clients --runs 2");
        facts.put("loadavg.start", "0.1 0.2 0.3");
        facts.put("loadavg.end", "0.1 0.2 0.3");
        report.write(facts);
        run.updateIndex();
        assertTrue(Files.readString(tmp.resolve("results").resolve("README.md"), StandardCharsets.UTF_8)
            .contains(dir.getFileName().toString()), "indexed");

        final String md = Files.readString(dir.resolve("summary.md"), StandardCharsets.UTF_8);
        assertTrue(md.startsWith("# Kafka's own producer against Tidemark's Kafka listener"), md);
        assertTrue(md.contains("| acks=all saturated records/s, 1 partition(s): >= 2x Kafka's | Tidemark 120,000 " +
            "(runs 110,000-130,000), Kafka 50,000 (runs 40,000-60,000): 2.40x | yes |"), md);
        assertTrue(md.contains("| acks=all saturated records/s, 16 partition(s): >= 2x Kafka's | Tidemark 90,000 " +
            "(runs 90,000-90,000), Kafka 50,000 (runs 50,000-50,000): 1.80x | **no** |"), md);
        assertTrue(md.contains("| acks=all p99 at 10,000 records/s, 1 partition: <= 1/2 of Kafka's | Tidemark 1.50 ms " +
            "(runs 1.50-1.50), Kafka 4.00 ms (runs 4.00-4.00): 0.3"), md);
        // server CPU per record, median over the runs: Kafka 4 s over 400k and 600k records (10 and 6.67 us),
        // Tidemark 2 s over 1.1M and 1.3M (1.82 and 1.54 us)
        assertTrue(md.contains("| 1 | all | 50,000 | 120,000 | 2.40x | 8.33 | 1.68 | 0.20x |"), md);
        assertTrue(md.contains("Kafka's KafkaProducer through the hosts' Kafka listeners"), md);
        assertTrue(Files.exists(dir.resolve("env.txt")));
        assertTrue(Files.exists(dir.resolve("hgrm/tidemark_rate_acks-all_p16.hgrm")));

        final Map<String, Object> json = Json.object(Json.parse(Files.readString(dir.resolve("summary.json"),
            StandardCharsets.UTF_8)));
        assertEquals("kafka-clients", json.get("kind"));
        assertEquals(4, Json.array(json.get("goals")).size());
        final Map<String, Object> goal = Json.object(Json.array(json.get("goals")).get(0));
        assertEquals(2.4, Json.number(goal.get("value")), 1e-9);
        assertEquals(Boolean.TRUE, goal.get("met"));
        final Map<String, Object> first = Json.object(Json.array(json.get("cells")).get(0));
        for (final String field : List.of("target", "kind", "acks", "partitions", "run", "recordsPerSecond",
            "windowRecords", "serverCpuMicrosPerRecord", "clientCpuMicrosPerRecord", "serverCpuNanosByProcess",
            "failed", "errors", "failure", "minIsr", "leaderChanges", "readBack", "readBackOk", "clean"))
        {
            assertTrue(first.containsKey(field), field + " in " + first);
        }
        assertEquals(10.0, Json.number(first.get("serverCpuMicrosPerRecord")), 1e-9);
    }

    @Test
    void theCommandAsksForTheIssuesWorkload()
    {
        final CommandLine cli = BenchMain.commandLine();
        final CommandLine.ParseResult parsed = cli.parseArgs("kafka-clients", "--runs", "3");
        final KafkaClientsCommand command = parsed.subcommand().commandSpec().commandLine().getCommand();
        assertEquals(3, command.runs.runs());
        assertEquals(List.of(1, 16), command.partitions);
        assertEquals(10_000, command.cluster.rate);
        assertEquals(100, command.cluster.size);
        assertEquals(5, command.cluster.lingerMs);
        assertEquals(16_384, command.cluster.batchSize);
        assertEquals(2, command.cluster.minInsync);
        assertEquals(10_000, command.window.durationMs());
        final MultiProcessCommand multiprocess = cli.parseArgs("multiprocess").subcommand().commandSpec()
            .commandLine().getCommand();
        assertEquals(1, multiprocess.runs.runs());
        assertEquals(2_000, multiprocess.window.warmupMs());
    }
}
