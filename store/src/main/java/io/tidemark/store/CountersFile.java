package io.tidemark.store;

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

/**
 * A memory-mapped file of Agrona counters, so that a tool in another process can read a running log's positions
 * (log end offset, recovery point, ...) the way AeronStat reads Aeron's.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Magic 'TMCN' (0x4E434D54)                 |  0
 *  +---------------------------------------------------------------+
 *  |                          Version (1)                          |  4
 *  +---------------------------------------------------------------+
 *  |                     Metadata buffer length                    |  8
 *  +---------------------------------------------------------------+
 *  |                      Values buffer length                     | 12
 *  +---------------------------------------------------------------+
 *  |                   Process id of the writer                    | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Start time (epoch millis)                    | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                     (zero up to byte 128)                    ...  32
 *  +---------------------------------------------------------------+
 *  |                 Metadata buffer (Agrona layout)              ... 128
 *  +---------------------------------------------------------------+
 *  |                  Values buffer (Agrona layout)               ...
 *  +---------------------------------------------------------------+
 * </pre>
 * The file is written in full (blocks reserved) before it is mapped. Owned by one process; counters may be
 * allocated and updated from any thread.
 */
public final class CountersFile implements AutoCloseable
{
    /** Magic number of the file. */
    public static final int MAGIC = 0x4E434D54;
    /** Format version. */
    public static final int VERSION = 1;
    /** Offset of the metadata buffer length. */
    public static final int METADATA_LENGTH_OFFSET = 8;
    /** Offset of the values buffer length. */
    public static final int VALUES_LENGTH_OFFSET = 12;
    /** Offset of the writer's process id. */
    public static final int PID_OFFSET = 16;
    /** Offset of the start time. */
    public static final int START_TIME_OFFSET = 24;
    /** Length of the header. */
    public static final int HEADER_LENGTH = 128;

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
            header.putInt(4, VERSION);
            final AtomicBuffer metadata = new UnsafeBuffer(mapping, HEADER_LENGTH, metadataLength);
            final AtomicBuffer values = new UnsafeBuffer(mapping, HEADER_LENGTH + metadataLength, valuesLength);
            header.putIntRelease(0, MAGIC);
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
            if (header.getIntAcquire(0) != MAGIC || header.getInt(4) != VERSION || metadataLength < 0 ||
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
