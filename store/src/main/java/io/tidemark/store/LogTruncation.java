package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Truncation of a log: cutting it at an offset (a follower diverging from its leader) and starting it again, empty,
 * at an offset (a follower too far behind). Both run on the writer thread inside the writer's guard, under the
 * flusher's lock and then the segment set's (in that order), and both checkpoint before they cut, so that a crash
 * during one never looks like a loss of flushed data. It owns no state: it changes the segment set, the flusher's
 * recovery point and the writer's position through their own methods.
 */
final class LogTruncation
{
    private final LogContext ctx;
    private final Path dir;
    private final FileSync sync;
    private final int maxIndexEntries;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final LogWriter writer;
    private final LogCounters counters;

    LogTruncation(
        final LogContext ctx,
        final int maxIndexEntries,
        final LogSegments segments,
        final LogFlusher flusher,
        final LogWriter writer,
        final LogCounters counters)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        this.sync = ctx.fileSync();
        this.maxIndexEntries = maxIndexEntries;
        this.segments = segments;
        this.flusher = flusher;
        this.writer = writer;
        this.counters = counters;
    }

    /**
     * The writer call {@link Log#truncateTo}: takes the writer's guard, and cuts the log unless {@code offset} is at or
     * past its end; an offset below the log start starts the log again, empty, there.
     *
     * @return the new log end offset.
     */
    long truncate(final long offset)
    {
        writer.acquire();
        try
        {
            writer.checkOnline();
            if (offset >= writer.logEndOffset())
            {
                return writer.logEndOffset();
            }
            if (offset < segments.logStartOffset())
            {
                startAt(offset);
                return offset;
            }
            return truncateTo(offset);
        }
        finally
        {
            writer.release();
        }
    }

    /** The writer call {@link Log#truncateFullyAndStartAt}: checks the offset, takes the writer's guard, restarts. */
    void truncateFullyAndStartAt(final long offset)
    {
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        if (offset >= Log.MAX_LOG_END_OFFSET)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "cannot start " + dir + " at " + offset +
                ": it leaves no room for a record (the log end offset may not pass " + Log.MAX_LOG_END_OFFSET + ")");
        }
        writer.acquire();
        try
        {
            writer.checkOnline();
            startAt(offset);
        }
        finally
        {
            writer.release();
        }
    }

    /**
     * Cut the log at the start of the batch holding {@code offset} (see {@link Log#truncateTo}). Writer thread,
     * inside the writer's guard.
     *
     * @return the new log end offset.
     */
    private long truncateTo(final long offset)
    {
        flusher.lock().lock();
        segments.lock().lock();
        try
        {
            final Segment[] current = segments.snapshot();
            final int index = LogSegments.floorIndex(current, offset);
            final Segment target = current[index];
            final int position = target.positionOf(offset);
            if (position < 0)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_BATCH,
                    "cannot find the batch holding offset " + offset + " in segment " + target.baseOffset());
            }
            final long newEnd = position < target.size() ?
                target.buffer().getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : target.endOffset();
            // Checkpointed before the cut: a crash during it must not find the log ending below the recovery point.
            flusher.lowerTo(newEnd, segments.logStartOffset());
            writer.truncating(newEnd);
            for (int i = current.length - 1; i > index; i--)
            {
                segments.retire(current[i], true);
            }
            final Segment kept;
            if (target == writer.active())
            {
                final int oldSize = target.size();
                target.resetState(position, newEnd, Long.MIN_VALUE, 0);
                target.zeroTail(position, oldSize, sync);
                kept = target;
            }
            else
            {
                segments.retire(target, false);
                // An index a lookup found wrong (its file removed) is not kept: it is rebuilt from the data below
                final boolean trusted = !target.offsetIndexRebuilt();
                kept = SegmentOpener.openActive(target.files(), ctx.segmentBytes(), position, maxIndexEntries,
                    trusted ? target.offsetIndex().entries() : 0, trusted ? target.timeIndex().entries() : 0, false);
            }
            kept.offsetIndex().truncateToOffset(newEnd);
            kept.timeIndex().truncateToOffset(newEnd);
            kept.startTrustedReplay();
            final int entries = kept.offsetIndex().entries();
            final int from = entries == 0 ? 0 : kept.offsetIndex().positionAt(entries - 1);
            SegmentReplay.replay(kept, from, position, ctx.indexIntervalBytes(), entries == 0 && from < position,
                writer.crc(), false);
            kept.resetState(position, newEnd, kept.maxTimestamp(), position - from);
            final Segment[] updated = Arrays.copyOf(current, index + 1);
            updated[index] = kept;
            segments.replace(updated);
            writer.truncatedTo(kept, lastEpochBefore(updated));
            flusher.directoryChanged();
            forceSegmentsAndCheckpoint(newEnd, true, false);
            segments.reclaimRetired();
            publishCounters();
            return newEnd;
        }
        catch (final IOException ex)
        {
            throw flusher.goOffline("truncation failed", ex);
        }
        finally
        {
            segments.lock().unlock();
            flusher.lock().unlock();
        }
    }

    private int lastEpochBefore(final Segment[] current)
    {
        for (int i = current.length - 1; i >= 0; i--)
        {
            if (!current[i].isEmpty())
            {
                return current[i].lastBatchEpoch();
            }
        }
        return RecordBatchDescriptor.NO_LEADER_EPOCH;
    }

    /**
     * Delete every segment and start the log again, empty, at {@code offset} (see
     * {@link Log#truncateFullyAndStartAt}). Writer thread, inside the writer's guard.
     */
    private void startAt(final long offset)
    {
        flusher.lock().lock();
        segments.lock().lock();
        try
        {
            final Segment[] current = segments.snapshot();
            // Checkpointed first: after a crash during the deletions, the loader finds every old segment below the
            // log start offset and starts the log again, empty, at it.
            flusher.writeCheckpoint(offset, offset);
            writer.truncating(offset);
            for (final Segment segment : current)
            {
                segments.retire(segment, true);
            }
            final Segment fresh = SegmentOpener.openActive(new SegmentFiles(dir, offset), ctx.segmentBytes(), 0,
                maxIndexEntries, 0, 0, false);
            fresh.resetState(0, offset, Long.MIN_VALUE, 0);
            segments.restartAt(fresh, offset);
            writer.restartedAt(fresh);
            flusher.restartAt(offset);
            flusher.directoryChanged();
            forceSegmentsAndCheckpoint(offset, true, false);
            segments.reclaimRetired();
            publishCounters();
        }
        catch (final IOException ex)
        {
            throw flusher.goOffline("truncation failed", ex);
        }
        finally
        {
            segments.lock().unlock();
            flusher.lock().unlock();
        }
    }

    private void forceSegmentsAndCheckpoint(final long end, final boolean always, final boolean checkpointSpaceThrows)
    {
        flusher.forceAndCheckpoint(segments.snapshot(), end, segments.logStartOffset(), always,
            checkpointSpaceThrows);
    }

    private void publishCounters()
    {
        counters.logEndOffset.setRelease(writer.logEndOffset());
        counters.recoveryPoint.setRelease(flusher.recoveryPoint());
        counters.logStartOffset.setRelease(segments.logStartOffset());
        counters.segmentCount.setRelease(segments.count());
    }
}
