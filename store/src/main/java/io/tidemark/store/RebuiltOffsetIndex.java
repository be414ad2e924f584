package io.tidemark.store;

import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Arrays;

/**
 * An offset index rebuilt in memory from a segment's log data, after a lookup found an entry of the segment's index
 * file that does not point at the batch it names (a disk that returned a stale or wrong block of a flushed index: the
 * open's sanity check only sees entries that go backwards or past the data). From then on lookups in that segment use
 * this index; the damaged file is removed so that the next open rebuilds it from the log.
 * <p>
 * Immutable once built, published through a volatile field: lock-free lookups as {@link OffsetIndex}.
 */
final class RebuiltOffsetIndex
{
    /** One entry every this many bytes of log data. */
    static final int INTERVAL_BYTES = 4096;

    private final long[] offsets;
    private final int[] positions;
    private final int count;
    private final int coveredSize;

    private RebuiltOffsetIndex(final long[] offsets, final int[] positions, final int count, final int coveredSize)
    {
        this.offsets = offsets;
        this.positions = positions;
        this.count = count;
        this.coveredSize = coveredSize;
    }

    /**
     * Walk the batches of {@code [0, limit)} from the segment's base offset with the store's batch scanner (their
     * structure checked, not their CRC), one entry every {@link #INTERVAL_BYTES}. Damage is stepped over to the next
     * batch that validates with its CRC, which gets an entry, as the load's replay does.
     */
    static RebuiltOffsetIndex build(final UnsafeBuffer buffer, final long baseOffset, final int limit)
    {
        final Builder builder = new Builder();
        final long end;
        try
        {
            end = new BatchScanner(new Crc32c(), Integer.MAX_VALUE).walk(
                BatchScanner.mapped(buffer, limit), 0, baseOffset, false, true, builder);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex); // a mapping is not read through I/O calls
        }
        return new RebuiltOffsetIndex(builder.offsets, builder.positions, builder.count, (int)end);
    }

    /** Collects the entries of a rebuild. */
    private static final class Builder implements BatchScanner.Visitor
    {
        long[] offsets = new long[16];
        int[] positions = new int[16];
        int count;
        int sinceEntry = INTERVAL_BYTES;

        @Override
        public boolean onBatch(final long position, final DirectBuffer buffer, final int index, final boolean resumed)
        {
            if (sinceEntry >= INTERVAL_BYTES || resumed) // the batch after damage gets an entry
            {
                if (count == offsets.length)
                {
                    offsets = Arrays.copyOf(offsets, count * 2);
                    positions = Arrays.copyOf(positions, count * 2);
                }
                offsets[count] = buffer.getLong(index + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                positions[count] = (int)position;
                count++;
                sinceEntry = 0;
            }
            sinceEntry += RecordBatchDescriptor.frameLength(buffer.getInt(index));
            return true;
        }

        @Override
        public boolean onDamage(
            final long position,
            final int status,
            final long expected,
            final DirectBuffer buffer,
            final int index,
            final int available)
        {
            return true;
        }
    }

    /** @return the bytes of log data this index was built over (later appends are found by walking on). */
    int coveredSize()
    {
        return coveredSize;
    }

    /** @return index of the last entry with offset {@code <= targetOffset}, or -1. */
    int floorEntry(final long targetOffset)
    {
        int low = 0;
        int high = count - 1;
        int result = -1;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (offsets[mid] <= targetOffset)
            {
                result = mid;
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        return result;
    }

    long offsetAt(final int entry)
    {
        return offsets[entry];
    }

    int positionAt(final int entry)
    {
        return positions[entry];
    }

    /** @return this index without entries at or above {@code endOffset} (the segment was truncated there). */
    RebuiltOffsetIndex truncatedTo(final long endOffset, final int newSize)
    {
        final int kept = floorEntry(endOffset - 1) + 1;
        return new RebuiltOffsetIndex(offsets, positions, kept, Math.min(coveredSize, newSize));
    }
}
