package io.tidemark.store.format;

/**
 * Layout of the small checkpoint files: the framing every one of them shares, and the two kinds of the log
 * directory, {@code log.checkpoint} and {@code log.meta}. All little-endian. A checkpoint file is replaced whole
 * by an atomic rename ({@code CheckpointFile} in the store's {@code file} package), so a reader sees an old or a new
 * version; the CRC32C catches damage of any other kind.
 * <p>
 * <b>Framing</b> (every kind; other modules' checkpoints, the high watermark and the leader epochs, use it too):
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Magic (identifies the kind)               |  0
 *  +---------------------------------------------------------------+
 *  |                         Version (1)                           |  4
 *  +---------------------------------------------------------------+
 *  |                       Fields of the kind                     ...  8
 *  +---------------------------------------------------------------+
 *  |                CRC32C of all preceding bytes                  |  length - 4
 *  +---------------------------------------------------------------+
 * </pre>
 * <b>{@code log.checkpoint}</b>: recovery point and log start offset, written after every flush, retention and
 * truncation.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Magic 'TMCK' (0x4B434D54)                 |  0
 *  +---------------------------------------------------------------+
 *  |                          Version (1)                          |  4
 *  +---------------------------------------------------------------+
 *  |         Recovery Point: every offset below it is on disk      |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                        Log Start Offset                       | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     CRC32C of bytes [0, 24)                   | 24
 *  +---------------------------------------------------------------+
 * </pre>
 * <b>{@code log.meta}</b>: marks a directory as a Tidemark log, written once when the log is created.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Magic 'TMLG' (0x474C4D54)                 |  0
 *  +---------------------------------------------------------------+
 *  |                          Version (1)                          |  4
 *  +---------------------------------------------------------------+
 *  |                 Creation time (epoch millis)                  |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     CRC32C of bytes [0, 16)                   | 16
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class CheckpointDescriptor
{
    /** Offset of the magic number. */
    public static final int MAGIC_OFFSET = 0;
    /** Offset of the version. */
    public static final int VERSION_OFFSET = 4;
    /** Offset of the first field of the kind. */
    public static final int FIELDS_OFFSET = 8;
    /** Length of the trailing CRC32C. */
    public static final int CRC_LENGTH = 4;
    /** Version written. */
    public static final int VERSION = 1;
    /** Suffix of the temporary file a write goes through. */
    public static final String TMP_SUFFIX = ".tmp";

    /** Magic of {@code log.checkpoint}: 'TMCK'. */
    public static final int LOG_CHECKPOINT_MAGIC = 0x4B434D54;
    /** Offset of the recovery point (long). */
    public static final int RECOVERY_POINT_OFFSET = FIELDS_OFFSET;
    /** Offset of the log start offset (long). */
    public static final int LOG_START_OFFSET_OFFSET = RECOVERY_POINT_OFFSET + 8;
    /** Length of {@code log.checkpoint}'s fields. */
    public static final int LOG_CHECKPOINT_FIELDS_LENGTH = 16;
    /** Length of {@code log.checkpoint}. */
    public static final int LOG_CHECKPOINT_LENGTH = FIELDS_OFFSET + LOG_CHECKPOINT_FIELDS_LENGTH + CRC_LENGTH;

    /** Magic of {@code log.meta}: 'TMLG'. */
    public static final int META_MAGIC = 0x474C4D54;
    /** Offset of the creation time (long, epoch millis). */
    public static final int META_CREATION_TIME_OFFSET = FIELDS_OFFSET;
    /** Length of {@code log.meta}'s fields. */
    public static final int META_FIELDS_LENGTH = 8;
    /** Length of {@code log.meta}. */
    public static final int META_LENGTH = FIELDS_OFFSET + META_FIELDS_LENGTH + CRC_LENGTH;

    private CheckpointDescriptor()
    {
    }
}
