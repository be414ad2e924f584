package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After a kill the open re-validates the unflushed tail from the page cache. When it cut, deleted and lost nothing,
 * the checkpoint still describes the log: the open writes none (it was a third of a restarted host's log phase),
 * the recovery point stays where the checkpoint has it, and the next flush forces the whole re-validated tail before
 * it moves the recovery point past it. A crash in between re-validates the same tail, CRCs checked and a torn write
 * cut, as the first open did; an open that cut it forces and checkpoints before it returns.
 */
class KillRecoveryCheckpointTest
{
    private static final int FLUSHED = 150;
    private static final int RECORDS = 400;

    @TempDir
    Path root;

    private Path dir;
    private final CachedEpochClock clock = new CachedEpochClock();
    /** Bytes of mappings forced through {@link #sync}. */
    private final AtomicLong mappedBytesForced = new AtomicLong();
    private final FileSync sync = new FileSync()
    {
        public void force(final MappedByteBuffer mapping, final int offset, final int length)
        {
            mappedBytesForced.addAndGet(length);
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

    @BeforeEach
    void setUp()
    {
        dir = root.resolve("log");
    }

    private LogContext context()
    {
        return TestLogs.context(dir, clock).segmentBytes(256 * 1024).fileSync(sync);
    }

    /** {@link #FLUSHED} records flushed, then up to {@link #RECORDS} appended, then a kill. */
    private void writeAndCrash()
    {
        final Log log = Log.open(context());
        for (int i = 0; i < RECORDS; i++)
        {
            if (i == FLUSHED)
            {
                log.flush();
            }
            appendText(log, value(i));
        }
        assertEquals(FLUSHED, log.recoveryPoint());
        assertEquals(1, log.segmentCount(), "one segment: the tail is the end of its file");
        log.halt();
    }

    private static void assertHoldsEveryRecord(final Log log, final int count)
    {
        final List<TestLogs.Read> read = readAll(log);
        assertEquals(count, read.size());
        for (int i = 0; i < count; i++)
        {
            assertEquals(value(i), read.get(i).value());
        }
    }

    @Test
    void aPlainKillIsNotCheckpointedAtOpenAndTheNextFlushForcesTheWholeRevalidatedTail()
    {
        writeAndCrash();
        try (Log log = Log.open(context()))
        {
            final RecoveryReport report = log.recoveryReport();
            assertFalse(report.cleanShutdown(), report.toString());
            assertEquals(0, report.bytesTruncated(), report.toString());
            assertEquals(RECORDS, log.logEndOffset());
            assertEquals(FLUSHED, log.recoveryPoint(), "nothing is claimed flushed before it is forced");
            assertHoldsEveryRecord(log, RECORDS);
            log.invokeAgent();
            assertEquals(FLUSHED, log.recoveryPoint(), "no flush is due: the recovery point stays");
            mappedBytesForced.set(0);
            final long size = log.sizeInBytes();
            log.flush();
            assertEquals(RECORDS, log.recoveryPoint());
            assertTrue(mappedBytesForced.get() >= size, "the flush forced the re-validated data, not only what " +
                "was appended after the open: " + mappedBytesForced.get() + " of " + size + " bytes");
            appendText(log, "after");
            log.halt();
        }
        try (Log log = Log.open(context()))
        {
            assertEquals(RECORDS, log.recoveryReport().recoveryPoint(), log.recoveryReport().toString());
            assertEquals(RECORDS + 1, log.logEndOffset());
        }
    }

    @Test
    void aCrashBeforeAnyFlushRevalidatesTheSameTailAndCutsATornWrite() throws IOException
    {
        writeAndCrash();
        final long tornAt;
        try (Log log = Log.open(context()))
        {
            assertEquals(FLUSHED, log.recoveryPoint());
            tornAt = log.sizeInBytes(); // where the next batch starts
            appendText(log, "torn");
            log.halt(); // before any flush: the tail above the recovery point is still unforced
        }
        // the last batch's record bytes torn: its CRC no longer matches
        final Path segment = dir.resolve(SegmentFiles.fileName(0) + SegmentFiles.LOG_SUFFIX);
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw"))
        {
            file.seek(tornAt + RecordBatchDescriptor.HEADER_LENGTH + 1);
            file.write(new byte[] {(byte)0xA5, (byte)0x5A, (byte)0xA5});
        }
        mappedBytesForced.set(0);
        try (Log log = Log.open(context()))
        {
            final RecoveryReport report = log.recoveryReport();
            assertEquals(FLUSHED, report.recoveryPoint(), "the checkpoint did not move: " + report);
            assertTrue(report.bytesTruncated() > 0, "the torn write is cut: " + report);
            assertEquals(RECORDS, log.logEndOffset(), report.toString());
            assertEquals(RECORDS, log.recoveryPoint(), "an open that cut a torn write checkpoints before it returns");
            assertTrue(mappedBytesForced.get() >= log.sizeInBytes(), "and forced the re-validated data first: " +
                mappedBytesForced.get() + " of " + log.sizeInBytes() + " bytes");
            assertHoldsEveryRecord(log, RECORDS);
        }
    }
}
