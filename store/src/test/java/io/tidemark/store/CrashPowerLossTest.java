package io.tidemark.store;

import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Part 2 of the crash suite: simulated power loss. After each kill of a child JVM (see {@link CrashKillTest}),
 * copies of the log directory are put into the states the OS may leave after a power loss: only what was flushed
 * is certain, so every file is cut to a random (8-aligned) length at or above its flushed length, the cut-off
 * region is dropped or filled with zeros or random bytes, pages of it are lost independently, the last write is torn,
 * segment files created after the last flush are lost, index files of the segments from the recovery point on
 * are damaged, and the checkpoint rename is lost (the older checkpoint stays, the new one is left as the
 * {@code .tmp}). The flushed offset is the highest of what the child reported flushed, the checkpoint, and a
 * valid left-over {@code .tmp}; its position in each file is found by walking batch headers.
 * <p>
 * Recovery must keep every record below the flushed offset, keep only valid contiguous batches (checked by reading
 * every record back against what was appended, and by a CRC walk of the files after a clean close), remove only a
 * suffix, never serve a record that fails its CRC, and accept appends again. Default 10 kills x 6 states; long
 * mode 150 kills x 10 states.
 */
class CrashPowerLossTest
{
    static final String[] POLICIES = { "none", "every-1", "every-64", "interval-ms-5", "explicit-200" };
    private static final int PAGE = 4096;
    private static final int SECTOR = 512;
    private static final long MAX_LOG_RECORDS = 100_000;

    @TempDir
    Path root;

    private static final class Chain
    {
        final String policy;
        Path dir;
        long knownEnd;
        long durable;
        final List<Long> checkpoints = new ArrayList<>();
        int generation;

        Chain(final String policy)
        {
            this.policy = policy;
        }
    }

    @Test
    void powerLossLeavesAValidPrefixHoldingEverythingFlushed() throws Exception
    {
        final int kills = CrashSupport.scale(10, 150);
        final int statesPerKill = CrashSupport.scale(6, 10);
        final long seed = CrashSupport.seed();
        final Random random = new Random(seed);
        final CrashSupport.Summary summary = new CrashSupport.Summary("power-loss",
            "runs", "states", "flushed", "verified", "kept_unflushed", "truncated", "lost", "corrupt_served",
            "invalid_kept", "reopen_failures", "append_failures", "child_errors");
        final Map<String, Chain> chains = new HashMap<>();
        final long startNs = System.nanoTime();

        for (int kill = 0; kill < kills; kill++)
        {
            final String policy = POLICIES[kill % POLICIES.length];
            final Chain chain = chains.computeIfAbsent(policy, Chain::new);
            if (null == chain.dir || chain.knownEnd > MAX_LOG_RECORDS)
            {
                chain.dir = root.resolve(policy + "-" + chain.generation++);
                chain.knownEnd = 0;
                chain.durable = 0;
                chain.checkpoints.clear();
            }
            summary.inc("runs");
            final String where = "seed " + seed + " kill " + kill + " policy " + policy;

            final CrashProcess child = CrashProcess.start(root.resolve("stderr-" + kill + ".txt"),
                "append", chain.dir.toString(), policy, Long.toString(random.nextLong()));
            CrashKillTest.killAtARandomMoment(child, random, policy);
            for (final String line : child.lines())
            {
                if (line.startsWith("ERROR"))
                {
                    summary.fail("child_errors", where + ": " + line + "; stderr: " + child.stderrText());
                }
            }
            if (!Files.isDirectory(chain.dir))
            {
                continue; // killed before the child created the directory
            }
            final long checkpoint = CrashFiles.checkpointRecoveryPoint(chain.dir);
            final long flushed = Math.max(Math.max(child.flushed(), chain.durable),
                Math.max(checkpoint, CrashFiles.tmpCheckpointRecoveryPoint(chain.dir)));
            chain.checkpoints.addAll(child.flushes());
            final List<CrashFiles.SegmentScan> scans = CrashFiles.scan(chain.dir);
            final long diskEnd = scans.isEmpty() ? 0 : scans.get(scans.size() - 1).end();

            for (int s = 0; s < statesPerKill; s++)
            {
                final Path copy = root.resolve("state-" + kill + "-" + s);
                CrashFiles.copyDir(chain.dir, copy);
                final String damage = damage(copy, scans, flushed, checkpoint, chain.checkpoints, random);
                summary.inc("states");
                summary.add("flushed", flushed);
                checkState(copy, where + " state " + s + " (flushed " + flushed + ", on disk " + diskEnd +
                    ", damage: " + damage + ")", flushed, diskEnd, random, summary);
                CrashSupport.deleteTree(copy);
            }

            // The undamaged directory is what a kill without power loss leaves: continue the chain from it.
            final Log log = Log.open(CrashRecords.testContext(chain.dir));
            try
            {
                final CrashRecords.Verification v = CrashRecords.verify(log);
                if (!v.clean() || v.next < Math.max(chain.knownEnd, child.appended()))
                {
                    summary.fail("lost", where + ": after the kill alone: " + v + ", expected at least " +
                        Math.max(chain.knownEnd, child.appended()));
                }
                for (int i = 0, n = 1 + random.nextInt(4); i < n; i++)
                {
                    CrashRecords.appendRandom(log, random);
                }
                chain.knownEnd = log.logEndOffset();
            }
            finally
            {
                if (random.nextInt(3) == 0)
                {
                    chain.durable = log.recoveryPoint();
                    log.halt();
                }
                else
                {
                    log.close();
                    chain.durable = chain.knownEnd;
                    chain.checkpoints.add(chain.knownEnd);
                }
            }
        }

        summary.print("seed=" + seed + " seconds=" + TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - startNs));
        assertEquals(0, summary.failureCount(), summary.failures());
        assertTrue(summary.get("verified") > 0, "nothing was verified");
    }

    private static void checkState(
        final Path dir,
        final String where,
        final long flushed,
        final long diskEnd,
        final Random random,
        final CrashSupport.Summary summary) throws IOException
    {
        final Log log;
        try
        {
            log = Log.open(CrashRecords.testContext(dir));
        }
        catch (final RuntimeException ex)
        {
            summary.fail("reopen_failures", where + ": " + ex);
            return;
        }
        final long end;
        try
        {
            final CrashRecords.Verification v = CrashRecords.verify(log);
            summary.add("verified", v.served);
            if (!v.clean() || v.next != log.logEndOffset())
            {
                summary.fail("corrupt_served", where + ": " + v + ", log end " + log.logEndOffset() + "; " +
                    log.recoveryReport());
            }
            if (log.logStartOffset() != 0)
            {
                summary.fail("lost", where + ": log start offset " + log.logStartOffset());
            }
            if (v.next < flushed)
            {
                summary.fail("lost", where + ": flushed records lost: the log reads up to " + v.next + "; " +
                    log.recoveryReport());
                summary.add("lost", flushed - v.next - 1);
            }
            summary.add("kept_unflushed", Math.max(0, v.next - flushed));
            summary.add("truncated", Math.max(0, diskEnd - v.next));
            CrashRecords.checkAppendsResume(log, random, 1 + random.nextInt(3), summary, where);
            end = log.logEndOffset();
        }
        finally
        {
            log.close();
        }
        final CrashFiles.Validity validity = CrashFiles.validBatches(dir);
        if (validity.invalidBatches() > 0 || validity.gaps() > 0 || validity.trailingBytes() > 0 ||
            validity.end() != end)
        {
            summary.fail("invalid_kept", where + ": after a clean close the files hold " + validity);
        }
    }

    /**
     * Put a copy of a killed log into a state a power loss may leave. Only what lies below {@code flushed} is
     * certain to be on disk.
     *
     * @return what was done, for failure messages.
     */
    static String damage(
        final Path dir,
        final List<CrashFiles.SegmentScan> scans,
        final long flushed,
        final long checkpoint,
        final List<Long> olderCheckpoints,
        final Random random) throws IOException
    {
        final StringBuilder what = new StringBuilder();
        long recoverySegmentBase = -1;
        for (final CrashFiles.SegmentScan scan : scans)
        {
            if (scan.base() <= flushed)
            {
                recoverySegmentBase = scan.base();
            }
        }
        boolean lostFromHere = false;
        for (final CrashFiles.SegmentScan scan : scans)
        {
            final Path log = dir.resolve(scan.log().getFileName());
            final String name = Long.toString(scan.base());
            if (scan.base() > flushed && (lostFromHere || random.nextInt(6) == 0))
            {
                // Created after the last flush (and directory fsync): its directory entry may be lost.
                lostFromHere = lostFromHere || random.nextBoolean();
                Files.delete(log);
                if (random.nextBoolean())
                {
                    Files.deleteIfExists(dir.resolve(scan.offsetIndex().getFileName()));
                    Files.deleteIfExists(dir.resolve(scan.timeIndex().getFileName()));
                }
                what.append(name).append(":lost ");
                continue;
            }
            if (scan.base() >= recoverySegmentBase)
            {
                damageIndex(dir.resolve(scan.offsetIndex().getFileName()), random, what, name + ".index");
                damageIndex(dir.resolve(scan.timeIndex().getFileName()), random, what, name + ".timeindex");
            }
            if (scan.base() < flushed && scan.end() <= flushed)
            {
                continue; // wholly flushed
            }
            final int durable = scan.base() >= flushed ? 0 : scan.bytesBelow(flushed);
            damageLog(log, scan, durable, random, what, name);
        }
        damageCheckpoint(dir, checkpoint, olderCheckpoints, random, what);
        damageOthers(dir, random, what);
        return what.toString().trim();
    }

    private static void damageLog(
        final Path log,
        final CrashFiles.SegmentScan scan,
        final int durable,
        final Random random,
        final StringBuilder what,
        final String name) throws IOException
    {
        final long length = scan.fileLength();
        final int dataEnd = Math.max(scan.dataEnd(), durable);
        // The store only ever gives a segment file an 8-aligned size (pre-sized to segment.bytes, trimmed to its
        // frames) and mapped writes do not change it, so a power loss leaves sizes on that grid. A file cut off the
        // grid is aFileCutInsideTheLastFramesPaddingRecoversToAnAlignedEnd.
        final long cutAt = Math.max(durable, RecordBatchDescriptor.FRAME_ALIGNMENT * ((random.nextInt(5) > 0 ||
            length <= dataEnd ? durable + (long)(random.nextDouble() * (dataEnd - durable + 1)) :
            dataEnd + (long)(random.nextDouble() * (length - dataEnd))) / RecordBatchDescriptor.FRAME_ALIGNMENT));
        switch (random.nextInt(7))
        {
            case 0:
                what.append(name).append(":kept ");
                break;
            case 1:
                CrashFiles.cut(log, cutAt);
                what.append(name).append(":cut@").append(cutAt).append(' ');
                break;
            case 2:
                CrashFiles.zero(log, cutAt, dataEnd + PAGE);
                what.append(name).append(":zeros@").append(cutAt).append(' ');
                break;
            case 3:
            {
                final int garbage = 1 + random.nextInt((int)Math.max(1, dataEnd - cutAt) + PAGE);
                final byte[] bytes = new byte[(int)Math.min(garbage, length - cutAt)];
                random.nextBytes(bytes);
                CrashFiles.write(log, cutAt, bytes);
                what.append(name).append(":garbage@").append(cutAt).append('+').append(bytes.length).append(' ');
                break;
            }
            case 4:
            {
                // Pages of the unflushed region reach the disk independently of each other.
                int lost = 0;
                for (long page = durable / PAGE * PAGE; page < dataEnd; page += PAGE)
                {
                    if (random.nextBoolean())
                    {
                        CrashFiles.zero(log, Math.max(page, durable), page + PAGE);
                        lost++;
                    }
                }
                what.append(name).append(":pages-lost=").append(lost).append(' ');
                break;
            }
            default:
            {
                // Tear the last write: of the last batch, keep only some sectors.
                CrashFiles.Batch last = null;
                for (final CrashFiles.Batch batch : scan.batches())
                {
                    if (batch.position() >= durable)
                    {
                        last = batch;
                    }
                }
                if (null == last)
                {
                    CrashFiles.cut(log, cutAt);
                    what.append(name).append(":cut@").append(cutAt).append(' ');
                    break;
                }
                final int from = last.position();
                final int to = last.frameEnd();
                final int sectorCut = (int)Math.min(to, Segment.align(from + 1 + random.nextInt(to - from), SECTOR));
                if (random.nextBoolean())
                {
                    CrashFiles.zero(log, sectorCut, to);
                    what.append(name).append(":torn-tail@").append(from).append('/').append(sectorCut).append(' ');
                }
                else
                {
                    CrashFiles.zero(log, from, Math.max(from + 8, sectorCut));
                    what.append(name).append(":torn-head@").append(from).append('/').append(sectorCut).append(' ');
                }
                break;
            }
        }
    }

    private static void damageIndex(final Path index, final Random random, final StringBuilder what, final String name)
        throws IOException
    {
        if (!Files.exists(index))
        {
            return;
        }
        final long length = Files.size(index);
        switch (random.nextInt(6))
        {
            case 0:
                CrashFiles.cut(index, (long)(random.nextDouble() * (length + 1)));
                what.append(name).append(":cut ");
                break;
            case 1:
                CrashFiles.zero(index, 0, length);
                what.append(name).append(":zeros ");
                break;
            case 2:
            {
                final byte[] bytes = new byte[1 + random.nextInt((int)Math.max(1, Math.min(length, 4 * PAGE)))];
                random.nextBytes(bytes);
                CrashFiles.write(index, (long)(random.nextDouble() * Math.max(0, length - bytes.length)), bytes);
                what.append(name).append(":garbage ");
                break;
            }
            case 3:
                Files.delete(index);
                what.append(name).append(":lost ");
                break;
            default:
                break;
        }
    }

    private static void damageCheckpoint(
        final Path dir,
        final long checkpoint,
        final List<Long> olderCheckpoints,
        final Random random,
        final StringBuilder what) throws IOException
    {
        final Path file = dir.resolve(LogFiles.CHECKPOINT_FILE);
        final Path tmp = dir.resolve(LogFiles.CHECKPOINT_FILE + CheckpointDescriptor.TMP_SUFFIX);
        final int choice = random.nextInt(10);
        if (choice < 3 && Files.exists(file))
        {
            // The last rename was lost: the previous checkpoint is still in place, the new one is the .tmp.
            final List<Long> older = olderCheckpoints.stream().filter((v) -> v < checkpoint).toList();
            final byte[] newest = Files.readAllBytes(file);
            if (older.isEmpty())
            {
                Files.delete(file);
                what.append("checkpoint:rename-lost(no older) ");
            }
            else
            {
                final long previous = older.get(random.nextInt(older.size()));
                CrashFiles.writeCheckpoint(dir, previous, 0);
                what.append("checkpoint:rename-lost(older ").append(previous).append(") ");
            }
            Files.write(tmp, newest);
        }
        else if (choice == 3)
        {
            final byte[] bytes = new byte[random.nextInt(CheckpointDescriptor.LOG_CHECKPOINT_LENGTH + 1)];
            random.nextBytes(bytes);
            Files.write(tmp, bytes);
            what.append("checkpoint:tmp-torn ");
        }
        else if (choice == 4)
        {
            Files.deleteIfExists(file);
            what.append("checkpoint:missing ");
        }
    }

    private static void damageOthers(final Path dir, final Random random, final StringBuilder what) throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                final String name = file.getFileName().toString();
                if ((name.endsWith(SegmentFiles.SPARE_SUFFIX) || name.equals(LogFiles.COUNTERS_FILE)) &&
                    random.nextInt(3) == 0)
                {
                    CrashFiles.cut(file, (long)(random.nextDouble() * (Files.size(file) + 1)));
                    what.append(name).append(":cut ");
                }
            }
        }
    }

    @Test
    void everySealedSegmentBelowTheRecoveryPointIsTrimmedAndItsIndexesForced() throws IOException
    {
        final Path dir = root.resolve("sealed-trim");
        final Random random = new Random(5);
        try (Log log = Log.open(CrashChild.withPolicy(CrashRecords.testContext(dir), "every-1")))
        {
            while (log.segmentCount() < 4)
            {
                CrashRecords.appendRandom(log, random);
            }
            log.flush();
            log.invokeAgent();
            assertEquals(log.logEndOffset(), log.recoveryPoint());
            final Segment[] segments = log.segmentsSnapshot();
            for (int i = 0; i < segments.length - 1; i++)
            {
                final Segment segment = segments[i];
                assertTrue(segment.isSealed());
                assertEquals(segment.size(), Files.size(segment.files().log()),
                    "sealed segment " + segment.baseOffset() + " below the recovery point is not trimmed");
                assertEquals((long)segment.offsetIndex().entries() * OffsetIndex.ENTRY_LENGTH,
                    Files.size(segment.files().offsetIndex()),
                    "the offset index of sealed segment " + segment.baseOffset() + " was never trimmed and forced");
            }
        }
    }

    @Test
    void aFileCutInsideTheLastFramesPaddingRecoversToAnAlignedEnd() throws IOException
    {
        final Path dir = root.resolve("padding-cut");
        final Random random = new Random(3);
        final Log log = Log.open(CrashRecords.testContext(dir));
        for (int i = 0; i < 100; i++)
        {
            CrashRecords.appendRandom(log, random);
        }
        log.flush();
        CrashFiles.Batch last;
        do
        {
            CrashRecords.appendBatch(log, 1, true);
            last = CrashFiles.scanOne(CrashFiles.segmentLogs(dir).get(0)).batchOf(log.logEndOffset() - 1);
        }
        while (last.frameEnd() - (last.position() + last.length()) < 2);
        final long end = log.logEndOffset();
        log.halt();
        // Power loss: the unflushed last batch reached the disk, the file size stops inside its padding.
        CrashFiles.cut(CrashFiles.segmentLogs(dir).get(0), last.position() + last.length() + 1);
        final long appendedEnd;
        try (Log reopened = Log.open(CrashRecords.testContext(dir)))
        {
            assertEquals(end, reopened.logEndOffset(), "the intact last batch was kept");
            final Segment[] segments = reopened.segmentsSnapshot();
            assertEquals(0, segments[segments.length - 1].size() % RecordBatchDescriptor.FRAME_ALIGNMENT,
                "the recovered segment size is off the frame grid");
            for (int i = 0; i < 5; i++)
            {
                CrashRecords.appendRandom(reopened, random);
            }
            appendedEnd = reopened.logEndOffset();
        }
        try (Log reopened = Log.open(CrashRecords.testContext(dir)))
        {
            final CrashRecords.Verification v = CrashRecords.verify(reopened);
            assertTrue(v.clean() && v.next == appendedEnd, v + ", " + appendedEnd + " appended; " +
                reopened.recoveryReport());
        }
    }
}
