package io.tidemark.store;

import io.tidemark.store.file.CountersFile;
import io.tidemark.store.file.SpaceReservation;
import io.tidemark.store.format.LogFiles;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A log's positions as Agrona counters: log end offset, recovery point (flushed offset), log start offset and
 * segment count. Allocated from the application's {@link CountersManager} when it gives one, otherwise from a
 * {@link CountersFile} in the log directory ({@code counters.dat}) that tools read from outside the process.
 * <p>
 * Updated by the log's threads with ordered writes; read by anyone.
 */
final class LogCounters implements AutoCloseable
{
    /** Counter type id: log end offset. */
    static final int LOG_END_OFFSET_TYPE_ID = 1001;
    /** Counter type id: recovery point (everything below is flushed). */
    static final int RECOVERY_POINT_TYPE_ID = 1002;
    /** Counter type id: log start offset. */
    static final int LOG_START_OFFSET_TYPE_ID = 1003;
    /** Counter type id: number of segments. */
    static final int SEGMENT_COUNT_TYPE_ID = 1004;
    private static final int OWN_FILE_CAPACITY = 16;

    final AtomicCounter logEndOffset;
    final AtomicCounter recoveryPoint;
    final AtomicCounter logStartOffset;
    final AtomicCounter segmentCount;
    private final CountersFile ownFile;

    private LogCounters(final CountersManager manager, final String name, final CountersFile ownFile)
    {
        this.ownFile = ownFile;
        this.logEndOffset = manager.newCounter("log-end-offset: " + name, LOG_END_OFFSET_TYPE_ID);
        this.recoveryPoint = manager.newCounter("recovery-point: " + name, RECOVERY_POINT_TYPE_ID);
        this.logStartOffset = manager.newCounter("log-start-offset: " + name, LOG_START_OFFSET_TYPE_ID);
        this.segmentCount = manager.newCounter("segment-count: " + name, SEGMENT_COUNT_TYPE_ID);
    }

    static LogCounters create(final LogContext ctx, final long nowMs)
    {
        final String name = ctx.logDir().toAbsolutePath().normalize().toString();
        if (null != ctx.countersManager())
        {
            return new LogCounters(ctx.countersManager(), name, null);
        }
        final Path path = ctx.logDir().resolve(LogFiles.COUNTERS_FILE);
        try
        {
            final CountersFile file = CountersFile.create(path, OWN_FILE_CAPACITY, nowMs);
            return new LogCounters(file.manager(), name, file);
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, path);
        }
    }

    @Override
    public void close()
    {
        logEndOffset.close();
        recoveryPoint.close();
        logStartOffset.close();
        segmentCount.close();
        if (null != ownFile)
        {
            ownFile.close();
        }
    }
}
