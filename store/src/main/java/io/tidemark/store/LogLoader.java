package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileWindow;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Opens the segments of a log directory and, after an unclean shutdown, recovers them. The algorithm, top to
 * bottom:
 * <ol>
 *   <li>Delete leftovers: {@code *.tmp} checkpoints, unused spare segments, index files without a log file.
 *       A file that looks like a segment but is not named by 20 digits is an error.</li>
 *   <li>Read the checkpoint (recovery point, log start offset). Missing or corrupt: trust nothing, recover from
 *       the first segment.</li>
 *   <li>Delete segments wholly below the log start offset.</li>
 *   <li>Segments below the one holding the recovery point (all of them after a clean shutdown) are trusted:
 *       their indexes are sanity-checked (and rebuilt if they fail) and only their tail after the last index
 *       entry is walked, CRC-checked, to find the end offset ({@link SegmentLoader}).</li>
 *   <li>From the segment holding the recovery point on, every batch is re-validated through positional reads
 *       (never a mapping: see {@link FileWindow}) by the store's one batch scanner ({@link BatchScanner}, which
 *       {@code tidemark verify} and index rebuilds use too): length, magic, record structure, CRC32C, offset
 *       continuity, and here also a non-decreasing leader epoch. At the first invalid batch at or above the
 *       recovery point the log is truncated and every later segment deleted. The indexes of these segments are
 *       rebuilt.</li>
 *   <li>Flushed data (below the recovery point) is never truncated while data follows it. Damaged bytes there are
 *       kept in place (a read of them fails with CORRUPT_BATCH) and the walk resumes at the next batch that
 *       validates with its CRC. Missing flushed data with data after it (a sealed segment cut short, a missing
 *       segment between two others) refuses the open with CORRUPT_LOG.</li>
 *   <li>Flushed data that simply ends early (a disk that lost blocks it acknowledged as flushed: the last segment
 *       ends, is cut short or turns to garbage below the recovery point) is not claimed: the log end and the
 *       recovery point are clamped to where the valid data ends, as Kafka does, and the loss is reported as a typed
 *       {@link RecoveryReport.Loss} ({@code FLUSHED_TAIL}), never as offsets the log cannot read. A first segment
 *       that starts above the checkpointed log start moves the log start up and is reported the same way
 *       ({@code LEADING_SEGMENTS}).</li>
 * </ol>
 * Single use, on the opening thread.
 */
final class LogLoader
{
    static final String SPARE_SUFFIX = ".spare";

    private final LogContext ctx;
    private final Path dir;
    private final int maxIndexEntries;
    private final SegmentLoader segmentLoader;
    private final List<String> notes = new ArrayList<>();
    private final List<RecoveryReport.Loss> losses = new ArrayList<>();
    private final System.Logger logger = System.getLogger(Log.class.getName());

    private int segmentsDeleted;
    private boolean modified;
    /** The recovery point and log start offset as the checkpoint has them (-1: none). */
    private long checkpointedRecoveryPoint = -1;
    private long checkpointedLogStart = -1;

    /** The outcome of a load. */
    static final class Loaded
    {
        final List<Segment> segments;
        final long logStartOffset;
        final long recoveryPoint;
        final int lastLeaderEpoch;
        final boolean recovered;
        /**
         * An unclean open that changed nothing the checkpoint describes (no truncation, deletion, loss or finding):
         * the re-validated data need not be forced, nor the checkpoint written, before the log is used.
         */
        final boolean checkpointStands;
        final RecoveryReport report;

        Loaded(
            final List<Segment> segments,
            final long logStartOffset,
            final long recoveryPoint,
            final int lastLeaderEpoch,
            final boolean recovered,
            final boolean checkpointStands,
            final RecoveryReport report)
        {
            this.segments = segments;
            this.logStartOffset = logStartOffset;
            this.recoveryPoint = recoveryPoint;
            this.lastLeaderEpoch = lastLeaderEpoch;
            this.recovered = recovered;
            this.checkpointStands = checkpointStands;
            this.report = report;
        }
    }

    LogLoader(final LogContext ctx)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        this.maxIndexEntries = maxIndexEntries(ctx);
        this.segmentLoader = new SegmentLoader(ctx, maxIndexEntries, this::note);
    }

    static int maxIndexEntries(final LogContext ctx)
    {
        final long bySegment = ctx.indexIntervalBytes() == 0 ?
            ctx.segmentBytes() / RecordBatchDescriptor.HEADER_LENGTH + 2 :
            (long)ctx.segmentBytes() / ctx.indexIntervalBytes() + 2;
        final long byFile = ctx.segmentIndexBytes() / TimeIndex.ENTRY_LENGTH;
        return (int)Math.max(4, Math.min(bySegment, byFile));
    }

    /** What the load knows so far: from the checkpoint, then refined by the segments found. */
    private static final class State
    {
        CheckpointFile.Status checkpointStatus;
        boolean clean;
        long recoveryPoint;
        long logStart;
        int lastEpoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
    }

    /**
     * Load the log: the steps of the class comment, in order.
     *
     * @param cleanShutdown whether the clean-shutdown marker was found.
     * @param checkpoint    the checkpoint file.
     * @return the segments and the state of the log.
     */
    Loaded load(final boolean cleanShutdown, final LogCheckpoint checkpoint) throws IOException
    {
        final long startNs = System.nanoTime();
        deleteLeftovers();
        final TreeMap<Long, SegmentFiles> found = listSegments();
        final State state = readCheckpoint(checkpoint, cleanShutdown, !found.isEmpty());
        if (found.isEmpty())
        {
            return startEmpty(state, startNs);
        }
        final List<SegmentFiles> files = dropSegmentsBelowLogStart(new ArrayList<>(found.values()), state);
        final List<Segment> segments = loadSegments(files, firstSegmentToRecover(files, state), state);
        clampToTheData(segments, state);
        final long logEnd = segments.get(segments.size() - 1).endOffset();
        return finish(segments, state.logStart, state.clean ? logEnd : Math.min(state.recoveryPoint, logEnd),
            state.lastEpoch, state.clean, state.checkpointStatus, state.recoveryPoint, startNs);
    }

    /** Step 2: the checkpoint. Missing or corrupt: trust nothing, recover from the first segment. */
    private State readCheckpoint(final LogCheckpoint checkpoint, final boolean cleanShutdown, final boolean anySegment)
    {
        final State state = new State();
        try
        {
            state.checkpointStatus = checkpoint.read();
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read " + checkpoint.file() + ": " + ex, ex);
        }
        state.clean = cleanShutdown;
        state.recoveryPoint = checkpoint.recoveryPoint();
        state.logStart = checkpoint.logStartOffset();
        checkpointedRecoveryPoint = state.recoveryPoint;
        checkpointedLogStart = state.logStart;
        if (state.checkpointStatus != CheckpointFile.Status.OK)
        {
            if (anySegment)
            {
                note("checkpoint " + state.checkpointStatus + ": recovering every segment from the first");
            }
            state.clean = false;
        }
        return state;
    }

    /** No segment file: a new log, or one whose files are gone (a loss when the checkpoint says data was flushed). */
    private Loaded startEmpty(final State state, final long startNs) throws IOException
    {
        final long base = Math.max(0, state.logStart);
        if (state.checkpointStatus == CheckpointFile.Status.OK && state.recoveryPoint > base)
        {
            lose(RecoveryReport.LossKind.FLUSHED_TAIL, base, state.recoveryPoint, dir + " holds no segment file: " +
                "the log starts again, empty, at " + base);
        }
        final List<Segment> segments = new ArrayList<>();
        segments.add(SegmentOpener.openActive(new SegmentFiles(dir, base), ctx.segmentBytes(), 0, maxIndexEntries,
            0, 0, true));
        modified = true;
        return finish(segments, base, base, RecordBatchDescriptor.NO_LEADER_EPOCH,
            state.clean || state.checkpointStatus == CheckpointFile.Status.MISSING, state.checkpointStatus, base,
            startNs);
    }

    /** Step 3: delete the segments wholly below the log start offset; a first segment above it moves it up. */
    private List<SegmentFiles> dropSegmentsBelowLogStart(final List<SegmentFiles> files, final State state)
        throws IOException
    {
        if (state.logStart < 0)
        {
            state.logStart = files.get(0).baseOffset();
        }
        while (files.size() > 1 && files.get(1).baseOffset() <= state.logStart)
        {
            deleteSegmentFiles(files.remove(0), "wholly below the log start offset " + state.logStart);
        }
        if (files.get(0).baseOffset() > state.logStart)
        {
            lose(RecoveryReport.LossKind.LEADING_SEGMENTS, state.logStart, files.get(0).baseOffset(), "the first " +
                "segment starts above the log start offset: the log start moves up to it (a retention interrupted " +
                "by a crash, which deletes before it checkpoints, or lost segment files)");
        }
        state.logStart = Math.max(state.logStart, files.get(0).baseOffset());
        if (state.recoveryPoint < 0)
        {
            state.recoveryPoint = files.get(0).baseOffset();
        }
        return files;
    }

    /** @return the index of the segment holding the recovery point (all are trusted after a clean shutdown). */
    private static int firstSegmentToRecover(final List<SegmentFiles> files, final State state)
    {
        if (state.clean)
        {
            return files.size();
        }
        int recoverFrom = 0;
        for (int i = 0; i < files.size(); i++)
        {
            if (files.get(i).baseOffset() <= state.recoveryPoint)
            {
                recoverFrom = i;
            }
        }
        return recoverFrom;
    }

    /**
     * Steps 4 to 6: load the trusted segments below {@code recoverFrom}, re-validate the others batch by batch,
     * truncate at the first invalid batch above the recovery point, and refuse offsets missing below it.
     */
    private List<Segment> loadSegments(final List<SegmentFiles> files, final int recoverFrom, final State state)
        throws IOException
    {
        final List<Segment> segments = new ArrayList<>();
        final long recoveryPoint = state.recoveryPoint;
        long previousEnd = -1;
        try
        {
            for (int i = 0; i < files.size(); i++)
            {
                final SegmentFiles segmentFiles = files.get(i);
                final boolean last = i == files.size() - 1;
                if (previousEnd >= 0 && segmentFiles.baseOffset() != previousEnd)
                {
                    if (i <= recoverFrom || previousEnd < recoveryPoint)
                    {
                        throw new StorageException(StorageErrorCode.CORRUPT_LOG, "offsets [" + previousEnd + ", " +
                            segmentFiles.baseOffset() + ") are missing: segment " + files.get(i - 1).baseOffset() +
                            " ends at " + previousEnd + " and no segment file holds them" +
                            (previousEnd < recoveryPoint ? " (below the recovery point " + recoveryPoint + ")" :
                                " (the log was closed cleanly, so every segment is trusted)"));
                    }
                    note("gap in offsets [" + previousEnd + ", " + segmentFiles.baseOffset() +
                        ") above the recovery point: truncating the log at " + previousEnd);
                    deleteFrom(files, i);
                    break;
                }
                Segment segment = null;
                if (i < recoverFrom)
                {
                    final long nextBase = last ? -1 : files.get(i + 1).baseOffset();
                    segment = last ? segmentLoader.loadTrustedActive(segmentFiles) :
                        segmentLoader.loadTrustedSealed(segmentFiles, nextBase);
                }
                if (null == segment)
                {
                    final SegmentLoader.Recovered recovered =
                        segmentLoader.recover(segmentFiles, last, recoveryPoint, state.lastEpoch);
                    segment = recovered.segment;
                    if (recovered.truncated && !last)
                    {
                        deleteFrom(files, i + 1);
                        segments.add(segment);
                        state.lastEpoch = segment.isEmpty() ? state.lastEpoch : segment.lastBatchEpoch();
                        break;
                    }
                }
                segments.add(segment);
                if (!segment.isEmpty())
                {
                    state.lastEpoch = segment.lastBatchEpoch();
                }
                previousEnd = segment.endOffset();
            }
            final Segment tail = segments.get(segments.size() - 1);
            if (tail.isSealed())
            {
                // The last segment was loaded as sealed (a trusted one followed by deleted ones): reopen it for
                // appends.
                segments.set(segments.size() - 1, segmentLoader.reopenActive(tail));
            }
            return segments;
        }
        catch (final Throwable ex)
        {
            for (final Segment segment : segments)
            {
                segment.close();
            }
            throw ex;
        }
    }

    /**
     * Step 7: the log start, log end and recovery point as the data allows: a log start above every record starts
     * the log again, empty, at it; flushed data that ends early is a typed loss, and the recovery point is clamped.
     */
    private void clampToTheData(final List<Segment> segments, final State state) throws IOException
    {
        long logEnd = segments.get(segments.size() - 1).endOffset();
        final boolean checkpointed = state.checkpointStatus == CheckpointFile.Status.OK;
        if (state.logStart > logEnd && checkpointed && state.recoveryPoint <= state.logStart)
        {
            // The log was emptied and restarted at its log start offset (which is checkpointed first), or its log
            // start was raised into an unflushed tail the crash lost: every record is below the log start.
            note("log start offset " + state.logStart + " is above the log end offset " + logEnd +
                ": every segment is below it; the log starts again, empty, at " + state.logStart);
            restartEmptyAt(segments, state.logStart);
            logEnd = state.logStart;
            state.recoveryPoint = state.logStart;
        }
        if (checkpointed && logEnd < state.recoveryPoint)
        {
            lose(RecoveryReport.LossKind.FLUSHED_TAIL, logEnd, state.recoveryPoint, "the data ends at offset " +
                logEnd + ", below the recovery point " + state.recoveryPoint + " (the disk lost flushed blocks, or " +
                "the file was cut short or overwritten): the log end and the recovery point are clamped to it");
            state.recoveryPoint = logEnd;
        }
        if (state.logStart > logEnd)
        {
            note("log start offset " + state.logStart + " is above the log end offset " + logEnd + "; lowered to it");
            state.logStart = logEnd;
        }
    }

    private void restartEmptyAt(final List<Segment> segments, final long offset) throws IOException
    {
        for (final Segment segment : segments)
        {
            segment.close();
            segment.deleteFiles();
            segmentsDeleted++;
        }
        segments.clear();
        segments.add(SegmentOpener.openActive(new SegmentFiles(dir, offset), ctx.segmentBytes(), 0, maxIndexEntries,
            0, 0, true));
        segments.get(0).resetState(0, offset, Long.MIN_VALUE, 0);
        modified = true;
    }

    private Loaded finish(
        final List<Segment> segments,
        final long logStart,
        final long recoveryPoint,
        final int lastEpoch,
        final boolean clean,
        final CheckpointFile.Status checkpointStatus,
        final long reportedRecoveryPoint,
        final long startNs)
    {
        final long logEnd = segments.get(segments.size() - 1).endOffset();
        final RecoveryReport report = new RecoveryReport(
            clean, checkpointStatus.name(), reportedRecoveryPoint, segments.size(), segmentLoader.segmentsRecovered(),
            segmentLoader.batchesScanned(), segmentLoader.recordsScanned(), segmentLoader.bytesScanned(),
            segmentLoader.bytesTruncated(), segmentsDeleted, segmentLoader.indexesRebuilt(),
            logStart, logEnd, System.nanoTime() - startNs, List.copyOf(notes), List.copyOf(losses));
        // a plain kill: the data above the recovery point was re-validated and nothing was cut, deleted, lost or
        // found; the recovery point and the log start stay as checkpointed until a flush forces that data
        final boolean checkpointStands = !clean && !modified && checkpointStatus == CheckpointFile.Status.OK &&
            notes.isEmpty() && losses.isEmpty() && segmentsDeleted == 0 && segmentLoader.bytesTruncated() == 0 &&
            segmentLoader.indexesRebuilt() == segmentLoader.segmentsRecovered() && recoveryPoint >= 0 &&
            recoveryPoint == checkpointedRecoveryPoint && logStart == checkpointedLogStart;
        return new Loaded(segments, logStart, recoveryPoint, lastEpoch, modified || segmentLoader.modified() || !clean,
            checkpointStands, report);
    }

    private void lose(final RecoveryReport.LossKind kind, final long from, final long to, final String why)
    {
        losses.add(new RecoveryReport.Loss(kind, from, to));
        modified = true;
        note("offsets [" + from + ", " + to + ") lost (" + kind + "): " + why);
    }

    private void note(final String message)
    {
        notes.add(message);
        logger.log(System.Logger.Level.WARNING, dir + ": " + message);
    }

    private void deleteLeftovers() throws IOException
    {
        try (Stream<Path> list = Files.list(dir))
        {
            for (final Path path : (Iterable<Path>)list::iterator)
            {
                final String name = path.getFileName().toString();
                if (name.endsWith(CheckpointDescriptor.TMP_SUFFIX) || name.endsWith(SegmentFiles.SPARE_SUFFIX))
                {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    private TreeMap<Long, SegmentFiles> listSegments() throws IOException
    {
        final TreeMap<Long, SegmentFiles> logs = new TreeMap<>();
        final List<Path> indexes = new ArrayList<>();
        try (Stream<Path> list = Files.list(dir))
        {
            for (final Path path : (Iterable<Path>)list::iterator)
            {
                final String name = path.getFileName().toString();
                final String suffix = name.endsWith(SegmentFiles.LOG_SUFFIX) ? SegmentFiles.LOG_SUFFIX :
                    name.endsWith(SegmentFiles.INDEX_SUFFIX) ? SegmentFiles.INDEX_SUFFIX :
                    name.endsWith(SegmentFiles.TIME_INDEX_SUFFIX) ? SegmentFiles.TIME_INDEX_SUFFIX : null;
                if (null == suffix)
                {
                    continue;
                }
                final long base = SegmentFiles.parseBaseOffset(name.substring(0, name.length() - suffix.length()));
                if (base < 0)
                {
                    throw new StorageException(StorageErrorCode.CORRUPT_LOG, "unexpected file " + path +
                        ": segment files must be named by 20 decimal digits (move it out of the log directory)");
                }
                if (!Files.isRegularFile(path))
                {
                    throw new StorageException(StorageErrorCode.CORRUPT_LOG, path + " is not a regular file");
                }
                if (suffix.equals(SegmentFiles.LOG_SUFFIX))
                {
                    logs.put(base, new SegmentFiles(dir, base));
                }
                else
                {
                    indexes.add(path);
                }
            }
        }
        for (final Path index : indexes)
        {
            final String name = index.getFileName().toString();
            final long base = SegmentFiles.parseBaseOffset(name.substring(0, name.indexOf('.')));
            if (!logs.containsKey(base))
            {
                note("deleted index file without its log file: " + name);
                Files.delete(index);
                modified = true;
            }
        }
        return logs;
    }

    private void deleteFrom(final List<SegmentFiles> files, final int from) throws IOException
    {
        while (files.size() > from)
        {
            deleteSegmentFiles(files.remove(files.size() - 1), "after the truncation point");
        }
    }

    private void deleteSegmentFiles(final SegmentFiles files, final String why) throws IOException
    {
        final long size = Files.exists(files.log()) ? Files.size(files.log()) : 0;
        Files.deleteIfExists(files.log());
        Files.deleteIfExists(files.offsetIndex());
        Files.deleteIfExists(files.timeIndex());
        segmentsDeleted++;
        modified = true;
        note("deleted segment " + files.baseOffset() + " (" + size + " bytes): " + why);
    }

}
