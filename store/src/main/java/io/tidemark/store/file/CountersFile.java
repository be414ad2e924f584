package io.tidemark.store.file;

import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.tidemark.store.format.CountersDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.CountersDescriptor.MAGIC;
import static io.tidemark.store.format.CountersDescriptor.MAGIC_OFFSET;
import static io.tidemark.store.format.CountersDescriptor.METADATA_LENGTH_OFFSET;
import static io.tidemark.store.format.CountersDescriptor.PID_OFFSET;
import static io.tidemark.store.format.CountersDescriptor.START_TIME_OFFSET;
import static io.tidemark.store.format.CountersDescriptor.VALUES_LENGTH_OFFSET;
import static io.tidemark.store.format.CountersDescriptor.VERSION;
import static io.tidemark.store.format.CountersDescriptor.VERSION_OFFSET;

/**
 * A memory-mapped file of Agrona counters ({@code counters.dat}, layout in {@link io.tidemark.store.format.CountersDescriptor}), so that a
 * tool in another process can read a running log's positions (log end offset, recovery point, ...) the way
 * AeronStat reads Aeron's.
 * <p>
 * The file is written in full (blocks reserved) before it is mapped. Owned by one process; counters may be
 * allocated and updated from any thread.
 */
public final class CountersFile implements AutoCloseable
{
    private final MappedByteBuffer mapping;
    private final CountersManager manager;
    private final CountersReader reader;
    private boolean closed;

    private CountersFile(final MappedByteBuffer mapping, final CountersManager manager, final CountersReader reader)
    {
        this.mapping = mapping;
        this.manager = manager;
        this.reader = reader;
    }

    /**
     * Create (or replace) a counters file with room for {@code maxCounters} counters.
     *
     * @param path        the file.
     * @param maxCounters capacity.
     * @param nowMs       start time to record.
     * @return the open file with its counters manager.
     * @throws IOException if it cannot be written (a full disk included).
     */
    public static CountersFile create(final Path path, final int maxCounters, final long nowMs) throws IOException
    {
        final int valuesLength = maxCounters * CountersReader.COUNTER_LENGTH;
        final int metadataLength = maxCounters * CountersReader.METADATA_LENGTH;
        final long fileLength = (long)HEADER_LENGTH + metadataLength + valuesLength;
        Files.deleteIfExists(path);
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw"))
        {
            SpaceReservation.writeZeros(file.getChannel(), 0, fileLength);
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, fileLength);
            final UnsafeBuffer header = new UnsafeBuffer(mapping, 0, HEADER_LENGTH);
            header.putInt(METADATA_LENGTH_OFFSET, metadataLength);
            header.putInt(VALUES_LENGTH_OFFSET, valuesLength);
            header.putLong(PID_OFFSET, ProcessHandle.current().pid());
            header.putLong(START_TIME_OFFSET, nowMs);
            header.putInt(VERSION_OFFSET, VERSION);
            final AtomicBuffer metadata = new UnsafeBuffer(mapping, HEADER_LENGTH, metadataLength);
            final AtomicBuffer values = new UnsafeBuffer(mapping, HEADER_LENGTH + metadataLength, valuesLength);
            header.putIntRelease(MAGIC_OFFSET, MAGIC);
            final CountersManager manager = new ConcurrentCountersManager(metadata, values);
            return new CountersFile(mapping, manager, manager);
        }
    }

    /**
     * Map an existing counters file read-only, e.g. from a monitoring tool.
     *
     * @param path the file.
     * @return the open file; use {@link #reader()}.
     * @throws IOException if it cannot be read.
     * @throws IllegalStateException if it is not a counters file.
     */
    public static CountersFile openReadOnly(final Path path) throws IOException
    {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "r"))
        {
            final long length = file.length();
            if (length < HEADER_LENGTH)
            {
                throw new IllegalStateException(path + " is too short to be a counters file");
            }
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, length);
            final UnsafeBuffer header = new UnsafeBuffer(mapping, 0, HEADER_LENGTH);
            final int metadataLength = header.getInt(METADATA_LENGTH_OFFSET);
            final int valuesLength = header.getInt(VALUES_LENGTH_OFFSET);
            if (header.getIntAcquire(MAGIC_OFFSET) != MAGIC || header.getInt(VERSION_OFFSET) != VERSION || metadataLength < 0 ||
                valuesLength < 0 || (long)HEADER_LENGTH + metadataLength + valuesLength != length)
            {
                IoUtil.unmap(mapping);
                throw new IllegalStateException(path + " is not a Tidemark counters file");
            }
            final CountersReader reader = new CountersReader(
                new UnsafeBuffer(mapping, HEADER_LENGTH, metadataLength),
                new UnsafeBuffer(mapping, HEADER_LENGTH + metadataLength, valuesLength));
            return new CountersFile(mapping, null, reader);
        }
    }

    /** @return the manager to allocate counters from (null when opened read-only). */
    public CountersManager manager()
    {
        return manager;
    }

    /** @return a reader over the counters. */
    public CountersReader reader()
    {
        return reader;
    }

    /** @return the process id recorded by the writer. */
    public long pid()
    {
        return new UnsafeBuffer(mapping, 0, HEADER_LENGTH).getLong(PID_OFFSET);
    }

    /** Unmap the file (idempotent). Counters allocated from it must not be used afterwards. */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            IoUtil.unmap(mapping);
        }
    }
}
