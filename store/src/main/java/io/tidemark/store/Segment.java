package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;

/**
 * One segment of a log: {@code <base>.log} mapped into memory, with its {@link OffsetIndex} and
 * {@link TimeIndex}. The segment is the one owner of its mappings; readers borrow them under the log's pinning
 * protocol and {@link #close()} unmaps them once no reader is inside.
 * <p>
 * The active segment's file is pre-sized (sparse) to {@code segment.bytes} and mapped whole ({@link SegmentOpener});
 * blocks are reserved and pages pre-faulted ahead of the writer, so that appends in steady state neither fault nor
 * risk SIGBUS. When the segment is sealed (rolled), the agent trims the file to its data.
 * <p>
 * Threads: the log's writer appends ({@link #publish}) and is the only caller of the writer-side methods; the
 * log agent (its own thread, or a log-maintenance thread shared by several logs) reserves, pre-touches, writes back
 * and trims; readers use {@link #size()}, {@link #endOffset()} and lookups without locks. The segment owns its file,
 * its mapping and its indexes; the parts that work on them borrow them, each with its own lock, and hold no pointer
 * back to it: {@link SegmentReservation} (blocks that exist on disk ahead of the writer), {@link SegmentPrefaulter}
 * (the agent's pre-faulting of pages ahead of the writer), {@link SegmentWriteback} (the agent's writeback of written
 * pages) and {@link SegmentLookup} (where an offset's batch starts). Who may touch what:
 * <ul>
 *   <li>The reservation's lock guards the file's length: a reservation grows it, and the segment holds the lock
 *   ({@link SegmentReservation#holdOff}) to trim or close the file; {@code trimmed} and {@code closed} are written
 *   under it. It is held for one reservation step at a time, never for a pass of pre-faulting.</li>
 *   <li>Everything that shortens the file or unmaps it (the trim of a sealed segment, {@link #trimForClose},
 *   {@link #close()}, {@link #activate}) holds the prefaulter off first ({@link SegmentPrefaulter#holdOff}), then
 *   the reservation: no touch ever lands past the end of the file. {@link #close()} also waits for a writeback in
 *   progress ({@link SegmentWriteback#close}) before it unmaps.</li>
 *   <li>The writer's fallback when the agent is behind: it reserves what it needs itself ({@link #ensureReserved})
 *   and takes the page faults of pages the agent has not touched in its own stores; the agent then resumes ahead of
 *   the writer's position, never behind it. Pre-faulting is only ever an optimization: skipping it is correct.</li>
 *   <li>The published state ({@code size}, {@code endOffset}: release/acquire; {@code maxTimestamp}, {@code sealed},
 *   {@code retired}: volatile) is written by the writer only; the index schedule and the load's bookkeeping are the
 *   writer's alone.</li>
 * </ul>
 * Design note: at about 650 lines this class is above the ~600 the code base aims for. What stays here is the state
 * an append touches (the published size and end offset, the index schedule, the reservation check through its one
 * part) and the file's lifecycle (seal, flush, trim, close, hand-over of a spare), which takes the parts' locks in
 * one order; splitting either further would add a hop to every append or spread that lock order over classes.
 */
final class Segment
{
    /**
     * The longest segment file, and the largest {@code segment.bytes}: positions within a segment are ints, and this
     * is the largest multiple of the frame alignment an int holds, so that no frame end (a position rounded up to
     * the alignment) can pass {@link Integer#MAX_VALUE}. Every position and length computation that adds to a
     * position is done in long or as a subtraction from the capacity ({@link #fits}), so none overflows for any
     * capacity up to this.
     */
    static final int MAX_FILE_LENGTH = Integer.MAX_VALUE - (RecordBatchDescriptor.FRAME_ALIGNMENT - 1);
    static final int PAGE_SIZE = 4096;
    private static final long NO_TIMESTAMP = Long.MIN_VALUE;

    private static final VarHandle SIZE;
    private static final VarHandle END_OFFSET;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            SIZE = lookup.findVarHandle(Segment.class, "size", int.class);
            END_OFFSET = lookup.findVarHandle(Segment.class, "endOffset", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final long baseOffset;
    private final SegmentFiles files;
    private final RandomAccessFile file;
    private final FileChannel channel;
    private final MappedByteBuffer mapping;
    private final UnsafeBuffer buffer;
    private final int capacity;
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private final SegmentReservation reservation;
    private final SegmentPrefaulter prefaulter;
    private final SegmentWriteback writeback;
    private final SegmentLookup lookup;

    @SuppressWarnings("unused") // accessed through SIZE
    private volatile int size;
    @SuppressWarnings("unused") // accessed through END_OFFSET
    private volatile long endOffset;
    private volatile long maxTimestamp;
    private volatile boolean sealed;
    private volatile boolean retired;
    private boolean trimmed;
    private boolean closed;
    private int flushedPosition;
    private int bytesSinceLastIndexEntry;
    private long rollBaseTimeMs = NO_TIMESTAMP;
    private int lastBatchEpoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
    private int damagedBatches;

    /**
     * Take over opened files ({@link SegmentOpener}, {@link #activate}).
     *
     * @param size                bytes of data.
     * @param reservedPosition    blocks below it exist on disk.
     * @param flushedPosition     data below it is on disk.
     * @param touchedPosition     pages below it are faulted in.
     * @param writtenBackPosition full pages below it have been written back.
     */
    Segment(
        final SegmentFiles files,
        final RandomAccessFile file,
        final MappedByteBuffer mapping,
        final int capacity,
        final OffsetIndex offsetIndex,
        final TimeIndex timeIndex,
        final boolean sealed,
        final int size,
        final int reservedPosition,
        final int flushedPosition,
        final int touchedPosition,
        final int writtenBackPosition)
    {
        this.baseOffset = files.baseOffset();
        this.files = files;
        this.file = file;
        this.channel = file.getChannel();
        this.mapping = mapping;
        this.buffer = new UnsafeBuffer(mapping);
        this.capacity = capacity;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.sealed = sealed;
        this.trimmed = sealed;
        this.size = size;
        this.flushedPosition = flushedPosition;
        this.endOffset = baseOffset;
        this.maxTimestamp = NO_TIMESTAMP;
        this.reservation = new SegmentReservation(channel, capacity, offsetIndex.file(), timeIndex.file(), files.log(),
            files.offsetIndex(), reservedPosition);
        this.prefaulter = new SegmentPrefaulter(buffer, capacity, touchedPosition);
        this.writeback = new SegmentWriteback(mapping, writtenBackPosition);
        this.lookup = new SegmentLookup(buffer, baseOffset, offsetIndex, files.offsetIndex());
    }

    /** A new spare segment: reserve and pre-fault its first {@code target} bytes ({@link SegmentOpener}). */
    void prepareSpare(final int target) throws IOException
    {
        reservation.reserve(target);
        prefaulter.touchFirst(target);
    }

    /**
     * Adopt this spare as the segment starting at {@code target}'s base offset: rename its files and hand its
     * mappings over to the returned segment. This object must not be used afterwards.
     */
    Segment activate(final SegmentFiles target) throws IOException
    {
        Files.move(files.offsetIndex(), target.offsetIndex(), StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
        Files.move(files.timeIndex(), target.timeIndex(), StandardCopyOption.ATOMIC_MOVE,
            StandardCopyOption.REPLACE_EXISTING);
        Files.move(files.log(), target.log(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        lockFile();
        try
        {
            // published to the agent by the log's segment list
            final Segment segment = new Segment(target, file, mapping, capacity,
                new OffsetIndex(offsetIndex.file(), target.baseOffset()),
                new TimeIndex(timeIndex.file(), target.baseOffset()), false, 0, reservation.reservedPosition(),
                0, prefaulter.touchedPosition(), 0);
            closed = true; // the mappings now belong to the new segment
            return segment;
        }
        finally
        {
            unlockFile();
        }
    }

    /** Close a spare that will not be used, and delete its files. */
    void discard()
    {
        close();
        try
        {
            deleteFiles();
        }
        catch (final IOException ignore)
        {
            // leftovers named *.spare are deleted by the next open
        }
    }

    long baseOffset()
    {
        return baseOffset;
    }

    SegmentFiles files()
    {
        return files;
    }

    UnsafeBuffer buffer()
    {
        return buffer;
    }

    int capacity()
    {
        return capacity;
    }

    OffsetIndex offsetIndex()
    {
        return offsetIndex;
    }

    TimeIndex timeIndex()
    {
        return timeIndex;
    }

    /** @return bytes of published data (acquire). */
    int size()
    {
        return (int)SIZE.getAcquire(this);
    }

    /** @return offset after the last published record (acquire). */
    long endOffset()
    {
        return (long)END_OFFSET.getAcquire(this);
    }

    /** @return the largest record timestamp, or {@link Long#MIN_VALUE} when empty. */
    long maxTimestamp()
    {
        return maxTimestamp;
    }

    boolean isEmpty()
    {
        return size() == 0;
    }

    boolean isSealed()
    {
        return sealed;
    }

    boolean isRetired()
    {
        return retired;
    }

    void retire()
    {
        retired = true;
    }

    long rollBaseTimeMs()
    {
        return rollBaseTimeMs;
    }

    void rollBaseTimeMs(final long timeMs)
    {
        rollBaseTimeMs = timeMs;
    }

    /** @return leader epoch of the last batch seen by {@link SegmentReplay#replay}, or -1. */
    int lastBatchEpoch()
    {
        return lastBatchEpoch;
    }

    int flushedPosition()
    {
        return flushedPosition;
    }

    /**
     * Record a batch the writer placed at {@code position}: index it on the index schedule, then publish the new
     * size and end offset (release). Also used to replay batches when indexes are rebuilt.
     */
    void publish(
        final int position,
        final int frameLength,
        final long batchBaseOffset,
        final long batchNextOffset,
        final long batchMaxTimestamp,
        final int indexIntervalBytes)
    {
        indexBatch(position, frameLength, batchBaseOffset, batchMaxTimestamp, indexIntervalBytes);
        SIZE.setRelease(this, position + frameLength);
        END_OFFSET.setRelease(this, batchNextOffset);
    }

    /**
     * Writer (or replay): add index entries for the batch at {@code position} when {@code indexIntervalBytes} of data
     * passed since the last ones ({@link Integer#MAX_VALUE}: never, as a segment is smaller), and track the max
     * timestamp.
     */
    void indexBatch(
        final int position,
        final int frameLength,
        final long batchBaseOffset,
        final long batchMaxTimestamp,
        final int indexIntervalBytes)
    {
        if (bytesSinceLastIndexEntry >= indexIntervalBytes && position > 0)
        {
            if (!offsetIndex.isFull() && (offsetIndex.entries() == 0 ||
                offsetIndex.offsetAt(offsetIndex.entries() - 1) < batchBaseOffset))
            {
                offsetIndex.append(batchBaseOffset, position);
            }
            if (maxTimestamp != NO_TIMESTAMP)
            {
                timeIndex.maybeAppend(maxTimestamp, batchBaseOffset);
            }
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += frameLength;
        if (batchMaxTimestamp > maxTimestamp)
        {
            maxTimestamp = batchMaxTimestamp;
        }
    }

    /**
     * Set the published state after a load or a truncation (writer thread, before readers see the segment or
     * while the log holds them off).
     */
    void resetState(final int newSize, final long newEndOffset, final long newMaxTimestamp, final int sinceIndex)
    {
        lookup.truncatedTo(newEndOffset, newSize);
        SIZE.setRelease(this, newSize);
        END_OFFSET.setRelease(this, newEndOffset);
        maxTimestamp = newMaxTimestamp;
        bytesSinceLastIndexEntry = sinceIndex;
        if (flushedPosition > newSize)
        {
            flushedPosition = newSize;
        }
        writeback.truncatedTo(newSize);
    }

    /** @return whether {@code frameLength} more bytes fit. */
    boolean hasRoomFor(final int frameLength)
    {
        return fits(size(), frameLength, capacity);
    }

    /**
     * @param size        bytes in use, {@code 0 <= size <= capacity}.
     * @param frameLength bytes wanted, not negative.
     * @param capacity    the segment's capacity.
     * @return whether {@code frameLength} more bytes fit, computed without overflow for any int arguments.
     */
    static boolean fits(final int size, final int frameLength, final int capacity)
    {
        return frameLength <= capacity - size;
    }

    /** @return whether an index is full (the segment must roll). */
    boolean indexFull()
    {
        return offsetIndex.isFull() || timeIndex.isFull();
    }

    /**
     * Make sure the blocks under {@code [0, end)} exist on disk before the writer touches them, and those for one
     * more entry of each index (writer thread; {@link SegmentReservation#ensureReserved}).
     *
     * @throws StorageException STORAGE_SPACE when the disk is full.
     */
    void ensureReserved(final int end)
    {
        reservation.ensureReserved(end);
    }

    /** @return the blocks reserved on disk under this segment's files (the agent's side of it). */
    SegmentReservation reservation()
    {
        return reservation;
    }

    /** Under {@link SegmentReservation#holdOff} or {@link SegmentPrefaulter#holdOff}: whether the mappings are gone. */
    boolean isClosed()
    {
        return closed;
    }

    /** Log agent duty: reserve and pre-fault ahead of the writer ({@link SegmentPrefaulter#prepareAhead}). */
    int prepareAhead(final int aheadBytes, final long nowMs)
    {
        return prefaulter.prepareAhead(this, aheadBytes, nowMs);
    }

    /** @return the position up to which the agent has pre-faulted pages (tests). */
    int touchedPosition()
    {
        return prefaulter.touchedPosition();
    }

    /** Log agent duty: write back written pages past half of {@code dirtyBytesMax} ({@link SegmentWriteback}). */
    int writeBack(final FileSync sync, final int dirtyBytesMax)
    {
        return writeback.writeBack(sync, dirtyBytesMax, size());
    }

    /**
     * Log agent duty, before the roll's flush: write back the next {@code step} bytes of this sealed segment's
     * data that a flush has not covered ({@link SegmentWriteback#writeBackSealedStep}).
     *
     * @return bytes written back: 0 once the rest is for the flush alone (not sealed, flushed, or all written back).
     */
    int writeBackSealedStep(final FileSync sync, final int step)
    {
        // flushedPosition is the flusher's (under its lock): a stale read only writes back clean pages again
        final int flushed = flushedPosition;
        return sealed && flushed < size() ? writeback.writeBackSealedStep(sync, flushed, size(), step) : 0;
    }

    /** @return the position below which the log agent has written back every full page ({@link #writeBack}). */
    int writtenBackPosition()
    {
        return writeback.writtenBackPosition();
    }

    /**
     * {@link SegmentReplay} accepted the batch ending at {@code nextOffset}, after it went through
     * {@link #indexBatch}: the first one's timestamp starts the roll schedule, the last one's epoch is the segment's.
     */
    void replayed(final long nextOffset, final long firstTimestamp, final int leaderEpoch)
    {
        if (rollBaseTimeMs == NO_TIMESTAMP)
        {
            rollBaseTimeMs = firstTimestamp;
        }
        lastBatchEpoch = leaderEpoch;
        END_OFFSET.setRelease(this, nextOffset);
    }

    /** {@link SegmentReplay} stepped over a damaged batch. */
    void replayedDamage()
    {
        damagedBatches++;
    }

    /** @return damaged batches stepped over by {@link SegmentReplay#replay}. */
    int damagedBatches()
    {
        return damagedBatches;
    }

    /** Start a replay of the tail after trusted index entries: the max timestamp known to the time index. */
    void startTrustedReplay()
    {
        bytesSinceLastIndexEntry = 0;
        final long indexed = timeIndex.lastTimestamp();
        maxTimestamp = indexed == Long.MIN_VALUE ? NO_TIMESTAMP : indexed;
        final int lastEntry = offsetIndex.entries() - 1;
        END_OFFSET.setRelease(this, lastEntry < 0 ? baseOffset : offsetIndex.offsetAt(lastEntry));
    }

    /** Cut rebuilt index files of a sealed segment to their entries and force them. */
    void trimIndexes(final FileSync sync) throws IOException
    {
        appendFinalTimestamp();
        offsetIndex.file().trimAndForce(sync);
        timeIndex.file().trimAndForce(sync);
    }

    /** A sealed segment's time index ends with its max timestamp. */
    private void appendFinalTimestamp()
    {
        final long finalTimestamp = maxTimestamp;
        if (finalTimestamp != NO_TIMESTAMP && finalTimestamp > timeIndex.lastTimestamp())
        {
            timeIndex.file().tryEnsureRoomForOneMore(); // when the disk is full: as before
            timeIndex.maybeAppend(finalTimestamp, endOffset());
        }
    }

    /** Under both hold-offs: cut the files to the data and force them. */
    private void trimFiles(final FileSync sync) throws IOException
    {
        channel.truncate(size());
        sync.force(channel, true);
        offsetIndex.file().trimAndForce(sync);
        timeIndex.file().trimAndForce(sync);
        trimmed = true;
    }

    /** Writer: no more appends go to this segment. */
    void seal()
    {
        sealed = true;
    }

    /**
     * Force {@code [flushedPosition, size)} to disk; when sealed, also trim the files to their data and force the
     * indexes, so that the segment can be trusted without a scan after an unclean shutdown.
     *
     * @param sync how to force.
     * @param upTo flush the data below this position.
     */
    void flush(final FileSync sync, final int upTo) throws IOException
    {
        if (upTo > flushedPosition)
        {
            sync.force(mapping, flushedPosition, upTo - flushedPosition);
            flushedPosition = upTo;
        }
        if (sealed && !trimmed && upTo >= size())
        {
            lockFile(); // no pass of pre-faulting is inside the pages the trim cuts off
            try
            {
                if (!closed && !trimmed)
                {
                    appendFinalTimestamp();
                    trimFiles(sync);
                }
            }
            finally
            {
                unlockFile();
            }
        }
    }

    /**
     * Count none of this segment's data as forced (loader, before the segment is published): a recovery re-validated
     * it from the page cache, which a kill leaves with dirty pages, so the next flush must force it before the
     * recovery point may pass it.
     */
    void markUnflushed()
    {
        flushedPosition = 0;
    }

    boolean needsFlush()
    {
        return flushedPosition < size() || (sealed && !trimmed);
    }

    /**
     * Zero {@code [from, size)} and force it, so stale bytes past a truncation point can never be mistaken for
     * batches (writer thread).
     */
    void zeroTail(final int from, final int to, final FileSync sync)
    {
        if (to > from)
        {
            buffer.setMemory(from, to - from, (byte)0);
            sync.force(mapping, from, to - from);
        }
    }

    /**
     * Find the batch holding an offset ({@link SegmentLookup#positionOf}: damage hides only its own offsets, and a
     * wrong index file is rebuilt in memory once).
     *
     * @param targetOffset an offset of this segment.
     * @return position of the batch holding {@code targetOffset}, {@link #size()} if it is at or past the end,
     *         or -1 when it lies in damaged bytes.
     */
    int positionOf(final long targetOffset)
    {
        final int position = lookup.positionOf(targetOffset, size());
        return position == SegmentLookup.REBUILT ? lookup.positionOf(targetOffset, size()) : position;
    }

    /** @return whether a lookup found the offset index file wrong and rebuilt the index in memory (and removed it). */
    boolean offsetIndexRebuilt()
    {
        return lookup.offsetIndexRebuilt();
    }

    /** Unmap and close (idempotent). Only the log calls it, once no reader is inside. */
    void close()
    {
        lockFile();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            writeback.close();
            IoUtil.unmap(mapping);
            offsetIndex.file().close();
            timeIndex.file().close();
            IndexFile.closeQuietly(file);
        }
        finally
        {
            unlockFile();
        }
    }

    /**
     * Flush and trim an appendable segment's files to its data (clean shutdown). The mapping stays: a reader may
     * still be inside it (it reads only below the size, which the trim keeps); {@link #close()} unmaps it.
     */
    void trimForClose(final FileSync sync) throws IOException
    {
        lockFile();
        try
        {
            if (!closed && !trimmed)
            {
                flush(sync, size());
                if (!sealed)
                {
                    sealed = true;
                    trimFiles(sync);
                }
            }
        }
        finally
        {
            unlockFile();
        }
    }

    /** Delete the segment's files (the mapping, if any, stays valid until {@link #close()}). */
    void deleteFiles() throws IOException
    {
        Files.deleteIfExists(files.log());
        Files.deleteIfExists(files.offsetIndex());
        Files.deleteIfExists(files.timeIndex());
    }

    /** Hold off pre-faulting, then reservations: nothing touches or grows the file until {@link #unlockFile}. */
    private void lockFile()
    {
        prefaulter.holdOff();
        reservation.holdOff();
    }

    private void unlockFile()
    {
        reservation.resume();
        prefaulter.resume();
    }

    static long align(final long value, final int alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    @Override
    public String toString()
    {
        return "Segment{base=" + baseOffset + ", size=" + size() + ", end=" + endOffset() + ", sealed=" + sealed + '}';
    }
}
