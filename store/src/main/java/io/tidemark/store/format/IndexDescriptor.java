package io.tidemark.store.format;

/**
 * Layout of a segment's two index files, {@code <base>.index} and {@code <base>.timeindex}: fixed-size entries,
 * little-endian, from byte 0, with no header and no checksum (after an unclean shutdown the indexes of every
 * re-validated segment are rebuilt from the log). Offsets are relative to the segment's base offset. Entries
 * strictly increase in both fields; the bytes after the last entry are zeros (reserved ahead of the writer).
 * <p>
 * <b>Offset index</b> ({@code .index}): from offset to file position. A lookup returns the position of the last
 * indexed batch whose base offset is at or below the target; the reader scans forward from there.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |        Relative Offset (base offset of an indexed batch)      |  0
 *  +---------------------------------------------------------------+
 *  |               Position of that batch in the .log              |  4
 *  +---------------------------------------------------------------+
 * </pre>
 * <b>Time index</b> ({@code .timeindex}): from timestamp to offset. An entry {@code (T, O)} states that every record
 * of the segment below offset {@code O} has a timestamp at most {@code T}; an entry is only added when the segment's
 * max timestamp grew, and a sealed segment ends with {@code (max timestamp, end offset)}.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |         Timestamp: max timestamp of all records before        |  0
 *  |                        the offset below                       |
 *  +---------------------------------------------------------------+
 *  |                        Relative Offset                        |  8
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class IndexDescriptor
{
    /** Length of an offset index entry. */
    public static final int OFFSET_INDEX_ENTRY_LENGTH = 8;
    /** Offset in an offset index entry of the relative offset (int). */
    public static final int OFFSET_INDEX_RELATIVE_OFFSET_OFFSET = 0;
    /** Offset in an offset index entry of the batch's position in the segment (int). */
    public static final int OFFSET_INDEX_POSITION_OFFSET = 4;

    /** Length of a time index entry. */
    public static final int TIME_INDEX_ENTRY_LENGTH = 12;
    /** Offset in a time index entry of the timestamp (long, epoch millis). */
    public static final int TIME_INDEX_TIMESTAMP_OFFSET = 0;
    /** Offset in a time index entry of the relative offset (int). */
    public static final int TIME_INDEX_RELATIVE_OFFSET_OFFSET = 8;

    private IndexDescriptor()
    {
    }
}
