package io.tidemark.store;

import io.tidemark.store.format.IndexDescriptor;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Sparse index from offset to file position within one segment ({@code <base>.index}).
 * Layout: {@link IndexDescriptor}.
 * Entries strictly increase in both fields. A lookup returns the position of the last indexed batch whose base
 * offset is at or below the target; the caller scans forward from there. Indexes carry no checksum: after an
 * unclean shutdown the indexes of every re-validated segment are rebuilt from the log.
 * <p>
 * Single writer; lock-free concurrent lookups.
 */
final class OffsetIndex
{
    /** Length of an entry. */
    static final int ENTRY_LENGTH = IndexDescriptor.OFFSET_INDEX_ENTRY_LENGTH;
    private static final int RELATIVE_OFFSET_OFFSET = IndexDescriptor.OFFSET_INDEX_RELATIVE_OFFSET_OFFSET;
    private static final int POSITION_OFFSET = IndexDescriptor.OFFSET_INDEX_POSITION_OFFSET;

    private final IndexFile file;
    private final long baseOffset;

    OffsetIndex(final IndexFile file, final long baseOffset)
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

    long offsetAt(final int entry)
    {
        return baseOffset + file.buffer().getInt(entry * ENTRY_LENGTH + RELATIVE_OFFSET_OFFSET);
    }

    int positionAt(final int entry)
    {
        return file.buffer().getInt(entry * ENTRY_LENGTH + POSITION_OFFSET);
    }

    /**
     * Append an entry. The caller guarantees room ({@link #isFull()}) and strictly increasing arguments.
     */
    void append(final long offset, final int position)
    {
        final int entry = file.entries();
        final UnsafeBuffer buffer = file.buffer();
        buffer.putInt(entry * ENTRY_LENGTH + RELATIVE_OFFSET_OFFSET, (int)(offset - baseOffset));
        buffer.putInt(entry * ENTRY_LENGTH + POSITION_OFFSET, position);
        file.publishEntry();
    }

    /**
     * @param targetOffset the offset looked for.
     * @return the position of the last indexed batch with base offset {@code <= targetOffset}, or 0.
     */
    int lookup(final long targetOffset)
    {
        final int entry = floorEntry(targetOffset);
        return entry < 0 ? 0 : positionAt(entry);
    }

    /**
     * @return index of the last entry with offset {@code <= targetOffset}, or -1.
     */
    int floorEntry(final long targetOffset)
    {
        int low = 0;
        int high = file.entries() - 1;
        int result = -1;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (offsetAt(mid) <= targetOffset)
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

    /** Drop every entry at or above {@code offset}. */
    void truncateToOffset(final long offset)
    {
        file.truncateEntries(floorEntry(offset - 1) + 1);
    }

    /**
     * @param logSize size of the segment's log data.
     * @return null when the entries are consistent with a log of that size, else what is wrong.
     */
    String check(final int logSize)
    {
        long previousOffset = baseOffset - 1;
        int previousPosition = -1;
        for (int i = 0, n = file.entries(); i < n; i++)
        {
            final long offset = offsetAt(i);
            final int position = positionAt(i);
            if (offset <= previousOffset || position <= previousPosition || position >= logSize)
            {
                return "entry " + i + " (offset " + offset + ", position " + position + ") is out of order or " +
                    "beyond the log size " + logSize;
            }
            previousOffset = offset;
            previousPosition = position;
        }
        return null;
    }
}
