package io.tidemark.bench;

import io.tidemark.bench.report.PerfRun;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchMainTest
{
    @TempDir
    Path tmp;

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int execute(final String... args)
    {
        final CommandLine cli = BenchMain.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    @Test
    void helpListsSubcommands()
    {
        assertEquals(0, execute("--help"));
        for (final String command : List.of("quick", "full", "run", "jmh-quick", "jmh"))
        {
            assertTrue(out.toString().contains(command), out.toString());
        }
    }

    @Test
    void sharedOptionBlocksKeepEachCommandsDefaults()
    {
        final CommandLine cli = BenchMain.commandLine();
        final IsrFlapBench isrFlap = cli.parseArgs("isr-flap", "--warmup", "500ms").subcommand().commandSpec()
            .commandLine().getCommand();
        assertEquals(3, isrFlap.runs.runs());
        assertEquals(10_000, isrFlap.window.durationMs());
        assertEquals(500, isrFlap.window.warmupMs());
        assertEquals(Path.of(BenchMain.DEFAULT_RESULTS_DIR), isrFlap.report.dir());
        final RunCommand run = BenchMain.commandLine().parseArgs("run", "--results-dir", "x").subcommand()
            .commandSpec().commandLine().getCommand();
        assertEquals(3, run.runs.runs());
        assertEquals(Path.of("x"), run.results.dir());
    }

    @Test
    void missingSubcommandIsAUsageError()
    {
        assertEquals(2, execute());
        assertTrue(err.toString().contains("Missing subcommand"), err.toString());
    }

    @Test
    void quickHelpDescribesTheRun()
    {
        assertEquals(0, execute("quick", "--help"));
        for (final String option : List.of("--results-dir", "--sweeps", "--warmup", "--duration", "--runs",
            "--size", "--batch", "--in-flight", "--producers", "--partitions", "--min-insync", "--threading",
            "--rates", "--failover-runs", "--no-peer", "--peer-jdk", "--jmh"))
        {
            assertTrue(out.toString().contains(option), option + " in\n" + out);
        }
        assertEquals(0, execute("run", "--help"));
        for (final String option : List.of("--load", "--rate", "--acks", "--replicas", "--flush", "--kill-leader"))
        {
            assertTrue(out.toString().contains(option), option + " in\n" + out);
        }
    }

    @Test
    void jmhHelpShowsOurUsageAndPointsToJmhOptions()
    {
        assertEquals(0, execute("jmh", "--help"));
        assertTrue(out.toString().contains("--no-gc-profiler"), out.toString());
        assertTrue(out.toString().contains("tidemark-bench jmh -h"), out.toString());
    }

    @Test
    void invalidJmhOptionsAreRejected()
    {
        assertEquals(2, execute("jmh", "-f", "notanumber"));
        assertTrue(err.toString().contains("Invalid JMH options"), err.toString());
    }

    @Test
    void jmhPassThroughListsTheBenchmarks()
    {
        final String listed = captureStdout(() -> assertEquals(0, execute("jmh", "-l")));
        for (final String name : List.of("StoreAppendBenchmark.append", "StoreAppendBenchmark.claimAndCommit",
            "StoreReadBenchmark.sequentialPoll", "StoreReadBenchmark.randomLookup",
            "ConcurrentAppendBenchmark.lockingAppender", "ConcurrentAppendBenchmark.ringBufferAppender",
            "ReplicationLatencyBenchmark.produceAndAwaitAck", "RingBufferTransportBenchmark.sendAndPoll",
            "RingBufferTransportBenchmark.handOff"))
        {
            assertTrue(listed.contains("io.tidemark.bench.jmh." + name), name + " not in\n" + listed);
        }
        for (final String name : listed.split("\\R"))
        {
            if (name.contains("Benchmark."))
            {
                assertTrue(name.trim().matches(BenchMain.STORE_BENCHMARKS), "quick's default include misses " + name);
            }
        }
    }

    @Test
    void addExportsFlagIsAppendedOnce()
    {
        assertEquals(JvmFlags.FORKED_JVM_ARGS, BenchMain.mergeJvmArgsAppend(List.of()));
        assertEquals(List.of("-Dx=1", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"),
            BenchMain.mergeJvmArgsAppend(List.of("-Dx=1")));
        assertEquals(List.of("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"),
            BenchMain.mergeJvmArgsAppend(List.of("--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED")));
    }

    @Test
    void gcProfilerIsRecognisedByNameOrClass() throws Exception
    {
        assertTrue(BenchMain.hasGcProfiler(new CommandLineOptions("-prof", "gc").getProfilers()));
        assertTrue(BenchMain.hasGcProfiler(
            new CommandLineOptions("-prof", "org.openjdk.jmh.profile.GCProfiler").getProfilers()));
        assertFalse(BenchMain.hasGcProfiler(new CommandLineOptions("-prof", "stack").getProfilers()));
        assertFalse(BenchMain.hasGcProfiler(new CommandLineOptions().getProfilers()));
    }

    @Test
    void commandLineIsQuotedForTheRecord()
    {
        assertEquals("tidemark-bench jmh -f 1 'A|B' 'it'\\''s'",
            BenchMain.commandLineText(List.of("jmh", "-f", "1", "A|B", "it's")));
    }

    /**
     * Smoke test of the whole pipeline through JMH's API: one benchmark, in this JVM (forks 0), one 100 ms
     * iteration, GC profiler on; then the report. Asserts on the files, never on timings.
     */
    @Test
    void jmhQuickRunInProcessWritesTheReport() throws Exception
    {
        final Path results = tmp.resolve("perf-results");
        final int exitCode = execute("jmh-quick", "--results-dir", results.toString(),
            "--include", "io\\.tidemark\\.bench\\.jmh\\.StoreAppendBenchmark\\.append$", "-p", "valueSize=100",
            "--forks", "0", "--warmup-iterations", "0", "--iterations", "1", "--time", "100ms");

        assertEquals(0, exitCode, err.toString());
        final Path runDir;
        try (Stream<Path> dirs = Files.list(results))
        {
            runDir = dirs.findFirst().orElseThrow();
        }
        assertTrue(runDir.getFileName().toString().matches("\\d{4}-\\d{2}-\\d{2}_([0-9a-f]+|nogit)(-\\d+)?"),
            runDir.toString());
        assertTrue(Files.size(runDir.resolve(PerfRun.JSON_FILE)) > 0);
        final String summary = Files.readString(runDir.resolve(PerfRun.SUMMARY_FILE), StandardCharsets.UTF_8);
        assertTrue(summary.contains("| StoreAppendBenchmark.append | valueSize=100 | thrpt | 1 |"), summary);
        assertTrue(summary.contains(" B/op |"), "GC profiler column filled:\n" + summary);
        assertTrue(Files.readString(runDir.resolve(PerfRun.ENV_FILE), StandardCharsets.UTF_8).contains("cpu.model:"));
        assertTrue(out.toString().contains("Report: " + runDir.resolve(PerfRun.SUMMARY_FILE).toAbsolutePath()),
            out.toString());
    }

    /**
     * The harness end to end, shortened: two sweeps, 150 ms windows, one run, no JIT warm-up, no leader kill, no
     * peer (PeerRunnerTest forks the peers). Asserts on the files and the verification, never on timings.
     */
    @Test
    void harnessQuickWritesTheReportAndTheIndex() throws Exception
    {
        final Path results = tmp.resolve("perf-results");
        final int exitCode = execute("quick", "--results-dir", results.toString(), "--work-dir",
            tmp.resolve("work").toString(), "--sweeps", "acks,latency", "--rates", "2000", "--warmup", "50ms",
            "--duration", "150ms", "--runs", "1", "--jit-warmup", "0", "--failover-runs", "0", "--no-peer",
            "--batch", "8", "--segment-bytes", "8388608");
        assertEquals(0, exitCode, err.toString() + out);
        final Path runDir;
        try (Stream<Path> dirs = Files.list(results))
        {
            runDir = dirs.filter(Files::isDirectory).findFirst().orElseThrow();
        }
        final String summary = Files.readString(runDir.resolve(PerfRun.SUMMARY_FILE), StandardCharsets.UTF_8);
        assertTrue(summary.contains("Every acknowledged record verified in the log: **yes**"), summary);
        assertTrue(summary.contains("### Acks (RF=3, closed loop)"), summary);
        assertTrue(summary.contains("| all @ 2k/s |"), summary);
        assertTrue(Files.exists(runDir.resolve("summary.json")));
        assertTrue(Files.exists(runDir.resolve("charts").resolve("tps-by-acks.png")));
        assertTrue(Files.exists(runDir.resolve("open-2k_p1_rf3_acks-all_isr1_100B_t1_flush-none_b1.hgrm")));
        assertTrue(Files.readString(results.resolve("README.md"), StandardCharsets.UTF_8)
            .contains(runDir.getFileName().toString()));
        assertTrue(out.toString().contains("Report: " + runDir.resolve(PerfRun.SUMMARY_FILE).toAbsolutePath()),
            out.toString());
    }

    @Test
    void unknownSweepIsAUsageError()
    {
        assertEquals(2, execute("quick", "--sweeps", "nope"));
        assertTrue(err.toString().contains("unknown sweep 'nope'"), err.toString());
    }

    private static String captureStdout(final Runnable action)
    {
        final PrintStream original = System.out;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try
        {
            action.run();
        }
        finally
        {
            System.setOut(original);
        }
        return captured.toString(StandardCharsets.UTF_8);
    }
}
