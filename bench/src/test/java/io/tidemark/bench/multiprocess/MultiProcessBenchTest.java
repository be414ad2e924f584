package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
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
 * The multiprocess command end to end, with windows of a second: ZooKeeper in this JVM, three host JVMs, the four
 * acks modes. The report must have a row per mode with positive throughput and a latency histogram, every
 * acknowledged record of the latency phases read back, the Kafka reference labelled as the issue's; and no host JVM
 * or cluster directory may be left behind. About 20 to 30 s on 2 cores.
 */
class MultiProcessBenchTest
{
    @TempDir
    Path tmp;

    @Test
    void sweepsTheFourAcksModesOverThreeHostProcesses() throws Exception
    {
        final Path results = tmp.resolve("results");
        final Path work = tmp.resolve("work");
        final StringWriter out = new StringWriter();
        final CommandLine cli = BenchMain.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(out, true));
        final int exitCode = cli.execute("multiprocess", "--results-dir", results.toString(), "--dir",
            work.toString(), "--jit-warmup", "0", "--warmup", "200ms", "--duration", "1s", "--latency-duration", "1s",
            "--rate", "2000", "--buffer-memory", "1048576"); // a small buffer: little to drain after each window
        final String console = out.toString();
        assertNotEquals(2, exitCode, console); // 1 is allowed: a loaded machine can move a leader mid-phase

        final Path run;
        try (Stream<Path> dirs = Files.list(results))
        {
            run = dirs.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        assertTrue(run.getFileName().toString().matches("\\d{4}-\\d{2}-\\d{2}_multiprocess-.+"), run.toString());
        final Map<String, Object> summary = Json.object(Json.parse(Files.readString(run.resolve("summary.json"),
            StandardCharsets.UTF_8)));
        assertEquals("multiprocess", summary.get("kind"));
        final List<String> modes = new ArrayList<>();
        for (final Object row : Json.array(summary.get("acks")))
        {
            final Map<String, Object> acks = Json.object(row);
            modes.add(String.valueOf(acks.get("acks")));
            final Map<String, Object> throughput = Json.object(acks.get("throughput"));
            assertTrue(Json.number(throughput.get("medianRecordsPerSecond")) > 0, acks + "\n" + console);
            final Map<String, Object> latency = Json.object(acks.get("latency"));
            assertTrue(Json.number(latency.get("count")) > 0, acks + "\n" + console);
            assertTrue(Files.exists(run.resolve(String.valueOf(latency.get("hgrm")))), latency.toString());
            for (final Object latencyRun : Json.array(latency.get("runs")))
            {
                assertEquals(Boolean.TRUE, Json.object(latencyRun).get("readBackOk"), latencyRun + "\n" + console);
            }
        }
        assertEquals(List.of("0", "1", "2", "all"), modes, console);

        final String markdown = Files.readString(run.resolve("summary.md"), StandardCharsets.UTF_8);
        assertTrue(markdown.contains("- Command: `tidemark-bench multiprocess"), markdown);
        assertTrue(markdown.contains("170,000 records/s saturated at acks=all"), markdown);
        assertTrue(markdown.contains("The issue states that a real 3-broker Kafka"), markdown);
        assertTrue(markdown.contains("this bench did not run Kafka"), markdown);
        assertTrue(Files.exists(run.resolve("env.txt")));
        for (int id = 0; id < LoopbackCluster.HOSTS; id++)
        {
            assertTrue(Files.exists(run.resolve("hosts").resolve("host-" + id + ".log")), "host " + id + " log");
        }
        for (final Object host : Json.array(summary.get("hosts")))
        {
            assertEquals(143L, (long)Json.number(Json.object(host).get("exitCode")), host + "\n" + console);
        }

        assertFalse(hostJvmRunning(work), "a host JVM outlived the run");
        try (Stream<Path> left = Files.list(work))
        {
            assertEquals(0, left.count(), "the cluster directory was not deleted");
        }
        assertTrue(Files.readString(results.resolve("README.md"), StandardCharsets.UTF_8)
            .contains(run.getFileName().toString()), "indexed");
    }

    @Test
    void badOptionsAreUsageErrors()
    {
        final StringWriter err = new StringWriter();
        final CommandLine cli = BenchMain.commandLine();
        cli.setOut(new PrintWriter(new StringWriter(), true));
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute("multiprocess", "--acks", "0,5"));
        assertTrue(err.toString().contains("--acks"), err.toString());
        assertEquals(2, cli.execute("multiprocess", "--size", "4"));
        assertTrue(err.toString().contains("--size"), err.toString());
        assertEquals(2, cli.execute("multiprocess", "--min-insync", "4"));
        assertTrue(err.toString().contains("--min-insync"), err.toString());
    }

    private static boolean hostJvmRunning(final Path work)
    {
        return ProcessHandle.allProcesses().anyMatch((p) -> p.isAlive() && p.info().commandLine()
            .map((c) -> c.contains(HostProcess.MAIN_CLASS) && c.contains(work.toString())).orElse(false));
    }
}
