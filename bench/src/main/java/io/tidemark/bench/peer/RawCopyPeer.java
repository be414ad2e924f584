package io.tidemark.bench.peer;

import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * The floor: a raw copy of each record into a memory-mapped file, nothing else (no header, checksum, index,
 * publication or roll). The file (256 MiB) is mapped once and every page is touched before measuring, so no copy
 * takes a page fault; records are placed 8-byte aligned, wrapping to the start at the end. No tailer.
 */
final class RawCopyPeer implements Peer
{
    static final long FILE_BYTES = 256L << 20;

    private RandomAccessFile file;
    private MappedByteBuffer mapping;
    private UnsafeBuffer mapped;
    private UnsafeBuffer value;
    private int size;
    private int step;
    private long position;
    private long limit;

    @Override
    public void open(final Path dir, final int size) throws java.io.IOException
    {
        this.size = size;
        this.step = BitUtil.align(size, 8);
        value = new UnsafeBuffer(BufferUtil.allocateDirectAligned(BitUtil.align(Math.max(size, 64), 64), 64), 0,
            size);
        for (int i = 0; i < size; i++)
        {
            value.putByte(i, (byte)('a' + i % 26));
        }
        file = new RandomAccessFile(dir.resolve("raw.dat").toFile(), "rw");
        file.setLength(FILE_BYTES);
        mapping = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES);
        mapped = new UnsafeBuffer(mapping);
        for (long at = 0; at < FILE_BYTES; at += 4096)
        {
            mapped.putByte((int)at, (byte)0);
        }
        limit = FILE_BYTES - step;
    }

    @Override
    public void append(final long stamp)
    {
        value.putLong(0, stamp);
        mapped.putBytes((int)position, value, 0, size);
        position += step;
        if (position > limit)
        {
            position = 0;
        }
    }

    @Override
    public Tailer openTailer()
    {
        return null;
    }

    @Override
    public void close() throws java.io.IOException
    {
        if (null != mapping)
        {
            IoUtil.unmap(mapping);
        }
        if (null != file)
        {
            file.close();
        }
    }
}
