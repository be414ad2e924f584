package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.LogFiles;

import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Flush policies, the recovery-point checkpoint, and fail-stop on fsync errors. */
class FlushTest
{
    @TempDir
    Path root;

    private final CachedEpochClock clock = new CachedEpochClock();
    private final AtomicInteger dataSyncs = new AtomicInteger();
    private final AtomicBoolean failSyncs = new AtomicBoolean();

    /** Counts data syncs and fails them on demand. */
    private final FileSync sync = new FileSync()
    {
        public void force(final MappedByteBuffer mapping, final int offset, final int length)
        {
            if (failSyncs.get())
            {
                throw new UncheckedIOException(new IOException("injected: Input/output error"));
            }
            dataSyncs.incrementAndGet();
            FileSync.SYSTEM.force(mapping, offset, length);
        }

        public void force(final FileChannel channel, final boolean metadata) throws IOException
        {
            if (failSyncs.get())
            {
                throw new IOException("injected: Input/output error");
            }
            FileSync.SYSTEM.force(channel, metadata);
        }

        public void forceDirectory(final Path dir) throws IOException
        {
            if (failSyncs.get())
            {
                throw new IOException("injected: Input/output error");
            }
            FileSync.SYSTEM.forceDirectory(dir);
        }
    };

    @BeforeEach
    void setUp()
    {
        clock.update(1_000L);
    }

    private LogContext context()
    {
        return TestLogs.context(root.resolve("log"), clock).fileSync(sync);
    }

    private static long checkpointedRecoveryPoint(final Path dir) throws IOException
    {
        final LogCheckpoint checkpoint = new LogCheckpoint(dir, FileSync.SYSTEM);
        assertEquals(CheckpointFile.Status.OK, checkpoint.read());
        return checkpoint.recoveryPoint();
    }

    @Test
    void flushIntervalMessagesFlushesEveryNRecords() throws IOException
    {
        try (Log log = Log.open(context().flushIntervalMessages(10)))
        {
            for (int i = 0; i < 9; i++)
            {
                appendText(log, value(i));
            }
            assertEquals(0, log.recoveryPoint());
            appendText(log, value(9));
            assertEquals(10, log.recoveryPoint());
            assertEquals(10, checkpointedRecoveryPoint(root.resolve("log")));
            for (int i = 10; i < 35; i++)
            {
                appendText(log, value(i));
            }
            assertEquals(30, log.recoveryPoint());
        }
    }

    @Test
    void flushEveryMessageMakesEachAppendDurableBeforeItReturns() throws IOException
    {
        try (Log log = Log.open(context().flushIntervalMessages(1)))
        {
            for (int i = 0; i < 20; i++)
            {
                final int before = dataSyncs.get();
                appendText(log, value(i));
                assertTrue(dataSyncs.get() > before);
                assertEquals(i + 1, log.recoveryPoint());
            }
            assertEquals(20, checkpointedRecoveryPoint(root.resolve("log")));
        }
    }

    @Test
    void flushIntervalMsIsAppliedByTheAgent() throws IOException
    {
        try (Log log = Log.open(context().flushIntervalMs(100)))
        {
            appendText(log, "a");
            log.invokeAgent();
            assertEquals(0, log.recoveryPoint());
            clock.advance(100);
            log.invokeAgent();
            assertEquals(1, log.recoveryPoint());
            assertEquals(1, checkpointedRecoveryPoint(root.resolve("log")));
        }
    }

    @Test
    void withNoPolicyOnlyExplicitFlushesAndRolledSegmentsReachTheDisk()
    {
        try (Log log = Log.open(context()))
        {
            for (int i = 0; i < 100; i++)
            {
                appendText(log, value(i));
            }
            clock.advance(1_000_000);
            log.invokeAgent();
            assertEquals(0, log.recoveryPoint());
            log.flush();
            assertEquals(100, log.recoveryPoint());
            for (int i = 100; i < 1000; i++)
            {
                appendText(log, value(i));
            }
            assertTrue(log.segmentCount() > 1);
            final long rolledAt = log.activeSegmentBaseOffset();
            assertTrue(rolledAt > 100);
            for (int i = 0; i < 1000 && log.recoveryPoint() < rolledAt; i++)
            {
                log.invokeAgent(); // writes the rolled segment back a step at a time, then flushes it
            }
            assertEquals(rolledAt, log.recoveryPoint(), "the agent flushes the rolled segments after a roll");
            log.flush();
            assertEquals(1000, log.recoveryPoint());
        }
    }

    @Test
    void anFsyncFailureTakesTheLogOfflineAndIsNeverRetried()
    {
        final Log log = Log.open(context());
        for (int i = 0; i < 10; i++)
        {
            appendText(log, value(i));
        }
        failSyncs.set(true);
        final StorageException first = assertThrows(StorageException.class, log::flush);
        assertEquals(StorageErrorCode.IO_ERROR, first.code());
        assertTrue(log.isOffline());
        failSyncs.set(false);
        assertEquals(StorageErrorCode.LOG_OFFLINE, assertThrows(StorageException.class, log::flush).code());
        assertEquals(StorageErrorCode.LOG_OFFLINE,
            assertThrows(StorageException.class, () -> appendText(log, "x")).code());
        assertEquals(0, log.recoveryPoint(), "the recovery point only advances after a successful flush");
        log.close();
        try (Log reopened = Log.open(context()))
        {
            assertFalse(reopened.recoveryReport().cleanShutdown(), "an offline log never writes the clean marker");
            assertEquals(10, readAll(reopened).size());
        }
    }

    @Test
    void aFailingFlushOnTheAppendPathIsTyped()
    {
        try (Log log = Log.open(context().flushIntervalMessages(1)))
        {
            appendText(log, "ok");
            failSyncs.set(true);
            final StorageException ex = assertThrows(StorageException.class, () -> appendText(log, "fails"));
            assertEquals(StorageErrorCode.IO_ERROR, ex.code());
            failSyncs.set(false);
            assertEquals(StorageErrorCode.LOG_OFFLINE,
                assertThrows(StorageException.class, () -> appendText(log, "x")).code());
        }
    }

    @Test
    void theCheckpointIsReplacedAtomically() throws IOException
    {
        try (Log log = Log.open(context()))
        {
            appendText(log, "a");
            log.flush();
            assertEquals(1, checkpointedRecoveryPoint(root.resolve("log")));
            appendText(log, "b");
            log.flush();
            assertEquals(2, checkpointedRecoveryPoint(root.resolve("log")));
            assertFalse(java.nio.file.Files.exists(root.resolve("log").resolve(LogFiles.CHECKPOINT_FILE + ".tmp")));
        }
    }
}
