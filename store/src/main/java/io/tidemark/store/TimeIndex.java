package io.tidemark.store;

import io.tidemark.store.format.IndexDescriptor;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Sparse index from timestamp to offset within one segment ({@code <base>.timeindex}).
 * Layout: {@link IndexDescriptor}.
 * An entry {@code (T, O)} states that every record of the segment below offset {@code O} has a timestamp at most
 * {@code T}. Entries strictly increase in both fields; an entry is only added when the segment's max timestamp
 * grew. To find the first record with timestamp {@code >= t}, start scanning at the offset of the last entry with
 * {@code T < t}: nothing before it can match. When a segment is sealed a final entry {@code (max timestamp, end
 * offset)} records the segment's max timestamp.
 * <p>
 * Single writer; lock-free concurrent lookups.
 */
final class TimeIndex
{
    /** Length of an entry. */
    static final int ENTRY_LENGTH = IndexDescriptor.TIME_INDEX_ENTRY_LENGTH;
    private static final int TIMESTAMP_OFFSET = IndexDescriptor.TIME_INDEX_TIMESTAMP_OFFSET;
    private static final int RELATIVE_OFFSET_OFFSET = IndexDescriptor.TIME_INDEX_RELATIVE_OFFSET_OFFSET;

    private final IndexFile file;
    private final long baseOffset;

    TimeIndex(final IndexFile file, final long baseOffset)
    {
        this.file = file;
        this.baseOffset = baseOffset;
    }

    IndexFile file()
    {
        return file;
    }

    int entries()
    {
        return file.entries();
    }

    boolean isFull()
    {
        return file.isFull();
    }

    long timestampAt(final int entry)
    {
        return file.buffer().getLong(entry * ENTRY_LENGTH + TIMESTAMP_OFFSET);
    }

    long offsetAt(final int entry)
    {
        return baseOffset + file.buffer().getInt(entry * ENTRY_LENGTH + RELATIVE_OFFSET_OFFSET);
    }

    /** @return the timestamp of the last entry, or {@link Long#MIN_VALUE} when empty. */
    long lastTimestamp()
    {
        final int n = file.entries();
        return n == 0 ? Long.MIN_VALUE : timestampAt(n - 1);
    }

    /** @return the offset of the last entry, or the base offset when empty. */
    long lastOffset()
    {
        final int n = file.entries();
        return n == 0 ? baseOffset : offsetAt(n - 1);
    }

    /**
     * Add {@code (timestamp, offset)} if it strictly advances both fields and there is room.
     *
     * @return true when the entry was added.
     */
    boolean maybeAppend(final long timestamp, final long offset)
    {
        final int n = file.entries();
        if (n >= file.maxEntries() || (n > 0 && (timestamp <= timestampAt(n - 1) || offset <= offsetAt(n - 1))))
        {
            return false;
        }
        final UnsafeBuffer buffer = file.buffer();
        buffer.putLong(n * ENTRY_LENGTH + TIMESTAMP_OFFSET, timestamp);
        buffer.putInt(n * ENTRY_LENGTH + RELATIVE_OFFSET_OFFSET, (int)(offset - baseOffset));
        file.publishEntry();
        return true;
    }

    /**
     * @param timestamp the timestamp looked for.
     * @return an offset from which to scan for the first record with a timestamp {@code >= timestamp}.
     */
    long lookup(final long timestamp)
    {
        int low = 0;
        int high = file.entries() - 1;
        long result = baseOffset;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (timestampAt(mid) < timestamp)
            {
                result = offsetAt(mid);
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        return result;
    }

    /** Drop every entry whose offset is above {@code offset} (their claim no longer holds after truncation). */
    void truncateToOffset(final long offset)
    {
        int keep = file.entries();
        while (keep > 0 && offsetAt(keep - 1) > offset)
        {
            keep--;
        }
        file.truncateEntries(keep);
    }

    /**
     * @param endOffset the segment's end offset.
     * @return null when the entries are consistent, else what is wrong.
     */
    String check(final long endOffset)
    {
        long previousTimestamp = Long.MIN_VALUE;
        long previousOffset = baseOffset - 1;
        for (int i = 0, n = file.entries(); i < n; i++)
        {
            final long timestamp = timestampAt(i);
            final long offset = offsetAt(i);
            if ((i > 0 && timestamp <= previousTimestamp) || offset <= previousOffset || offset > endOffset)
            {
                return "entry " + i + " (timestamp " + timestamp + ", offset " + offset + ") is out of order or " +
                    "beyond the end offset " + endOffset;
            }
            previousTimestamp = timestamp;
            previousOffset = offset;
        }
        return null;
    }
}
