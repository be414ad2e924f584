package io.tidemark.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(Cli.Transcript.class)
class StatTest
{
    @TempDir
    Path tmp;

    @Test
    void readsTheCountersOfARunningProcessAndSaysWhenNoProcessIsThere() throws Exception
    {
        final Path dir = tmp.resolve("orders-0");
        final String java = ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        final Process child = new ProcessBuilder(List.of(java, "--add-exports",
            "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            StatChild.class.getName(), dir.toString()))
            .redirectError(tmp.resolve("child.err").toFile())
            .start();
        try
        {
            final BufferedReader childOut = new BufferedReader(
                new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("READY", childOut.readLine(), () -> "child stderr: " + read(tmp.resolve("child.err")));

            // Two screens 200 ms apart; on a busy machine the child may not have run between them: ask again
            // until its log end offset has moved (the condition), within a liveness guard.
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            Cli.Result stat;
            long[] first;
            long[] second;
            do
            {
                stat = Cli.run("stat", dir.toString(), "--iterations", "2", "--interval", "200");
                assertEquals(ExitCodes.OK, stat.exitCode(), stat.toString());
                first = row(stat.out(), dir, 0);
                second = row(stat.out(), dir, 1);
            }
            while ((second[0] <= first[0] || second[1] <= 0) && System.nanoTime() - deadline < 0);
            assertTrue(stat.out().contains("counters.dat: pid " + child.pid() + " running"), stat.out());
            assertTrue(stat.out().contains("LEO") && stat.out().contains("FLUSHED"), stat.out());
            assertTrue(first[0] >= 20, "log end offset " + first[0]);
            assertTrue(second[0] > first[0], "the log end offset moves: " + first[0] + " then " + second[0]);
            assertTrue(second[1] > 0 && second[1] <= second[0], "flushed " + second[1] + " of " + second[0]);

            // The read-only commands work on the running process's log.
            final Cli.Result verify = Cli.run("verify", dir.toString());
            assertEquals(ExitCodes.OK, verify.exitCode(), verify.toString());
            assertTrue(verify.out().contains("state: open in running process " + child.pid()), verify.out());
            final Cli.Result tail = Cli.run("tail", dir.toString(), "--from-end", "--follow", "--max", "5",
                "--format", "value");
            assertEquals(ExitCodes.OK, tail.exitCode(), tail.toString());
            assertEquals(5, tail.out().split("\n").length, tail.out());
            assertTrue(tail.err().contains("reading its files read-only"), tail.err());
            final Cli.Result produce = Cli.run("produce", dir.toString(), "--input", tmp.resolve("child.err")
                .toString());
            assertEquals(ExitCodes.LOCKED, produce.exitCode(), produce.toString());
            assertTrue(produce.err().contains("is locked by process " + child.pid()), produce.err());
        }
        finally
        {
            child.destroyForcibly();
            assertTrue(child.waitFor(10, TimeUnit.SECONDS));
        }

        final Cli.Result gone = Cli.run("stat", dir.toString());
        assertEquals(ExitCodes.NO_PROCESS, gone.exitCode(), gone.toString());
        assertTrue(gone.out().contains("pid " + child.pid() + " NOT RUNNING (no process is there)"), gone.out());
        assertTrue(gone.out().contains("no process is there: no running process writes this counters file"),
            gone.out());
        assertTrue(row(gone.out(), dir, 0)[0] >= 20, "the last values are still shown: " + gone.out());

        // After the kill -9: recover, then the log verifies.
        final Cli.Result recover = Cli.run("recover", dir.toString(), "--config", "segment.bytes=65536",
            "--config", "max.message.bytes=4096");
        assertEquals(ExitCodes.OK, recover.exitCode(), recover.toString());
        assertTrue(recover.out().contains("previous shutdown: unclean"), recover.out());
        assertEquals(ExitCodes.OK, Cli.run("verify", dir.toString()).exitCode());
    }

    @Test
    void noCountersFileOrNoPathAreClearErrors() throws Exception
    {
        final Path empty = Files.createDirectories(tmp.resolve("empty"));
        final Cli.Result none = Cli.run("stat", empty.toString());
        assertEquals(ExitCodes.NO_PROCESS, none.exitCode(), none.toString());
        assertTrue(none.err().contains("no counters file (counters.dat)"), none.err());
        final Cli.Result missing = Cli.run("stat", tmp.resolve("missing").toString());
        assertEquals(ExitCodes.IO, missing.exitCode(), missing.toString());
        final Path bogus = Files.writeString(tmp.resolve("counters.dat"), "not counters");
        final Cli.Result notCounters = Cli.run("stat", bogus.toString());
        assertEquals(ExitCodes.IO, notCounters.exitCode(), notCounters.toString());
        assertTrue(notCounters.err().contains("counters file"), notCounters.err());
        assertEquals(ExitCodes.USAGE, Cli.run("stat", empty.toString(), "--interval", "0").exitCode());
    }

    /** @return {LEO, FLUSHED} of the log's row in the {@code n}-th screen. */
    static long[] row(final String out, final Path dir, final int n)
    {
        int seen = 0;
        for (final String line : out.split("\n"))
        {
            final String trimmed = line.trim();
            if (trimmed.startsWith(dir.toAbsolutePath().normalize().toString() + " "))
            {
                if (seen++ == n)
                {
                    final String[] columns = trimmed.split("\\s+");
                    // LOG HOST ROLE EPOCH LEO HW FLUSHED LOG-START SEGS ISR LAG
                    return new long[] {Long.parseLong(columns[4]), Long.parseLong(columns[6])};
                }
            }
        }
        throw new AssertionError("no row " + n + " for " + dir + " in:\n" + out);
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file);
        }
        catch (final Exception ex)
        {
            return ex.toString();
        }
    }
}
