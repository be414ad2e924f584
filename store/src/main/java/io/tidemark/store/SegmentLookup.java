package io.tidemark.store;

import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reader side of one segment: where in its data the batch holding an offset starts, found through the segment's
 * {@link OffsetIndex} and a walk of batch headers from the entry at or below it. When an index entry turns out not to
 * point at the batch it names (a wrong block of a flushed index file), the lookup rebuilds the index in memory from
 * the data ({@link RebuiltOffsetIndex}), removes the index file so that the next open rebuilds it too, and goes on
 * with the rebuilt one.
 * <p>
 * Threads: any reader, without locks on the lookup path. {@link #lock} guards the one-time rebuild only; the rebuilt
 * index is published through a volatile field and replaced (not changed) by a truncation ({@link #truncatedTo}, on the
 * writer thread while the log holds readers off). The segment owns the mapping and the index; this class borrows them
 * and writes nothing to either.
 */
final class SegmentLookup
{
    /** {@link #positionOf} found the index file wrong and rebuilt the index: look up again. */
    static final int REBUILT = -2;

    private final UnsafeBuffer buffer;
    private final long baseOffset;
    private final OffsetIndex offsetIndex;
    private final Path offsetIndexFile;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile RebuiltOffsetIndex rebuiltIndex;

    SegmentLookup(final UnsafeBuffer buffer, final long baseOffset, final OffsetIndex offsetIndex,
        final Path offsetIndexFile)
    {
        this.buffer = buffer;
        this.baseOffset = baseOffset;
        this.offsetIndex = offsetIndex;
        this.offsetIndexFile = offsetIndexFile;
    }

    /**
     * Find the batch holding an offset: from the index entry at or below it, walk the batch headers. A header that
     * does not fit (length, record count, or a base offset that does not continue the previous batch), or a batch
     * found to hold the offset whose records do not parse to its record count and length, is damage:
     * the walk checks which batch is damaged by CRC (the one before may carry a wrong length) and resumes at the
     * next batch that validates with its CRC, so damage hides only its own offsets.
     *
     * <p>
     * The index entry the walk starts from must point at the batch it names: one that does not is found here, the
     * index is rebuilt from the log ({@link RebuiltOffsetIndex}) and {@link #REBUILT} returned, so that the caller
     * looks up again (at the size it then reads) with the rebuilt index.
     *
     * @param targetOffset an offset of this segment.
     * @param limit        the segment's published size.
     * @return position of the batch holding {@code targetOffset}, {@code limit} if it is at or past the end,
     *         -1 when it lies in damaged bytes, or {@link #REBUILT}.
     */
    int positionOf(final long targetOffset, final int limit)
    {
        final int entry = offsetIndex.floorEntry(targetOffset);
        final int filePosition = entry < 0 ? 0 : offsetIndex.positionAt(entry);
        final long fileOffset = entry < 0 ? baseOffset : offsetIndex.offsetAt(entry);
        final RebuiltOffsetIndex rebuilt = rebuiltIndex;
        int position = filePosition;
        long expected = fileOffset;
        if (null == rebuilt)
        {
            if (entry >= 0 && position < limit && !startsBatch(position, expected, limit))
            {
                rebuildOffsetIndex(limit, entry, expected, position);
                return REBUILT;
            }
        }
        else
        {
            final int rebuiltEntry = rebuilt.floorEntry(targetOffset);
            position = rebuiltEntry < 0 ? 0 : rebuilt.positionAt(rebuiltEntry);
            expected = rebuiltEntry < 0 ? baseOffset : rebuilt.offsetAt(rebuiltEntry);
            if (entry >= 0 && fileOffset > expected && filePosition >= rebuilt.coveredSize() && filePosition < limit &&
                startsBatch(filePosition, fileOffset, limit))
            {
                position = filePosition; // an entry the writer added after the rebuild, past what it covers
                expected = fileOffset;
            }
        }
        int previous = -1;
        long previousBase = expected;
        while (position < limit)
        {
            final int length = limit - position >= RecordBatchDescriptor.HEADER_LENGTH ? buffer.getInt(position) : 0;
            final int count = length > 0 ?
                buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET) : 0;
            final long base = length > 0 ? buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : -1;
            final boolean damaged = length < RecordBatchDescriptor.HEADER_LENGTH || length > limit - position ||
                count <= 0 || base != expected || (base + count > targetOffset &&
                RecordBatch.validate(buffer, position, limit - position, Integer.MAX_VALUE, null) != RecordBatch.VALID);
            if (damaged)
            {
                final Crc32c crc = new Crc32c(); // damage is rare: no per-reader state for it
                int damagedAt = position;
                long damagedFrom = expected;
                if (previous >= 0 && RecordBatch.validate(buffer, previous, limit - previous, Integer.MAX_VALUE, crc) !=
                    RecordBatch.VALID)
                {
                    damagedAt = previous;
                    damagedFrom = previousBase;
                }
                final int next = resync(buffer, damagedAt + RecordBatchDescriptor.FRAME_ALIGNMENT, limit, crc,
                    damagedFrom);
                if (next < 0)
                {
                    return -1;
                }
                final long nextBase = buffer.getLong(next + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                if (targetOffset < nextBase)
                {
                    return -1;
                }
                position = next;
                expected = nextBase;
                previous = -1;
                continue;
            }
            final long next = base + count;
            if (next > targetOffset)
            {
                return position;
            }
            previous = position;
            previousBase = base;
            expected = next;
            position += RecordBatchDescriptor.frameLength(length);
        }
        return limit;
    }

    /**
     * @param minBase the least base offset the batch may have (the end offset before the damage).
     * @return the first position at or after {@code from} (8-aligned) holding a batch that validates with its
     *         CRC and starts at or above {@code minBase}, or -1.
     */
    static int resync(
        final DirectBuffer buffer, final int from, final int limit, final Crc32c crc, final long minBase)
    {
        try
        {
            return (int)new BatchScanner(crc, Integer.MAX_VALUE).resync(BatchScanner.mapped(buffer, limit), from,
                minBase);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex); // a mapping is not read through I/O calls
        }
    }

    /** @return whether the batch at {@code position} is whole below {@code limit} and starts at {@code offset}. */
    private boolean startsBatch(final int position, final long offset, final int limit)
    {
        if (limit - position < RecordBatchDescriptor.HEADER_LENGTH)
        {
            return false;
        }
        final int length = buffer.getInt(position);
        return length >= RecordBatchDescriptor.HEADER_LENGTH && length <= limit - position &&
            buffer.getByte(position + RecordBatchDescriptor.MAGIC_OFFSET) == RecordBatchDescriptor.MAGIC &&
            buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET) > 0 &&
            buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) == offset;
    }

    /**
     * A lookup found an index entry that does not point at its batch: rebuild the index in memory from the log (once;
     * any thread, under {@link #lock}), and remove the index file so that the next open rebuilds it too.
     */
    private void rebuildOffsetIndex(final int limit, final int entry, final long offset, final int position)
    {
        lock.lock();
        try
        {
            if (null != rebuiltIndex)
            {
                return;
            }
            rebuiltIndex = RebuiltOffsetIndex.build(buffer, baseOffset, limit);
        }
        finally
        {
            lock.unlock();
        }
        final System.Logger logger = System.getLogger(Log.class.getName());
        logger.log(System.Logger.Level.WARNING, offsetIndexFile + ": entry " + entry + " names offset " + offset +
            " at position " + position + ", which does not hold that batch: the index is rebuilt from the log, and " +
            "the file removed so that the next open rebuilds it");
        try
        {
            Files.deleteIfExists(offsetIndexFile);
        }
        catch (final IOException ex)
        {
            logger.log(System.Logger.Level.WARNING, "could not remove " + offsetIndexFile, ex);
        }
    }

    /** @return whether a lookup found the offset index file wrong and rebuilt the index in memory (and removed it). */
    boolean offsetIndexRebuilt()
    {
        return null != rebuiltIndex;
    }

    /** The segment was truncated to {@code newSize} bytes ending at {@code newEndOffset} (writer thread). */
    void truncatedTo(final long newEndOffset, final int newSize)
    {
        final RebuiltOffsetIndex rebuilt = rebuiltIndex;
        if (null != rebuilt)
        {
            rebuiltIndex = rebuilt.truncatedTo(newEndOffset, newSize);
        }
    }
}
