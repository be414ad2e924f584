package io.tidemark.bench.multiprocess;

import io.tidemark.bench.report.PerfRun;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.concurrent.TimeUnit;

/**
 * The report directory of a multiprocess run: {@code <results>/<yyyy-MM-dd>_multiprocess-<git short sha>/}, beside
 * the harness's {@code <date>_<sha>/} directories, with the next free {@code -2}, {@code -3}, ... suffix when that
 * name already holds a report, so that no result is overwritten.
 */
final class ResultsDirectory
{
    /** What the directory name says after the date. */
    static final String KIND = "multiprocess";

    private ResultsDirectory()
    {
    }

    /**
     * @param resultsDir the results root.
     * @param date       the run's date.
     * @param sha        git short sha or {@value PerfRun#NO_GIT}.
     * @return a new or empty directory.
     */
    static Path create(final Path resultsDir, final LocalDate date, final String sha) throws IOException
    {
        return create(resultsDir, date, sha, KIND);
    }

    /** As {@link #create(Path, LocalDate, String)}, for another kind of run. */
    static Path create(final Path resultsDir, final LocalDate date, final String sha, final String kind)
        throws IOException
    {
        final String base = DateTimeFormatter.ISO_LOCAL_DATE.format(date) + "_" + kind + "-" + sha;
        Path candidate = resultsDir.resolve(base);
        for (int n = 2; holdsReport(candidate); n++)
        {
            candidate = resultsDir.resolve(base + "-" + n);
        }
        return Files.createDirectories(candidate);
    }

    private static boolean holdsReport(final Path dir)
    {
        return Files.exists(dir.resolve(PerfRun.SUMMARY_FILE)) || Files.exists(dir.resolve(PerfRun.ENV_FILE)) ||
            Files.exists(dir.resolve(MultiProcessReport.JSON_FILE));
    }

    /**
     * @param workDir a directory in a git work tree.
     * @return whether tracked files have uncommitted changes (false without git).
     */
    static boolean gitDirty(final Path workDir)
    {
        try
        {
            final Process process = new ProcessBuilder("git", "status", "--porcelain", "--untracked-files=no")
                .directory(workDir.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
            final String out;
            try (InputStream in = process.getInputStream())
            {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            }
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return false;
            }
            return process.exitValue() == 0 && !out.isEmpty();
        }
        catch (final IOException ex)
        {
            return false;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
