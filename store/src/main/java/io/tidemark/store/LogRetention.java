package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.util.Arrays;

/**
 * Retention: deletes the oldest segments past {@code retention.bytes} or {@code retention.ms} (never the last one),
 * or wholly below a raised log start offset, then advances and checkpoints the log start offset. Readers inside a
 * deleted segment finish their poll first; its mapping is released once they have left.
 * <p>
 * It owns no shared state: it works on the segment set under the flusher's lock and then the segment set's, in
 * that order (the checkpoint it writes is the flusher's). Its next check time belongs to the agent's thread.
 */
final class LogRetention
{
    private final LogContext ctx;
    private final EpochClock clock;
    private final FileSync sync;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final LogCounters counters;
    private long nextCheckMs;

    LogRetention(
        final LogContext ctx, final LogSegments segments, final LogFlusher flusher, final LogCounters counters)
    {
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.sync = ctx.fileSync();
        this.segments = segments;
        this.flusher = flusher;
        this.counters = counters;
        this.nextCheckMs = clock.time() + ctx.retentionCheckIntervalMs();
    }

    /** Agent: @return whether the check interval has passed (the next one starts now). */
    boolean due(final long nowMs)
    {
        if (nowMs < nextCheckMs)
        {
            return false;
        }
        nextCheckMs = nowMs + ctx.retentionCheckIntervalMs();
        return true;
    }

    /** @return the number of segments deleted by {@code retention.bytes} and {@code retention.ms}. */
    int apply()
    {
        flusher.lock().lock();
        segments.lock().lock();
        try
        {
            final Segment[] current = segments.snapshot();
            final long nowMs = clock.time();
            long total = 0;
            for (final Segment segment : current)
            {
                total += segment.size();
            }
            int deletable = 0;
            while (deletable < current.length - 1)
            {
                final Segment segment = current[deletable];
                final boolean bySize = ctx.retentionBytes() >= 0 && total - segment.size() >= ctx.retentionBytes();
                final boolean byTime = ctx.retentionMs() >= 0 && segment.maxTimestamp() != Long.MIN_VALUE &&
                    nowMs - segment.maxTimestamp() > ctx.retentionMs();
                if (!bySize && !byTime)
                {
                    break;
                }
                total -= segment.size();
                deletable++;
            }
            if (deletable > 0)
            {
                deleteOldest(current, deletable, current[deletable].baseOffset());
            }
            return deletable;
        }
        finally
        {
            segments.lock().unlock();
            flusher.lock().unlock();
        }
    }

    /** Raise the log start offset to {@code offset} (at most the log end) and delete the segments wholly below it. */
    void advanceLogStartOffset(final long offset)
    {
        flusher.lock().lock();
        segments.lock().lock();
        try
        {
            if (offset > segments.logStartOffset())
            {
                final Segment[] current = segments.snapshot();
                int deletable = 0;
                while (deletable < current.length - 1 && current[deletable + 1].baseOffset() <= offset)
                {
                    deletable++;
                }
                deleteOldest(current, deletable, offset);
            }
        }
        finally
        {
            segments.lock().unlock();
            flusher.lock().unlock();
        }
    }

    private void deleteOldest(final Segment[] current, final int count, final long newLogStart)
    {
        // Deleting before the checkpoint records the new start is safe (the next open starts at the first segment
        // left), and it is what frees space on a full disk, so the deletion does not wait for the checkpoint.
        segments.raiseLogStartOffset(newLogStart);
        segments.replace(Arrays.copyOfRange(current, count, current.length));
        try
        {
            for (int i = 0; i < count; i++)
            {
                segments.retire(current[i], true);
            }
            sync.forceDirectory(ctx.logDir());
        }
        catch (final IOException ex)
        {
            throw flusher.goOffline("deleting segments failed", ex);
        }
        finally
        {
            segments.reclaimRetired();
            counters.logStartOffset.setRelease(segments.logStartOffset());
            counters.segmentCount.setRelease(segments.count());
        }
        flusher.writeCheckpoint(flusher.recoveryPoint(), segments.logStartOffset());
    }
}
