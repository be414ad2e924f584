package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.SpaceReservation;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One segment of a log: {@code <base>.log} mapped into memory, with its {@link OffsetIndex} and
 * {@link TimeIndex}. The segment is the one owner of its mappings; readers borrow them under the log's pinning
 * protocol and {@link #close()} unmaps them once no reader is inside.
 * <p>
 * The active segment's file is pre-sized (sparse) to {@code segment.bytes} and mapped whole. Blocks are reserved
 * ahead of the writer by writing zeros through the channel ({@link SpaceReservation}) and pages are pre-faulted
 * ahead of the writer by the log agent, so that appends in steady state neither fault nor risk SIGBUS; the agent
 * also keeps a chunk of each index file reserved past its entries ({@link IndexFile#reserveAhead}), so that the
 * writer's per-batch index check is a read. When the segment is sealed (rolled), the agent trims the file to its
 * data.
 * <p>
 * Threads: the log's writer appends ({@link #publish}) and is the only caller of the writer-side methods; the
 * log agent (its own thread, or a log-maintenance thread shared by several logs) reserves, pre-touches and trims;
 * readers use {@link #size()}, {@link #endOffset()} and lookups without locks. Who may touch what:
 * <ul>
 *   <li>{@link #lock} guards the reservation ({@code reservedPosition}: written under it, read by anyone, only
 *   grows) and the file's length (trim, close). It is held for one reservation step at a time: a chunk of
 *   {@link #RESERVE_CHUNK} by the agent, {@link #WRITER_RESERVE_CHUNK} by the writer, never for a pass of
 *   pre-faulting, so that a writer that overtook the agent waits for at most one chunk's write, not for a pass.</li>
 *   <li>{@link #prepareLock} guards the pre-faulting state ({@code touchedPosition}, the rate estimate), which only the
 *   agent reads and writes: the writer never takes it. A pass of pre-faulting holds it, touches only pages below the
 *   reserved position (so a touch never meets a hole of a full disk: no SIGBUS) and below the capacity, and stops
 *   after {@link #PRETOUCH_PAGES_PER_CALL} pages or {@link #PASS_BUDGET_NS}, so that the agent's flushes and the
 *   close that waits for it are never held up for long. Everything that shortens the file or unmaps it (the trim of
 *   a sealed segment, {@link #trimForClose}, {@link #close()}) takes it first, then {@link #lock}: no touch ever
 *   lands past the end of the file.</li>
 *   <li>The writer's fallback when the agent is behind: it reserves what it needs itself ({@link #ensureReserved})
 *   and takes the page faults of pages the agent has not touched in its own stores; the agent then resumes ahead of
 *   the writer's position, never behind it. Pre-faulting is only ever an optimization: skipping it is correct.</li>
 * </ul>
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
    static final int RESERVE_CHUNK = 1024 * 1024;
    /** The writer's own reservation step, when it overtook the agent: one small write of zeros, not a chunk. */
    static final int WRITER_RESERVE_CHUNK = 64 * 1024;
    /** Most pages one pass of pre-faulting touches (16 MiB). */
    static final int PRETOUCH_PAGES_PER_CALL = 4096;
    /** Longest pass of pre-faulting and reservation before the agent returns to its other duties. */
    static final long PASS_BUDGET_NS = 2_000_000;
    /** How far ahead the agent keeps, in time: the bytes the writer wrote in this long, at its recent rate. */
    static final long LEAD_NS = 250_000_000;
    /** Most the distance grows past {@code pretouch.bytes} for a fast writer. */
    static final int LEAD_FACTOR = 4;
    /** Least time between two samples of the writer's rate. */
    private static final long RATE_SAMPLE_NS = 10_000_000;
    private static final int RESERVE_CHUNKS_PER_CALL = 16;
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
    private final ReentrantLock lock = new ReentrantLock();
    private final ReentrantLock prepareLock = new ReentrantLock();
    private final ReentrantLock writebackLock = new ReentrantLock();
    private volatile RebuiltOffsetIndex rebuiltIndex;

    @SuppressWarnings("unused") // accessed through SIZE
    private volatile int size;
    @SuppressWarnings("unused") // accessed through END_OFFSET
    private volatile long endOffset;
    private volatile long maxTimestamp;
    private volatile int reservedPosition;
    private volatile boolean sealed;
    private volatile boolean retired;
    private boolean trimmed;
    private boolean closed;
    private int touchedPosition;
    private int rateSamplePosition = -1;
    private long rateSampleNs;
    private long writerBytesPerSecond;
    private int flushedPosition;
    private int writtenBackPosition;
    private int bytesSinceLastIndexEntry;
    private long rollBaseTimeMs = NO_TIMESTAMP;
    private int lastBatchEpoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
    private int damagedBatches;
    private long reserveFailedAtMs = NO_TIMESTAMP;
    private long indexReserveFailedAtMs = NO_TIMESTAMP;

    private Segment(
        final long baseOffset,
        final SegmentFiles files,
        final RandomAccessFile file,
        final MappedByteBuffer mapping,
        final int capacity,
        final OffsetIndex offsetIndex,
        final TimeIndex timeIndex,
        final boolean sealed)
    {
        this.baseOffset = baseOffset;
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
        this.endOffset = baseOffset;
        this.maxTimestamp = NO_TIMESTAMP;
    }

    /**
     * Open a segment for appending: its log file keeps {@code dataSize} bytes of data (validated or trusted by the
     * caller), everything after is zero, and it is extended, sparse, to {@code capacity}. Indexes keep the given
     * number of trusted entries (0 to rebuild them by {@link #replay}). With {@code mayShrink} false no file is
     * cut shorter, because an older mapping of it may still be read (truncation into a sealed segment); the tail is
     * zeroed through the channel instead.
     */
    static Segment openActive(
        final SegmentFiles files,
        final int capacity,
        final int dataSize,
        final int maxIndexEntries,
        final int keepOffsetEntries,
        final int keepTimeEntries,
        final boolean mayShrink) throws IOException
    {
        final RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "rw");
        IndexFile offsetFile = null;
        IndexFile timeFile = null;
        try
        {
            final long oldLength = file.length();
            if (oldLength > MAX_FILE_LENGTH)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_LOG,
                    files.log() + " is larger than a segment may be: " + oldLength + " bytes");
            }
            int reserved = dataSize;
            if (mayShrink)
            {
                file.setLength(dataSize);
            }
            else if (oldLength > dataSize)
            {
                SpaceReservation.writeZeros(file.getChannel(), dataSize, oldLength - dataSize);
                reserved = (int)Math.min(oldLength, capacity);
            }
            final int mapped = (int)Math.max(capacity, file.length());
            file.setLength(mapped);
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, mapped);
            offsetFile = IndexFile.openForAppend(
                files.offsetIndex(), OffsetIndex.ENTRY_LENGTH, maxIndexEntries, keepOffsetEntries, mayShrink);
            timeFile = IndexFile.openForAppend(
                files.timeIndex(), TimeIndex.ENTRY_LENGTH, maxIndexEntries, keepTimeEntries, mayShrink);
            final Segment segment = new Segment(
                files.baseOffset(), files, file, mapping, mapped,
                new OffsetIndex(offsetFile, files.baseOffset()), new TimeIndex(timeFile, files.baseOffset()), false);
            segment.reservedPosition = reserved;
            segment.touchedPosition = dataSize;
            segment.flushedPosition = dataSize;
            segment.writtenBackPosition = dataSize & -PAGE_SIZE;
            segment.size = dataSize;
            return segment;
        }
        catch (final Throwable ex)
        {
            IndexFile.closeQuietly(offsetFile);
            IndexFile.closeQuietly(timeFile);
            IndexFile.closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Open a sealed segment read-only at its file length. Index files that are missing or do not hold whole
     * entries are rebuilt ({@code rebuildIndexes} forces a rebuild).
     */
    static Segment openSealed(final SegmentFiles files, final int maxIndexEntries, final boolean rebuildIndexes)
        throws IOException
    {
        final RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "r");
        IndexFile offsetFile = null;
        IndexFile timeFile = null;
        try
        {
            final long length = file.length();
            if (length > MAX_FILE_LENGTH)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_LOG,
                    files.log() + " is larger than a segment may be: " + length + " bytes");
            }
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, length);
            boolean rebuild = rebuildIndexes;
            if (!rebuild)
            {
                offsetFile = Files.exists(files.offsetIndex()) ?
                    IndexFile.openSealed(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH) : null;
                timeFile = Files.exists(files.timeIndex()) ?
                    IndexFile.openSealed(files.timeIndex(), TimeIndex.ENTRY_LENGTH) : null;
                rebuild = null == offsetFile || null == timeFile;
            }
            if (rebuild)
            {
                IndexFile.closeQuietly(offsetFile);
                IndexFile.closeQuietly(timeFile);
                offsetFile = IndexFile.openForAppend(
                    files.offsetIndex(), OffsetIndex.ENTRY_LENGTH, maxIndexEntries, 0, true);
                timeFile = IndexFile.openForAppend(
                    files.timeIndex(), TimeIndex.ENTRY_LENGTH, maxIndexEntries, 0, true);
            }
            final Segment segment = new Segment(
                files.baseOffset(), files, file, mapping, (int)length,
                new OffsetIndex(offsetFile, files.baseOffset()), new TimeIndex(timeFile, files.baseOffset()), true);
            segment.size = (int)length;
            segment.reservedPosition = (int)length;
            segment.flushedPosition = (int)length;
            segment.trimmed = true;
            return segment;
        }
        catch (final Throwable ex)
        {
            IndexFile.closeQuietly(offsetFile);
            IndexFile.closeQuietly(timeFile);
            IndexFile.closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Create the spare segment (log agent): files sized, the first {@code reserveBytes} reserved and pre-faulted,
     * so that the roll that adopts it ({@link #activate}) costs three renames.
     */
    static Segment createSpare(final Path dir, final int capacity, final int maxIndexEntries, final int reserveBytes)
        throws IOException
    {
        final SegmentFiles spareFiles = SegmentFiles.spare(dir);
        final Segment spare = openActive(spareFiles, capacity, 0, maxIndexEntries, 0, 0, true);
        try
        {
            final int target = Math.min(capacity, reserveBytes);
            spare.prepareLock.lock();
            spare.lock.lock();
            try
            {
                spare.reserveTo(target, true, RESERVE_CHUNK);
                for (int i = 0, pages = pagesToTouch(0, target, Integer.MAX_VALUE); i < pages; i++)
                {
                    spare.buffer.compareAndSetInt(i * PAGE_SIZE, 0, 0);
                }
                spare.touchedPosition = target;
            }
            finally
            {
                spare.lock.unlock();
                spare.prepareLock.unlock();
            }
            return spare;
        }
        catch (final Throwable ex)
        {
            spare.discard();
            throw ex;
        }
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
        final Segment segment = new Segment(target.baseOffset(), target, file, mapping, capacity,
            new OffsetIndex(offsetIndex.file(), target.baseOffset()),
            new TimeIndex(timeIndex.file(), target.baseOffset()), false);
        prepareLock.lock();
        lock.lock();
        try
        {
            segment.reservedPosition = reservedPosition;
            segment.touchedPosition = touchedPosition; // published to the agent by the log's segment list
            closed = true; // the mappings now belong to the new segment
        }
        finally
        {
            lock.unlock();
            prepareLock.unlock();
        }
        return segment;
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

    /** @return leader epoch of the last batch seen by {@link #replay}, or -1. */
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

    private void indexBatch(
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
        final RebuiltOffsetIndex rebuilt = rebuiltIndex;
        if (null != rebuilt)
        {
            rebuiltIndex = rebuilt.truncatedTo(newEndOffset, newSize);
        }
        SIZE.setRelease(this, newSize);
        END_OFFSET.setRelease(this, newEndOffset);
        maxTimestamp = newMaxTimestamp;
        bytesSinceLastIndexEntry = sinceIndex;
        if (flushedPosition > newSize)
        {
            flushedPosition = newSize;
        }
        writebackLock.lock();
        try
        {
            writtenBackPosition = Math.min(writtenBackPosition, newSize & -PAGE_SIZE);
        }
        finally
        {
            writebackLock.unlock();
        }
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

    /**
     * @param from     the reserved position (blocks below it exist).
     * @param end      the position the caller needs reserved.
     * @param capacity the segment's capacity.
     * @return where a reservation from {@code from} ends: at least one chunk past {@code from} and at least
     *         {@code end}, page aligned, never past the capacity. Long arithmetic: no overflow near the end of a
     *         segment of {@link #MAX_FILE_LENGTH} bytes.
     */
    static int reserveChunkEnd(final int from, final int end, final int capacity)
    {
        return reserveChunkEnd(from, end, capacity, RESERVE_CHUNK);
    }

    /** As {@link #reserveChunkEnd(int, int, int)}, with a step of {@code chunk} bytes. */
    static int reserveChunkEnd(final int from, final int end, final int capacity, final int chunk)
    {
        return (int)Math.min(capacity, align(Math.max((long)end, (long)from + chunk), PAGE_SIZE));
    }

    /**
     * @param firstPage the page-aligned position of the first page to touch (it may lie past the int range).
     * @param limit     no byte at or past this position is touched.
     * @param maxPages  most pages to touch.
     * @return how many pages from {@code firstPage} on have their first 4 bytes below {@code limit}, at most
     *         {@code maxPages}.
     */
    static int pagesToTouch(final long firstPage, final int limit, final int maxPages)
    {
        final long room = (long)limit - 4 - firstPage;
        return room < 0 ? 0 : (int)Math.min(maxPages, room / PAGE_SIZE + 1);
    }

    /** @return whether an index is full (the segment must roll). */
    boolean indexFull()
    {
        return offsetIndex.isFull() || timeIndex.isFull();
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
            offsetIndex.file().ensureRoomForOneMore();
            timeIndex.file().ensureRoomForOneMore();
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, files.offsetIndex());
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
            throw SpaceReservation.toStorageException(ex, files.log());
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

    /**
     * Log agent duty: keep a chunk of each index file reserved past its entries ({@link IndexFile#reserveAhead}),
     * and reserve blocks and pre-fault pages ahead of the writer, at most {@link #PRETOUCH_PAGES_PER_CALL} pages and
     * about {@link #PASS_BUDGET_NS} per call ({@link #prepareDistance} says how far). A full disk is not the agent's
     * error: it stops trying for a while and the writer, reserving on its own path, gets STORAGE_SPACE. Any other
     * failure to reserve index blocks fails the duty cycle (the agent reports it).
     *
     * @param aheadBytes {@code pretouch.bytes}: 0 turns preparation off.
     * @param nowMs      the log's clock, for the retry delays after a full disk.
     * @return work done (0 when nothing was needed).
     */
    int prepareAhead(final int aheadBytes, final long nowMs)
    {
        if (aheadBytes <= 0 || sealed || !prepareLock.tryLock())
        {
            return 0;
        }
        try
        {
            if (sealed || closed)
            {
                return 0;
            }
            final long startNs = System.nanoTime();
            int work = reserveIndexesAhead(nowMs);
            final int writerPosition = size();
            final int target = (int)Math.min(capacity,
                (long)writerPosition + prepareDistance(aheadBytes, writerPosition, startNs));
            for (int i = 0; i < RESERVE_CHUNKS_PER_CALL && reservedPosition < target &&
                (reserveFailedAtMs == NO_TIMESTAMP || nowMs - reserveFailedAtMs > 100) &&
                System.nanoTime() - startNs < PASS_BUDGET_NS && lock.tryLock(); i++)
            {
                try
                {
                    reserveTo((int)Math.min(target, (long)reservedPosition + RESERVE_CHUNK), false, RESERVE_CHUNK);
                    reserveFailedAtMs = NO_TIMESTAMP;
                    work++;
                }
                catch (final IOException ex)
                {
                    reserveFailedAtMs = nowMs; // the writer meets the error on its own path, typed
                }
                finally
                {
                    lock.unlock();
                }
            }
            // Never behind the writer: the pages below its position it has faulted in itself.
            final long firstPage = align(Math.max(touchedPosition, size()), PAGE_SIZE);
            final int limit = Math.min(reservedPosition, target); // below the reservation: no touch meets a hole
            final int pages = pagesToTouch(firstPage, limit, PRETOUCH_PAGES_PER_CALL);
            int touched = 0;
            while (touched < pages)
            {
                for (final int end = Math.min(pages, touched + 16); touched < end; touched++)
                {
                    // A write access: maps the page writable, changes nothing.
                    buffer.compareAndSetInt((int)(firstPage + (long)touched * PAGE_SIZE), 0, 0);
                }
                if (System.nanoTime() - startNs >= PASS_BUDGET_NS)
                {
                    break;
                }
            }
            work += touched;
            touchedPosition = (int)Math.max(touchedPosition, Math.min(firstPage + (long)touched * PAGE_SIZE, limit));
            return work;
        }
        finally
        {
            prepareLock.unlock();
        }
    }

    /**
     * Under {@link #prepareLock}: how far ahead of the writer to prepare. At least {@code aheadBytes}
     * ({@code pretouch.bytes}); for a writer that writes more than that in {@link #LEAD_NS}, what it wrote in that
     * time at its recent rate, up to {@link #LEAD_FACTOR} times {@code aheadBytes}, so that the agent stays ahead
     * through a scheduling delay of that length. The rate is sampled at most every 10 ms; it rises at once and
     * decays by halves, so a burst extends the distance at once and an idle log returns to {@code aheadBytes}.
     */
    private long prepareDistance(final int aheadBytes, final int writerPosition, final long nowNs)
    {
        if (rateSamplePosition < 0 || writerPosition < rateSamplePosition)
        {
            rateSamplePosition = writerPosition; // first pass, or a truncation: start over
            rateSampleNs = nowNs;
        }
        else if (nowNs - rateSampleNs >= RATE_SAMPLE_NS)
        {
            final long rate = (long)(writerPosition - rateSamplePosition) * 1_000_000_000L / (nowNs - rateSampleNs);
            writerBytesPerSecond = rate >= writerBytesPerSecond ? rate : (writerBytesPerSecond + rate) / 2;
            rateSamplePosition = writerPosition;
            rateSampleNs = nowNs;
        }
        return leadDistance(aheadBytes, writerBytesPerSecond);
    }

    /**
     * @param aheadBytes      {@code pretouch.bytes}, positive.
     * @param bytesPerSecond  the writer's recent rate.
     * @return the distance to keep ahead: the bytes written in {@link #LEAD_NS} at that rate, between
     *         {@code aheadBytes} and {@link #LEAD_FACTOR} times it (long arithmetic: no overflow).
     */
    static long leadDistance(final int aheadBytes, final long bytesPerSecond)
    {
        final long lead = bytesPerSecond / 1000 * (LEAD_NS / 1_000_000);
        return Math.max(aheadBytes, Math.min((long)aheadBytes * LEAD_FACTOR, lead));
    }

    /** @return the position below which blocks are reserved (tests). */
    int reservedPositionForTest()
    {
        return reservedPosition;
    }

    /** @return the position up to which the agent has pre-faulted pages (tests). */
    int touchedPosition()
    {
        prepareLock.lock();
        try
        {
            return touchedPosition;
        }
        finally
        {
            prepareLock.unlock();
        }
    }

    /** Under {@link #lock}, not sealed: keep {@link IndexFile#RESERVE_CHUNK} reserved past each index's entries. */
    private int reserveIndexesAhead(final long nowMs)
    {
        if (indexReserveFailedAtMs != NO_TIMESTAMP && nowMs - indexReserveFailedAtMs <= 100)
        {
            return 0;
        }
        IndexFile reserving = offsetIndex.file();
        try
        {
            int work = reserving.reserveAhead(IndexFile.RESERVE_CHUNK);
            reserving = timeIndex.file();
            work += reserving.reserveAhead(IndexFile.RESERVE_CHUNK);
            indexReserveFailedAtMs = NO_TIMESTAMP;
            return work;
        }
        catch (final IOException ex)
        {
            indexReserveFailedAtMs = nowMs;
            if (SpaceReservation.isOutOfSpace(ex, reserving.path()))
            {
                return 0; // the writer meets it on its own path, typed
            }
            throw new UncheckedIOException("failed to reserve " + reserving.path(), ex);
        }
    }

    /**
     * Log agent duty, about latency rather than durability: once at least half of {@code dirtyBytesMax} of full pages
     * written by the writer await writeback, write them back now ({@code msync} of that range through
     * {@code sync}), so that this log never holds more than about {@code dirtyBytesMax} of written, dirty page cache
     * and the kernel never throttles the writer (balance_dirty_pages) or makes it wait in a fault behind a large
     * writeback. Only pages below the writer's page are written back: the writer never touches them again, so it never
     * faults on a page made clean and read-only under it. The recovery point is not moved: data written back here is
     * on disk, but only a flush may say so (and a later flush of the range finds it clean, which costs little).
     * <p>
     * Runs under its own lock, never the lock the writer may take to reserve blocks, so a slow writeback delays only
     * the agent; {@link #close()} waits for a writeback in progress before it unmaps.
     *
     * @return pages written back (0 when nothing was due).
     * @throws java.io.UncheckedIOException when the writeback fails: the caller must take the log offline, because a
     *         failed writeback may have cleared the error a later fsync of the same pages would have reported.
     */
    int writeBack(final FileSync sync, final int dirtyBytesMax)
    {
        if (dirtyBytesMax <= 0)
        {
            return 0;
        }
        final int end = size() & -PAGE_SIZE;
        final int step = Math.max(PAGE_SIZE, (dirtyBytesMax / 2) & -PAGE_SIZE);
        if (end - writtenBackPosition < step || !writebackLock.tryLock())
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
            return (end - from) / PAGE_SIZE;
        }
        finally
        {
            writebackLock.unlock();
        }
    }

    /** @return the position below which the log agent has written back every full page ({@link #writeBack}). */
    int writtenBackPosition()
    {
        return writtenBackPosition;
    }

    /**
     * Walk the batches in {@code [from, limit)} (the caller has validated or trusts the content), setting the end
     * offset, max timestamp, last epoch and index schedule, and adding index entries when
     * {@code addIndexEntries}. Used when a segment is loaded. The end offset must already be that of the batch at
     * {@code from} ({@link #startTrustedReplay} or {@link #resetState}).
     * <p>
     * A batch that fails the check (structure, and its CRC when {@code verifyCrc}), or whose base offset does not
     * continue the previous batch, is damage (possible below the recovery point only through corruption of flushed
     * data). It does not end the walk: the bytes stay where they are, reads of them fail with CORRUPT_BATCH, and the
     * walk resumes at the next batch that validates with its CRC and does not go back in offsets; that batch gets an
     * index entry so that the offsets after the damage stay reachable.
     *
     * @return the position at which the walk stopped: {@code limit} (rounded up to the frame alignment when the last
     *         frame's padding lies past it), or the start of damage with no valid batch after it.
     */
    int replay(
        final int from,
        final int limit,
        final int indexIntervalBytes,
        final boolean addIndexEntries,
        final Crc32c crc,
        final boolean verifyCrc)
    {
        final BatchScanner scanner = new BatchScanner(crc, Integer.MAX_VALUE);
        try
        {
            return (int)scanner.walk(BatchScanner.mapped(buffer, limit), from, endOffset(), verifyCrc, true,
                new BatchScanner.Visitor()
                {
                    @Override
                    public boolean onBatch(
                        final long position, final DirectBuffer batch, final int index, final boolean resumed)
                    {
                        replayed((int)position, resumed, indexIntervalBytes, addIndexEntries);
                        return true;
                    }

                    @Override
                    public boolean onDamage(
                        final long position,
                        final int status,
                        final long expected,
                        final DirectBuffer batch,
                        final int index,
                        final int available)
                    {
                        damagedBatches++;
                        return true;
                    }
                });
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex); // a mapping is not read through I/O calls
        }
    }

    /** A batch {@link #replay} accepted at {@code position}: the one after damage gets an index entry. */
    private void replayed(
        final int position, final boolean resumed, final int indexIntervalBytes, final boolean addIndexEntries)
    {
        final int length = buffer.getInt(position);
        final int frameLength = RecordBatchDescriptor.frameLength(length);
        final long base = buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
        final long next = base + buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
        final long batchMaxTimestamp = buffer.getLong(position + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET);
        if (resumed && !offsetIndex.isFull() &&
            (offsetIndex.entries() == 0 || offsetIndex.offsetAt(offsetIndex.entries() - 1) < base))
        {
            offsetIndex.append(base, position);
        }
        if (addIndexEntries)
        {
            indexBatch(position, frameLength, base, batchMaxTimestamp, indexIntervalBytes);
        }
        else
        {
            bytesSinceLastIndexEntry += frameLength;
            if (batchMaxTimestamp > maxTimestamp)
            {
                maxTimestamp = batchMaxTimestamp;
            }
        }
        if (rollBaseTimeMs == NO_TIMESTAMP)
        {
            rollBaseTimeMs = buffer.getLong(position + RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET);
        }
        lastBatchEpoch = buffer.getInt(position + RecordBatchDescriptor.LEADER_EPOCH_OFFSET);
        END_OFFSET.setRelease(this, next);
    }

    /**
     * @param minBase the least base offset the batch may have (the end offset before the damage).
     * @return the first position at or after {@code from} (8-aligned) holding a batch that validates with its
     *         CRC and starts at or above {@code minBase}, or -1.
     */
    static int resync(
        final DirectBuffer buffer, final int from, final int limit, final Crc32c crc, final long minBase)
    {
        try
        {
            return (int)new BatchScanner(crc, Integer.MAX_VALUE).resync(BatchScanner.mapped(buffer, limit), from,
                minBase);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex); // a mapping is not read through I/O calls
        }
    }

    /** @return damaged batches stepped over by {@link #replay}. */
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
        final long finalTimestamp = maxTimestamp;
        if (finalTimestamp != NO_TIMESTAMP && finalTimestamp > timeIndex.lastTimestamp())
        {
            timeIndex.file().tryEnsureRoomForOneMore(); // when the disk is full: as before
            timeIndex.maybeAppend(finalTimestamp, endOffset());
        }
        offsetIndex.file().trimAndForce(sync);
        timeIndex.file().trimAndForce(sync);
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
            prepareLock.lock(); // no pass of pre-faulting is inside the pages the trim cuts off
            lock.lock();
            try
            {
                if (!closed && !trimmed)
                {
                    final long finalTimestamp = maxTimestamp;
                    if (finalTimestamp != NO_TIMESTAMP && finalTimestamp > timeIndex.lastTimestamp())
                    {
                        timeIndex.file().tryEnsureRoomForOneMore(); // when the disk is full: as before
                        timeIndex.maybeAppend(finalTimestamp, endOffset());
                    }
                    channel.truncate(size());
                    sync.force(channel, true);
                    offsetIndex.file().trimAndForce(sync);
                    timeIndex.file().trimAndForce(sync);
                    trimmed = true;
                }
            }
            finally
            {
                lock.unlock();
                prepareLock.unlock();
            }
        }
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
     * Find the batch holding an offset: from the index entry at or below it, walk the batch headers. A header that
     * does not fit (length, record count, or a base offset that does not continue the previous batch), or a batch
     * found to hold the offset whose records do not parse to its record count and length, is damage:
     * the walk checks which batch is damaged by CRC (the one before may carry a wrong length) and resumes at the
     * next batch that validates with its CRC, so damage hides only its own offsets.
     *
     * <p>
     * The index entry the walk starts from must point at the batch it names: one that does not (a wrong block of a
     * flushed index file) is found here, the index is rebuilt from the log ({@link RebuiltOffsetIndex}) and the
     * lookup goes on with it.
     *
     * @param targetOffset an offset of this segment.
     * @return position of the batch holding {@code targetOffset}, {@link #size()} if it is at or past the end,
     *         or -1 when it lies in damaged bytes.
     */
    int positionOf(final long targetOffset)
    {
        final int limit = size();
        final int entry = offsetIndex.floorEntry(targetOffset);
        final int filePosition = entry < 0 ? 0 : offsetIndex.positionAt(entry);
        final long fileOffset = entry < 0 ? baseOffset : offsetIndex.offsetAt(entry);
        final RebuiltOffsetIndex rebuilt = rebuiltIndex;
        int position = filePosition;
        long expected = fileOffset;
        if (null == rebuilt)
        {
            if (entry >= 0 && position < limit && !startsBatch(position, expected, limit))
            {
                rebuildOffsetIndex(limit, entry, expected, position);
                return positionOf(targetOffset);
            }
        }
        else
        {
            final int rebuiltEntry = rebuilt.floorEntry(targetOffset);
            position = rebuiltEntry < 0 ? 0 : rebuilt.positionAt(rebuiltEntry);
            expected = rebuiltEntry < 0 ? baseOffset : rebuilt.offsetAt(rebuiltEntry);
            if (entry >= 0 && fileOffset > expected && filePosition >= rebuilt.coveredSize() && filePosition < limit &&
                startsBatch(filePosition, fileOffset, limit))
            {
                position = filePosition; // an entry the writer added after the rebuild, past what it covers
                expected = fileOffset;
            }
        }
        int previous = -1;
        long previousBase = expected;
        while (position < limit)
        {
            final int length = limit - position >= RecordBatchDescriptor.HEADER_LENGTH ? buffer.getInt(position) : 0;
            final int count = length > 0 ?
                buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET) : 0;
            final long base = length > 0 ? buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : -1;
            final boolean damaged = length < RecordBatchDescriptor.HEADER_LENGTH || length > limit - position ||
                count <= 0 || base != expected || (base + count > targetOffset &&
                RecordBatch.validate(buffer, position, limit - position, Integer.MAX_VALUE, null) != RecordBatch.VALID);
            if (damaged)
            {
                final Crc32c crc = new Crc32c(); // damage is rare: no per-reader state for it
                int damagedAt = position;
                long damagedFrom = expected;
                if (previous >= 0 && RecordBatch.validate(buffer, previous, limit - previous, Integer.MAX_VALUE, crc) !=
                    RecordBatch.VALID)
                {
                    damagedAt = previous;
                    damagedFrom = previousBase;
                }
                final int next = resync(buffer, damagedAt + RecordBatchDescriptor.FRAME_ALIGNMENT, limit, crc,
                    damagedFrom);
                if (next < 0)
                {
                    return -1;
                }
                final long nextBase = buffer.getLong(next + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                if (targetOffset < nextBase)
                {
                    return -1;
                }
                position = next;
                expected = nextBase;
                previous = -1;
                continue;
            }
            final long next = base + count;
            if (next > targetOffset)
            {
                return position;
            }
            previous = position;
            previousBase = base;
            expected = next;
            position += RecordBatchDescriptor.frameLength(length);
        }
        return limit;
    }

    /** @return whether the batch at {@code position} is whole below {@code limit} and starts at {@code offset}. */
    private boolean startsBatch(final int position, final long offset, final int limit)
    {
        if (limit - position < RecordBatchDescriptor.HEADER_LENGTH)
        {
            return false;
        }
        final int length = buffer.getInt(position);
        return length >= RecordBatchDescriptor.HEADER_LENGTH && length <= limit - position &&
            buffer.getByte(position + RecordBatchDescriptor.MAGIC_OFFSET) == RecordBatchDescriptor.MAGIC &&
            buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET) > 0 &&
            buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) == offset;
    }

    /**
     * A lookup found an index entry that does not point at its batch: rebuild the index in memory from the log (once;
     * any thread, under the segment's lock), and remove the index file so that the next open rebuilds it too.
     */
    private void rebuildOffsetIndex(final int limit, final int entry, final long offset, final int position)
    {
        lock.lock();
        try
        {
            if (null != rebuiltIndex)
            {
                return;
            }
            rebuiltIndex = RebuiltOffsetIndex.build(buffer, baseOffset, limit);
        }
        finally
        {
            lock.unlock();
        }
        final System.Logger logger = System.getLogger(Log.class.getName());
        logger.log(System.Logger.Level.WARNING, files.offsetIndex() + ": entry " + entry + " names offset " + offset +
            " at position " + position + ", which does not hold that batch: the index is rebuilt from the log, and " +
            "the file removed so that the next open rebuilds it");
        try
        {
            Files.deleteIfExists(files.offsetIndex());
        }
        catch (final IOException ex)
        {
            logger.log(System.Logger.Level.WARNING, "could not remove " + files.offsetIndex(), ex);
        }
    }

    /** @return whether a lookup found the offset index file wrong and rebuilt the index in memory (and removed it). */
    boolean offsetIndexRebuilt()
    {
        return null != rebuiltIndex;
    }

    /** Unmap and close (idempotent). Only the log calls it, once no reader is inside. */
    void close()
    {
        prepareLock.lock();
        lock.lock();
        writebackLock.lock();
        try
        {
            if (closed)
            {
                return;
            }
            closed = true;
            IoUtil.unmap(mapping);
            offsetIndex.file().close();
            timeIndex.file().close();
            IndexFile.closeQuietly(file);
        }
        finally
        {
            writebackLock.unlock();
            lock.unlock();
            prepareLock.unlock();
        }
    }

    /**
     * Flush and trim an appendable segment's files to its data (clean shutdown). The mapping stays: a reader may
     * still be inside it (it reads only below the size, which the trim keeps); {@link #close()} unmaps it.
     */
    void trimForClose(final FileSync sync) throws IOException
    {
        prepareLock.lock();
        lock.lock();
        try
        {
            if (!closed && !trimmed)
            {
                flush(sync, size());
                if (!sealed)
                {
                    sealed = true;
                    channel.truncate(size());
                    sync.force(channel, true);
                    offsetIndex.file().trimAndForce(sync);
                    timeIndex.file().trimAndForce(sync);
                    trimmed = true;
                }
            }
        }
        finally
        {
            lock.unlock();
            prepareLock.unlock();
        }
    }

    /** Delete the segment's files (the mapping, if any, stays valid until {@link #close()}). */
    void deleteFiles() throws IOException
    {
        Files.deleteIfExists(files.log());
        Files.deleteIfExists(files.offsetIndex());
        Files.deleteIfExists(files.timeIndex());
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
