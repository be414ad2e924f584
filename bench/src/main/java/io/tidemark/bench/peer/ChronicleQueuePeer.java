package io.tidemark.bench.peer;

import net.openhft.chronicle.bytes.Bytes;
import net.openhft.chronicle.queue.ChronicleQueue;
import net.openhft.chronicle.queue.ExcerptAppender;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

import java.nio.file.Path;
import java.util.function.LongConsumer;

/**
 * Chronicle Queue (open-source edition) with its defaults (daily roll cycle, binary wire, page-cache durability),
 * one excerpt per record written in place through {@code writingDocument()}; the tailer reads with
 * {@code readingDocument()}. Loaded only in a forked peer JVM; on Java 17+ its memory mapping needs the
 * {@code --add-opens} flags of {@link io.tidemark.bench.JvmFlags#CHRONICLE_QUEUE_JVM_ARGS}, which only this peer's
 * JVM gets; without them it fails at {@link #open} and the failure is what the report records.
 */
final class ChronicleQueuePeer implements Peer
{
    private ChronicleQueue queue;
    private ExcerptAppender appender;
    private byte[] filler;

    @Override
    public void open(final Path dir, final int size)
    {
        // Chronicle's usage analytics are excluded from the build; this switches them off should they be present.
        System.setProperty("chronicle.analytics.disable", "true");
        filler = new byte[size - 8];
        for (int i = 0; i < filler.length; i++)
        {
            filler[i] = (byte)('a' + i % 26);
        }
        queue = SingleChronicleQueueBuilder.single(dir.resolve("queue").toFile()).build();
        appender = queue.createAppender();
    }

    @Override
    public void append(final long stamp)
    {
        try (DocumentContext dc = appender.writingDocument())
        {
            final Bytes<?> bytes = dc.wire().bytes();
            bytes.writeLong(stamp);
            bytes.write(filler);
        }
    }

    @Override
    public Tailer openTailer()
    {
        final ExcerptTailer tailer = queue.createTailer().toEnd();
        // Created here, polled by the tailer thread, closed here after that thread is joined: one thread at a time,
        // ordered by Thread.start and Thread.join, which Chronicle's owner-thread check cannot see.
        tailer.singleThreadedCheckDisabled(true);
        return new Tailer()
        {
            @Override
            public int poll(final LongConsumer handler)
            {
                int read = 0;
                while (read < 64)
                {
                    try (DocumentContext dc = tailer.readingDocument())
                    {
                        if (!dc.isPresent())
                        {
                            break;
                        }
                        handler.accept(dc.wire().bytes().readLong());
                        read++;
                    }
                }
                return read;
            }

            @Override
            public void close()
            {
                tailer.close();
            }
        };
    }

    @Override
    public void close()
    {
        if (null != appender)
        {
            appender.close();
        }
        if (null != queue)
        {
            queue.close();
        }
    }
}
