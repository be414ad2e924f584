package io.tidemark.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Part 6 of the crash suite: a second opener. While a child JVM holds a log (idle, or appending), a second child
 * JVM and the test itself try to open the same directory: both must be refused with LOCKED and a message naming
 * the holder's process id. Once the holder is killed with SIGKILL, a new process opens the log (the OS released
 * the dead process's lock) and finds everything it reported appended. Default 3 rounds; long mode 30.
 */
class CrashLockTest
{
    @TempDir
    Path root;

    @Test
    void aSecondOpenerIsRefusedWhileTheFirstHoldsTheLogAndSucceedsOnceItIsKilled() throws Exception
    {
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final int rounds = CrashSupport.scale(3, 30);
        final CrashSupport.Summary summary = new CrashSupport.Summary("lock",
            "runs", "refused", "refused_in_process", "opened_after_kill", "wrong_outcomes", "lost");
        final long startNs = System.nanoTime();
        for (int round = 0; round < rounds; round++)
        {
            final Path dir = root.resolve("log-" + round);
            final boolean appending = round % 2 == 0;
            final String where = "seed " + seed + " round " + round + (appending ? " (appending holder)" : " (idle)");
            summary.inc("runs");
            try (CrashProcess holder = appending ?
                CrashProcess.start(root.resolve("holder-" + round + ".txt"), "append", dir.toString(), "every-64",
                    Long.toString(random.nextLong())) :
                CrashProcess.start(root.resolve("holder-" + round + ".txt"), "hold", dir.toString()))
            {
                if (null == holder.awaitLine((l) -> l.startsWith("OPEN ")))
                {
                    summary.fail("wrong_outcomes", where + ": the holder did not open the log: " + holder.lines() +
                        "; stderr: " + holder.stderrText());
                    continue;
                }
                final String holderPid = "process " + holder.pid();

                final String second = tryOpen(root.resolve("second-" + round + ".txt"), dir, where, summary);
                if (null != second && second.startsWith("REFUSED LOCKED ") && second.contains(holderPid))
                {
                    summary.inc("refused");
                }
                else
                {
                    summary.fail("wrong_outcomes", where + ": a second process opening the held log got: " + second +
                        " (expected REFUSED LOCKED naming " + holderPid + ")");
                }

                try (Log log = Log.open(CrashRecords.testContext(dir)))
                {
                    summary.fail("wrong_outcomes", where + ": the test opened the held log: " + log);
                }
                catch (final StorageException ex)
                {
                    if (ex.code() == StorageErrorCode.LOCKED && ex.getMessage().contains(holderPid))
                    {
                        summary.inc("refused_in_process");
                    }
                    else
                    {
                        summary.fail("wrong_outcomes", where + ": opening the held log in the test: " + ex);
                    }
                }

                if (appending)
                {
                    holder.awaitAppended(holder.openEnd() + 1 + random.nextInt(5000), random.nextInt(300));
                }
                holder.kill();
                final long appended = holder.appended();

                final String third = tryOpen(root.resolve("third-" + round + ".txt"), dir, where, summary);
                if (null != third && third.startsWith("OPENED "))
                {
                    summary.inc("opened_after_kill");
                    if (Long.parseLong(third.substring("OPENED ".length())) < appended)
                    {
                        summary.fail("lost", where + ": opened after the kill at " + third + ", " + appended +
                            " appended");
                    }
                }
                else
                {
                    summary.fail("wrong_outcomes", where + ": a process opening the log after the holder was " +
                        "killed got: " + third);
                }
                try (Log log = Log.open(CrashRecords.testContext(dir)))
                {
                    final CrashRecords.Verification v = CrashRecords.verify(log);
                    if (!v.clean() || v.next < appended)
                    {
                        summary.fail("lost", where + ": " + v + ", " + appended + " appended");
                    }
                }
            }
        }
        summary.print("seed=" + seed + " seconds=" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        assertEquals(0, summary.failureCount(), summary.failures());
        assertEquals(rounds, summary.get("refused"));
        assertEquals(rounds, summary.get("opened_after_kill"));
    }

    /** @return the last line of a {@code tryopen} child, or null when it failed (recorded). */
    private static String tryOpen(final Path stderr, final Path dir, final String where,
        final CrashSupport.Summary summary) throws Exception
    {
        final CrashProcess child = CrashProcess.start(stderr, "tryopen", dir.toString());
        final int exit = child.awaitExit();
        final List<String> lines = child.lines();
        if (exit != 0 || lines.isEmpty())
        {
            summary.fail("wrong_outcomes", where + ": tryopen exited with " + exit + ", " + lines + "; stderr: " +
                child.stderrText());
            return null;
        }
        return lines.get(lines.size() - 1);
    }
}
