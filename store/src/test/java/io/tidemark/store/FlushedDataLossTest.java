package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A disk that loses blocks it acknowledged as flushed (or a VM that acknowledges a flush it did not keep): the log
 * must open with a log end and a recovery point no higher than the data it finds, and say so in a typed finding; a
 * wrong offset-index entry below the recovery point is found at lookup and the index rebuilt; a missing first
 * segment is a typed finding, never a silent move of the log start.
 */
class FlushedDataLossTest
{
    private static final int RECORDS = 440;
    private static final int DATA_ENDS_AT = 210;

    @TempDir
    Path root;

    private Path dir;
    private final CachedEpochClock clock = new CachedEpochClock();

    @BeforeEach
    void setUp()
    {
        dir = root.resolve("log");
        clock.update(5_000_000L);
    }

    private LogContext context()
    {
        return TestLogs.context(dir, clock).segmentBytes(256 * 1024);
    }

    /** Append {@code n} records, one batch each, flush them all, then crash: the recovery point is {@code n}. */
    private void writeFlushedAndCrash(final int n)
    {
        final Log log = Log.open(context());
        for (int i = 0; i < n; i++)
        {
            appendText(log, value(i));
        }
        log.flush();
        assertEquals(n, log.recoveryPoint());
        log.halt();
    }

    private Path segmentLog(final long base)
    {
        return dir.resolve(SegmentFiles.fileName(base) + SegmentFiles.LOG_SUFFIX);
    }

    /** @return positions of every batch of a segment file, by walking it (one record per batch here). */
    private static int[] batchPositions(final Path file) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final int[] positions = new int[bytes.length / RecordBatchDescriptor.HEADER_LENGTH];
        int count = 0;
        int position = 0;
        while (position + RecordBatchDescriptor.HEADER_LENGTH <= bytes.length && buffer.getInt(position) > 0)
        {
            positions[count++] = position;
            position += RecordBatchDescriptor.frameLength(buffer.getInt(position));
        }
        return Arrays.copyOf(positions, count);
    }

    private static void write(final Path file, final long position, final byte[] bytes) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(position);
            raf.write(bytes);
        }
    }

    private static byte[] garbage(final int length, final long seed)
    {
        final byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        for (int i = 0; i < bytes.length; i += 7)
        {
            bytes[i] |= 1; // never a run of zeros that could pass for the end of the data
        }
        return bytes;
    }

    private void assertOpensWhereTheDataEnds(final String how)
    {
        try (Log log = Log.open(context()))
        {
            final RecoveryReport report = log.recoveryReport();
            assertEquals(DATA_ENDS_AT, log.logEndOffset(), how + ": the log end is where the data ends: " + report);
            assertTrue(log.recoveryPoint() <= DATA_ENDS_AT, how + ": recovery point " + log.recoveryPoint());
            assertEquals(List.of(new RecoveryReport.Loss(RecoveryReport.LossKind.FLUSHED_TAIL, DATA_ENDS_AT,
                RECORDS)), report.losses(), how + ": " + report);
            assertTrue(report.flushedDataLost(), report.toString());
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(DATA_ENDS_AT, read.size());
            for (int i = 0; i < DATA_ENDS_AT; i++)
            {
                assertEquals(value(i), read.get(i).value());
            }
            assertEquals(DATA_ENDS_AT, appendText(log, "after"), "the next append continues the data");
        }
        try (Log log = Log.open(context()))
        {
            assertEquals(DATA_ENDS_AT + 1, log.logEndOffset(), "the clamp is durable");
        }
    }

    @Test
    void aFlushedTailReplacedByGarbageIsCutAtTheLastValidBatch() throws IOException
    {
        writeFlushedAndCrash(RECORDS);
        final Path file = segmentLog(0);
        final int[] batches = batchPositions(file);
        final int dataEnd = batches[RECORDS - 1] + 200;
        write(file, batches[DATA_ENDS_AT], garbage(dataEnd - batches[DATA_ENDS_AT], 7));
        assertOpensWhereTheDataEnds("garbage");
    }

    @Test
    void aFlushedTailReadBackAsZerosIsCutWhereTheDataEnds() throws IOException
    {
        writeFlushedAndCrash(RECORDS);
        final Path file = segmentLog(0);
        final int[] batches = batchPositions(file);
        write(file, batches[DATA_ENDS_AT], new byte[(int)Files.size(file) - batches[DATA_ENDS_AT]]);
        assertOpensWhereTheDataEnds("zeros");
    }

    @Test
    void aFileCutShortInsideAFlushedBatchIsCutAtTheLastWholeBatch() throws IOException
    {
        writeFlushedAndCrash(RECORDS);
        final Path file = segmentLog(0);
        final int[] batches = batchPositions(file);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(batches[DATA_ENDS_AT] + 20);
        }
        assertOpensWhereTheDataEnds("cut short");
    }

    /** Rewrite entry {@code entry} of an offset index to point at {@code position}. */
    private static void pointIndexEntry(final Path index, final int entry, final int position) throws IOException
    {
        final ByteBuffer bytes = ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, position);
        write(index, (long)entry * OffsetIndex.ENTRY_LENGTH + 4, bytes.array());
    }

    private static int[] indexEntry(final Path index, final int entry) throws IOException
    {
        final ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(index)).order(ByteOrder.LITTLE_ENDIAN);
        return new int[]{ bytes.getInt(entry * OffsetIndex.ENTRY_LENGTH), bytes.getInt(entry *
            OffsetIndex.ENTRY_LENGTH + 4) };
    }

    @Test
    void aWrongOffsetIndexEntryBelowTheRecoveryPointIsFoundAtLookupAndTheIndexRebuilt() throws IOException
    {
        final LogContext ctx = TestLogs.context(dir, clock);
        try (Log log = Log.open(ctx))
        {
            for (int i = 0; i < 3000; i++)
            {
                appendText(log, value(i));
            }
        }
        final Path index = dir.resolve(SegmentFiles.fileName(0) + SegmentFiles.INDEX_SUFFIX);
        final int[] positions = batchPositions(segmentLog(0));
        final int[] victim = indexEntry(index, 5);
        final int[] next = indexEntry(index, 6);
        // Entry 5 names offset victim[0]; point it at the batch after that one (still between its neighbours, so the
        // entries still increase and the open's sanity check passes): the wrong batch.
        final int wrong = positions[victim[0] + 1];
        assertTrue(wrong > victim[1] && wrong < next[1]);
        pointIndexEntry(index, 5, wrong);
        try (Log log = Log.open(ctx))
        {
            assertEquals(0, log.recoveryReport().indexesRebuilt(), "the open does not see it: the entries increase");
            for (int target = victim[0]; target < next[0]; target++)
            {
                final List<TestLogs.Read> read = TestLogs.readFrom(log, target, target + 1);
                assertEquals(1, read.size(), "offset " + target);
                assertEquals(value(target), read.get(0).value());
            }
            assertEquals(3000, readAll(log).size());
        }
        try (Log log = Log.open(ctx))
        {
            assertTrue(Files.size(index) >= 6 * OffsetIndex.ENTRY_LENGTH, "rebuilt at the open, entries and all");
            boolean sound = true;
            final ByteBuffer entries = ByteBuffer.wrap(Files.readAllBytes(index)).order(ByteOrder.LITTLE_ENDIAN);
            for (int at = 0; at + OffsetIndex.ENTRY_LENGTH <= entries.capacity(); at += OffsetIndex.ENTRY_LENGTH)
            {
                final int offset = entries.getInt(at);
                sound &= positions[offset] == entries.getInt(at + 4);
            }
            assertTrue(sound, "the index on disk was rebuilt: every entry points at its batch");
            assertEquals(value(victim[0]), TestLogs.readFrom(log, victim[0], victim[0] + 1).get(0).value());
        }
    }

    @Test
    void aMissingFirstSegmentIsATypedFindingNotASilentMoveOfTheLogStart() throws IOException
    {
        final LogContext ctx = TestLogs.context(dir, clock);
        try (Log log = Log.open(ctx))
        {
            for (int i = 0; i < 3000; i++)
            {
                appendText(log, value(i));
            }
            log.flush();
        }
        final long second;
        try (var files = Files.list(dir))
        {
            second = files.map((p) -> p.getFileName().toString()).filter((n) -> n.matches("\\d{20}\\.log"))
                .map((n) -> Long.parseLong(n.substring(0, 20))).sorted().skip(1).findFirst().orElseThrow();
        }
        Files.delete(segmentLog(0));
        Files.delete(dir.resolve(SegmentFiles.fileName(0) + SegmentFiles.INDEX_SUFFIX));
        Files.delete(dir.resolve(SegmentFiles.fileName(0) + SegmentFiles.TIME_INDEX_SUFFIX));
        try (Log log = Log.open(ctx))
        {
            final RecoveryReport report = log.recoveryReport();
            assertEquals(second, log.logStartOffset());
            assertNotEquals(List.of(), report.losses(), "reported, not silent: " + report);
            assertEquals(List.of(new RecoveryReport.Loss(RecoveryReport.LossKind.LEADING_SEGMENTS, 0, second)),
                report.losses());
            assertFalse(report.flushedDataLost(), "the head is not the tail: no record near the log end was lost");
            assertEquals(3000 - second, readAll(log).size());
        }
    }
}
