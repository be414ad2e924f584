package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.SpaceReservation;

import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The durability part of a log, as Aeron Archive's {@code RecordingWriter} owns one file-system relationship: it
 * forces segments to disk, advances the recovery point only after the force it describes completed, writes the
 * checkpoint (temp file, fsync, rename, directory fsync), and holds the log's single fail-stop switch: the first
 * fsync, writeback or checkpoint failure takes the log offline for good (a retried fsync can report success after
 * the kernel dropped the dirty pages).
 * <p>
 * <b>Its lock</b> ({@link #lock()}) serialises flushes with each other and with every change of the segment set that
 * must be ordered with the checkpoint (truncation, retention, close). It guards: the forcing of segments and of the
 * directory, the advance of {@link #recoveryPoint()} and the checkpoint file. It is taken before the segment set's
 * lock ({@link LogSegments#lock()}), never after it. The recovery point and the offline cause are volatile, so the
 * getters read them without it.
 */
final class LogFlusher
{
    private static final long CHECKPOINT_WARNING_INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);

    private final Path dir;
    private final FileSync sync;
    private final EpochClock clock;
    private final LogCheckpoint checkpoint;
    private final LogCounters counters;
    private final ErrorRateLimiter checkpointWarnings = new ErrorRateLimiter(CHECKPOINT_WARNING_INTERVAL_NS);
    private final System.Logger logger = System.getLogger(Log.class.getName());
    private final ReentrantLock lock = new ReentrantLock();

    /** Every offset below is on disk (written under the lock; read by anyone). */
    private volatile long recoveryPoint;
    private volatile long lastFlushTimeMs;
    /** A roll happened: the agent flushes the sealed segment (set by the writer, cleared under the lock). */
    private volatile boolean rollFlushPending;
    /** Files were created, renamed or deleted since the last directory fsync. */
    private volatile boolean directoryDirty;
    /** The failure that took the log offline, or null: the one fail-stop switch. */
    private volatile StorageException offlineCause;

    LogFlusher(
        final Path dir,
        final FileSync sync,
        final EpochClock clock,
        final LogCheckpoint checkpoint,
        final LogCounters counters,
        final long recoveryPoint)
    {
        this.dir = dir;
        this.sync = sync;
        this.clock = clock;
        this.checkpoint = checkpoint;
        this.counters = counters;
        this.recoveryPoint = recoveryPoint;
        this.lastFlushTimeMs = clock.time();
    }

    /** @return the flush lock (see the class comment for what it guards). */
    ReentrantLock lock()
    {
        return lock;
    }

    /** @return every offset below this is flushed to disk. */
    long recoveryPoint()
    {
        return recoveryPoint;
    }

    long lastFlushTimeMs()
    {
        return lastFlushTimeMs;
    }

    /** A segment was added (a roll): the directory needs an fsync and the agent flushes the sealed segment. */
    void segmentAdded()
    {
        directoryDirty = true;
        rollFlushPending = true;
    }

    /** Files were created or deleted: the next flush forces the directory. */
    void directoryChanged()
    {
        directoryDirty = true;
    }

    /** @return whether a roll asked for a flush since the last one; clears the request. Caller holds the lock. */
    boolean takeRollFlushRequest()
    {
        final boolean pending = rollFlushPending;
        rollFlushPending = false;
        return pending;
    }

    boolean rollFlushPending()
    {
        return rollFlushPending;
    }

    /**
     * Force the segments from the one holding the recovery point on (and the sealed ones before it that still need
     * a trim), the directory if it changed, then advance the recovery point and write the checkpoint. Caller holds
     * the lock.
     *
     * @param segments              the segment set now.
     * @param end                   the recovery point once forced.
     * @param logStartOffset        the log start offset to checkpoint.
     * @param always                write the checkpoint even when the recovery point does not move.
     * @param checkpointSpaceThrows whether a checkpoint that cannot be written for lack of space throws
     *                              STORAGE_SPACE; otherwise it is logged (rate-limited) and written by a later flush.
     */
    void forceAndCheckpoint(
        final Segment[] segments,
        final long end,
        final long logStartOffset,
        final boolean always,
        final boolean checkpointSpaceThrows)
    {
        forceAndCheckpoint(segments, segments.length, end, logStartOffset, always, checkpointSpaceThrows);
    }

    /**
     * The flush after a roll: force the sealed segments (all but the last), the directory if it changed, then move
     * the recovery point to the last segment's base offset and write the checkpoint. The data appended to the new
     * segment since the roll is left to the next flush, as Kafka's roll flush does: forcing it here would make the
     * agent wait for the disk again, and write back pages just behind the writer. Caller holds the lock.
     *
     * @param segments       the segment set now.
     * @param logStartOffset the log start offset to checkpoint.
     */
    void forceRolledAndCheckpoint(final Segment[] segments, final long logStartOffset)
    {
        final int last = segments.length - 1;
        forceAndCheckpoint(segments, last, segments[last].baseOffset(), logStartOffset, false, false);
    }

    private void forceAndCheckpoint(
        final Segment[] segments,
        final int count,
        final long end,
        final long logStartOffset,
        final boolean always,
        final boolean checkpointSpaceThrows)
    {
        try
        {
            int from = Math.max(0, LogSegments.floorIndex(segments, recoveryPoint));
            while (from > 0 && segments[from - 1].needsFlush())
            {
                from--; // sealed when the recovery point had already reached its end: trim it and force its indexes
            }
            for (int i = from; i < count; i++)
            {
                final Segment segment = segments[i];
                if (segment.needsFlush())
                {
                    segment.flush(sync, segment.size());
                }
            }
            if (directoryDirty)
            {
                directoryDirty = false;
                sync.forceDirectory(dir);
            }
            lastFlushTimeMs = clock.time();
        }
        catch (final IOException | UncheckedIOException ex)
        {
            throw goOffline("flush failed", ex);
        }
        if (end > recoveryPoint || always)
        {
            recoveryPoint = end; // the data below is on disk; the checkpoint may only lag behind it, which is safe
            counters.recoveryPoint.setRelease(end);
            try
            {
                writeCheckpoint(end, logStartOffset);
            }
            catch (final StorageException ex)
            {
                if (checkpointSpaceThrows || ex.code() != StorageErrorCode.STORAGE_SPACE)
                {
                    throw ex;
                }
                final long leftOut = checkpointWarnings.onOccurrence(System.nanoTime());
                if (leftOut >= 0)
                {
                    logger.log(System.Logger.Level.WARNING, ex.getMessage() + "; the checkpoint lags the flushed " +
                        "data until space is freed (" + leftOut + " such failure(s) not logged since the last one)");
                }
            }
        }
    }

    /**
     * Lower the recovery point to a truncation point, checkpointing it first: a crash during the cut must not find
     * the log ending below the recovery point. Caller holds the lock.
     */
    void lowerTo(final long newEnd, final long logStartOffset)
    {
        if (recoveryPoint > newEnd)
        {
            writeCheckpoint(newEnd, logStartOffset);
            recoveryPoint = newEnd;
            counters.recoveryPoint.setRelease(newEnd);
        }
    }

    /** The log starts again at {@code offset}: everything below it is gone, so it is the recovery point. */
    void restartAt(final long offset)
    {
        recoveryPoint = offset;
    }

    /**
     * Write the checkpoint. A full disk is reported as STORAGE_SPACE and leaves the log online: the checkpoint
     * on disk then lags the real recovery point, which only means more work for recovery. Any other failure
     * takes the log offline.
     */
    void writeCheckpoint(final long checkpointRecoveryPoint, final long checkpointLogStart)
    {
        try
        {
            checkpoint.write(checkpointRecoveryPoint, checkpointLogStart);
        }
        catch (final IOException ex)
        {
            if (SpaceReservation.isOutOfSpace(ex, checkpoint.file()))
            {
                throw new StorageException(StorageErrorCode.STORAGE_SPACE,
                    "no space to write " + checkpoint.file() + "; the data itself is flushed", ex);
            }
            throw goOffline("writing the checkpoint failed", ex);
        }
    }

    /** The checkpoint of a clean close: failures are the caller's to log (the next open recovers). */
    void writeCheckpointOnClose(final long checkpointRecoveryPoint, final long checkpointLogStart) throws IOException
    {
        checkpoint.write(checkpointRecoveryPoint, checkpointLogStart);
    }

    StorageException goOffline(final String what, final Exception cause)
    {
        return takeOffline(what + ": log " + dir + " is now offline (an fsync failure is never retried)", cause);
    }

    /** Take the log offline (the first cause is kept and logged). @return the error to throw. */
    StorageException takeOffline(final String message, final Throwable cause)
    {
        final StorageException failure = new StorageException(StorageErrorCode.IO_ERROR, message, cause);
        if (null == offlineCause)
        {
            offlineCause = failure;
            logger.log(System.Logger.Level.ERROR, failure.getMessage(), cause);
        }
        return failure;
    }

    boolean isOffline()
    {
        return null != offlineCause;
    }

    /** @throws StorageException LOG_OFFLINE when the log is offline. */
    void checkOnline()
    {
        final StorageException cause = offlineCause;
        if (null != cause)
        {
            throw new StorageException(StorageErrorCode.LOG_OFFLINE, "log " + dir + " is offline", cause);
        }
    }
}
