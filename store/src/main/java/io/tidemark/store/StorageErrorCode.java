package io.tidemark.store;

/**
 * The reason a {@link StorageException} was raised. Callers branch on the code, never on the message.
 */
public enum StorageErrorCode
{
    /** The file system has no room for the bytes being appended; appends work again once space is freed. */
    STORAGE_SPACE,
    /** An I/O operation failed; if it was a flush, the log is now offline (fail-stop). */
    IO_ERROR,
    /** The log went offline after an earlier fatal I/O error (for example a failed fsync) and accepts nothing. */
    LOG_OFFLINE,
    /** The log directory is held by another process, or is already open in this JVM. */
    LOCKED,
    /** A record batch failed its CRC or structural checks; the bytes are never handed to the caller. */
    CORRUPT_BATCH,
    /** The log's files are inconsistent beyond what recovery may repair (for example a missing segment below the
     * recovery point). */
    CORRUPT_LOG,
    /** The directory exists and holds files, but is not a Tidemark log directory. */
    NOT_A_LOG_DIRECTORY,
    /** A batch given to {@code appendRaw} is malformed, out of order, or carries a stale leader epoch. */
    INVALID_BATCH,
    /** A batch or record is larger than {@code max.message.bytes} (or does not fit in a segment). */
    RECORD_TOO_LARGE,
    /** A read asked for an offset outside {@code [logStartOffset, logEndOffset]}. */
    OFFSET_OUT_OF_RANGE,
    /** The log (or reader) has been closed. */
    CLOSED
}
