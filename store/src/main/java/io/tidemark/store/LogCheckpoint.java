package io.tidemark.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * The log's checkpoint file, {@code log.checkpoint}: recovery point and log start offset, written atomically
 * (see {@link CheckpointFile}) after every flush, retention and truncation.
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
 * Not thread-safe: the log serializes writes under its flush lock.
 */
final class LogCheckpoint
{
    static final String FILE_NAME = "log.checkpoint";
    static final int MAGIC = 0x4B434D54;
    static final int RECOVERY_POINT_OFFSET = CheckpointFile.FIELDS_OFFSET;
    static final int LOG_START_OFFSET_OFFSET = RECOVERY_POINT_OFFSET + 8;
    static final int FIELDS_LENGTH = 16;
    static final int LENGTH = CheckpointFile.FIELDS_OFFSET + FIELDS_LENGTH + 4;

    private final Path file;
    private final FileSync sync;
    private final ByteBuffer buffer = CheckpointFile.allocate(MAGIC, FIELDS_LENGTH);
    private long recoveryPoint;
    private long logStartOffset;

    LogCheckpoint(final Path dir, final FileSync sync)
    {
        this.file = dir.resolve(FILE_NAME);
        this.sync = sync;
    }

    /**
     * @return whether the checkpoint was read, missing or corrupt; when not OK both values are -1.
     */
    CheckpointFile.Status read() throws IOException
    {
        final ByteBuffer in = ByteBuffer.allocate(LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final CheckpointFile.Status status = CheckpointFile.read(file, MAGIC, in);
        if (status == CheckpointFile.Status.OK)
        {
            recoveryPoint = in.getLong(RECOVERY_POINT_OFFSET);
            logStartOffset = in.getLong(LOG_START_OFFSET_OFFSET);
            if (recoveryPoint < 0 || logStartOffset < 0)
            {
                recoveryPoint = -1;
                logStartOffset = -1;
                return CheckpointFile.Status.CORRUPT;
            }
        }
        else
        {
            recoveryPoint = -1;
            logStartOffset = -1;
        }
        return status;
    }

    void write(final long recoveryPoint, final long logStartOffset) throws IOException
    {
        buffer.putLong(RECOVERY_POINT_OFFSET, recoveryPoint).putLong(LOG_START_OFFSET_OFFSET, logStartOffset);
        CheckpointFile.write(file, buffer, sync);
        this.recoveryPoint = recoveryPoint;
        this.logStartOffset = logStartOffset;
    }

    long recoveryPoint()
    {
        return recoveryPoint;
    }

    long logStartOffset()
    {
        return logStartOffset;
    }

    Path file()
    {
        return file;
    }
}
