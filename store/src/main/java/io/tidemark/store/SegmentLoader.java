package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.FileWindow;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.BatchValidator;
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
import java.util.function.Consumer;

/**
 * Loads one segment of a log being opened, for {@link LogLoader}: a trusted one (below the segment holding the
 * recovery point, or any after a clean shutdown) by its indexes, sanity-checked and rebuilt when they fail, and the
 * CRC-checked tail after the last index entry ({@link #loadTrustedSealed}, {@link #loadTrustedActive},
 * {@link #reopenActive}); any other by re-validating every batch of its file through positional reads with the
 * store's one batch scanner ({@link #recover}, as Kafka's {@code LogSegment.recover}), truncating a torn tail above
 * the recovery point and keeping damage below it in place. Indexes of recovered segments are rebuilt by
 * {@link SegmentReplay}, the same scanner over the mapping.
 * <p>
 * It counts what it scanned, truncated and rebuilt for the {@link RecoveryReport}, and reports what it found through
 * the loader's notes. Single use, on the opening thread.
 */
final class SegmentLoader
{
    private final LogContext ctx;
    private final FileSync sync;
    private final int maxIndexEntries;
    private final Crc32c crc = new Crc32c();
    private final BatchScanner scanner;
    private final Consumer<String> notes;

    private int segmentsRecovered;
    private long batchesScanned;
    private long recordsScanned;
    private long bytesScanned;
    private long bytesTruncated;
    private int indexesRebuilt;
    private boolean modified;

    /**
     * @param notes where a finding goes (the loader records it in the report and logs it).
     */
    SegmentLoader(final LogContext ctx, final int maxIndexEntries, final Consumer<String> notes)
    {
        this.ctx = ctx;
        this.sync = ctx.fileSync();
        this.maxIndexEntries = maxIndexEntries;
        this.notes = notes;
        this.scanner = new BatchScanner(crc, maxBatchLength());
    }

    /** @return segments re-validated batch by batch. */
    int segmentsRecovered()
    {
        return segmentsRecovered;
    }

    long batchesScanned()
    {
        return batchesScanned;
    }

    long recordsScanned()
    {
        return recordsScanned;
    }

    long bytesScanned()
    {
        return bytesScanned;
    }

    long bytesTruncated()
    {
        return bytesTruncated;
    }

    int indexesRebuilt()
    {
        return indexesRebuilt;
    }

    /** @return whether a file was changed (a trim, a truncation, a rebuilt index, a re-validated segment). */
    boolean modified()
    {
        return modified;
    }

    Segment loadTrustedSealed(final SegmentFiles files, final long nextBase) throws IOException
    {
        final String untrimmed = SegmentTail.trim(files, maxBatchLength(), crc, sync); // before anything maps them
        if (null != untrimmed)
        {
            notes.accept(untrimmed);
            modified = true;
        }
        final boolean wholeFiles = trustedEntries(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH) >= 0 &&
            trustedEntries(files.timeIndex(), TimeIndex.ENTRY_LENGTH) >= 0;
        Segment segment = SegmentOpener.openSealed(files, maxIndexEntries, !wholeFiles);
        final String problem = wholeFiles ? checkIndexes(segment, nextBase) : "missing or not whole entries";
        final int end;
        if (null != problem)
        {
            notes.accept("segment " + files.baseOffset() + ": index rebuilt (" + problem + ")");
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
            notes.accept("segment " + files.baseOffset() + " (below the recovery point): damaged batch(es) kept in " +
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

    Segment loadTrustedActive(final SegmentFiles files) throws IOException
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
            notes.accept("segment " + files.baseOffset() + ": index rebuilt (" + problem + ")");
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
            notes.accept("segment " + files.baseOffset() + ": damaged batch in the last segment; re-validating it");
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
    static final class Recovered
    {
        final Segment segment;
        final boolean truncated;

        Recovered(final Segment segment, final boolean truncated)
        {
            this.segment = segment;
            this.truncated = truncated;
        }
    }

    Recovered recover(
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
            notes.accept("segment " + files.baseOffset() + ": truncated at position " + validEnd + " (" + walk.reason +
                "), " + (walk.dataEnd - validEnd) + " bytes dropped");
        }
        indexesRebuilt++;
        final Segment segment;
        if (last || truncated)
        {
            segment = SegmentOpener.openActive(files, ctx.segmentBytes(), validEnd, maxIndexEntries, 0, 0, true);
            segment.resetState(validEnd, files.baseOffset(), Long.MIN_VALUE, 0);
            replayRecovered(segment, validEnd, walk);
            segment.resetState(validEnd, walk.endOffset, segment.maxTimestamp(), segmentBytesSinceIndex(segment));
            // re-validated from the page cache, not known to be on disk: the next flush forces it all (a recovery
            // point moved past it without that force would claim flushed what a power loss can still take)
            segment.markUnflushed();
        }
        else
        {
            try (RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "rw"))
            {
                if (file.length() != validEnd)
                {
                    file.setLength(validEnd);
                }
                // above the recovery point, so not known to be on disk; opened read-only and so never forced by a
                // flush (see Segment#markUnflushed for the active one)
                sync.force(file.getChannel(), true);
            }
            segment = SegmentOpener.openSealed(files, maxIndexEntries, true);
            replayRecovered(segment, segment.size(), walk);
            segment.resetState(segment.size(), walk.endOffset, segment.maxTimestamp(), 0);
            segment.trimIndexes(sync);
        }
        return new Recovered(segment, truncated);
    }

    /**
     * Rebuild a recovered segment's state and indexes from its data: without parsing the records again when the walk
     * validated every batch below {@code limit} (frame, offsets, records) and found no damage (the directory is
     * locked, so the bytes are those it read); with the full check where it stepped over damage, so that the replay
     * steps over the same.
     */
    private void replayRecovered(final Segment segment, final int limit, final Walk walk)
    {
        if (walk.damaged)
        {
            SegmentReplay.replay(segment, 0, limit, ctx.indexIntervalBytes(), true, crc, false);
        }
        else
        {
            SegmentReplay.replayValidated(segment, limit, ctx.indexIntervalBytes(), crc);
        }
    }

    /** Where a recovery walk of one segment file ended. */
    private static final class Walk
    {
        int validEnd;
        long endOffset;
        long dataEnd;
        String reason;
        /** Whether the walk met anything but whole, valid batches below where the data ends. */
        boolean damaged;
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
            walk.damaged = true; // below the recovery point: damage kept in place, or flushed data that ends early
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
                notes.accept("segment " + files.baseOffset() + ": damaged batch(es) at positions [" + position +
                    ", " + next + ") below the recovery point kept in place (" + RecordBatch.describe(status) +
                    "); reading offsets [" + expected + ", " + Math.min(nextBase, recoveryPoint) +
                    ") fails with CORRUPT_BATCH");
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
                    notes.accept("segment " + files.baseOffset() + ": damaged batch at position " + position +
                        " below the recovery point kept in place (" + RecordBatch.describe(status) +
                        "); reading offsets [" + expected + ", " + (expected + count) + ") fails with CORRUPT_BATCH");
                    expected += count;
                    position += RecordBatchDescriptor.frameLength(claimed);
                    continue;
                }
                walk.reason = "no batch at offset " + expected + ", below the recovery point " + recoveryPoint +
                    " (" + RecordBatch.describe(status) + "): flushed data is missing";
                break;
            }
            final long damageEnd = scanner.dataEnd(window, position);
            notes.accept("segment " + files.baseOffset() + ": damaged bytes [" + position + ", " + damageEnd +
                ") at the end of the data, below the recovery point, kept in place (" +
                RecordBatch.describe(status) + "); reading offsets [" + expected + ", " + recoveryPoint +
                ") fails with CORRUPT_BATCH");
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

    Segment reopenActive(final Segment sealed) throws IOException
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
            notes.accept("segment " + files.baseOffset() + ": index rebuilt (more entries than " +
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
}
