package io.tidemark.store;

import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.CachedEpochClock;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recovery on open: every crash state the issue names, produced by crashing a log in process
 * ({@link Log#halt()}: nothing flushed, trimmed or marked) and then editing its files.
 */
class RecoveryTest
{
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

    private Log open()
    {
        return Log.open(TestLogs.context(dir, clock));
    }

    /** Append n records, flush up to flushAt (if >= 0), then crash. */
    private void writeAndCrash(final int n, final int flushAt)
    {
        final Log log = open();
        for (int i = 0; i < n; i++)
        {
            appendText(log, value(i));
            if (i + 1 == flushAt)
            {
                log.flush();
            }
        }
        log.halt();
    }

    private Path segmentFile(final long base, final String suffix)
    {
        return dir.resolve(SegmentFiles.fileName(base) + suffix);
    }

    private Path lastSegmentLog() throws IOException
    {
        try (var files = Files.list(dir))
        {
            return files.filter((p) -> p.getFileName().toString().matches("\\d{20}\\.log")).sorted()
                .reduce((a, b) -> b).orElseThrow();
        }
    }

    /** Position and length of the batch holding {@code offset}, found by walking the file. */
    private static int[] batchOf(final Path file, final long offset) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(file);
        final org.agrona.concurrent.UnsafeBuffer buffer = new org.agrona.concurrent.UnsafeBuffer(bytes);
        int position = 0;
        while (position + RecordBatchDescriptor.HEADER_LENGTH <= bytes.length)
        {
            final int length = buffer.getInt(position);
            final long base = buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
            final int count = buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
            if (length == 0)
            {
                break;
            }
            if (offset >= base && offset < base + count)
            {
                return new int[]{ position, length };
            }
            position += RecordBatchDescriptor.frameLength(length);
        }
        throw new IllegalStateException("offset " + offset + " not in " + file);
    }

    private static void write(final Path file, final long position, final byte[] bytes) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(position);
            raf.write(bytes);
        }
    }

    private static void assertValues(final List<TestLogs.Read> read, final int n)
    {
        assertEquals(n, read.size());
        for (int i = 0; i < n; i++)
        {
            assertEquals(i, read.get(i).offset());
            assertEquals(value(i), read.get(i).value());
        }
    }

    @Test
    void aKilledProcessLosesNothingItWroteIntoTheMapping()
    {
        writeAndCrash(2500, -1);
        try (Log log = open())
        {
            final RecoveryReport report = log.recoveryReport();
            assertFalse(report.cleanShutdown());
            assertTrue(report.segmentsRecovered() >= 1, report.toString());
            assertEquals(0, report.bytesTruncated(), report.toString());
            assertEquals(2500, log.logEndOffset());
            assertEquals(0, log.recoveryPoint(), "nothing is claimed flushed before it is forced");
            assertValues(readAll(log), 2500);
            log.flush();
            assertEquals(2500, log.recoveryPoint(), "a flush forces and checkpoints the recovered data");
            assertEquals(2500, appendText(log, "next"));
        }
    }

    @Test
    void onlySegmentsFromTheRecoveryPointOnAreRevalidated()
    {
        final Log log = open();
        for (int i = 0; i < 3000; i++)
        {
            appendText(log, value(i));
        }
        log.flush();
        final int segmentsBefore = log.segmentCount();
        for (int i = 3000; i < 3100; i++)
        {
            appendText(log, value(i));
        }
        log.halt();
        try (Log reopened = open())
        {
            final RecoveryReport report = reopened.recoveryReport();
            assertTrue(segmentsBefore > 3);
            assertTrue(report.segmentsRecovered() <= 2, report.toString());
            assertEquals(3000, report.recoveryPoint());
            assertValues(readAll(reopened), 3100);
        }
    }

    @Test
    void aTornLastBatchIsTruncated() throws IOException
    {
        writeAndCrash(200, 100);
        final Path file = lastSegmentLog();
        final int[] last = batchOf(file, 199);
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(last[0] + last[1] / 2);
        }
        try (Log log = open())
        {
            assertEquals(199, log.logEndOffset());
            assertTrue(log.recoveryReport().bytesTruncated() > 0, log.recoveryReport().toString());
            assertValues(readAll(log), 199);
            assertEquals(199, appendText(log, value(199)));
        }
        try (Log log = open())
        {
            assertValues(readAll(log), 200);
        }
    }

    @Test
    void aGarbageTailIsTruncated() throws IOException
    {
        writeAndCrash(200, -1);
        final Path file = lastSegmentLog();
        final int[] last = batchOf(file, 199);
        final byte[] garbage = new byte[3000];
        new Random(7).nextBytes(garbage);
        write(file, RecordBatchDescriptor.frameLength(last[0] + last[1]), garbage);
        try (Log log = open())
        {
            assertEquals(200, log.logEndOffset());
            assertEquals(3000, log.recoveryReport().bytesTruncated(), log.recoveryReport().toString());
            assertValues(readAll(log), 200);
        }
    }

    @Test
    void theZeroTailOfAPreSizedSegmentIsNotData() throws IOException
    {
        writeAndCrash(10, -1);
        assertEquals(64 * 1024, Files.size(lastSegmentLog()), "the active segment is pre-sized");
        try (Log log = open())
        {
            assertEquals(0, log.recoveryReport().bytesTruncated());
            assertEquals(10, log.logEndOffset());
        }
    }

    @Test
    void aCorruptCrcInTheUnflushedRegionDropsEverythingFromThere() throws IOException
    {
        writeAndCrash(300, 100);
        final Path file = lastSegmentLog();
        final long firstInFile = Long.parseLong(file.getFileName().toString().substring(0, 20));
        final long victim = Math.max(150, firstInFile + 5);
        final int[] batch = batchOf(file, victim);
        final byte[] one = Files.readAllBytes(file);
        write(file, batch[0] + batch[1] - 2, new byte[]{ (byte)(one[batch[0] + batch[1] - 2] ^ 0x40) });
        try (Log log = open())
        {
            assertEquals(victim, log.logEndOffset(), log.recoveryReport().toString());
            assertValues(readAll(log), (int)victim);
        }
    }

    @Test
    void anAbsurdBatchLengthInTheUnflushedRegionIsATornTail() throws IOException
    {
        writeAndCrash(300, 100);
        final Path file = lastSegmentLog();
        final long firstInFile = Long.parseLong(file.getFileName().toString().substring(0, 20));
        final long victim = Math.max(200, firstInFile + 3);
        final int[] batch = batchOf(file, victim);
        write(file, batch[0], new byte[]{ (byte)0xff, (byte)0xff, (byte)0xff, 0x7f });
        try (Log log = open())
        {
            assertEquals(victim, log.logEndOffset());
            assertValues(readAll(log), (int)victim);
        }
    }

    @Test
    void corruptionBelowTheRecoveryPointIsKeptAndReadsOfItFailTyped() throws IOException
    {
        writeAndCrash(300, 300);
        final Path file = segmentFile(0, ".log");
        final int[] batch = batchOf(file, 50);
        final byte[] bytes = Files.readAllBytes(file);
        write(file, batch[0] + batch[1] - 1, new byte[]{ (byte)(bytes[batch[0] + batch[1] - 1] ^ 0x01) });
        try (Log log = open())
        {
            assertEquals(300, log.logEndOffset(), "flushed data is never truncated");
            try (LogReader reader = log.openReader())
            {
                reader.seek(50);
                final StorageException ex = assertThrows(StorageException.class,
                    () -> reader.poll((r) -> { }, Long.MAX_VALUE, 1));
                assertEquals(StorageErrorCode.CORRUPT_BATCH, ex.code());
                reader.seek(51);
                final int[] count = new int[1];
                while (reader.poll((r) ->
                {
                    assertEquals(value((int)r.offset()), r.valueAsString());
                    count[0]++;
                }, Long.MAX_VALUE, 100) > 0)
                {
                    // read on
                }
                assertEquals(249, count[0]);
            }
            assertEquals(50, TestLogs.readFrom(log, 0, 50).size());
        }
    }

    @Test
    void damagedBatchHeaderBelowTheRecoveryPointKeepsTheRestReachable() throws IOException
    {
        writeAndCrash(300, 300);
        final Path file = segmentFile(0, ".log");
        final int[] batch = batchOf(file, 40);
        write(file, batch[0], new byte[]{ 0x01, 0x00, 0x00, 0x00 }); // length field destroyed
        try (Log log = open())
        {
            assertEquals(300, log.logEndOffset(), log.recoveryReport().toString());
            assertFalse(log.recoveryReport().notes().isEmpty());
            assertEquals(StorageErrorCode.CORRUPT_BATCH, assertThrows(StorageException.class,
                () -> TestLogs.readFrom(log, 40, 41)).code());
            final List<TestLogs.Read> tail = TestLogs.readFrom(log, 41, Long.MAX_VALUE);
            assertEquals(259, tail.size());
            assertEquals(value(299), tail.get(258).value());
        }
    }

    @Test
    void missingAndGarbageIndexFilesAreRebuilt() throws IOException
    {
        final Log log = open();
        for (int i = 0; i < 3000; i++)
        {
            appendText(log, value(i));
        }
        log.close();
        Files.delete(segmentFile(0, ".index"));
        final byte[] garbage = new byte[96];
        new Random(3).nextBytes(garbage);
        try (var files = Files.list(dir))
        {
            final List<Path> timeIndexes = files.filter((p) -> p.toString().endsWith(".timeindex")).sorted().toList();
            Files.write(timeIndexes.get(1), garbage);
            Files.write(timeIndexes.get(timeIndexes.size() - 1), new byte[7]);
        }
        try (Log reopened = open())
        {
            assertTrue(reopened.recoveryReport().indexesRebuilt() >= 3, reopened.recoveryReport().toString());
            assertValues(readAll(reopened), 3000);
            for (final long offset : new long[]{ 0, 1, 999, 1777, 2999 })
            {
                assertEquals(value((int)offset), TestLogs.readFrom(reopened, offset, offset + 1).get(0).value());
            }
            assertEquals(1234, reopened.offsetForTimestamp(5_000_000L) + 1234);
        }
    }

    @Test
    void aMissingCheckpointMeansRecoverEverything() throws IOException
    {
        writeAndCrash(2000, 2000);
        Files.delete(dir.resolve(LogFiles.CHECKPOINT_FILE));
        try (Log log = open())
        {
            assertEquals("MISSING", log.recoveryReport().checkpointStatus());
            assertEquals(log.segmentCount(), log.recoveryReport().segmentsRecovered());
            assertValues(readAll(log), 2000);
        }
    }

    @Test
    void aTornCheckpointIsDetectedAndIgnored() throws IOException
    {
        writeAndCrash(2000, 1000);
        final Path checkpoint = dir.resolve(LogFiles.CHECKPOINT_FILE);
        final byte[] bytes = Files.readAllBytes(checkpoint);
        bytes[10] ^= 0x10;
        Files.write(checkpoint, bytes);
        try (Log log = open())
        {
            assertEquals("CORRUPT", log.recoveryReport().checkpointStatus());
            assertValues(readAll(log), 2000);
        }
        Files.write(checkpoint, new byte[]{ 1, 2, 3 });
        try (Log log = open())
        {
            assertEquals(2000, log.logEndOffset());
        }
    }

    @Test
    void aLostCheckpointRenameLeavesTheOldCheckpointAndATmpFile() throws IOException
    {
        writeAndCrash(1000, 400);
        Files.write(dir.resolve(LogFiles.CHECKPOINT_FILE + ".tmp"), new byte[]{ 9, 9, 9 });
        Files.write(dir.resolve("next.log.spare"), new byte[100]);
        try (Log log = open())
        {
            assertEquals("OK", log.recoveryReport().checkpointStatus());
            assertEquals(400, log.recoveryReport().recoveryPoint());
            assertValues(readAll(log), 1000);
        }
        assertFalse(Files.exists(dir.resolve(LogFiles.CHECKPOINT_FILE + ".tmp")));
        assertFalse(Files.exists(dir.resolve("next.log.spare")));
    }

    @Test
    void segmentsAfterATruncationPointAreDeleted() throws IOException
    {
        writeAndCrash(3000, 500);
        final Path second = segmentFile(findSegmentBases().get(2), ".log");
        final byte[] bytes = Files.readAllBytes(second);
        bytes[RecordBatchDescriptor.HEADER_LENGTH + 30] ^= 0x7f;
        Files.write(second, bytes);
        final List<Long> bases = findSegmentBases();
        try (Log log = open())
        {
            assertEquals(bases.get(2), log.logEndOffset(), log.recoveryReport().toString());
            assertEquals(bases.size() - 3, log.recoveryReport().segmentsDeleted());
            assertValues(readAll(log), (int)(long)bases.get(2));
        }
    }

    private List<Long> findSegmentBases() throws IOException
    {
        try (var files = Files.list(dir))
        {
            return files.map((p) -> p.getFileName().toString()).filter((n) -> n.matches("\\d{20}\\.log"))
                .map((n) -> Long.parseLong(n.substring(0, 20))).sorted().toList();
        }
    }

    @Test
    void aMissingSegmentBelowTheRecoveryPointIsAnError() throws IOException
    {
        final Log log = open();
        for (int i = 0; i < 3000; i++)
        {
            appendText(log, value(i));
        }
        log.close();
        Files.delete(segmentFile(findSegmentBases().get(1), ".log"));
        final StorageException ex = assertThrows(StorageException.class, this::open);
        assertEquals(StorageErrorCode.CORRUPT_LOG, ex.code());
        assertTrue(ex.getMessage().contains("missing"), ex.getMessage());
    }

    @Test
    void aBadSegmentFileNameIsAnError() throws IOException
    {
        open().close();
        Files.write(dir.resolve("0000000000000000001x.log"), new byte[8]);
        final StorageException ex = assertThrows(StorageException.class, this::open);
        assertEquals(StorageErrorCode.CORRUPT_LOG, ex.code());
        assertTrue(ex.getMessage().contains("0000000000000000001x.log"));
    }

    @Test
    void anOrphanIndexFileIsDeleted() throws IOException
    {
        open().close();
        final Path orphan = segmentFile(777, ".index");
        Files.write(orphan, new byte[16]);
        try (Log log = open())
        {
            assertEquals(0, log.logEndOffset());
        }
        assertFalse(Files.exists(orphan));
    }

    @Test
    void aCorruptMetaFileMeansNotALog() throws IOException
    {
        open().close();
        Files.write(dir.resolve(LogFiles.META_FILE), new byte[]{ 1, 2, 3, 4 });
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY, assertThrows(StorageException.class, this::open).code());
    }
}
