package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.LogFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

import static io.tidemark.store.format.CheckpointDescriptor.LOG_CHECKPOINT_FIELDS_LENGTH;
import static io.tidemark.store.format.CheckpointDescriptor.LOG_CHECKPOINT_LENGTH;
import static io.tidemark.store.format.CheckpointDescriptor.LOG_CHECKPOINT_MAGIC;
import static io.tidemark.store.format.CheckpointDescriptor.LOG_START_OFFSET_OFFSET;
import static io.tidemark.store.format.CheckpointDescriptor.RECOVERY_POINT_OFFSET;

/**
 * The log's checkpoint file, {@code log.checkpoint}: recovery point and log start offset, written atomically
 * (see {@link CheckpointFile}) after every flush, retention and truncation.
 * Layout: {@link CheckpointDescriptor}.
 * Not thread-safe: the log serializes writes under its flush lock.
 */
final class LogCheckpoint
{
    private final Path file;
    private final FileSync sync;
    private final ByteBuffer buffer = CheckpointFile.allocate(LOG_CHECKPOINT_MAGIC, LOG_CHECKPOINT_FIELDS_LENGTH);
    private long recoveryPoint;
    private long logStartOffset;

    LogCheckpoint(final Path dir, final FileSync sync)
    {
        this.file = dir.resolve(LogFiles.CHECKPOINT_FILE);
        this.sync = sync;
    }

    /**
     * @return whether the checkpoint was read, missing or corrupt; when not OK both values are -1.
     */
    CheckpointFile.Status read() throws IOException
    {
        final ByteBuffer in = ByteBuffer.allocate(LOG_CHECKPOINT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final CheckpointFile.Status status = CheckpointFile.read(file, LOG_CHECKPOINT_MAGIC, in);
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
