package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A full disk gives STORAGE_SPACE on append, never a SIGBUS, loses nothing, and heals when space returns. */
class DiskFullTest
{
    @TempDir
    Path root;

    @Test
    void appendsFailTypedWhenTheDiskIsFullAndWorkAgainOnceSpaceIsFreed() throws Exception
    {
        try (SmallFileSystem fs = SmallFileSystem.mountOrSkip(root.resolve("small"), 6))
        {
            final Path filler = fs.path().resolve("filler");
            Files.write(filler, new byte[1024 * 1024]);
            final Path dir = fs.path().resolve("log");
            final CachedEpochClock clock = new CachedEpochClock();
            final LogContext ctx = new LogContext().logDir(dir).segmentBytes(1 << 20).segmentIndexBytes(64 * 1024)
                .pretouchBytes(256 * 1024).epochClock(clock);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
            long appended = 0;
            StorageException full = null;
            try (Log log = Log.open(ctx))
            {
                for (int i = 0; i < 100_000 && null == full; i++)
                {
                    value.putLong(0, i);
                    try
                    {
                        assertEquals(appended, log.append(value, 0, value.capacity()));
                        appended++;
                    }
                    catch (final StorageException ex)
                    {
                        full = ex;
                    }
                }
                assertTrue(null != full, "the 6 MiB file system never filled");
                assertEquals(StorageErrorCode.STORAGE_SPACE, full.code(), full.toString());
                assertEquals(appended, log.logEndOffset());
                final long[] more = new long[1];
                assertEquals(StorageErrorCode.STORAGE_SPACE, assertThrowsStorage(log, value, more).code(),
                    "still full: still typed");
                appended += more[0]; // a few may fit in the blocks the agent had reserved ahead
                assertEquals(appended, log.logEndOffset());
                assertIntact(log, appended);
                Files.delete(filler);
                value.putLong(0, log.logEndOffset());
                log.append(value, 0, value.capacity());
                appended++;
            }
            try (Log log = Log.open(new LogContext().logDir(dir).segmentBytes(1 << 20).segmentIndexBytes(64 * 1024)
                .pretouchBytes(256 * 1024).epochClock(clock)))
            {
                assertEquals(appended, log.logEndOffset());
                assertIntact(log, appended);
                log.append(value, 0, value.capacity());
            }
            System.out.println("disk-full: appended=" + appended + " error=" + full.code());
        }
    }

    private static StorageException assertThrowsStorage(final Log log, final UnsafeBuffer value, final long[] appended)
    {
        try
        {
            for (int i = 0; i < 10_000; i++)
            {
                value.putLong(0, log.logEndOffset());
                log.append(value, 0, value.capacity());
                appended[0]++;
            }
        }
        catch (final StorageException ex)
        {
            return ex;
        }
        throw new AssertionError("appends kept succeeding on a full disk");
    }

    private static void assertIntact(final Log log, final long count)
    {
        final long[] next = new long[1];
        try (LogReader reader = log.openReader())
        {
            while (reader.poll((r) ->
            {
                assertEquals(next[0], r.offset());
                if (r.offset() < count - 1)
                {
                    assertEquals(r.offset(), r.buffer().getLong(r.valueOffset()));
                }
                next[0]++;
            }, Long.MAX_VALUE, 1000) > 0)
            {
                // read on
            }
        }
        assertTrue(next[0] >= count - 1);
    }
}
