package io.tidemark.store;

import io.tidemark.store.file.SpaceReservation;
import io.tidemark.store.format.SegmentFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The segment set of a log: the array of segments in offset order (the last one is the writer's), the lookup of the
 * segment holding an offset, the roll that adds a segment (adopting the spare the agent prepared), and the life of
 * segments that leave the log (retired, then unmapped once no reader is inside them, through the reader registry).
 * <p>
 * <b>Locks.</b> {@link #lock()} guards every change of the array and the roll (readers take snapshots of the
 * volatile array without it); a caller that also needs the flush lock takes that first. {@code retiredLock} guards
 * the list of retired segments (innermost: nothing else is taken under it). The spare is handed over through an
 * atomic reference; {@code spareFailedAtMs} belongs to the agent's thread.
 */
final class LogSegments
{
    private static final long NO_TIME = Long.MIN_VALUE;
    private static final long SPARE_RETRY_MS = 100;

    private final Path dir;
    private final LogContext ctx;
    private final int maxIndexEntries;
    private final ReaderRegistry readers = new ReaderRegistry();
    private final ReentrantLock lock = new ReentrantLock();
    private final ReentrantLock retiredLock = new ReentrantLock();
    private final List<Segment> retired = new ArrayList<>();
    private final AtomicReference<Segment> spare = new AtomicReference<>();
    private final System.Logger logger = System.getLogger(Log.class.getName());

    private volatile Segment[] segments;
    /** The first readable offset (written under {@link #lock()}; read by anyone). */
    private volatile long logStartOffset;
    private long spareFailedAtMs = NO_TIME;

    LogSegments(final LogContext ctx, final int maxIndexEntries, final Segment[] loaded, final long logStartOffset)
    {
        this.dir = ctx.logDir();
        this.ctx = ctx;
        this.maxIndexEntries = maxIndexEntries;
        this.segments = loaded;
        this.logStartOffset = logStartOffset;
    }

    /** @return the first readable offset. */
    long logStartOffset()
    {
        return logStartOffset;
    }

    /** Raise the log start offset (never lowers it). Caller holds {@link #lock()}. */
    void raiseLogStartOffset(final long offset)
    {
        logStartOffset = Math.max(logStartOffset, offset);
    }

    /** Start the log again, empty, at {@code offset} with the one segment {@code fresh}. Caller holds the lock. */
    void restartAt(final Segment fresh, final long offset)
    {
        segments = new Segment[]{ fresh };
        logStartOffset = offset;
    }

    /** @return the lock guarding changes of the set (see the class comment). */
    ReentrantLock lock()
    {
        return lock;
    }

    /** @return the segments now (volatile read; never changed in place). */
    Segment[] snapshot()
    {
        return segments;
    }

    /** Replace the set. Caller holds {@link #lock()}. */
    void replace(final Segment[] updated)
    {
        segments = updated;
    }

    int count()
    {
        return segments.length;
    }

    Segment last()
    {
        final Segment[] current = segments;
        return current[current.length - 1];
    }

    long sizeInBytes()
    {
        long total = 0;
        for (final Segment segment : segments)
        {
            total += segment.size();
        }
        return total;
    }

    Segment segmentFor(final long offset)
    {
        final Segment[] current = segments;
        final int index = floorIndex(current, offset);
        return index < 0 ? null : current[index];
    }

    Segment segmentAfter(final Segment segment)
    {
        final Segment[] current = segments;
        final int index = floorIndex(current, segment.baseOffset());
        return index >= 0 && index + 1 < current.length ? current[index + 1] : null;
    }

    /** @return the index of the last segment whose base offset is at most {@code offset}, or -1. */
    static int floorIndex(final Segment[] current, final long offset)
    {
        int low = 0;
        int high = current.length - 1;
        int result = -1;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (current[mid].baseOffset() <= offset)
            {
                result = mid;
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        return result;
    }

    /**
     * Seal {@code old} (the last segment) and add a new one at {@code base}: the spare when the agent prepared one,
     * else a new file.
     *
     * @return the new last segment.
     */
    Segment roll(final Segment old, final long base)
    {
        lock.lock();
        try
        {
            final SegmentFiles files = new SegmentFiles(dir, base);
            final Segment prepared = spare.getAndSet(null);
            Segment next = null;
            if (null != prepared)
            {
                try
                {
                    next = prepared.activate(files);
                }
                catch (final IOException ex)
                {
                    prepared.close();
                    logger.log(System.Logger.Level.WARNING, "could not use the prepared segment in " + dir, ex);
                }
            }
            if (null == next)
            {
                try
                {
                    next = SegmentOpener.openActive(files, ctx.segmentBytes(), 0, maxIndexEntries, 0, 0, true);
                }
                catch (final IOException | RuntimeException ex)
                {
                    deleteQuietly(files, ex); // a stray file at the log end offset would be mistaken for data
                    throw ex;
                }
            }
            old.seal();
            final Segment[] current = segments;
            final Segment[] updated = Arrays.copyOf(current, current.length + 1);
            updated[current.length] = next;
            segments = updated;
            return next;
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, dir);
        }
        finally
        {
            lock.unlock();
        }
    }

    private static void deleteQuietly(final SegmentFiles files, final Exception failure)
    {
        for (final Path path : new Path[]{ files.log(), files.offsetIndex(), files.timeIndex() })
        {
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ex)
            {
                failure.addSuppressed(ex);
            }
        }
    }

    /** Take a segment out of use (its files deleted or not); it is unmapped once no reader is inside it. */
    void retire(final Segment segment, final boolean deleteFiles) throws IOException
    {
        segment.retire();
        if (deleteFiles)
        {
            segment.deleteFiles();
        }
        retiredLock.lock();
        try
        {
            retired.add(segment);
        }
        finally
        {
            retiredLock.unlock();
        }
    }

    /** Unmap retired segments no reader is inside. @return how many. */
    int reclaimRetired()
    {
        retiredLock.lock();
        return reclaimLocked();
    }

    /** The agent's {@link #reclaimRetired}: skipped when another thread is at it. */
    int tryReclaimRetired()
    {
        if (!retiredLock.tryLock())
        {
            return 0;
        }
        return reclaimLocked();
    }

    private int reclaimLocked()
    {
        try
        {
            int reclaimed = 0;
            for (int i = retired.size() - 1; i >= 0; i--)
            {
                final Segment segment = retired.get(i);
                if (!readers.isPinned(segment))
                {
                    segment.close();
                    retired.remove(i);
                    reclaimed++;
                }
            }
            return reclaimed;
        }
        finally
        {
            retiredLock.unlock();
        }
    }

    /** Agent: once the last segment is half full, prepare the next one (retried at most every 100 ms). */
    int prepareSpare(final Segment tail, final long nowMs)
    {
        if (null != spare.get() || tail.size() < tail.capacity() / 2 ||
            (spareFailedAtMs != NO_TIME && nowMs - spareFailedAtMs < SPARE_RETRY_MS))
        {
            return 0;
        }
        try
        {
            final Segment prepared = SegmentOpener.createSpare(dir, ctx.segmentBytes(), maxIndexEntries,
                ctx.pretouchBytes());
            spareFailedAtMs = NO_TIME;
            if (!spare.compareAndSet(null, prepared))
            {
                prepared.discard();
            }
            return 1;
        }
        catch (final IOException ex)
        {
            spareFailedAtMs = nowMs; // a full disk: the roll makes its segment itself, or meets the error typed
            logger.log(System.Logger.Level.DEBUG, "could not prepare the next segment of " + dir, ex);
            return 0;
        }
    }

    /** Close: the spare's files are deleted ({@code discard}) or, after a crash, left for the next open. */
    void dropSpare(final boolean discard)
    {
        final Segment prepared = spare.getAndSet(null);
        if (null != prepared)
        {
            if (discard)
            {
                prepared.discard();
            }
            else
            {
                prepared.close();
            }
        }
    }

    void addReader(final LogReader reader)
    {
        readers.add(reader);
    }

    void removeReader(final LogReader reader)
    {
        readers.remove(reader);
    }

    void readerLeft()
    {
        readers.closeLeftUnpinned();
    }

    /**
     * Close: retire every segment (but the writer's when {@code keep} is not null: a writer call still inside it),
     * wait up to {@code waitMs} for readers inside a poll to leave, and unmap what no reader pins; readers still
     * inside unmap the rest as they leave.
     *
     * @return the number of mappings left to readers.
     */
    int releaseMappings(final Segment keep, final long waitMs)
    {
        final Segment[] current = segments;
        final List<Segment> mapped;
        retiredLock.lock();
        try
        {
            mapped = new ArrayList<>(current.length + retired.size());
            for (final Segment segment : current)
            {
                if (segment != keep)
                {
                    mapped.add(segment);
                }
            }
            mapped.addAll(retired);
            retired.clear();
        }
        finally
        {
            retiredLock.unlock();
        }
        for (final Segment segment : mapped)
        {
            segment.retire(); // a reader that pins it from now on sees this and backs off
        }
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        final Thread self = Thread.currentThread();
        while (readers.anyPinnedByAnotherThread(self) && System.nanoTime() - deadline < 0)
        {
            LockSupport.parkNanos(50_000);
        }
        return readers.closeWhenUnpinned(mapped);
    }
}
