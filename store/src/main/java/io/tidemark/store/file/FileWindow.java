package io.tidemark.store.file;

import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.RecordBatchDescriptor;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;

/**
 * A sliding window over a file, filled by positional reads, for recovery scans. Recovery never reads a segment
 * file through a mapping: an active segment is a sparse file, and on some file systems (tmpfs) a read fault on a
 * hole allocates a page, so a full file system answers it with SIGBUS; {@code read(2)} of a hole returns zeros
 * without allocating. Single-threaded.
 * <p>
 * Internal: public only so that the store's recovery and its inspection tools share it; not part of the API.
 */
public final class FileWindow implements BatchScanner.Source
{
    private static final int INITIAL_CAPACITY = 1024 * 1024;

    private FileChannel channel;
    private long fileLength;
    private final int maxCapacity;
    private final UnsafeBuffer view = new UnsafeBuffer(new byte[0]);
    private ByteBuffer bytes;
    private long start;
    private int filled;

    /**
     * @param channel     the file, open for reading.
     * @param fileLength  its length.
     * @param maxCapacity the most bytes one {@link #load} may need (the largest batch accepted).
     */
    public FileWindow(final FileChannel channel, final long fileLength, final int maxCapacity)
    {
        this.channel = channel;
        this.fileLength = fileLength;
        this.maxCapacity = Math.max(maxCapacity, RecordBatchDescriptor.HEADER_LENGTH);
        this.bytes = ByteBuffer.allocateDirect(Math.min(INITIAL_CAPACITY, this.maxCapacity))
            .order(ByteOrder.LITTLE_ENDIAN);
        this.view.wrap(bytes);
    }

    /**
     * Point the window at another file (or the same file again), keeping its buffer: a tool that walks many files,
     * or one file many times, allocates it once.
     *
     * @return this.
     */
    public FileWindow wrap(final FileChannel channel, final long fileLength)
    {
        this.channel = channel;
        this.fileLength = fileLength;
        this.start = 0;
        this.filled = 0;
        return this;
    }

    @Override
    public long fileLength()
    {
        return fileLength;
    }

    /** @return the window's bytes; index {@code i} holds the file's byte at {@code start + i}. */
    @Override
    public UnsafeBuffer buffer()
    {
        return view;
    }

    /**
     * Make {@code [position, position + length)} readable, as far as the file holds it (and at most
     * {@code maxCapacity} bytes).
     *
     * @return the index of {@code position} in {@link #buffer()}.
     */
    @Override
    public int load(final long position, final int length) throws IOException
    {
        final long wanted = Math.min(Math.min(length, maxCapacity), Math.max(0, fileLength - position));
        if (position >= start && position + wanted <= start + filled)
        {
            return (int)(position - start);
        }
        if (wanted > bytes.capacity())
        {
            bytes = ByteBuffer.allocateDirect((int)Math.min(maxCapacity, Math.max(wanted, 2L * bytes.capacity())))
                .order(ByteOrder.LITTLE_ENDIAN);
            view.wrap(bytes);
        }
        bytes.clear();
        bytes.limit((int)Math.min(bytes.capacity(), Math.max(0, fileLength - position)));
        while (bytes.hasRemaining())
        {
            if (channel.read(bytes, position + bytes.position()) < 0)
            {
                break;
            }
        }
        start = position;
        filled = bytes.position();
        return 0;
    }

    /** @return bytes readable in the window from {@code position} (which it holds). */
    @Override
    public int available(final long position)
    {
        return (int)(start + filled - position);
    }

    /**
     * Scan forward from {@code from} for the end of non-zero data. Stops at the file end or after
     * {@code zeroRun} zero bytes in a row: data ({@code maxCapacity}-long batches with non-zero headers) never holds
     * such a run, and whatever lies beyond one is never read as data.
     *
     * @return the position after the last non-zero byte found, or {@code from}.
     */
    @Override
    public long dataEnd(final long from, final long zeroRun) throws IOException
    {
        long end = from;
        long position = from;
        while (position < fileLength && position - end < zeroRun)
        {
            final int at = load(position, bytes.capacity());
            final int got = available(position);
            if (got <= 0)
            {
                break;
            }
            int last = got;
            while (last >= 8 && view.getLong(at + last - 8) == 0)
            {
                last -= 8;
            }
            while (last > 0 && view.getByte(at + last - 1) == 0)
            {
                last--;
            }
            if (last > 0)
            {
                end = position + last;
            }
            position += got;
        }
        return end;
    }
}
