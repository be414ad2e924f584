package io.tidemark.store;

import io.tidemark.store.format.LogFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Part 1 of the crash suite: process kill. A child JVM appends records under each flush policy, reporting as it
 * goes the offsets it appended and the offsets it knows are flushed; the test kills it with SIGKILL at a random
 * moment (during JVM start or recovery, or in the middle of appends, rolls, flushes and retention), reopens the
 * log, and checks that every record the child appended is there, intact and in order, that nothing corrupt is
 * readable, that the dead process's lock does not block the reopen, and that the log accepts appends again. The
 * test's own appends and closes (clean, or crashed with {@link Log#halt()}) are interleaved, so the next
 * child starts on both clean and unclean logs. Default 30 kills; long mode 1,000.
 */
class CrashKillTest
{
    static final String[] POLICIES = { "none", "every-1", "every-64", "interval-ms-5", "explicit-200", "retention" };
    private static final long MAX_LOG_RECORDS = 150_000;

    @TempDir
    Path root;

    /** A log directory carried from kill to kill. */
    private static final class Chain
    {
        final String policy;
        Path dir;
        long knownEnd;
        int generation;

        Chain(final String policy)
        {
            this.policy = policy;
        }
    }

    @Test
    void killedWritersLoseNothingTheyAppended() throws Exception
    {
        final int runs = CrashSupport.scale(30, 1000);
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final CrashSupport.Summary summary = new CrashSupport.Summary("kill",
            "runs", "appended", "verified", "lost", "corrupt_served", "reopen_failures", "append_failures",
            "invalid_kept", "child_errors", "killed_before_open", "unclean_handovers");
        final Map<String, Chain> chains = new HashMap<>();
        final long startNs = System.nanoTime();

        for (int run = 0; run < runs; run++)
        {
            final String policy = POLICIES[run % POLICIES.length];
            final Chain chain = chains.computeIfAbsent(policy, Chain::new);
            if (null == chain.dir || chain.knownEnd > MAX_LOG_RECORDS)
            {
                chain.dir = root.resolve(policy + "-" + chain.generation++);
                chain.knownEnd = 0;
            }
            final String where = "seed " + seed + " run " + run + " policy " + policy + " dir " + chain.dir;
            summary.inc("runs");

            final CrashProcess child = CrashProcess.start(root.resolve("stderr-" + run + ".txt"),
                "append", chain.dir.toString(), policy, Long.toString(random.nextLong()));
            killAtARandomMoment(child, random, policy);
            final long reported = child.appended();
            for (final String line : child.lines())
            {
                if (line.startsWith("ERROR"))
                {
                    summary.fail("child_errors", where + ": " + line + "; stderr: " + child.stderrText());
                }
            }
            if (child.openEnd() < 0)
            {
                summary.inc("killed_before_open");
            }
            else if (child.openEnd() < chain.knownEnd)
            {
                summary.fail("lost", where + ": the child opened the log at " + child.openEnd() +
                    " but " + chain.knownEnd + " records were appended before");
            }
            final long expectedEnd = Math.max(chain.knownEnd, reported);
            summary.add("appended", Math.max(0, reported - Math.max(chain.knownEnd, child.openEnd())));

            final Log log;
            try
            {
                log = Log.open(CrashRecords.testContext(chain.dir));
            }
            catch (final RuntimeException ex)
            {
                summary.fail("reopen_failures", where + ": " + ex);
                chain.dir = null;
                continue;
            }
            try
            {
                final CrashRecords.Verification v = CrashRecords.verify(log);
                summary.add("verified", v.served);
                if (v.corruptServed > 0 || null != v.unchecked || null != v.error)
                {
                    summary.fail("corrupt_served", where + ": " + v);
                    summary.add("corrupt_served", Math.max(0, v.corruptServed - 1));
                }
                if (v.next < expectedEnd)
                {
                    summary.fail("lost", where + ": the child reported " + reported + " appended (known end " +
                        chain.knownEnd + ") but the log reads only up to " + v.next + "; " +
                        log.recoveryReport());
                    summary.add("lost", expectedEnd - v.next - 1);
                }
                if (log.logStartOffset() > Math.max(0, expectedEnd) ||
                    (!policy.equals("retention") && log.logStartOffset() != 0))
                {
                    summary.fail("lost", where + ": log start offset " + log.logStartOffset());
                }
                if (v.next != log.logEndOffset())
                {
                    summary.fail("corrupt_served", where + ": the reader stopped at " + v.next +
                        " below the log end offset " + log.logEndOffset());
                }
                CrashRecords.checkAppendsResume(log, random, 1 + random.nextInt(5), summary, where);
                chain.knownEnd = log.logEndOffset();
            }
            finally
            {
                if (random.nextInt(4) == 0)
                {
                    log.halt();
                    summary.inc("unclean_handovers");
                }
                else
                {
                    log.close();
                }
            }
            if (log.isClosed() && Files.exists(chain.dir.resolve(LogFiles.CLEAN_SHUTDOWN_FILE)))
            {
                final CrashFiles.Validity validity = CrashFiles.validBatches(chain.dir);
                if (validity.invalidBatches() > 0 || validity.gaps() > 0 || validity.trailingBytes() > 0 ||
                    validity.end() != chain.knownEnd)
                {
                    summary.fail("invalid_kept", where + ": after a clean close the files hold " + validity);
                }
            }
        }

        summary.print("seed=" + seed + " seconds=" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        assertEquals(0, summary.failureCount(), summary.failures());
        assertTrue(summary.get("verified") > 0, "nothing was verified");
    }

    /**
     * Kill the child at a random moment: one run in six at a random time after the start whatever it is doing
     * (starting, recovering, appending), the others after a random number of appends (log-uniform up to 20,000)
     * or a random time after the open, plus a random sub-millisecond delay.
     */
    static void killAtARandomMoment(final CrashProcess child, final Random random, final String policy)
        throws InterruptedException
    {
        if (random.nextInt(6) == 0)
        {
            Thread.sleep(random.nextInt(400));
        }
        else
        {
            final String open = child.awaitLine((l) -> l.startsWith("OPEN "));
            if (null != open)
            {
                final long target = child.openEnd() + (long)Math.pow(10, random.nextDouble() * 4.3);
                final long maxMillis = policy.equals("every-1") ? 50 + random.nextInt(600) : 50 + random.nextInt(1500);
                child.awaitAppended(target, maxMillis);
                LockSupport.parkNanos(random.nextInt(1_000_000));
            }
        }
        child.kill();
    }
}
