package io.tidemark.store.format;

/**
 * Layout of a log's counters file, {@code counters.dat} (little-endian): a header, then Agrona's counters metadata
 * and values buffers, so that a tool in another process can read a running log's positions the way AeronStat reads
 * Aeron's.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Magic 'TMCN' (0x4E434D54)                 |  0
 *  +---------------------------------------------------------------+
 *  |                          Version (1)                          |  4
 *  +---------------------------------------------------------------+
 *  |                     Metadata buffer length                    |  8
 *  +---------------------------------------------------------------+
 *  |                      Values buffer length                     | 12
 *  +---------------------------------------------------------------+
 *  |                   Process id of the writer                    | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Start time (epoch millis)                    | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     (zero up to byte 128)                    ...  32
 *  +---------------------------------------------------------------+
 *  |                 Metadata buffer (Agrona layout)              ... 128
 *  +---------------------------------------------------------------+
 *  |                  Values buffer (Agrona layout)               ...
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class CountersDescriptor
{
    /** Offset of the magic number (written last, with release semantics). */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the version. */
    public static final int VERSION_OFFSET = 4;
    /** Magic number of the file. */
    public static final int MAGIC = 0x4E434D54;
    /** Format version. */
    public static final int VERSION = 1;
    /** Offset of the metadata buffer length. */
    public static final int METADATA_LENGTH_OFFSET = 8;
    /** Offset of the values buffer length. */
    public static final int VALUES_LENGTH_OFFSET = 12;
    /** Offset of the writer's process id. */
    public static final int PID_OFFSET = 16;
    /** Offset of the start time. */
    public static final int START_TIME_OFFSET = 24;
    /** Length of the header. */
    public static final int HEADER_LENGTH = 128;

    private CountersDescriptor()
    {
    }
}
