package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.List;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An unclean open that re-validated the unflushed tail and cut nothing leaves the force of that tail to the log
 * agent (a restarted host's start no longer waits for the dirty pages a kill left): until the agent has forced it the
 * recovery point stays where the checkpoint has it, so a crash in between re-validates the same tail, CRCs checked
 * and a torn write cut, as the first open did. An open that cut or lost anything still forces and checkpoints before
 * it returns.
 */
class DeferredRecoveryFlushTest
{
    private static final int FLUSHED = 150;
    private static final int RECORDS = 400;

    @TempDir
    Path root;

    private Path dir;
    private final CachedEpochClock clock = new CachedEpochClock();

    @BeforeEach
    void setUp()
    {
        dir = root.resolve("log");
    }

    private LogContext context()
    {
        return TestLogs.context(dir, clock).segmentBytes(256 * 1024);
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
    void aPlainKillIsForcedByTheAgentNotByTheOpen()
    {
        writeAndCrash();
        try (Log log = Log.open(context()))
        {
            final RecoveryReport report = log.recoveryReport();
            assertFalse(report.cleanShutdown(), report.toString());
            assertEquals(RECORDS, log.logEndOffset());
            assertEquals(FLUSHED, log.recoveryPoint(), "nothing is claimed flushed before the agent forced it");
            assertHoldsEveryRecord(log, RECORDS);
            log.invokeAgent();
            assertEquals(RECORDS, log.recoveryPoint(), "the agent's first cycle forced the re-validated tail");
            appendText(log, "after");
            log.halt();
        }
        try (Log log = Log.open(context()))
        {
            assertEquals(RECORDS, log.recoveryReport().recoveryPoint(), "the agent's checkpoint: " +
                log.recoveryReport());
            assertEquals(RECORDS + 1, log.logEndOffset());
        }
    }

    @Test
    void aCrashBeforeTheAgentRanRevalidatesTheSameTailAndCutsATornWrite() throws IOException
    {
        writeAndCrash();
        long tornAt;
        try (Log log = Log.open(context()))
        {
            assertEquals(FLUSHED, log.recoveryPoint());
            tornAt = log.sizeInBytes(); // where the next batch starts
            appendText(log, "torn");
            assertEquals(1, log.segmentCount(), "one segment: the tail is the end of its file");
            log.halt(); // before any agent cycle: the tail above the recovery point is still unforced
        }
        // the last batch's record bytes torn: its CRC no longer matches
        final Path segment = dir.resolve(io.tidemark.store.format.SegmentFiles.fileName(0) +
            io.tidemark.store.format.SegmentFiles.LOG_SUFFIX);
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw"))
        {
            file.seek(tornAt + io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH + 1);
            file.write(new byte[] {(byte)0xA5, (byte)0x5A, (byte)0xA5});
        }
        try (Log log = Log.open(context()))
        {
            final RecoveryReport report = log.recoveryReport();
            assertEquals(FLUSHED, report.recoveryPoint(), "the checkpoint did not move: " + report);
            assertTrue(report.bytesScanned() > 0, report.toString());
            assertTrue(report.bytesTruncated() > 0, "the torn write is cut: " + report);
            assertEquals(RECORDS, log.logEndOffset(), report.toString());
            assertEquals(RECORDS, log.recoveryPoint(), "an open that cut a torn write forces before it returns");
            assertHoldsEveryRecord(log, RECORDS);
        }
    }
}
