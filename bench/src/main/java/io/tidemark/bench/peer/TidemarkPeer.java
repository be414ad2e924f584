package io.tidemark.bench.peer;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.RecordView;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.function.LongConsumer;

/**
 * Tidemark's {@link Log} with its defaults (page-cache durability: no flush by count or time; agent DEDICATED,
 * pre-faulting pages ahead of the writer; CRC verified on read), one record per batch through
 * {@link Log#append(org.agrona.DirectBuffer, int, int)}. Segments of 1 GiB; {@code retention.bytes} of 2 GiB so
 * that a long throughput run does not fill the disk.
 */
final class TidemarkPeer implements Peer
{
    private final long dirtyBytesMax;
    private Log log;
    private UnsafeBuffer value;
    private int size;

    /** With the store's default {@code dirty.bytes.max}. */
    TidemarkPeer()
    {
        this(LogContext.DEFAULT_DIRTY_BYTES_MAX);
    }

    /** @param dirtyBytesMax the log's {@code dirty.bytes.max} (0: writeback left to the kernel). */
    TidemarkPeer(final long dirtyBytesMax)
    {
        this.dirtyBytesMax = dirtyBytesMax;
    }

    @Override
    public void open(final Path dir, final int size)
    {
        this.size = size;
        value = new UnsafeBuffer(BufferUtil.allocateDirectAligned(BitUtil.align(Math.max(size, 64), 64), 64), 0,
            size);
        for (int i = 0; i < size; i++)
        {
            value.putByte(i, (byte)('a' + i % 26));
        }
        log = Log.open(new LogContext()
            .logDir(dir.resolve("log"))
            .segmentBytes(1L << 30)
            .retentionBytes(2L << 30)
            .retentionCheckIntervalMs(1_000)
            .dirtyBytesMax(dirtyBytesMax));
    }

    @Override
    public void append(final long stamp)
    {
        value.putLong(0, stamp);
        log.append(value, 0, size);
    }

    @Override
    public Tailer openTailer()
    {
        final LogReader reader = log.openReader();
        reader.seekToEnd();
        return new Tailer()
        {
            private LongConsumer target;
            private final RecordHandler handler = this::onRecord;

            private void onRecord(final RecordView record)
            {
                target.accept(record.buffer().getLong(record.valueOffset()));
            }

            @Override
            public int poll(final LongConsumer consumer)
            {
                target = consumer;
                return reader.poll(handler, Long.MAX_VALUE, 64);
            }

            @Override
            public void close()
            {
                reader.close();
            }
        };
    }

    @Override
    public void close()
    {
        if (null != log)
        {
            log.close();
        }
    }
}
