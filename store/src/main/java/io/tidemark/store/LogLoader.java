package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.FileWindow;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.BatchValidator;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
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
 *       entry is walked, CRC-checked, to find the end offset.</li>
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
    private final FileSync sync;
    private final int maxIndexEntries;
    private final Crc32c crc = new Crc32c();
    private final BatchScanner scanner;
    private final List<String> notes = new ArrayList<>();
    private final List<RecoveryReport.Loss> losses = new ArrayList<>();
    private final System.Logger logger = System.getLogger(Log.class.getName());

    private int segmentsRecovered;
    private long batchesScanned;
    private long recordsScanned;
    private long bytesScanned;
    private long bytesTruncated;
    private int segmentsDeleted;
    private int indexesRebuilt;
    private boolean modified;

    /** The outcome of a load. */
    static final class Loaded
    {
        final List<Segment> segments;
        final long logStartOffset;
        final long recoveryPoint;
        final int lastLeaderEpoch;
        final boolean recovered;
        final RecoveryReport report;

        Loaded(
            final List<Segment> segments,
            final long logStartOffset,
            final long recoveryPoint,
            final int lastLeaderEpoch,
            final boolean recovered,
            final RecoveryReport report)
        {
            this.segments = segments;
            this.logStartOffset = logStartOffset;
            this.recoveryPoint = recoveryPoint;
            this.lastLeaderEpoch = lastLeaderEpoch;
            this.recovered = recovered;
            this.report = report;
        }
    }

    LogLoader(final LogContext ctx)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        this.sync = ctx.fileSync();
        this.maxIndexEntries = maxIndexEntries(ctx);
        this.scanner = new BatchScanner(crc, maxBatchLength());
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
                    segment = last ? loadTrustedActive(segmentFiles) : loadTrustedSealed(segmentFiles, nextBase);
                }
                if (null == segment)
                {
                    final Recovered recovered = recover(segmentFiles, last, recoveryPoint, state.lastEpoch);
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
                segments.set(segments.size() - 1, reopenActive(tail));
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
            clean, checkpointStatus.name(), reportedRecoveryPoint, segments.size(), segmentsRecovered,
            batchesScanned, recordsScanned, bytesScanned, bytesTruncated, segmentsDeleted, indexesRebuilt,
            logStart, logEnd, System.nanoTime() - startNs, List.copyOf(notes), List.copyOf(losses));
        return new Loaded(segments, logStart, recoveryPoint, lastEpoch, modified || !clean, report);
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

    private Segment loadTrustedSealed(final SegmentFiles files, final long nextBase) throws IOException
    {
        final String untrimmed = SegmentTail.trim(files, maxBatchLength(), crc, sync); // before anything maps them
        if (null != untrimmed)
        {
            note(untrimmed);
            modified = true;
        }
        final boolean wholeFiles = trustedEntries(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH) >= 0 &&
            trustedEntries(files.timeIndex(), TimeIndex.ENTRY_LENGTH) >= 0;
        Segment segment = SegmentOpener.openSealed(files, maxIndexEntries, !wholeFiles);
        final String problem = wholeFiles ? checkIndexes(segment, nextBase) : "missing or not whole entries";
        final int end;
        if (null != problem)
        {
            note("segment " + files.baseOffset() + ": index rebuilt (" + problem + ")");
            if (wholeFiles)
            {
                segment.close();
                segment = SegmentOpener.openSealed(files, maxIndexEntries, true);
            }
            end = SegmentReplay.replay(segment, 0, segment.size(), ctx.indexIntervalBytes(), true, crc, false);
            segment.trimIndexes(sync);
            indexesRebuilt++;
            modified = true;
        }
        else
        {
            end = replayTrustedTail(segment);
        }
        int size = segment.size();
        long endOffset = segment.endOffset();
        if (end < size)
        {
            try
            {
                if (onlyZeros(segment.buffer(), end, size))
                {
                    size = end; // a zero tail the trim did not remove
                }
                else
                {
                    checkNotCutShort(segment.buffer(), end, size, files, nextBase);
                }
            }
            catch (final StorageException ex)
            {
                segment.close();
                throw ex;
            }
        }
        if (segment.damagedBatches() > 0 || end < size)
        {
            note("segment " + files.baseOffset() + " (below the recovery point): damaged batch(es) kept in " +
                "place; reading them fails with CORRUPT_BATCH");
            endOffset = Math.max(endOffset, nextBase);
        }
        segment.resetState(size, endOffset, segment.maxTimestamp(), 0);
        return segment;
    }

    /** A trailing partial batch below the recovery point: the file lost flushed bytes. */
    private static void checkNotCutShort(
        final UnsafeBuffer buffer, final int position, final int size, final SegmentFiles files, final long endOffset)
    {
        final int status = RecordBatch.validate(buffer, position, size - position, Integer.MAX_VALUE, null);
        if (status == RecordBatch.INCOMPLETE && BatchValidator.isCutShort(buffer, position, size - position))
        {
            throw new StorageException(StorageErrorCode.CORRUPT_LOG, files.log() + " ends inside the batch at " +
                "position " + position + ", below the recovery point " + endOffset + ": flushed data is missing " +
                "(the file was cut short)");
        }
    }

    private static boolean onlyZeros(final UnsafeBuffer buffer, final int from, final int limit)
    {
        for (int position = from; position < limit; position++)
        {
            if (buffer.getByte(position) != 0)
            {
                return false;
            }
        }
        return true;
    }

    private Segment loadTrustedActive(final SegmentFiles files) throws IOException
    {
        final long dataSize = Files.size(files.log());
        if (dataSize > Segment.MAX_FILE_LENGTH)
        {
            throw new StorageException(StorageErrorCode.CORRUPT_LOG, files.log() + " is too large: " + dataSize);
        }
        final int offsetEntries = trustedEntries(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH);
        final int timeEntries = trustedEntries(files.timeIndex(), TimeIndex.ENTRY_LENGTH);
        final boolean rebuild = offsetEntries < 0 || timeEntries < 0 ||
            offsetEntries > maxIndexEntries || timeEntries > maxIndexEntries;
        final Segment segment = SegmentOpener.openActive(files, ctx.segmentBytes(), (int)dataSize, maxIndexEntries,
            rebuild ? 0 : offsetEntries, rebuild ? 0 : timeEntries, true);
        final String problem = rebuild ?
            (offsetEntries < 0 || timeEntries < 0 ? "missing or not whole entries" :
                "more entries than " + LogContext.SEGMENT_INDEX_BYTES + " allows") :
            checkIndexes(segment, -1);
        final int end;
        if (null != problem)
        {
            note("segment " + files.baseOffset() + ": index rebuilt (" + problem + ")");
            segment.offsetIndex().file().truncateEntries(0);
            segment.timeIndex().file().truncateEntries(0);
            segment.resetState((int)dataSize, files.baseOffset(), Long.MIN_VALUE, 0);
            end = SegmentReplay.replay(segment, 0, (int)dataSize, ctx.indexIntervalBytes(), true, crc, false);
            indexesRebuilt++;
        }
        else
        {
            end = replayTrustedTail(segment);
        }
        if (end < dataSize || segment.damagedBatches() > 0)
        {
            note("segment " + files.baseOffset() + ": damaged batch in the last segment; re-validating it");
            segment.close();
            try (RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "rw"))
            {
                file.setLength(dataSize); // as found: the re-validation must see where the file ends, not our zeros
            }
            return null;
        }
        segment.resetState(end, segment.endOffset(), segment.maxTimestamp(), segmentBytesSinceIndex(segment));
        return segment;
    }

    private static int segmentBytesSinceIndex(final Segment segment)
    {
        final int entries = segment.offsetIndex().entries();
        final int from = entries == 0 ? 0 : segment.offsetIndex().positionAt(entries - 1);
        return segment.size() - from;
    }

    /** Walk the tail after the last trusted index entry, checking CRCs (it is short: one index interval). */
    private int replayTrustedTail(final Segment segment)
    {
        segment.startTrustedReplay();
        final int entries = segment.offsetIndex().entries();
        final int from = entries == 0 ? 0 : segment.offsetIndex().positionAt(entries - 1);
        return SegmentReplay.replay(segment, from, segment.size(), ctx.indexIntervalBytes(), false, crc, true);
    }

    private static int trustedEntries(final Path index, final int entryLength) throws IOException
    {
        if (!Files.exists(index))
        {
            return -1;
        }
        final long size = Files.size(index);
        return size % entryLength == 0 && size / entryLength < Integer.MAX_VALUE ? (int)(size / entryLength) : -1;
    }

    private static String checkIndexes(final Segment segment, final long endOffset)
    {
        final String offsetProblem = segment.offsetIndex().check(segment.size());
        if (null != offsetProblem)
        {
            return "offset index: " + offsetProblem;
        }
        return segment.timeIndex().check(endOffset < 0 ? Long.MAX_VALUE : endOffset);
    }

    /** A segment re-validated batch by batch. */
    private static final class Recovered
    {
        final Segment segment;
        final boolean truncated;

        Recovered(final Segment segment, final boolean truncated)
        {
            this.segment = segment;
            this.truncated = truncated;
        }
    }

    private Recovered recover(
        final SegmentFiles files, final boolean last, final long recoveryPoint, final int epochBefore)
        throws IOException
    {
        segmentsRecovered++;
        modified = true;
        final long fileLength = Files.size(files.log());
        if (fileLength > Segment.MAX_FILE_LENGTH)
        {
            throw new StorageException(StorageErrorCode.CORRUPT_LOG, files.log() + " is too large: " + fileLength);
        }
        final Walk walk;
        try (FileChannel channel = FileChannel.open(files.log(), StandardOpenOption.READ))
        {
            walk = walk(new FileWindow(channel, fileLength, maxBatchLength()), files, recoveryPoint, epochBefore,
                last);
        }
        final int validEnd = walk.validEnd;
        final boolean truncated = walk.dataEnd > validEnd;
        if (truncated)
        {
            bytesTruncated += walk.dataEnd - validEnd;
            note("segment " + files.baseOffset() + ": truncated at position " + validEnd + " (" + walk.reason +
                "), " + (walk.dataEnd - validEnd) + " bytes dropped");
        }
        indexesRebuilt++;
        final Segment segment;
        if (last || truncated)
        {
            segment = SegmentOpener.openActive(files, ctx.segmentBytes(), validEnd, maxIndexEntries, 0, 0, true);
            segment.resetState(validEnd, files.baseOffset(), Long.MIN_VALUE, 0);
            SegmentReplay.replay(segment, 0, validEnd, ctx.indexIntervalBytes(), true, crc, false);
            segment.resetState(validEnd, walk.endOffset, segment.maxTimestamp(), segmentBytesSinceIndex(segment));
        }
        else
        {
            try (RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "rw"))
            {
                if (file.length() != validEnd)
                {
                    file.setLength(validEnd);
                    sync.force(file.getChannel(), true);
                }
            }
            segment = SegmentOpener.openSealed(files, maxIndexEntries, true);
            SegmentReplay.replay(segment, 0, segment.size(), ctx.indexIntervalBytes(), true, crc, false);
            segment.resetState(segment.size(), walk.endOffset, segment.maxTimestamp(), 0);
            segment.trimIndexes(sync);
        }
        return new Recovered(segment, truncated);
    }

    /** Where a recovery walk of one segment file ended. */
    private static final class Walk
    {
        int validEnd;
        long endOffset;
        long dataEnd;
        String reason;
    }

    /**
     * Re-validate a segment file batch by batch, through positional reads. At or above the recovery point the
     * first invalid batch (CRC included, offsets continuous, leader epochs non-decreasing) ends the data: a torn
     * tail. Below it the data was flushed and is never dropped: damage is stepped over to the next batch that
     * validates with its CRC. Where no valid batch follows below the recovery point, the flushed data has ended
     * early: in the last segment the data ends there (the load clamps the log end and reports the loss); in a sealed
     * segment the damage is kept to the end of the data (its offsets reaching the recovery point), and a file that
     * ends inside a batch has lost flushed bytes that segments after it depend on, and is refused.
     */
    private Walk walk(
        final FileWindow window, final SegmentFiles files, final long recoveryPoint, final int epochBefore,
        final boolean last)
        throws IOException
    {
        final UnsafeBuffer buffer = window.buffer();
        final long length = window.fileLength();
        final Walk walk = new Walk();
        long expected = files.baseOffset();
        int epoch = epochBefore;
        int position = 0;
        while (position < length)
        {
            final boolean belowRecoveryPoint = expected < recoveryPoint;
            // Flushed batches of a sealed segment are trusted to their structure; in the last segment the CRC tells
            // a flushed batch from one whose blocks a lossy disk returned as zeros or stale bytes (its end is where
            // the data ends).
            final int status = scanner.check(window, position, expected, !belowRecoveryPoint || last);
            final int at = scanner.index();
            final int claimed = scanner.claimed();
            final int available = scanner.available();
            final boolean whole = status == RecordBatch.VALID || status == BatchScanner.BAD_OFFSET;
            final long base = whole ? buffer.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : -1;
            final int batchEpoch = whole ? buffer.getInt(at + RecordBatchDescriptor.LEADER_EPOCH_OFFSET) : 0;
            if (status == RecordBatch.VALID && (belowRecoveryPoint || batchEpoch >= epoch))
            {
                final int batchLength = buffer.getInt(at);
                final int count = buffer.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
                batchesScanned++;
                recordsScanned += count;
                bytesScanned += batchLength;
                expected = base + count;
                epoch = Math.max(epoch, batchEpoch);
                position += RecordBatchDescriptor.frameLength(batchLength);
                continue;
            }
            if (!belowRecoveryPoint)
            {
                walk.reason = describeStop(status, base, expected, batchEpoch, epoch);
                break;
            }
            if (claimed == 0 && scanner.dataEnd(window, position) == position)
            {
                break; // the data ends below the recovery point: the load refuses the log
            }
            if (status == RecordBatch.INCOMPLETE && claimed != 0 && BatchValidator.isCutShort(buffer, at, available))
            {
                if (last)
                {
                    walk.reason = "the file ends inside the batch at offset " + expected + ", below the recovery " +
                        "point " + recoveryPoint + ": flushed data is missing";
                    break;
                }
                throw new StorageException(StorageErrorCode.CORRUPT_LOG, files.log() + " ends inside the batch at " +
                    "position " + position + " (offset " + expected + "), below the recovery point " + recoveryPoint +
                    ": flushed data is missing (the file was cut short)");
            }
            final int next = (int)scanner.resync(window, position + RecordBatchDescriptor.FRAME_ALIGNMENT, expected);
            if (next >= 0)
            {
                final long nextBase = buffer.getLong(window.load(next, RecordBatchDescriptor.HEADER_LENGTH) +
                    RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                note("segment " + files.baseOffset() + ": damaged batch(es) at positions [" + position + ", " + next +
                    ") below the recovery point kept in place (" + RecordBatch.describe(status) + "); reading " +
                    "offsets [" + expected + ", " + Math.min(nextBase, recoveryPoint) + ") fails with CORRUPT_BATCH");
                // Damage that reaches past the recovery point: its flushed part is kept, and the batch after it
                // (base above the recovery point) ends the data as a torn tail would.
                expected = Math.min(nextBase, recoveryPoint);
                position = next;
                continue;
            }
            if (last)
            {
                // No valid batch follows. A whole frame that still has the structure of a batch (a bit flip) is a
                // damaged flushed batch: kept in place with its offsets, as in a sealed segment. Anything else
                // (zeros, garbage, a frame cut short) is where the data ends.
                final int count = damagedBatchRecords(window, position, claimed, expected);
                if (count > 0)
                {
                    note("segment " + files.baseOffset() + ": damaged batch at position " + position + " below the " +
                        "recovery point kept in place (" + RecordBatch.describe(status) + "); reading offsets [" +
                        expected + ", " + (expected + count) + ") fails with CORRUPT_BATCH");
                    expected += count;
                    position += RecordBatchDescriptor.frameLength(claimed);
                    continue;
                }
                walk.reason = "no batch at offset " + expected + ", below the recovery point " + recoveryPoint +
                    " (" + RecordBatch.describe(status) + "): flushed data is missing";
                break;
            }
            final long damageEnd = scanner.dataEnd(window, position);
            note("segment " + files.baseOffset() + ": damaged bytes [" + position + ", " + damageEnd + ") at the end " +
                "of the data, below the recovery point, kept in place (" + RecordBatch.describe(status) + "); " +
                "reading offsets [" + expected + ", " + recoveryPoint + ") fails with CORRUPT_BATCH");
            position = (int)Segment.align(damageEnd, RecordBatchDescriptor.FRAME_ALIGNMENT);
            expected = recoveryPoint;
            break;
        }
        walk.validEnd = position;
        walk.endOffset = expected;
        walk.dataEnd = position < length ? scanner.dataEnd(window, position) : position;
        return walk;
    }

    /**
     * @return the record count of the damaged batch at {@code position} when its frame is whole and is still a
     *         batch: its header continues the offsets (a bit flip in its body or in a field other than the base
     *         offset), or its structure holds (a flip of the base offset or the CRC); 0 when the bytes there are not
     *         a batch (zeros, garbage, a frame cut short).
     */
    private int damagedBatchRecords(final FileWindow window, final int position, final int claimed,
        final long expected) throws IOException
    {
        if (claimed <= RecordBatchDescriptor.HEADER_LENGTH || claimed > maxBatchLength() ||
            claimed > window.fileLength() - position)
        {
            return 0;
        }
        final int at = window.load(position, claimed);
        final UnsafeBuffer buffer = window.buffer();
        final int count = buffer.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
        if (count <= 0 || count > (claimed - RecordBatchDescriptor.HEADER_LENGTH) / RecordDescriptor.HEADER_LENGTH)
        {
            return 0;
        }
        final boolean continues = buffer.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET) == expected;
        return continues || RecordBatch.validate(buffer, at, window.available(position), maxBatchLength(), null) ==
            RecordBatch.VALID ? count : 0;
    }

    /** @return the longest batch recovery accepts: the configured maximum, or 64 MiB if that is more. */
    private int maxBatchLength()
    {
        return Math.max(ctx.maxMessageBytes(), 64 * 1024 * 1024);
    }

    private static String describeStop(
        final int status, final long base, final long expected, final int batchEpoch, final int epoch)
    {
        if (status == BatchScanner.BAD_OFFSET)
        {
            return "base offset " + base + " where " + expected + " was expected";
        }
        if (status != RecordBatch.VALID)
        {
            return RecordBatch.describe(status);
        }
        if (base != expected)
        {
            return "base offset " + base + " where " + expected + " was expected";
        }
        return "leader epoch " + batchEpoch + " below the previous batch's " + epoch;
    }

    private Segment reopenActive(final Segment sealed) throws IOException
    {
        final SegmentFiles files = sealed.files();
        final int size = sealed.size();
        final long end = sealed.endOffset();
        sealed.close();
        final int offsetEntries = trustedEntries(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH);
        final int timeEntries = trustedEntries(files.timeIndex(), TimeIndex.ENTRY_LENGTH);
        final boolean rebuild = offsetEntries < 0 || timeEntries < 0 ||
            offsetEntries > maxIndexEntries || timeEntries > maxIndexEntries;
        final Segment segment = SegmentOpener.openActive(files, ctx.segmentBytes(), size, maxIndexEntries,
            rebuild ? 0 : offsetEntries, rebuild ? 0 : timeEntries, true);
        if (rebuild)
        {
            note("segment " + files.baseOffset() + ": index rebuilt (more entries than " +
                LogContext.SEGMENT_INDEX_BYTES + " allows, or not whole entries)");
            indexesRebuilt++;
            segment.resetState(size, files.baseOffset(), Long.MIN_VALUE, 0);
            SegmentReplay.replay(segment, 0, size, ctx.indexIntervalBytes(), true, crc, false);
        }
        else
        {
            segment.startTrustedReplay();
            final int entries = segment.offsetIndex().entries();
            SegmentReplay.replay(segment, entries == 0 ? 0 : segment.offsetIndex().positionAt(entries - 1), size,
                ctx.indexIntervalBytes(), false, crc, false);
        }
        segment.resetState(size, end, segment.maxTimestamp(), segmentBytesSinceIndex(segment));
        return segment;
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
