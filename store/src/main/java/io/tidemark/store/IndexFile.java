package io.tidemark.store;

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

/**
 * A memory-mapped file of fixed-size index entries, shared by {@link OffsetIndex} and {@link TimeIndex}.
 * <p>
 * An appendable index file is pre-sized to its maximum number of entries and every block of it is reserved by
 * writing zeros through the file channel before it is mapped, so that an entry write can never hit an unbacked
 * page (SIGBUS) when the disk is full. A sealed index is trimmed to its entries. The entry count is published with
 * release semantics after the entry is written; lookups read it with acquire and never look past it.
 * <p>
 * Single writer (the log's writer thread); any number of concurrent readers. One owner per mapping: the segment
 * that holds it unmaps it in {@link #close()}.
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

    private static final int RESERVE_CHUNK = 64 * 1024;

    private final Path path;
    private final FileChannel channel;
    private final MappedByteBuffer mapping;
    private final UnsafeBuffer buffer;
    private final int entryLength;
    private final int maxEntries;
    @SuppressWarnings("unused") // accessed through the ENTRIES VarHandle
    private volatile int entries;
    private long reservedBytes;
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
            index.ensureRoomForOneMore();
            return index;
        }
        catch (final IOException | RuntimeException ex)
        {
            closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Make sure the blocks for one more entry exist (reserving a chunk ahead), so that the entry write that
     * follows a batch can never fault for lack of space. Writer thread.
     *
     * @throws IOException when the disk is full.
     */
    void ensureRoomForOneMore() throws IOException
    {
        final long needed = Math.min((long)(entries() + 1) * entryLength, (long)maxEntries * entryLength);
        if (needed > reservedBytes)
        {
            final long target = Math.min((long)maxEntries * entryLength, reservedBytes + RESERVE_CHUNK);
            SpaceReservation.writeZeros(channel, reservedBytes, target - reservedBytes);
            reservedBytes = target;
        }
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
        final int count = entries();
        sync.force(mapping, 0, count * entryLength);
        channel.truncate((long)count * entryLength);
        reservedBytes = Math.min(reservedBytes, (long)count * entryLength);
        sync.force(channel, true);
    }

    void force(final FileSync sync)
    {
        sync.force(mapping, 0, entries() * entryLength);
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            IoUtil.unmap(mapping);
            closeQuietly(channel);
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
