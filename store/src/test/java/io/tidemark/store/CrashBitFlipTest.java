package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Part 3 of the crash suite: corruption below the recovery point. Random bits are flipped in flushed data of a
 * log left in one of three states (closed cleanly; crashed with everything flushed; crashed with an unflushed tail
 * above the recovery point, which is left alone). Then every batch is read back by seeking to it: a read of a
 * damaged batch must fail with CORRUPT_BATCH and never return bytes, every intact batch must read back exactly as
 * appended (the rest of the log stays readable), nothing may be truncated below the recovery point, and the log
 * must accept appends again.
 * <p>
 * The trials assert the safety half (typed errors only, never wrong bytes, appends work) and the containment half
 * ({@code unreadable_intact}, {@code lost_intact}, {@code end_changed}, {@code damaged_truncated},
 * {@code reopen_refused} must stay 0); the tests after it reproduce, one by one, the store bugs the trials found
 * (fixed). Default 300 trials; long mode 3,000.
 */
class CrashBitFlipTest
{
    private static final int TEMPLATE_RECORDS = 3000;

    @TempDir
    Path root;

    /** A pristine log to copy for each trial. */
    private record Template(Path dir, String kind, long recoveryPoint, long end)
    {
    }

    private Template[] templates() throws IOException
    {
        return new Template[]{
            template("clean", true, TEMPLATE_RECORDS),
            template("crashed-flushed", false, TEMPLATE_RECORDS),
            template("crashed-tail", false, TEMPLATE_RECORDS * 2 / 3) };
    }

    /** Append records, flush after {@code flushAt} of them, then close cleanly or crash. */
    private Template template(final String kind, final boolean clean, final int flushAt) throws IOException
    {
        final Path dir = root.resolve("template-" + kind);
        final Random random = new Random(kind.hashCode());
        final Log log = Log.open(CrashRecords.testContext(dir));
        while (log.logEndOffset() < flushAt)
        {
            CrashRecords.appendRandom(log, random);
        }
        log.flush();
        final long recoveryPoint = log.recoveryPoint();
        while (log.logEndOffset() < TEMPLATE_RECORDS)
        {
            CrashRecords.appendRandom(log, random);
        }
        final long end = log.logEndOffset();
        if (clean)
        {
            log.close();
            return new Template(dir, kind, end, end);
        }
        log.halt();
        assertEquals(recoveryPoint, CrashFiles.checkpointRecoveryPoint(dir));
        return new Template(dir, kind, recoveryPoint, end);
    }

    @Test
    void flippedBitsInFlushedDataAreDetectedContainedAndNeverServed() throws Exception
    {
        final CrashSupport.Summary summary = runTrials(CrashSupport.scale(300, 3000), true);
        assertEquals(0, summary.failureCount(), summary.failures());
        assertTrue(summary.get("detected") > 0, "no damaged batch was ever read");
    }

    private CrashSupport.Summary runTrials(final int trials, final boolean strict) throws Exception
    {
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final CrashSupport.Summary summary = new CrashSupport.Summary("bitflip",
            "runs", "flips", "damaged_batches", "detected", "intact_verified", "corrupt_served", "unchecked",
            "append_failures", "unreadable_intact", "lost_intact", "damaged_truncated", "end_changed",
            "reopen_refused");
        final long startNs = System.nanoTime();
        final Template[] templates = templates();
        for (int trial = 0; trial < trials; trial++)
        {
            final Template template = templates[trial % templates.length];
            final Path dir = root.resolve("trial-" + trial);
            CrashFiles.copyDir(template.dir(), dir);
            final List<CrashFiles.SegmentScan> scans = CrashFiles.scan(dir);
            final Set<Long> damaged = new HashSet<>();
            final StringBuilder flips = new StringBuilder();
            final int count = random.nextInt(10) < 7 ? 1 : 2 + random.nextInt(3);
            for (int i = 0; i < count; i++)
            {
                flipOne(scans, template.recoveryPoint(), random, damaged, flips);
            }
            summary.inc("runs");
            summary.add("flips", count);
            summary.add("damaged_batches", damaged.size());
            checkTrial(dir, scans, template, damaged, "seed " + seed + " trial " + trial + " " + template.kind() +
                " flips [" + flips.toString().trim() + "]", strict, random, summary);
            CrashSupport.deleteTree(dir);
        }
        summary.print("seed=" + seed + " seconds=" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        return summary;
    }

    /** Flip one random bit among the bytes of the batches wholly below the recovery point. */
    private static void flipOne(
        final List<CrashFiles.SegmentScan> scans,
        final long recoveryPoint,
        final Random random,
        final Set<Long> damaged,
        final StringBuilder flips) throws IOException
    {
        long total = 0;
        for (final CrashFiles.SegmentScan scan : scans)
        {
            total += scan.bytesBelow(recoveryPoint);
        }
        long at = (long)(random.nextDouble() * total);
        for (final CrashFiles.SegmentScan scan : scans)
        {
            final int below = scan.bytesBelow(recoveryPoint);
            if (at >= below)
            {
                at -= below;
                continue;
            }
            final int bit = random.nextInt(8);
            CrashFiles.flipBit(scan.log(), at, bit);
            for (final CrashFiles.Batch batch : scan.batches())
            {
                if (at >= batch.position() && at < batch.position() + batch.length())
                {
                    damaged.add(batch.base());
                    flips.append(scan.base()).append('@').append(at).append(" (batch ").append(batch.base())
                        .append(" +").append(at - batch.position()).append(") ");
                    return;
                }
            }
            flips.append(scan.base()).append('@').append(at).append(" (padding) ");
            return;
        }
    }

    private static void checkTrial(
        final Path dir,
        final List<CrashFiles.SegmentScan> scans,
        final Template template,
        final Set<Long> damaged,
        final String where,
        final boolean strict,
        final Random random,
        final CrashSupport.Summary summary)
    {
        final Log log;
        try
        {
            log = Log.open(CrashRecords.testContext(dir));
        }
        catch (final StorageException ex)
        {
            failIf(strict, summary, "reopen_refused", where + ": " + ex);
            return;
        }
        catch (final RuntimeException ex)
        {
            summary.fail("unchecked", where + ": open threw " + ex);
            return;
        }
        try
        {
            if (log.logEndOffset() != template.end())
            {
                failIf(strict, summary, "end_changed", where + ": log end offset " + log.logEndOffset() +
                    " instead of " + template.end() + "; " + log.recoveryReport());
            }
            for (final CrashFiles.SegmentScan scan : scans)
            {
                for (final CrashFiles.Batch batch : scan.batches())
                {
                    checkBatch(log, batch, damaged.contains(batch.base()), where, strict, summary);
                }
            }
            CrashRecords.checkAppendsResume(log, random, 1, summary, where);
        }
        finally
        {
            log.close();
        }
    }

    /** Seek to a batch and read exactly its records. */
    private static void checkBatch(
        final Log log,
        final CrashFiles.Batch batch,
        final boolean damaged,
        final String where,
        final boolean strict,
        final CrashSupport.Summary summary)
    {
        final long[] next = { batch.base() };
        final long[] wrong = { 0 };
        try (LogReader reader = log.openReader())
        {
            reader.seek(batch.base());
            while (next[0] < batch.next() && reader.poll((r) ->
            {
                if (!CrashRecords.matches(r, next[0]))
                {
                    wrong[0]++;
                }
                next[0]++;
            }, batch.next(), 64) > 0)
            {
                // read on
            }
        }
        catch (final StorageException ex)
        {
            if (damaged && ex.code() == StorageErrorCode.CORRUPT_BATCH)
            {
                summary.inc("detected");
            }
            else if (damaged && ex.code() == StorageErrorCode.OFFSET_OUT_OF_RANGE)
            {
                failIf(strict, summary, "damaged_truncated", where + ": damaged batch " + batch.base() +
                    " was removed: " + ex.getMessage());
            }
            else if (ex.code() == StorageErrorCode.OFFSET_OUT_OF_RANGE)
            {
                failIf(strict, summary, "lost_intact", where + ": intact batch " + batch.base() + " is gone: " +
                    ex.getMessage());
            }
            else if (!damaged && ex.code() == StorageErrorCode.CORRUPT_BATCH)
            {
                failIf(strict, summary, "unreadable_intact", where + ": intact batch " + batch.base() +
                    " cannot be read: " + ex.getMessage());
            }
            else
            {
                summary.fail("unchecked", where + ": reading batch " + batch.base() + " threw " + ex);
            }
            return;
        }
        catch (final RuntimeException ex)
        {
            summary.fail("unchecked", where + ": reading batch " + batch.base() + " threw " + ex);
            return;
        }
        final long served = next[0] - batch.base();
        if (wrong[0] > 0 || (damaged && served > 0))
        {
            summary.fail("corrupt_served", where + ": batch " + batch.base() + (damaged ? " (damaged)" : "") +
                " was served (" + served + " records); " + wrong[0] + " record(s) differ from what was appended");
        }
        else if (served == 0 && batch.base() >= log.logEndOffset())
        {
            failIf(strict, summary, damaged ? "damaged_truncated" : "lost_intact", where + ": batch " + batch.base() +
                (damaged ? " (damaged)" : " (intact)") + " is past the log end " + log.logEndOffset());
        }
        else if (damaged || next[0] != batch.next())
        {
            failIf(strict, summary, "unreadable_intact", where + ": batch " + batch.base() +
                (damaged ? " (damaged) read nothing and raised nothing" : " (intact) read only up to " + next[0]) +
                " below the log end " + log.logEndOffset());
        }
        else
        {
            summary.add("intact_verified", batch.count());
        }
    }

    private static void failIf(
        final boolean strict, final CrashSupport.Summary summary, final String key, final String description)
    {
        if (strict)
        {
            summary.fail(key, description);
        }
        else
        {
            summary.inc(key);
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Store bugs found by the random trials, one deterministic reproduction each.
    // ------------------------------------------------------------------------------------------------------------

    private Path flushedLog(final String name, final int records, final boolean clean)
    {
        final Path dir = root.resolve(name);
        final Random random = new Random(42);
        final Log log = Log.open(CrashRecords.testContext(dir));
        while (log.logEndOffset() < records)
        {
            CrashRecords.appendBatch(log, 1, random.nextBoolean());
        }
        log.flush();
        if (clean)
        {
            log.close();
        }
        else
        {
            log.halt();
        }
        return dir;
    }

    @Test
    void aDamagedLastBatchBelowTheRecoveryPointIsKeptNotTruncated() throws IOException
    {
        for (final boolean clean : new boolean[]{ true, false })
        {
            final Path dir = flushedLog("last-batch-" + clean, 100, clean);
            final CrashFiles.SegmentScan scan = CrashFiles.scanOne(CrashFiles.segmentLogs(dir).get(0));
            final CrashFiles.Batch last = scan.batchOf(99);
            CrashFiles.flipBit(scan.log(), last.position() + RecordBatchDescriptor.HEADER_LENGTH, 3); // record length
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                assertEquals(100, log.logEndOffset(), "clean=" + clean + ": flushed batch 99 was truncated; " +
                    log.recoveryReport());
                final CrashRecords.Verification v = CrashRecords.verify(log, 99, 100);
                assertTrue(null != v.error && v.error.code() == StorageErrorCode.CORRUPT_BATCH,
                    "clean=" + clean + ": reading the damaged batch: " + v);
                assertEquals(101, CrashRecords.appendBatch(log, 1, true), "offset 99 must not be handed out again");
            }
        }
    }

    @Test
    void aDamagedLengthBelowTheRecoveryPointIsNotATornTail() throws IOException
    {
        final Path dir = root.resolve("incomplete-below-rp");
        final Random random = new Random(1);
        final Log crashed = Log.open(CrashRecords.testContext(dir));
        while (crashed.logEndOffset() < 2000)
        {
            CrashRecords.appendRandom(crashed, random);
        }
        crashed.flush();
        final long recoveryPoint = crashed.recoveryPoint();
        while (crashed.logEndOffset() < 3000)
        {
            CrashRecords.appendRandom(crashed, random);
        }
        final long end = crashed.logEndOffset();
        crashed.halt();
        CrashFiles.SegmentScan recoverySegment = null;
        for (final CrashFiles.SegmentScan scan : CrashFiles.scan(dir))
        {
            if (scan.base() <= recoveryPoint)
            {
                recoverySegment = scan;
            }
        }
        final CrashFiles.Batch victim = recoverySegment.batches().get(1);
        assertTrue(victim.next() < recoveryPoint);
        CrashFiles.putInt(recoverySegment.log(), victim.position(), 1 << 30);
        try (Log log = Log.open(CrashRecords.testContext(dir)))
        {
            assertEquals(end, log.logEndOffset(), "flushed records after the damaged batch " + victim.base() +
                " were truncated (recovery point " + recoveryPoint + "); " + log.recoveryReport());
            final CrashRecords.Verification v = CrashRecords.verify(log, victim.next(), Long.MAX_VALUE);
            assertTrue(v.clean() && v.next == end, v.toString());
        }
    }

    @Test
    void aFlippedBaseOffsetInTheLastBatchOfATrustedSegmentDoesNotMoveTheLogEnd() throws IOException
    {
        final Path active = flushedLog("base-offset-active", 100, true);
        final CrashFiles.SegmentScan scan = CrashFiles.scanOne(CrashFiles.segmentLogs(active).get(0));
        CrashFiles.flipBit(scan.log(), scan.batchOf(99).position() + RecordBatchDescriptor.BASE_OFFSET_OFFSET + 5, 0);
        try (Log log = Log.open(CrashRecords.testContext(active)))
        {
            assertEquals(100, log.logEndOffset(), "one flipped bit became the log end offset");
            assertEquals(100, CrashRecords.appendBatch(log, 1, true) - 1);
        }

        final Path sealed = flushedLog("base-offset-sealed", 2000, true);
        final List<Path> logs = CrashFiles.segmentLogs(sealed);
        assertTrue(logs.size() > 2);
        final CrashFiles.SegmentScan first = CrashFiles.scanOne(logs.get(0));
        final CrashFiles.Batch lastOfFirst = first.batches().get(first.batches().size() - 1);
        CrashFiles.flipBit(first.log(), lastOfFirst.position() + RecordBatchDescriptor.BASE_OFFSET_OFFSET + 2, 1);
        try (Log log = Log.open(CrashRecords.testContext(sealed)))
        {
            assertEquals(2000, log.logEndOffset());
            final CrashRecords.Verification v = CrashRecords.verify(log, lastOfFirst.next(), Long.MAX_VALUE);
            assertTrue(v.clean() && v.next == 2000, v.toString());
        }
    }

    @Test
    void aDamagedHeaderHidesNoIntactBatch() throws IOException
    {
        final int[] fields = { RecordBatchDescriptor.BASE_OFFSET_OFFSET, RecordBatchDescriptor.LENGTH_OFFSET };
        for (final int field : fields)
        {
            final Path dir = flushedLog("header-" + field, 3000, true);
            final CrashFiles.SegmentScan scan = CrashFiles.scanOne(CrashFiles.segmentLogs(dir).get(0));
            CrashFiles.flipBit(scan.log(), scan.batchOf(40).position() + field + 2, 6);
            try (Log log = Log.open(CrashRecords.testContext(dir)))
            {
                assertEquals(StorageErrorCode.CORRUPT_BATCH, CrashRecords.verify(log, 40, 41).error.code());
                for (long offset = 41; offset < 60; offset++)
                {
                    final CrashRecords.Verification v = CrashRecords.verify(log, offset, offset + 1);
                    assertTrue(v.clean() && v.next == offset + 1, "field +" + field + ", intact offset " + offset +
                        ": " + v);
                }
            }
        }
    }
}
