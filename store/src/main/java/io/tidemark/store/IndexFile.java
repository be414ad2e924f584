package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.SpaceReservation;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A memory-mapped file of fixed-size index entries, shared by {@link OffsetIndex} and {@link TimeIndex}.
 * <p>
 * An appendable index file is pre-sized (sparse) to its maximum number of entries and its blocks are reserved, a
 * chunk at a time, by writing zeros through the file channel before any entry is written to them through the
 * mapping, so that an entry write can never hit an unbacked page (SIGBUS) when the disk is full. A sealed index is
 * trimmed to its entries. The entry count is published with release semantics after the entry is written; lookups
 * read it with acquire and never look past it.
 * <p>
 * <b>Reservation ahead.</b> The log agent keeps at least {@link #RESERVE_CHUNK} bytes reserved past the entries
 * written ({@link #reserveAhead}), and pre-faults the pages it reserved, so that in steady state the writer never
 * makes the {@code write(2)} call itself nor takes a page fault on an entry store;
 * the writer's {@link #ensureRoomForOneMore()} only checks and, when the agent has fallen behind (or is not run),
 * reserves the chunk itself: correctness never depends on the agent. Reserved but unwritten bytes are zeros past
 * the last entry, which is what recovery expects of an index tail whether the agent or the writer wrote them.
 * <p>
 * Threads: the log's writer (or the thread loading or truncating the log before the agent can see the segment) is
 * the single writer of entries ({@link #publishEntry()}, {@link #truncateEntries}); the agent and the writer both
 * reserve. {@code reserveLock} guards every change of {@code reservedBytes}, the file's length and blocks past the
 * entries, {@code trimmed} and {@code closed}; the agent only tries it (it never waits for the writer), the writer
 * takes it only on its fallback path. {@code reservedBytes} is volatile so that the writer's check needs no lock.
 * Any number of concurrent readers. One owner per mapping: the segment that holds it unmaps it in {@link #close()}.
 */
final class IndexFile implements AutoCloseable
{
    private static final VarHandle ENTRIES;

    static
    {
        try
        {
            ENTRIES = MethodHandles.lookup().findVarHandle(IndexFile.class, "entries", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Bytes reserved at a time, and the least headroom the agent keeps reserved past the entries. */
    static final int RESERVE_CHUNK = 64 * 1024;
    /** Most chunks the agent reserves per call, so that one duty cycle stays short. */
    private static final int RESERVE_CHUNKS_PER_CALL = 4;

    private final Path path;
    private final FileChannel channel;
    private final MappedByteBuffer mapping;
    private final UnsafeBuffer buffer;
    private final int entryLength;
    private final int maxEntries;
    @SuppressWarnings("unused") // accessed through the ENTRIES VarHandle
    private volatile int entries;
    private final ReentrantLock reserveLock = new ReentrantLock();
    /** Blocks below it exist on disk. Written under {@code reserveLock} only; read without it by the writer. */
    private volatile long reservedBytes;
    /** Reservations made on demand (the writer's fallback), not ahead by the agent; a count for tests. */
    private volatile long onDemandReservations;
    private boolean trimmed;
    private boolean closed;

    private IndexFile(
        final Path path,
        final FileChannel channel,
        final MappedByteBuffer mapping,
        final int entryLength,
        final int maxEntries,
        final int entries)
    {
        this.path = path;
        this.channel = channel;
        this.mapping = mapping;
        this.buffer = new UnsafeBuffer(mapping);
        this.entryLength = entryLength;
        this.maxEntries = maxEntries;
        this.entries = entries;
    }

    /**
     * Open an index for appending: keep its first {@code keepEntries} entries, zero the rest, size it (sparse) for
     * {@code maxEntries} and map it read-write. Blocks are reserved in chunks ahead of the entries
     * ({@link #ensureRoomForOneMore()}). With {@code mayShrink} false the file is never cut shorter (an older
     * mapping of it may still be read), only zeroed.
     */
    static IndexFile openForAppend(
        final Path path, final int entryLength, final int maxEntries, final int keepEntries, final boolean mayShrink)
        throws IOException
    {
        final RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw");
        final FileChannel channel = file.getChannel();
        try
        {
            final long keepBytes = (long)keepEntries * entryLength;
            final long maxBytes = (long)maxEntries * entryLength;
            long reserved = keepBytes;
            if (mayShrink)
            {
                file.setLength(keepBytes);
            }
            else if (file.length() > keepBytes)
            {
                SpaceReservation.writeZeros(channel, keepBytes, file.length() - keepBytes);
                reserved = file.length();
            }
            if (file.length() < maxBytes)
            {
                file.setLength(maxBytes);
            }
            final MappedByteBuffer mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, maxBytes);
            final IndexFile index = new IndexFile(path, channel, mapping, entryLength, maxEntries, keepEntries);
            index.reservedBytes = Math.min(reserved, maxBytes);
            if (index.needsRoomForOneMore())
            {
                index.reserveChunk(); // not yet shared: no lock needed, and not counted as on demand
            }
            return index;
        }
        catch (final IOException | RuntimeException ex)
        {
            closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Make sure the blocks for one more entry exist, so that the entry write that follows a batch can never fault
     * for lack of space. Normally the agent has reserved them ahead and this is one volatile read; when it has not
     * (it fell behind, or no agent runs), reserve the next chunk here. Writer thread.
     *
     * @throws IOException when the disk is full (or the write failed); nothing is reserved then.
     */
    void ensureRoomForOneMore() throws IOException
    {
        if (!needsRoomForOneMore())
        {
            return;
        }
        reserveLock.lock();
        try
        {
            if (needsRoomForOneMore()) // the agent may have reserved it while this thread waited for the lock
            {
                reserveChunk();
                onDemandReservations = onDemandReservations + 1; // under reserveLock: one writer at a time
            }
        }
        finally
        {
            reserveLock.unlock();
        }
    }

    /**
     * {@link #ensureRoomForOneMore()} for an entry written off the append path that must not fail on a full disk
     * (the final time index entry of a sealed segment).
     *
     * @return whether room for one more entry is reserved.
     */
    boolean tryEnsureRoomForOneMore()
    {
        try
        {
            ensureRoomForOneMore();
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /**
     * Log agent duty: keep at least {@code headroomBytes} reserved past the written entries (up to the maximum),
     * a bounded number of chunks per call. Never waits: when the writer is reserving, the agent leaves it.
     *
     * @param headroomBytes bytes to keep reserved past the entries.
     * @return chunks reserved (0 when none were needed, or the lock was busy, or the index is trimmed or closed).
     * @throws IOException when the disk is full or the write failed; what was reserved before stays reserved.
     */
    int reserveAhead(final int headroomBytes) throws IOException
    {
        final long target = Math.min(maxBytes(), (long)entries() * entryLength + headroomBytes);
        if (target <= reservedBytes || !reserveLock.tryLock())
        {
            return 0;
        }
        try
        {
            int chunks = 0;
            while (!closed && !trimmed && reservedBytes < target && chunks < RESERVE_CHUNKS_PER_CALL)
            {
                final long from = reservedBytes;
                reserveChunk();
                touch(from, reservedBytes);
                chunks++;
            }
            return chunks;
        }
        finally
        {
            reserveLock.unlock();
        }
    }

    /**
     * Pre-fault the whole pages of {@code [from, to)}, reserved just now, with a write access that changes nothing
     * (a compare-and-set of 0 to 0: an entry the writer stores there meanwhile is never overwritten), so that the
     * writer's entry stores do not fault. Under {@code reserveLock}: no trim or close cuts the pages away meanwhile.
     */
    private void touch(final long from, final long to)
    {
        for (long page = (from + Segment.PAGE_SIZE - 1) & -Segment.PAGE_SIZE; page + Integer.BYTES <= to;
            page += Segment.PAGE_SIZE)
        {
            buffer.compareAndSetInt((int)page, 0, 0);
        }
    }

    /** @return reservations made on demand by {@link #ensureRoomForOneMore()} rather than ahead by the agent. */
    long onDemandReservations()
    {
        return onDemandReservations;
    }

    /** @return bytes from the start of the file whose blocks are reserved. */
    long reservedBytes()
    {
        return reservedBytes;
    }

    private boolean needsRoomForOneMore()
    {
        return Math.min((long)(entries() + 1) * entryLength, maxBytes()) > reservedBytes;
    }

    private long maxBytes()
    {
        return (long)maxEntries * entryLength;
    }

    /**
     * Reserve the next chunk: zeros from the reserved end, or from the end of the entries when entries were written
     * past it (a rebuild by replay adds entries without reserving), so that no written entry is ever overwritten.
     * Caller holds {@code reserveLock} (or is the only thread that knows this index).
     */
    private void reserveChunk() throws IOException
    {
        final long from = Math.max(reservedBytes, (long)entries() * entryLength);
        final long to = Math.min(maxBytes(), from + RESERVE_CHUNK);
        if (to > from)
        {
            SpaceReservation.writeZeros(channel, from, to - from);
        }
        reservedBytes = Math.max(reservedBytes, to);
    }

    /**
     * Open a sealed index read-only, trusting its length for the entry count.
     *
     * @return the index, or null when its length is not a whole number of entries.
     */
    static IndexFile openSealed(final Path path, final int entryLength) throws IOException
    {
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.READ);
        try
        {
            final long size = channel.size();
            if (size % entryLength != 0 || size / entryLength > Integer.MAX_VALUE / entryLength)
            {
                channel.close();
                return null;
            }
            final int count = (int)(size / entryLength);
            final MappedByteBuffer mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, size);
            return new IndexFile(path, channel, mapping, entryLength, count, count);
        }
        catch (final IOException | RuntimeException ex)
        {
            closeQuietly(channel);
            throw ex;
        }
    }

    Path path()
    {
        return path;
    }

    UnsafeBuffer buffer()
    {
        return buffer;
    }

    int entryLength()
    {
        return entryLength;
    }

    int maxEntries()
    {
        return maxEntries;
    }

    /** @return the number of published entries (acquire). */
    int entries()
    {
        return (int)ENTRIES.getAcquire(this);
    }

    boolean isFull()
    {
        return entries() >= maxEntries;
    }

    /** Publish one more entry, already written at index {@code entries()} (release). */
    void publishEntry()
    {
        ENTRIES.setRelease(this, entries() + 1);
    }

    /** Forget entries from {@code count} on. */
    void truncateEntries(final int count)
    {
        if (count < entries())
        {
            buffer.setMemory(count * entryLength, (entries() - count) * entryLength, (byte)0);
            ENTRIES.setRelease(this, count);
        }
    }

    /** Cut the file to its entries (the mapping stays valid for them) and make that durable. */
    void trimAndForce(final FileSync sync) throws IOException
    {
        reserveLock.lock();
        try
        {
            trimmed = true; // from now on the agent reserves nothing here: the file must stay cut to its entries
            final int count = entries();
            sync.force(mapping, 0, count * entryLength);
            channel.truncate((long)count * entryLength);
            reservedBytes = Math.min(reservedBytes, (long)count * entryLength);
            sync.force(channel, true);
        }
        finally
        {
            reserveLock.unlock();
        }
    }

    void force(final FileSync sync)
    {
        sync.force(mapping, 0, entries() * entryLength);
    }

    @Override
    public void close()
    {
        reserveLock.lock();
        try
        {
            if (!closed)
            {
                closed = true;
                IoUtil.unmap(mapping);
                closeQuietly(channel);
            }
        }
        finally
        {
            reserveLock.unlock();
        }
    }

    static void closeQuietly(final AutoCloseable closeable)
    {
        try
        {
            if (null != closeable)
            {
                closeable.close();
            }
        }
        catch (final Exception ignore)
        {
            // nothing more can be done; the caller is already handling a failure or closing
        }
    }
}
