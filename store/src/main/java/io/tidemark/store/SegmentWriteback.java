package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import java.nio.MappedByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The log agent's writeback of one segment's written pages, about latency rather than durability: once at least half
 * of {@code dirty.bytes.max} of full pages written by the writer await writeback, they are written back now
 * ({@code msync} of that range), so that the log never holds more than about {@code dirty.bytes.max} of written,
 * dirty page cache and the kernel never throttles the writer (balance_dirty_pages) or makes it wait in a fault behind
 * a large writeback.
 * <p>
 * Threads: the log agent writes back; the writer moves the position back after a truncation ({@link #truncatedTo});
 * the segment's close waits for a writeback in progress ({@link #close}) before it unmaps. {@link #lock} guards
 * {@code writtenBackPosition} and {@code closed}; it is never the lock the writer takes to reserve blocks, so a slow
 * writeback delays only the agent. The segment owns the mapping; this class borrows it.
 */
final class SegmentWriteback
{
    private final MappedByteBuffer mapping;
    private final ReentrantLock lock = new ReentrantLock();
    private int writtenBackPosition;
    private boolean closed;

    /**
     * @param mapping             the segment's mapping (borrowed).
     * @param writtenBackPosition the page-aligned position below which the data is already on disk.
     */
    SegmentWriteback(final MappedByteBuffer mapping, final int writtenBackPosition)
    {
        this.mapping = mapping;
        this.writtenBackPosition = writtenBackPosition;
    }

    /**
     * Write back the full pages below the writer's page once at least half of {@code dirtyBytesMax} await it. Only
     * pages below the writer's page are written back: the writer never touches them again, so it never faults on a
     * page made clean and read-only under it. The recovery point is not moved: data written back here is on disk, but
     * only a flush may say so (and a later flush of the range finds it clean, which costs little).
     *
     * @param size the segment's published size.
     * @return pages written back (0 when nothing was due).
     * @throws java.io.UncheckedIOException when the writeback fails: the caller must take the log offline, because a
     *         failed writeback may have cleared the error a later fsync of the same pages would have reported.
     */
    int writeBack(final FileSync sync, final int dirtyBytesMax, final int size)
    {
        if (dirtyBytesMax <= 0)
        {
            return 0;
        }
        final int end = size & -Segment.PAGE_SIZE;
        final int step = Math.max(Segment.PAGE_SIZE, (dirtyBytesMax / 2) & -Segment.PAGE_SIZE);
        if (end - writtenBackPosition < step || !lock.tryLock())
        {
            return 0;
        }
        try
        {
            final int from = writtenBackPosition;
            if (closed || end - from < step)
            {
                return 0;
            }
            sync.force(mapping, from, end - from);
            writtenBackPosition = end;
            return (end - from) / Segment.PAGE_SIZE;
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * A step of the roll's flush, before the flush itself: write back the next {@code step} bytes of a sealed
     * segment's data, so that the flush that follows finds the pages clean and the log agent, which pre-faults the
     * next segment between two steps, is never held for the whole segment's writeback. The writer never touches a
     * sealed segment again, so every page may be written back, the last partial one included. The recovery point is
     * not moved here either.
     *
     * @param flushed the segment's flushed position: data below it is on disk already.
     * @param size    the sealed segment's size.
     * @param step    most bytes to write back in this call.
     * @return bytes written back (0 when the segment's data is all written back, or it is closed).
     * @throws java.io.UncheckedIOException when the writeback fails (see {@link #writeBack}).
     */
    int writeBackSealedStep(final FileSync sync, final int flushed, final int size, final int step)
    {
        lock.lock();
        try
        {
            final int from = Math.max(writtenBackPosition, flushed);
            if (closed || from >= size)
            {
                return 0;
            }
            final int end = (int)Math.min(size, (long)from + step);
            sync.force(mapping, from, end - from);
            writtenBackPosition = end;
            return end - from;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** The segment's data now ends at {@code newSize} (writer thread, after a load or a truncation). */
    void truncatedTo(final int newSize)
    {
        lock.lock();
        try
        {
            writtenBackPosition = Math.min(writtenBackPosition, newSize & -Segment.PAGE_SIZE);
        }
        finally
        {
            lock.unlock();
        }
    }

    /** No writeback after this returns: one in progress has finished (the segment unmaps next). */
    void close()
    {
        lock.lock();
        try
        {
            closed = true;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** @return the position below which every full page (every byte, once sealed and stepped) is written back. */
    int writtenBackPosition()
    {
        return writtenBackPosition;
    }
}
