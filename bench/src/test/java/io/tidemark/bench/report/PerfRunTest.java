package io.tidemark.bench.report;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PerfRunTest
{
    @TempDir
    Path tmp;

    @Test
    void writesSummaryAndEnvironmentFromSyntheticResult() throws Exception
    {
        final Path notGit = withoutCommit(tmp.resolve("work"));
        final Path results = tmp.resolve("perf-results");

        final PerfRun run = PerfRun.start(results, notGit, "tidemark-bench quick");
        assertEquals(results, run.directory().getParent());
        assertTrue(run.directory().getFileName().toString().matches("\\d{4}-\\d{2}-\\d{2}_nogit"),
            run.directory().toString());

        Files.writeString(run.jsonFile(), JmhSummaryTest.SYNTHETIC_RESULT, StandardCharsets.UTF_8);
        final List<JmhSummary.Row> rows = run.finish(List.of("--add-exports", "x=y"));

        assertEquals(2, rows.size());
        final String summary = Files.readString(run.summaryFile(), StandardCharsets.UTF_8);
        assertTrue(summary.contains("# Tidemark benchmark results"), summary);
        assertTrue(summary.contains("- Commit: nogit"), summary);
        assertTrue(summary.contains("- Command: `tidemark-bench quick`"), summary);
        assertTrue(summary.contains("| StoreAppendBenchmark.append | valueSize=100 | thrpt | 1 | 2,197,417 |"),
            summary);

        final String env = Files.readString(run.envFile(), StandardCharsets.UTF_8);
        for (final String key : List.of("date:", "git: nogit", "command: tidemark-bench quick", "jmh.version: 1.37",
            "cpu.model:", "cpu.logical:", "memory.total:", "jdk.version:", "jdk.vendor:", "jvm.flags.harness:",
            "os:", "tmpdir:"))
        {
            assertTrue(env.contains(key), key + " missing in\n" + env);
        }
        // the result file's record of the forks' flags wins over the default given to finish()
        assertTrue(env.contains("jvm.flags.benchmarks: --add-exports java.base/jdk.internal.misc=ALL-UNNAMED"), env);
    }

    @Test
    void failedRunStillWritesReport() throws Exception
    {
        final PerfRun run = PerfRun.start(tmp.resolve("results"), tmp, "tidemark-bench jmh -f 1");

        final List<JmhSummary.Row> rows = run.finish(List.of("--add-exports", "x=y"));

        assertTrue(rows.isEmpty());
        final String summary = Files.readString(run.summaryFile(), StandardCharsets.UTF_8);
        assertTrue(summary.contains("(no results)"), summary);
        assertTrue(summary.contains("missing"), summary);
        assertTrue(Files.readString(run.envFile(), StandardCharsets.UTF_8)
            .contains("jvm.flags.benchmarks: --add-exports x=y"));
    }

    @Test
    void neverOverwritesAnEarlierReport() throws Exception
    {
        final LocalDate date = LocalDate.of(2025, 1, 2);
        final Path first = PerfRun.createDirectory(tmp, date, "abc1234");
        assertEquals(tmp.resolve("2025-01-02_abc1234"), first);
        assertEquals(first, PerfRun.createDirectory(tmp, date, "abc1234"), "an empty directory is reused");

        Files.writeString(first.resolve(PerfRun.SUMMARY_FILE), "x");
        final Path second = PerfRun.createDirectory(tmp, date, "abc1234");
        assertEquals(tmp.resolve("2025-01-02_abc1234-2"), second);
        Files.writeString(second.resolve(PerfRun.JSON_FILE), "[]");
        assertEquals(tmp.resolve("2025-01-02_abc1234-3"), PerfRun.createDirectory(tmp, date, "abc1234"));
    }

    @Test
    void withoutACommitTheShaIsNogit() throws Exception
    {
        assertEquals(PerfRun.NO_GIT, PerfRun.gitShortSha(withoutCommit(tmp.resolve("fresh"))));
    }

    /**
     * @return {@code dir}, created as a git work tree of its own without a commit (so there is no sha to name, even
     *         though the test's temporary directory lies inside this repository's target/), or a plain directory
     *         where git is not installed.
     */
    static Path withoutCommit(final Path dir) throws Exception
    {
        Files.createDirectories(dir);
        try
        {
            final Process init = new ProcessBuilder("git", "init", "-q", dir.toString())
                .redirectErrorStream(true).start();
            init.getInputStream().readAllBytes();
            init.waitFor();
        }
        catch (final java.io.IOException noGit)
        {
            // no git on this machine: the directory cannot be in a work tree either
        }
        return dir;
    }
}
