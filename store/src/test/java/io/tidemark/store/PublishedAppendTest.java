package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An append that throws did not happen, or says that it did: STORAGE_SPACE is only ever thrown before the record is
 * published (a caller that retries it does not duplicate anything), and a failure after publication (the flush that
 * follows it under {@code flush.interval.messages}) names the appended offsets.
 */
class PublishedAppendTest
{
    @TempDir
    Path root;

    /**
     * {@code flush.interval.messages=1} on a file system that fills while blocks are still reserved for the data:
     * the record goes in and is flushed, and only the checkpoint cannot be written. That append must return; the
     * checkpoint lagging the flushed data only means more work for recovery.
     */
    @Test
    void storageSpaceIsNeverThrownForARecordThatWasAppended() throws Exception
    {
        try (SmallFileSystem fs = SmallFileSystem.mountOrSkip(root.resolve("small"), 8))
        {
            final Path dir = fs.path().resolve("log");
            final Path filler = fs.path().resolve("filler");
            final LogContext ctx = new LogContext().logDir(dir).segmentBytes(4 << 20).pretouchBytes(0)
                .flushIntervalMessages(1).agentMode(LogContext.AgentMode.INVOKER);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            long appended = 0;
            int returnedOnAFullDisk = 0;
            try (Log log = Log.open(ctx))
            {
                for (int i = 0; i < 10; i++)
                {
                    value.putLong(0, i);
                    assertEquals(i, log.append(value, 0, value.capacity()));
                    appended++;
                }
                SmallFileSystem.fillUp(filler, 64 * 1024);
                StorageException refused = null;
                for (int i = 0; i < 100_000 && null == refused; i++)
                {
                    final long end = log.logEndOffset();
                    value.putLong(0, end);
                    try
                    {
                        assertEquals(end, log.append(value, 0, value.capacity()));
                        assertEquals(end + 1, log.logEndOffset());
                        appended++;
                        returnedOnAFullDisk++;
                    }
                    catch (final StorageException ex)
                    {
                        refused = ex;
                        assertEquals(StorageErrorCode.STORAGE_SPACE, ex.code(), ex.toString());
                        assertEquals(end, log.logEndOffset(), "STORAGE_SPACE was thrown for a record that is in: " +
                            ex.getMessage());
                    }
                }
                System.out.println("full disk, flush every record: " + returnedOnAFullDisk +
                    " appends returned on the full disk, then " + (null == refused ? "none refused" : refused.code()));
                assertTrue(returnedOnAFullDisk > 0, "no append went into the reserved blocks");
                Files.delete(filler);
                value.putLong(0, log.logEndOffset());
                log.append(value, 0, value.capacity());
                appended++;
            }
            try (Log log = Log.open(ctx))
            {
                assertEquals(appended, log.logEndOffset());
                final long[] next = new long[1];
                try (LogReader reader = log.openReader())
                {
                    while (reader.poll((r) ->
                    {
                        assertEquals(next[0], r.offset());
                        assertEquals(r.offset(), r.buffer().getLong(r.valueOffset()));
                        next[0]++;
                    }, Long.MAX_VALUE, 1000) > 0)
                    {
                        // read on
                    }
                }
                assertEquals(appended, next[0]);
            }
        }
    }

    /** An fsync failure after the record was published throws IO_ERROR saying the record is in the log. */
    @Test
    void aFlushFailureAfterPublicationSaysTheRecordIsIn()
    {
        final AtomicBoolean failing = new AtomicBoolean();
        final FileSync sync = new FileSync()
        {
            public void force(final MappedByteBuffer mapping, final int offset, final int length)
            {
                if (failing.get())
                {
                    throw new UncheckedIOException(new IOException("Input/output error (injected)"));
                }
                FileSync.SYSTEM.force(mapping, offset, length);
            }

            public void force(final FileChannel channel, final boolean metadata) throws IOException
            {
                FileSync.SYSTEM.force(channel, metadata);
            }

            public void forceDirectory(final Path path) throws IOException
            {
                FileSync.SYSTEM.forceDirectory(path);
            }
        };
        try (Log log = Log.open(new LogContext().logDir(root.resolve("log")).segmentBytes(1 << 20)
            .pretouchBytes(64 * 1024).flushIntervalMessages(1).agentMode(LogContext.AgentMode.INVOKER).fileSync(sync)))
        {
            assertEquals(0, TestLogs.appendText(log, "flushed"));
            failing.set(true);
            final StorageException failed = assertThrows(StorageException.class,
                () -> TestLogs.appendText(log, "in, not known durable"));
            assertEquals(StorageErrorCode.IO_ERROR, failed.code());
            assertEquals(2, log.logEndOffset());
            assertTrue(failed.getMessage().contains("offset 1 is appended"), failed.getMessage());
            assertTrue(log.isOffline());
        }
    }

}
