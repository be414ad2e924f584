package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.kafka.KafkaLib;
import io.tidemark.bench.report.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The multiprocess command end to end, with windows of a second: a real 3-node Kafka (when the build has collected
 * its jars into kafka-peer/target/lib, as the whole reactor's build does) and Tidemark's three host JVMs with their
 * ZooKeeper JVM, one acks mode, one partition count. The report must have every cell of both targets, Tidemark's
 * acknowledged records read back, the idle window and the profiles of every server process, the goals,
 * Tidemark's fault phase (a plain leader and the controller's leader, each killed once restarted at once and once
 * kept down for the window, then a ZooKeeper restart) with no failed send; and
 * no server JVM or cluster directory may be left behind. About one to two minutes on 2 cores.
 */
class MultiProcessBenchTest
{
    @TempDir
    Path tmp;

    @Test
    void runsTheSameCellsOnKafkaAndOnTidemarksHostProcesses() throws Exception
    {
        final Path results = tmp.resolve("results");
        final Path work = tmp.resolve("work");
        final StringWriter out = new StringWriter();
        final CommandLine cli = BenchMain.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(out, true));
        final boolean kafka = kafkaLibPresent();
        if (!kafka)
        {
            System.out.println("MultiProcessBenchTest: no Kafka server jars (build the whole reactor: module " +
                "kafka-peer); Tidemark only");
        }
        final List<String> targets = kafka ? List.of("kafka", "tidemark") : List.of("tidemark");
        final int exitCode = cli.execute("multiprocess", "--results-dir", results.toString(), "--dir",
            work.toString(), "--targets", String.join(",", targets), "--acks", "all", "--partitions", "1",
            "--jit-warmup", "0", "--warmup", "300ms", "--duration", "1s", "--latency-duration", "1s", "--rate", "2000",
            "--round-trip-duration", "1s", "--idle", "1s", "--profile", "1s",
            "--buffer-memory", "1048576"); // a small buffer: little to drain after each window
        final String console = out.toString();
        assertNotEquals(2, exitCode, console); // 1 is allowed: a loaded machine can starve a cold broker

        final Path run;
        try (Stream<Path> dirs = Files.list(results))
        {
            run = dirs.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        assertTrue(run.getFileName().toString().matches("\\d{4}-\\d{2}-\\d{2}_multiprocess-.+"), run.toString());
        final Map<String, Object> summary = Json.object(Json.parse(Files.readString(run.resolve("summary.json"),
            StandardCharsets.UTF_8)));
        assertEquals("multiprocess", summary.get("kind"));
        final List<String> seen = new ArrayList<>();
        for (final Object row : Json.array(summary.get("cells")))
        {
            final Map<String, Object> cell = Json.object(row);
            seen.add(cell.get("target") + "/" + cell.get("kind"));
            // records/s can be 0 here: a 1 s window on a loaded machine may see no acknowledgement (the report then
            // says so and the command exits 1); what must hold is that nothing acknowledged was lost
            if ("tidemark".equals(cell.get("target")))
            {
                if ("rate".equals(cell.get("kind")))
                {
                    assertEquals(Boolean.TRUE, cell.get("readBackOk"), cell + "\n" + console);
                    assertTrue(null == cell.get("hgrm") || Files.exists(run.resolve(String.valueOf(cell.get("hgrm")))),
                        cell.toString());
                }
            }
        }
        for (final String target : targets)
        {
            for (final String kind : List.of("saturated", "rate", "roundtrip"))
            {
                assertTrue(seen.contains(target + "/" + kind), target + "/" + kind + " in " + seen + "\n" + console);
            }
            final Map<String, Object> idle = Json.object(Json.object(summary.get("idle")).get(target));
            assertTrue(Json.number(idle.get("percentOfOneCore")) >= 0, idle.toString());
            final String profile = Files.readString(run.resolve("profiles").resolve(target + ".md"),
                StandardCharsets.UTF_8);
            assertTrue(profile.contains("kafka".equals(target) ? "### broker-0" : "### host-0"), profile);
            assertTrue(profile.contains("execution samples"), profile);
        }
        assertEquals(6, Json.array(summary.get("goals")).size());
        final List<Object> faults = Json.array(summary.get("faults"));
        // a plain leader restarted at once and kept down, the controller's leader the same two ways, ZooKeeper
        assertEquals(5, faults.size(), console);
        assertTrue(String.valueOf(Json.object(faults.get(4)).get("fault")).contains("ZooKeeper"), console);
        for (final Object fault : faults)
        {
            assertEquals(0L, (long)Json.number(Json.object(fault).get("failed")), fault + "\n" + console);
        }

        final String markdown = Files.readString(run.resolve("summary.md"), StandardCharsets.UTF_8);
        assertTrue(markdown.contains("- Command: `tidemark-bench multiprocess"), markdown);
        assertTrue(markdown.contains("## The issue's goals, measured in this run"), markdown);
        assertTrue(Files.exists(run.resolve("env.txt")));
        for (int id = 0; id < LoopbackCluster.HOSTS; id++)
        {
            assertTrue(Files.exists(run.resolve("hosts").resolve("host-" + id + ".log")), "host " + id + " log");
            if (kafka)
            {
                assertTrue(Files.exists(run.resolve("hosts").resolve("kafka-" + id + ".log")), "broker " + id);
            }
        }
        final String stops = String.valueOf(summary.get("stops"));
        assertTrue(stops.contains("exit code 143"), stops);
        assertFalse(serverJvmRunning(work), "a server JVM outlived the run");
        try (Stream<Path> left = Files.list(work))
        {
            assertEquals(0, left.filter((p) -> !p.getFileName().toString().startsWith("jfr-")).count(),
                "the cluster directory was not deleted");
        }
        assertTrue(Files.readString(results.resolve("README.md"), StandardCharsets.UTF_8)
            .contains(run.getFileName().toString()), "indexed");
    }

    private static boolean kafkaLibPresent()
    {
        try
        {
            KafkaLib.find(null);
            return true;
        }
        catch (final IllegalStateException ex)
        {
            return false;
        }
    }

    @Test
    void badOptionsAreUsageErrors()
    {
        final StringWriter err = new StringWriter();
        final CommandLine cli = BenchMain.commandLine();
        cli.setOut(new PrintWriter(new StringWriter(), true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute("multiprocess", "--acks", "0,2"));
        assertTrue(err.toString().contains("--acks"), err.toString());
        assertEquals(2, cli.execute("multiprocess", "--size", "4"));
        assertTrue(err.toString().contains("--size"), err.toString());
        assertEquals(2, cli.execute("multiprocess", "--min-insync", "4"));
        assertTrue(err.toString().contains("--min-insync"), err.toString());
    }

    private static boolean serverJvmRunning(final Path work)
    {
        return ProcessHandle.allProcesses().anyMatch((p) -> p.isAlive() && p.info().commandLine()
            .map((c) -> c.contains(work.toString())).orElse(false));
    }
}
