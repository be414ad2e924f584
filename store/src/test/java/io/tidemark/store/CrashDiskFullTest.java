package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Part 5 of the crash suite: full disk. On a size-limited tmpfs mounted by the test (needs root, as in CI; when
 * the environment cannot mount one the test says so and is skipped), a child JVM appends under a flush policy
 * until the file system is full. The append must fail with STORAGE_SPACE (never a SIGBUS: the child JVM must not
 * die), keep failing typed while the disk is full (the same append retried), and work again once space is
 * freed; everything appended before must be intact after a reopen. Half the rounds the child frees the space
 * itself and closes the log; the other half it is killed while the disk is full, then space is freed and the log
 * reopened and checked.
 * Default 4 rounds; long mode 40.
 */
class CrashDiskFullTest
{
    static final String[] POLICIES = { "none", "every-64", "explicit-50", "interval-ms-5" };
    /**
     * After the failed append the child retries that same append (as an application would) before any other.
     * Appending a different, smaller batch instead is broken (see
     * {@link #aRollThatFailsForLackOfSpaceLeavesNoStraySegmentBehind}); switch this to "random" once it is fixed.
     */
    static final String RETRY = "same";
    private static final int FILE_SYSTEM_MEGABYTES = 16;

    @TempDir
    Path root;

    @Test
    void aFullDiskFailsAppendsTypedLosesNothingAndHeals() throws Exception
    {
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final int rounds = CrashSupport.scale(4, 40);
        final CrashSupport.Summary summary = new CrashSupport.Summary("diskfull",
            "runs", "appended", "storage_space_errors", "other_errors", "verified", "lost", "corrupt_served",
            "jvm_crashes", "resumed", "reopen_failures", "append_failures");
        final long startNs = System.nanoTime();
        try (SmallFileSystem fs = SmallFileSystem.mount(root.resolve("small"), FILE_SYSTEM_MEGABYTES))
        {
            if (null == fs)
            {
                System.out.println("crash-suite diskfull: skipped (cannot mount a " + FILE_SYSTEM_MEGABYTES +
                    " MiB tmpfs here: mount -t tmpfs needs root)");
            }
            Assumptions.assumeTrue(null != fs, "cannot mount a size-limited tmpfs here (needs root): skipped");
            for (int round = 0; round < rounds; round++)
            {
                final String policy = POLICIES[round % POLICIES.length];
                final boolean killWhileFull = round % 2 == 1;
                final Path dir = fs.path().resolve("log-" + round);
                final Path filler = fs.path().resolve("filler-" + round);
                final long room = (1 + random.nextInt(5)) * 1024L * 1024L;
                fill(filler, Files.getFileStore(fs.path()).getUsableSpace() - room);
                summary.inc("runs");
                final String where = "seed " + seed + " round " + round + " policy " + policy +
                    (killWhileFull ? " (killed while full)" : " (frees space itself)") + " room " + room;
                round(fs, dir, filler, policy, killWhileFull, where, random, summary);
                CrashSupport.deleteTree(dir);
                Files.deleteIfExists(filler);
            }
        }
        summary.print("filesystem=" + FILE_SYSTEM_MEGABYTES + "MiB-tmpfs seed=" + seed + " seconds=" +
            TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        assertEquals(0, summary.failureCount(), summary.failures());
        assertTrue(summary.get("storage_space_errors") >= rounds, "every round must have filled the disk");
    }

    private static void fill(final Path filler, final long bytes) throws IOException
    {
        final byte[] chunk = new byte[1024 * 1024];
        try (RandomAccessFile file = new RandomAccessFile(filler.toFile(), "rw"))
        {
            for (long written = 0; written < bytes; written += chunk.length)
            {
                file.write(chunk, 0, (int)Math.min(chunk.length, bytes - written));
            }
        }
    }

    private void round(
        final SmallFileSystem fs,
        final Path dir,
        final Path filler,
        final String policy,
        final boolean killWhileFull,
        final String where,
        final Random random,
        final CrashSupport.Summary summary) throws Exception
    {
        final CrashProcess child = CrashProcess.start(root.resolve("stderr-" + dir.getFileName() + ".txt"),
            "fill", dir.toString(), filler.toString(), policy, Long.toString(random.nextLong()),
            killWhileFull ? "wait" : "free", RETRY);
        final long appended;
        if (killWhileFull)
        {
            final String waiting = child.awaitLine((l) -> l.equals("WAITING") || l.startsWith("ERROR"));
            child.kill();
            if (null == waiting || !waiting.equals("WAITING"))
            {
                summary.fail("jvm_crashes", where + ": the child died before it was killed: " + waiting +
                    "; stderr: " + child.stderrText());
                return;
            }
        }
        else
        {
            final int exit = child.awaitExit();
            if (exit != 0)
            {
                summary.fail("jvm_crashes", where + ": the child exited with " + exit + "; lines " +
                    tail(child.lines()) + "; stderr: " + child.stderrText());
                return;
            }
        }
        appended = child.appended();
        summary.add("appended", Math.max(0, appended));
        checkReports(child.lines(), killWhileFull, where, summary);

        if (killWhileFull)
        {
            // Free space first: reopening while the disk is still full is reopeningAKilledLogWhileTheDiskIsStillFull...
            Files.deleteIfExists(filler);
        }

        try (Log log = Log.open(CrashRecords.testContext(dir)))
        {
            final CrashRecords.Verification v = CrashRecords.verify(log);
            summary.add("verified", v.served);
            if (v.corruptServed > 0 || null != v.unchecked || null != v.error)
            {
                summary.fail("corrupt_served", where + ": " + v);
            }
            if (v.next < appended)
            {
                summary.fail("lost", where + ": " + appended + " appended, the log reads up to " + v.next + "; " +
                    log.recoveryReport());
            }
            try
            {
                final long before = log.logEndOffset();
                for (int i = 0; i < 20; i++)
                {
                    CrashRecords.appendRandom(log, random);
                }
                final CrashRecords.Verification after = CrashRecords.verify(log, before, Long.MAX_VALUE);
                if (!after.clean() || after.next != log.logEndOffset())
                {
                    summary.fail("append_failures", where + ": appends after freeing space read back: " + after);
                }
            }
            catch (final RuntimeException ex)
            {
                summary.fail("append_failures", where + ": appends after freeing space: " + ex);
            }
        }
        catch (final RuntimeException | Error ex)
        {
            summary.fail("reopen_failures", where + ": reopening after freeing space: " + ex);
        }
    }

    /** The child's reports: the first failed append is STORAGE_SPACE, retries stay typed, appends resume. */
    private static void checkReports(
        final List<String> lines, final boolean killWhileFull, final String where, final CrashSupport.Summary summary)
    {
        boolean sawFull = false;
        boolean resumed = false;
        for (final String line : lines)
        {
            if (line.startsWith("FULL ") || line.startsWith("STILL "))
            {
                final String code = line.split(" ")[1];
                if (line.startsWith("FULL "))
                {
                    sawFull = true;
                }
                if (code.equals(StorageErrorCode.STORAGE_SPACE.name()))
                {
                    summary.inc("storage_space_errors");
                }
                else if (!code.equals("NONE"))
                {
                    summary.fail("other_errors", where + ": " + line);
                }
                else if (line.startsWith("FULL "))
                {
                    summary.fail("other_errors", where + ": " + line);
                }
            }
            else if (line.startsWith("RESUMED "))
            {
                resumed = true;
                summary.inc("resumed");
            }
            else if (line.startsWith("ERROR"))
            {
                summary.fail("other_errors", where + ": " + line);
            }
        }
        if (!sawFull)
        {
            summary.fail("other_errors", where + ": the disk never filled: " + tail(lines));
        }
        if (!killWhileFull && !resumed)
        {
            summary.fail("append_failures", where + ": appends did not resume after space was freed: " + tail(lines));
        }
    }

    private static List<String> tail(final List<String> lines)
    {
        return lines.subList(Math.max(0, lines.size() - 10), lines.size());
    }

    @Test
    void reopeningAKilledLogWhileTheDiskIsStillFullOpensOrRefusesTyped() throws Exception
    {
        try (SmallFileSystem fs = SmallFileSystem.mountOrSkip(root.resolve("small-reopen"), FILE_SYSTEM_MEGABYTES))
        {
            final Path dir = fs.path().resolve("log");
            final Path filler = fs.path().resolve("filler");
            fill(filler, Files.getFileStore(fs.path()).getUsableSpace() - 2L * 1024 * 1024);
            final CrashProcess writer = CrashProcess.start(root.resolve("stderr-writer.txt"),
                "fill", dir.toString(), filler.toString(), "none", "1", "wait", "same");
            assertEquals("WAITING", writer.awaitLine((l) -> l.equals("WAITING") || l.startsWith("ERROR")));
            writer.kill();
            final long appended = writer.appended();
            // In a child JVM: a SIGBUS that the JVM cannot turn into an InternalError kills the child, not the test.
            final CrashProcess opener = CrashProcess.start(root.resolve("stderr-opener.txt"), "tryopen",
                dir.toString());
            final int exit = opener.awaitExit();
            final List<String> lines = opener.lines();
            assertEquals(0, exit, "the reopen while full crashed: " + lines + "; stderr: " + opener.stderrText());
            final String outcome = lines.get(lines.size() - 1);
            assertTrue(outcome.startsWith("OPENED ") || outcome.startsWith("REFUSED STORAGE_SPACE") ||
                outcome.startsWith("REFUSED IO_ERROR"), outcome);
            Files.delete(filler);
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                final CrashRecords.Verification v = CrashRecords.verify(log);
                assertTrue(v.clean() && v.next >= appended, v + ", " + appended + " appended");
            }
        }
    }

    @Test
    void aRollThatFailsForLackOfSpaceLeavesNoStraySegmentBehind() throws Exception
    {
        try (SmallFileSystem fs = SmallFileSystem.mountOrSkip(root.resolve("small-roll"), FILE_SYSTEM_MEGABYTES))
        {
            final Path dir = fs.path().resolve("log");
            final Path filler = fs.path().resolve("filler");
            final LogContext ctx = CrashRecords.testContext(dir).pretouchBytes(0);
            final long end;
            final String what;
            try (Log log = Log.open(ctx))
            {
                final int frame1000 = RecordBatchDescriptor.frameLength(
                    RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.recordLength(-1, 1000, 0));
                final int frameEmpty = RecordBatchDescriptor.frameLength(
                    RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.recordLength(-1, 0, 0));
                while (room(log) - frame1000 >= frameEmpty)
                {
                    log.append(new byte[1000]);
                }
                final int room = room(log);
                assertTrue(room >= frameEmpty && room < frame1000 + frameEmpty, "room " + room);
                try
                {
                    fill(filler, Long.MAX_VALUE);
                }
                catch (final IOException expected)
                {
                    // the file system is full
                }
                final long base = log.logEndOffset();
                final StorageException full = org.junit.jupiter.api.Assertions.assertThrows(StorageException.class,
                    () -> log.append(new byte[room]), "a batch that needs a roll on a full disk");
                assertEquals(StorageErrorCode.STORAGE_SPACE, full.code());
                final Path stray = new SegmentFiles(dir, base).log();
                final boolean strayLeft = Files.exists(stray);
                log.append(new byte[0]); // still fits in the old segment
                Files.delete(filler);
                while (log.segmentCount() < 2)
                {
                    log.append(new byte[1000]);
                }
                end = log.logEndOffset();
                what = (strayLeft ? "the failed roll left " + stray.getFileName() + " behind" : "no stray file") +
                    "; the log end moved to " + end;
            }
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                assertEquals(end, log.logEndOffset(), what);
                assertEquals(end, CrashRecords.verify(log).next, what);
            }
            catch (final StorageException ex)
            {
                throw new AssertionError(what + ", and the clean reopen was refused: " + ex, ex);
            }
        }
    }

    private static int room(final Log log)
    {
        final Segment[] segments = log.segmentsSnapshot();
        final Segment active = segments[segments.length - 1];
        return active.capacity() - active.size();
    }
}
