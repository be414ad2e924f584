package io.tidemark.store;

import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;

import org.agrona.DirectBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A segment's replay of the batches in its mapping when it is loaded or truncated: the store's one batch scanner
 * ({@link BatchScanner}) walks them, and each batch it accepts is applied to the segment (end offset, max timestamp,
 * last epoch, index schedule, and index entries when the indexes are being rebuilt). Damage does not end the walk: the
 * scanner resumes at the next batch that validates with its CRC and does not go back in offsets, and that batch gets an
 * index entry so that the offsets after the damage stay reachable.
 * <p>
 * Threads: the log's writer (or its loader), before readers see the segment or while the log holds them off. One
 * instance per replay; it holds the segment only for that call.
 */
final class SegmentReplay implements BatchScanner.Visitor
{
    private final Segment segment;
    private final DirectBuffer buffer;
    private final int indexIntervalBytes;

    private SegmentReplay(final Segment segment, final int indexIntervalBytes)
    {
        this.segment = segment;
        this.buffer = segment.buffer();
        this.indexIntervalBytes = indexIntervalBytes;
    }

    /**
     * Walk the batches in {@code [from, limit)} (the caller has validated or trusts the content), setting the end
     * offset, max timestamp, last epoch and index schedule, and adding index entries when
     * {@code addIndexEntries}. Used when a segment is loaded. The end offset must already be that of the batch at
     * {@code from} ({@link Segment#startTrustedReplay} or {@link Segment#resetState}).
     * <p>
     * A batch that fails the check (structure, and its CRC when {@code verifyCrc}), or whose base offset does not
     * continue the previous batch, is damage (possible below the recovery point only through corruption of flushed
     * data). It does not end the walk: the bytes stay where they are, reads of them fail with CORRUPT_BATCH, and the
     * walk resumes at the next batch that validates with its CRC and does not go back in offsets; that batch gets an
     * index entry so that the offsets after the damage stay reachable.
     *
     * @return the position at which the walk stopped: {@code limit} (rounded up to the frame alignment when the last
     *         frame's padding lies past it), or the start of damage with no valid batch after it.
     */
    static int replay(
        final Segment segment,
        final int from,
        final int limit,
        final int indexIntervalBytes,
        final boolean addIndexEntries,
        final Crc32c crc,
        final boolean verifyCrc)
    {
        return replay(new BatchScanner(crc, Integer.MAX_VALUE), segment, from, limit, indexIntervalBytes,
            addIndexEntries, verifyCrc);
    }

    /**
     * As {@link #replay}, from the start to {@code limit}, adding index entries, over bytes a recovery walk has just
     * validated (frame, offsets and records of every batch, the CRC where the walk checks it: above the recovery
     * point and in the last segment; the full replay never checked it either; no damage found) with the log directory
     * locked: each batch's frame and offsets are checked again, its records are not parsed a second time. The
     * records' parse was most of a restarted host's recovery time (a profile of 148 MiB, 1.2 million records).
     *
     * @return as {@link #replay}.
     */
    static int replayValidated(final Segment segment, final int limit, final int indexIntervalBytes, final Crc32c crc)
    {
        return replay(new BatchScanner(crc, Integer.MAX_VALUE).recordsValidated(), segment, 0, limit,
            indexIntervalBytes, true, false);
    }

    private static int replay(
        final BatchScanner scanner,
        final Segment segment,
        final int from,
        final int limit,
        final int indexIntervalBytes,
        final boolean addIndexEntries,
        final boolean verifyCrc)
    {
        final SegmentReplay replay =
            new SegmentReplay(segment, addIndexEntries ? indexIntervalBytes : Integer.MAX_VALUE);
        try
        {
            return (int)scanner.walk(BatchScanner.mapped(segment.buffer(), limit), from, segment.endOffset(), verifyCrc,
                true, replay);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex); // a mapping is not read through I/O calls
        }
    }

    /** A batch accepted at {@code position}: the one after damage gets an index entry. */
    @Override
    public boolean onBatch(final long at, final DirectBuffer batch, final int index, final boolean resumed)
    {
        final int position = (int)at;
        final int frameLength = RecordBatchDescriptor.frameLength(buffer.getInt(position));
        final long base = buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
        final long next = base + buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
        final OffsetIndex offsetIndex = segment.offsetIndex();
        if (resumed && !offsetIndex.isFull() &&
            (offsetIndex.entries() == 0 || offsetIndex.offsetAt(offsetIndex.entries() - 1) < base))
        {
            offsetIndex.append(base, position);
        }
        // Integer.MAX_VALUE bytes never pass in a segment: the schedule and max timestamp move, no entry is added.
        segment.indexBatch(position, frameLength, base,
            buffer.getLong(position + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET), indexIntervalBytes);
        segment.replayed(next, buffer.getLong(position + RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET),
            buffer.getInt(position + RecordBatchDescriptor.LEADER_EPOCH_OFFSET));
        return true;
    }

    @Override
    public boolean onDamage(
        final long position,
        final int status,
        final long expected,
        final DirectBuffer batch,
        final int index,
        final int available)
    {
        segment.replayedDamage();
        return true;
    }
}
