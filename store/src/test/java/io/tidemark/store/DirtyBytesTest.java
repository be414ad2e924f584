package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.tidemark.store.TestLogs.readAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code dirty.bytes.max}: the agent writes back what the writer wrote, in whole pages below the writer, without
 * ever moving the recovery point; a failed writeback takes the log offline like a failed flush.
 */
class DirtyBytesTest
{
    private static final int DIRTY_MAX = 16 * 1024;

    @TempDir
    Path root;

    private final CachedEpochClock clock = new CachedEpochClock();
    private final List<long[]> writebacks = new ArrayList<>();
    private final AtomicBoolean failSyncs = new AtomicBoolean();

    private final FileSync sync = new FileSync()
    {
        public void force(final MappedByteBuffer mapping, final int offset, final int length)
        {
            if (failSyncs.get())
            {
                throw new UncheckedIOException(new IOException("injected: Input/output error"));
            }
            writebacks.add(new long[]{offset, length});
            FileSync.SYSTEM.force(mapping, offset, length);
        }

        public void force(final FileChannel channel, final boolean metadata) throws IOException
        {
            FileSync.SYSTEM.force(channel, metadata);
        }

        public void forceDirectory(final Path dir) throws IOException
        {
            FileSync.SYSTEM.forceDirectory(dir);
        }
    };

    private LogContext context(final long dirtyBytesMax)
    {
        clock.update(1_000L);
        return TestLogs.context(root.resolve("log"), clock)
            .segmentBytes(1024 * 1024)
            .dirtyBytesMax(dirtyBytesMax)
            .fileSync(sync);
    }

    private static void appendRecords(final Log log, final int count)
    {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        for (int i = 0; i < count; i++)
        {
            value.putInt(0, i);
            log.append(value, 0, value.capacity());
        }
    }

    @Test
    void writtenPagesAreWrittenBackBelowTheWriterAndTheRecoveryPointStays()
    {
        try (Log log = Log.open(context(DIRTY_MAX)))
        {
            final Segment active = log.activeSegmentForTest();
            int lastWrittenBack = 0;
            for (int round = 0; round < 20; round++)
            {
                appendRecords(log, 100); // 18,400 bytes a round: more than half the budget
                log.invokeAgent();
                final int size = active.size();
                final int writtenBack = active.writtenBackPosition();
                assertEquals(0, writtenBack % Segment.PAGE_SIZE, "whole pages only");
                assertTrue(writtenBack <= (size & -Segment.PAGE_SIZE), "never the page the writer is on");
                assertTrue(size - writtenBack < DIRTY_MAX, "written but not written back: " + (size - writtenBack));
                assertTrue(writtenBack >= lastWrittenBack);
                lastWrittenBack = writtenBack;
            }
            assertTrue(lastWrittenBack > 0);
            assertTrue(writebacks.size() >= 10, "writebacks: " + writebacks.size());
            for (final long[] range : writebacks)
            {
                assertTrue(range[1] >= DIRTY_MAX / 2 && range[0] % Segment.PAGE_SIZE == 0, "range " + range[0] +
                    "+" + range[1]);
            }
            assertEquals(0, log.recoveryPoint(), "writeback is not a flush: the recovery point does not move");
            log.flush();
            assertEquals(2000, log.recoveryPoint());
            assertEquals(2000, readAll(log).size());
        }
    }

    @Test
    void zeroLeavesWritebackToTheKernel()
    {
        try (Log log = Log.open(context(0)))
        {
            appendRecords(log, 2000);
            log.invokeAgent();
            assertEquals(0, log.activeSegmentForTest().writtenBackPosition());
            assertTrue(writebacks.isEmpty());
        }
    }

    @Test
    void aFailedWritebackTakesTheLogOffline()
    {
        final Log log = Log.open(context(DIRTY_MAX));
        appendRecords(log, 200);
        failSyncs.set(true);
        log.invokeAgent();
        assertTrue(log.isOffline(), "a writeback error may be the one a later fsync would have reported");
        failSyncs.set(false);
        assertEquals(StorageErrorCode.LOG_OFFLINE,
            assertThrows(StorageException.class, () -> appendRecords(log, 1)).code());
        assertEquals(StorageErrorCode.LOG_OFFLINE, assertThrows(StorageException.class, log::flush).code());
        log.close();
        try (Log reopened = Log.open(context(DIRTY_MAX)))
        {
            assertEquals(200, readAll(reopened).size(), "nothing appended is lost by a process that lives on");
        }
    }

    @Test
    void truncationLowersTheWrittenBackPosition()
    {
        try (Log log = Log.open(context(DIRTY_MAX)))
        {
            appendRecords(log, 1000);
            log.invokeAgent();
            final Segment active = log.activeSegmentForTest();
            assertTrue(active.writtenBackPosition() > 8192);
            log.truncateTo(10);
            assertTrue(active.writtenBackPosition() <= active.size());
            appendRecords(log, 1000);
            log.invokeAgent();
            assertTrue(active.size() - active.writtenBackPosition() < DIRTY_MAX);
            assertEquals(1010, readAll(log).size());
        }
    }

    @Test
    void theBudgetIsValidated()
    {
        assertEquals(LogContext.DIRTY_BYTES_MAX, assertThrows(ConfigException.class,
            () -> Log.open(context(100))).key());
        assertEquals(1 << 20, LogContext.fromProperties(root, Map.of(LogContext.DIRTY_BYTES_MAX, "1_048_576"))
            .dirtyBytesMax());
    }
}
