package io.tidemark.store;

import org.agrona.concurrent.UnsafeBuffer;

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
     * Walk the batch headers of {@code [0, limit)} from the segment's base offset, one entry every
     * {@link #INTERVAL_BYTES}. Damage (a header that does not fit or does not continue the offsets) is stepped over to
     * the next batch that validates with its CRC, which gets an entry, as the load's replay does.
     */
    static RebuiltOffsetIndex build(final UnsafeBuffer buffer, final long baseOffset, final int limit)
    {
        long[] offsets = new long[16];
        int[] positions = new int[16];
        int count = 0;
        int position = 0;
        long expected = baseOffset;
        int sinceEntry = INTERVAL_BYTES;
        Crc32c crc = null;
        while (position + RecordBatchDescriptor.HEADER_LENGTH <= limit)
        {
            final int length = buffer.getInt(position);
            final boolean fits = length >= RecordBatchDescriptor.HEADER_LENGTH && length <= limit - position &&
                buffer.getByte(position + RecordBatchDescriptor.MAGIC_OFFSET) == RecordBatchDescriptor.MAGIC &&
                buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET) > 0 &&
                buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) == expected;
            if (!fits)
            {
                if (length == 0)
                {
                    break; // the end of the data
                }
                crc = null == crc ? new Crc32c() : crc;
                final int next = Segment.resync(buffer, position + RecordBatchDescriptor.FRAME_ALIGNMENT, limit, crc,
                    expected);
                if (next < 0)
                {
                    break;
                }
                position = next;
                expected = buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                sinceEntry = INTERVAL_BYTES; // the batch after damage gets an entry
                continue;
            }
            if (sinceEntry >= INTERVAL_BYTES)
            {
                if (count == offsets.length)
                {
                    offsets = Arrays.copyOf(offsets, count * 2);
                    positions = Arrays.copyOf(positions, count * 2);
                }
                offsets[count] = expected;
                positions[count] = position;
                count++;
                sinceEntry = 0;
            }
            final int frame = RecordBatchDescriptor.frameLength(length);
            expected += buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
            sinceEntry += frame;
            position += frame;
        }
        return new RebuiltOffsetIndex(offsets, positions, count, position);
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
