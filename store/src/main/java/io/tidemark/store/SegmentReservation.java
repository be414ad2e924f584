package io.tidemark.store;

import io.tidemark.store.file.SpaceReservation;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The blocks that exist on disk under one segment's log file and, for one more entry, under its index files: what
 * the writer may store into through the mapping without risking SIGBUS on a full disk. Blocks are reserved by writing
 * zeros through the channel ({@link SpaceReservation}): ahead of the writer by the log agent, one
 * {@link #RESERVE_CHUNK} at a time ({@link #tryReserveStep}), and by the writer itself, one
 * {@link #WRITER_RESERVE_CHUNK} at a time, when it overtook the agent ({@link #ensureReserved}).
 * <p>
 * Threads: {@link #lock} guards {@code reservedPosition} (written under it, read by anyone, only grows) and, with
 * it, the file's length: a reservation grows the file, and the segment holds the lock ({@link #holdOff}) while it
 * trims or closes the file, so that no write of zeros lands past a trim. It is held for one reservation step at a
 * time, never for a pass of pre-faulting, so that a writer that overtook the agent waits for at most one chunk's
 * write. The segment owns the channel and the index files; this class borrows them.
 */
final class SegmentReservation
{
    static final int RESERVE_CHUNK = 1024 * 1024;
    /** The writer's own reservation step, when it overtook the agent: one small write of zeros, not a chunk. */
    static final int WRITER_RESERVE_CHUNK = 64 * 1024;

    private final FileChannel channel;
    private final int capacity;
    private final IndexFile offsetIndexFile;
    private final IndexFile timeIndexFile;
    private final Path log;
    private final Path offsetIndex;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile int reservedPosition;

    SegmentReservation(
        final FileChannel channel,
        final int capacity,
        final IndexFile offsetIndexFile,
        final IndexFile timeIndexFile,
        final Path log,
        final Path offsetIndex,
        final int reservedPosition)
    {
        this.channel = channel;
        this.capacity = capacity;
        this.offsetIndexFile = offsetIndexFile;
        this.timeIndexFile = timeIndexFile;
        this.log = log;
        this.offsetIndex = offsetIndex;
        this.reservedPosition = reservedPosition;
    }

    /** Take {@link #lock}: no reservation changes the file's length until {@link #resume}. Reentrant. */
    void holdOff()
    {
        lock.lock();
    }

    /** Release {@link #holdOff}. */
    void resume()
    {
        lock.unlock();
    }

    /**
     * Make sure the blocks under {@code [0, end)} exist on disk before the writer touches them, and those for one
     * more entry of each index (writer thread). In steady state the agent has reserved both ahead and this only
     * reads; otherwise the writer reserves them itself.
     *
     * @throws StorageException STORAGE_SPACE when the disk is full.
     */
    void ensureReserved(final int end)
    {
        try
        {
            offsetIndexFile.ensureRoomForOneMore();
            timeIndexFile.ensureRoomForOneMore();
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, offsetIndex);
        }
        if (end <= reservedPosition)
        {
            return;
        }
        lock.lock();
        try
        {
            reserveTo(end, true, WRITER_RESERVE_CHUNK);
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, log);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Reserve at least the first {@code end} bytes now (a new spare segment).
     *
     * @throws IOException when the disk is full.
     */
    void reserve(final int end) throws IOException
    {
        lock.lock();
        try
        {
            reserveTo(end, true, RESERVE_CHUNK);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Agent side: one step of {@link #RESERVE_CHUNK} towards {@code target}, unless the writer holds {@link #lock}
     * (reserving for itself).
     *
     * @return false when the lock was busy (nothing done).
     * @throws IOException when the disk is full: whatever part of the step could be written is reserved.
     */
    boolean tryReserveStep(final int target) throws IOException
    {
        if (!lock.tryLock())
        {
            return false;
        }
        try
        {
            reserveTo((int)Math.min(target, (long)reservedPosition + RESERVE_CHUNK), false, RESERVE_CHUNK);
            return true;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Under {@link #lock}: reserve from the reserved position to at least {@code end}, in a step of {@code chunk}. */
    private void reserveTo(final int end, final boolean exact, final int chunk) throws IOException
    {
        final int from = reservedPosition;
        if (end <= from)
        {
            return;
        }
        final int chunkEnd = reserveChunkEnd(from, end, capacity, chunk);
        // Whatever part of the chunk could be written is reserved, even when the disk fills on the way: those blocks
        // exist and the writer may use them.
        reservedPosition = from + (int)SpaceReservation.writeZerosUpTo(channel, from, chunkEnd - from);
        if (reservedPosition < (exact ? end : chunkEnd))
        {
            throw new IOException("No space left on device (reserved up to " + reservedPosition + " of " + end + ")");
        }
    }

    /** @return the position below which blocks are reserved. */
    int reservedPosition()
    {
        return reservedPosition;
    }

    /**
     * @param from     the reserved position (blocks below it exist).
     * @param end      the position the caller needs reserved.
     * @param capacity the segment's capacity.
     * @return where a reservation from {@code from} ends: at least one chunk past {@code from} and at least
     *         {@code end}, page aligned, never past the capacity. Long arithmetic: no overflow near the end of a
     *         segment of {@link Segment#MAX_FILE_LENGTH} bytes.
     */
    static int reserveChunkEnd(final int from, final int end, final int capacity)
    {
        return reserveChunkEnd(from, end, capacity, RESERVE_CHUNK);
    }

    /** As {@link #reserveChunkEnd(int, int, int)}, with a step of {@code chunk} bytes. */
    static int reserveChunkEnd(final int from, final int end, final int capacity, final int chunk)
    {
        return (int)Math.min(capacity, Segment.align(Math.max((long)end, (long)from + chunk), Segment.PAGE_SIZE));
    }
}
