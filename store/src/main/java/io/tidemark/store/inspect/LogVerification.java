package io.tidemark.store.inspect;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.IndexDescriptor;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;
import io.tidemark.store.inspect.LogInspector.Checkpoint;
import io.tidemark.store.inspect.LogInspector.IndexContent;
import io.tidemark.store.inspect.LogInspector.Meta;
import io.tidemark.store.inspect.LogInspector.ScanResult;
import io.tidemark.store.inspect.LogInspector.SegmentInfo;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.tidemark.store.inspect.LogInspector.CHECKPOINT_FILE;
import static io.tidemark.store.inspect.LogInspector.CLEAN_SHUTDOWN_FILE;
import static io.tidemark.store.inspect.LogInspector.COUNTERS_FILE;
import static io.tidemark.store.inspect.LogInspector.LOCK_FILE;
import static io.tidemark.store.inspect.LogInspector.META_FILE;

/**
 * One verification of a log directory, run by {@link LogInspector#verify()}: reads through the inspector (never
 * writes), collects findings and segment summaries, and builds the {@link LogInspectionReport}.
 */
final class LogVerification
{
    private final LogInspector inspector;
    private final List<LogInspectionReport.Finding> findings = new ArrayList<>();
    private final List<LogInspectionReport.SegmentSummary> summaries = new ArrayList<>();
    private long batches;
    private long records;
    private long bytesTotal;
    private long truncateAt = Long.MAX_VALUE;
    private boolean ownerRunning;

    LogVerification(final LogInspector inspector)
    {
        this.inspector = inspector;
    }

    private void error(final long segment, final String message)
    {
        findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.ERROR, segment, message));
    }

    private void warning(final long segment, final String message)
    {
        findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.WARNING, segment, message));
    }

    private void info(final long segment, final String message)
    {
        findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.INFO, segment, message));
    }

    LogInspectionReport run()
    {
        final Meta meta = inspector.meta();
        if (meta.status() != CheckpointFile.Status.OK)
        {
            error(-1, META_FILE + " is " + meta.status() + ": the next open refuses the directory " +
                "(NOT_A_LOG_DIRECTORY)");
        }
        final Checkpoint checkpoint = inspector.checkpoint();
        final boolean clean = inspector.cleanShutdownMarker();
        final long pid = inspector.lockOwnerPid();
        final boolean running = inspector.lockOwnerRunning();
        ownerRunning = running;
        if (running)
        {
            info(-1, "the log is probably open in running process " + pid + " (named in " + LOCK_FILE +
                "): its active segment may change while it is verified");
        }
        else if (!clean)
        {
            warning(-1, "no " + CLEAN_SHUTDOWN_FILE + " marker: the last process did not close the log " +
                "cleanly; the next open re-validates it from the recovery point");
        }

        final List<SegmentInfo> segments = inspector.segments();
        checkFiles(segments, running);
        if (checkpoint.status() != CheckpointFile.Status.OK)
        {
            error(-1, CHECKPOINT_FILE + " is " + checkpoint.status() + ": the next open trusts nothing and " +
                "re-validates every segment from the first");
        }
        final long firstBase = segments.isEmpty() ? Math.max(0, checkpoint.logStartOffset()) :
            segments.get(0).baseOffset();
        final long recoveryPoint = checkpoint.status() == CheckpointFile.Status.OK ?
            checkpoint.recoveryPoint() : firstBase;
        long logStart = checkpoint.status() == CheckpointFile.Status.OK ? checkpoint.logStartOffset() : firstBase;

        for (int i = 0; i + 1 < segments.size(); i++)
        {
            if (segments.get(i + 1).baseOffset() <= logStart)
            {
                warning(segments.get(i).baseOffset(), "segment wholly below the log start offset " + logStart +
                    ": the next open deletes it");
            }
        }

        long previousEnd = -1;
        int epoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
        for (int i = 0; i < segments.size(); i++)
        {
            final SegmentInfo segment = segments.get(i);
            if (previousEnd >= 0 && segment.baseOffset() != previousEnd)
            {
                error(segment.baseOffset(), "offsets [" + previousEnd + ", " + segment.baseOffset() + ") are " +
                    "missing: no segment holds them; " + (previousEnd < recoveryPoint ?
                    "they are below the recovery point " + recoveryPoint + ": the next open fails (CORRUPT_LOG)" :
                    "the next open truncates the log at " + previousEnd + " and deletes the later segments"));
                if (previousEnd >= recoveryPoint)
                {
                    truncateAt = Math.min(truncateAt, previousEnd);
                }
            }
            final long expectedStart = segment.baseOffset();
            final SegmentCheck check = checkSegment(segment, expectedStart, epoch, recoveryPoint,
                i == segments.size() - 1);
            epoch = check.epoch;
            previousEnd = check.endOffset;
        }
        final long logEnd = Math.min(truncateAt, segments.isEmpty() ? firstBase : previousEnd);
        if (checkpoint.status() == CheckpointFile.Status.OK)
        {
            if (checkpoint.recoveryPoint() > logEnd)
            {
                error(-1, "the recovery point " + checkpoint.recoveryPoint() + " in " + CHECKPOINT_FILE +
                    " is above the log end offset " + logEnd + ": flushed records [" + logEnd + ", " +
                    checkpoint.recoveryPoint() + ") are missing or unreadable");
            }
            if (checkpoint.logStartOffset() > logEnd)
            {
                error(-1, "the log start offset " + checkpoint.logStartOffset() + " in " + CHECKPOINT_FILE +
                    " is above the log end offset " + logEnd);
            }
            if (!segments.isEmpty() && checkpoint.logStartOffset() < firstBase)
            {
                info(-1, "the log start offset " + checkpoint.logStartOffset() + " is below the first segment's " +
                    "base offset " + firstBase + "; the log starts at " + firstBase);
            }
        }
        logStart = Math.min(Math.max(logStart, firstBase), logEnd);
        return new LogInspectionReport(inspector.directory(), meta.status(), checkpoint, clean, pid, running,
            List.copyOf(summaries), batches, records, bytesTotal, logStart, logEnd, List.copyOf(findings));
    }

    private void checkFiles(final List<SegmentInfo> segments, final boolean running)
    {
        final Map<Long, SegmentInfo> byBase = new HashMap<>();
        for (final SegmentInfo segment : segments)
        {
            byBase.put(segment.baseOffset(), segment);
        }
        for (final Path path : inspector.list())
        {
            final String name = path.getFileName().toString();
            if (name.equals(META_FILE) || name.equals(CHECKPOINT_FILE) || name.equals(LOCK_FILE) ||
                name.equals(CLEAN_SHUTDOWN_FILE) || name.equals(COUNTERS_FILE))
            {
                continue;
            }
            if (name.endsWith(SegmentFiles.SPARE_SUFFIX))
            {
                if (running)
                {
                    info(-1, "spare segment file " + name + " prepared by the running process");
                }
                else
                {
                    warning(-1, "leftover spare segment file " + name + ": the next open deletes it");
                }
                continue;
            }
            if (name.endsWith(CheckpointDescriptor.TMP_SUFFIX))
            {
                warning(-1, "leftover temporary file " + name + " (an interrupted checkpoint write): the next " +
                    "open deletes it");
                continue;
            }
            final String suffix = name.endsWith(SegmentFiles.LOG_SUFFIX) ? SegmentFiles.LOG_SUFFIX :
                name.endsWith(SegmentFiles.INDEX_SUFFIX) ? SegmentFiles.INDEX_SUFFIX :
                name.endsWith(SegmentFiles.TIME_INDEX_SUFFIX) ? SegmentFiles.TIME_INDEX_SUFFIX : null;
            if (null == suffix)
            {
                info(-1, (name.endsWith(".checkpoint") ? "file " + name + " belongs to another layer " +
                    "(replication) and is not checked here" : "file " + name + " is not part of the store's " +
                    "format (ignored)"));
                continue;
            }
            final long base = SegmentFiles.parseBaseOffset(name.substring(0, name.length() - suffix.length()));
            if (base < 0)
            {
                error(-1, "unexpected file " + name + ": segment files must be named by 20 decimal digits; the " +
                    "next open refuses the directory (CORRUPT_LOG)");
                continue;
            }
            if (!Files.isRegularFile(path))
            {
                error(base, name + " is not a regular file: the next open refuses the directory (CORRUPT_LOG)");
                continue;
            }
            if (!suffix.equals(SegmentFiles.LOG_SUFFIX) && !byBase.containsKey(base))
            {
                warning(base, "index file " + name + " has no log file: the next open deletes it");
            }
        }
    }

    /** Outcome of one segment's check. */
    private static final class SegmentCheck
    {
        long endOffset;
        int epoch;
    }

    /** Running state of one segment's walk. */
    private static final class Walk
    {
        long expected;
        int epoch;
        long maxTimestamp = Long.MIN_VALUE;
        long records;
        long bytes;
        int lastGoodEnd;
        int lastDamaged = -1;

        Walk(final long expected, final int epoch)
        {
            this.expected = expected;
            this.epoch = epoch;
        }
    }

    private SegmentCheck checkSegment(
        final SegmentInfo segment,
        final long expectedStart,
        final int epochBefore,
        final long recoveryPoint,
        final boolean last)
    {
        final long base = segment.baseOffset();
        final Map<Integer, Long> batchAt = new HashMap<>();
        final Set<Integer> damagedAt = new HashSet<>();
        final Set<Long> damagedFrom = new HashSet<>();
        final List<long[]> boundaries = new ArrayList<>(); // {base, next, running max timestamp}
        // The indexes first: an entry is published after its batch, so the walk below sees every batch an
        // entry read now can name, even while a running owner appends.
        final IndexContent offsetIndex = inspector.offsetIndex(segment);
        final IndexContent timeIndex = inspector.timeIndex(segment);
        final Walk w = new Walk(expectedStart, epochBefore);
        final ScanResult result = inspector.walk(segment, (info, valid) ->
        {
            final long expected = w.expected;
            if (info.valid())
            {
                if (info.baseOffset() != expected &&
                    (info.baseOffset() < expected || w.lastGoodEnd == info.position()))
                {
                    // (a larger base offset after a damaged region is the damaged region's offsets: reported)
                    error(base, "batch at position " + info.position() + " has base offset " +
                        info.baseOffset() + " where " + expected + " was expected (offsets out of order); " +
                        consequence(expected, recoveryPoint));
                }
                if (info.leaderEpoch() < w.epoch)
                {
                    error(base, "batch at position " + info.position() + " (offset " + info.baseOffset() +
                        ") has leader epoch " + info.leaderEpoch() + ", below the previous batch's " +
                        w.epoch + "; " + consequence(info.baseOffset(), recoveryPoint));
                }
                w.epoch = Math.max(w.epoch, info.leaderEpoch());
                w.expected = Math.max(expected, info.nextOffset());
                w.maxTimestamp = Math.max(w.maxTimestamp, info.maxTimestamp());
                w.records += info.recordCount();
                w.bytes += info.frameLength();
                w.lastGoodEnd = info.position() + info.frameLength();
                batchAt.put(info.position(), info.baseOffset());
                boundaries.add(new long[] {info.baseOffset(), info.nextOffset(), w.maxTimestamp});
            }
            else
            {
                w.lastDamaged = info.position();
                damagedAt.add(info.position());
                damagedFrom.add(expected);
                error(base, "damaged batch at position " + info.position() + " (reading offset " + expected +
                    "): " + info.describeStatus() + " (length field " + info.length() + ", stored CRC 0x" +
                    Integer.toHexString(info.crc()) + "); " + consequence(expected, recoveryPoint));
            }
            return true;
        });
        final long endOffset = w.expected;
        final int dataSize = result.stopPosition();
        if (result.dataEnd() > dataSize)
        {
            final long extra = result.dataEnd() - dataSize;
            if (last && ownerRunning && w.lastDamaged != dataSize)
            {
                info(base, extra + " byte(s) after the end of the data at position " + dataSize + ": an append " +
                    "in progress by the running owner");
            }
            else if (w.lastDamaged == dataSize)
            {
                info(base, extra + " byte(s) from the damaged batch at position " + dataSize +
                    " to the last non-zero byte (position " + result.dataEnd() + ") follow no valid batch");
            }
            else
            {
                error(base, extra + " non-zero byte(s) after the end of the data at position " + dataSize +
                    " (up to position " + result.dataEnd() + "): a torn write or garbage; " +
                    consequence(endOffset, recoveryPoint));
            }
        }
        if (!last && result.validBatches() == 0)
        {
            info(base, "sealed segment holds no batch");
        }

        checkOffsetIndex(segment, offsetIndex, batchAt, damagedAt, dataSize);
        checkTimeIndex(segment, timeIndex, boundaries, damagedFrom, endOffset);

        batches += result.validBatches();
        records += w.records;
        bytesTotal += w.bytes;
        summaries.add(new LogInspectionReport.SegmentSummary(base, result.fileSize(), dataSize,
            result.validBatches(), w.records, result.damagedBatches(), endOffset, w.maxTimestamp,
            offsetIndex.exists() && offsetIndex.wholeEntries() ? offsetIndex.entries() : -1,
            timeIndex.exists() && timeIndex.wholeEntries() ? timeIndex.entries() : -1));
        final SegmentCheck check = new SegmentCheck();
        check.endOffset = endOffset;
        check.epoch = w.epoch;
        return check;
    }

    /** @return what recovery does about damage at {@code offset} (and remember where it would truncate). */
    private String consequence(final long offset, final long recoveryPoint)
    {
        if (offset >= recoveryPoint)
        {
            truncateAt = Math.min(truncateAt, offset);
        }
        return offset < recoveryPoint ?
            "below the recovery point " + recoveryPoint + " (flushed data): the next open keeps it in place " +
            "and reading it fails with CORRUPT_BATCH" :
            "at or above the recovery point " + recoveryPoint + ": the next open truncates the log at offset " +
            offset + " and deletes any later segment";
    }

    private void checkOffsetIndex(
        final SegmentInfo segment,
        final IndexContent index,
        final Map<Integer, Long> batchAt,
        final Set<Integer> damagedAt,
        final int dataSize)
    {
        final long base = segment.baseOffset();
        final String name = index.file().getFileName().toString();
        if (!index.exists())
        {
            error(base, "offset index " + name + " is missing: the next open rebuilds it");
            return;
        }
        if (!index.wholeEntries())
        {
            error(base, "offset index " + name + " is " + index.fileSize() + " bytes, not a whole number of " +
                IndexDescriptor.OFFSET_INDEX_ENTRY_LENGTH + "-byte entries: the next open rebuilds it");
            return;
        }
        long previousOffset = base - 1;
        long previousPosition = -1;
        for (int i = 0; i < index.entries(); i++)
        {
            final long offset = index.offsets()[i];
            final long position = index.values()[i];
            if (offset <= previousOffset || position <= previousPosition)
            {
                error(base, "offset index " + name + " entry " + i + " (offset " + offset + ", position " +
                    position + ") is out of order: the next open rebuilds the index");
                return;
            }
            final Long at = position >= 0 && position <= Integer.MAX_VALUE ? batchAt.get((int)position) : null;
            final boolean damaged = position >= 0 && position <= Integer.MAX_VALUE &&
                damagedAt.contains((int)position); // a damaged batch: its offset cannot be checked (reported)
            if (!damaged && (null == at || at != offset))
            {
                error(base, "offset index " + name + " entry " + i + " (offset " + offset + " -> position " +
                    position + ") does not point at a batch with that base offset" +
                    (position >= dataSize ? " (beyond the data, which ends at " + dataSize + ")" :
                    null == at ? " (no valid batch starts there)" : " (the batch there starts at offset " + at +
                    ")") + ": lookups would go wrong; the next open rebuilds an index that fails its sanity check, and the indexes of every segment it re-validates");
                return;
            }
            previousOffset = offset;
            previousPosition = position;
        }
    }

    private void checkTimeIndex(
        final SegmentInfo segment,
        final IndexContent index,
        final List<long[]> boundaries,
        final Set<Long> damagedFrom,
        final long endOffset)
    {
        final long base = segment.baseOffset();
        final String name = index.file().getFileName().toString();
        if (!index.exists())
        {
            error(base, "time index " + name + " is missing: the next open rebuilds it");
            return;
        }
        if (!index.wholeEntries())
        {
            error(base, "time index " + name + " is " + index.fileSize() + " bytes, not a whole number of " +
                IndexDescriptor.TIME_INDEX_ENTRY_LENGTH + "-byte entries: the next open rebuilds it");
            return;
        }
        long previousTimestamp = Long.MIN_VALUE;
        long previousOffset = base - 1;
        int b = 0;
        long maxBefore = Long.MIN_VALUE;
        for (int i = 0; i < index.entries(); i++)
        {
            final long timestamp = index.values()[i];
            final long offset = index.offsets()[i];
            if ((i > 0 && timestamp <= previousTimestamp) || offset <= previousOffset)
            {
                error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                    offset + ") is out of order: the next open rebuilds the index");
                return;
            }
            if (offset > endOffset)
            {
                error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                    offset + ") is beyond the segment's end offset " + endOffset);
                return;
            }
            while (b < boundaries.size() && boundaries.get(b)[1] <= offset)
            {
                maxBefore = boundaries.get(b)[2];
                b++;
            }
            final boolean onBoundary = offset == endOffset ||
                (b < boundaries.size() && boundaries.get(b)[0] == offset) || offset == base || damagedFrom.contains(offset);
            if (!onBoundary)
            {
                error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                    offset + ") does not fall on a batch boundary");
                return;
            }
            if (maxBefore > timestamp)
            {
                error(base, "time index " + name + " entry " + i + " claims every record below offset " + offset +
                    " has a timestamp at most " + timestamp + ", but one has " + maxBefore +
                    ": timestamp lookups would skip records");
                return;
            }
            previousTimestamp = timestamp;
            previousOffset = offset;
        }
    }
}
