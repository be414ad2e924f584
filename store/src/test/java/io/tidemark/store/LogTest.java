package io.tidemark.store;

import io.tidemark.store.file.CountersFile;
import io.tidemark.store.format.HeadersDecoder;
import io.tidemark.store.format.HeadersEncoder;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.store.TestLogs.appendText;
import static io.tidemark.store.TestLogs.bytes;
import static io.tidemark.store.TestLogs.readAll;
import static io.tidemark.store.TestLogs.value;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogTest
{
    @TempDir
    Path dir;

    private final CachedEpochClock clock = new CachedEpochClock();

    @BeforeEach
    void setUp()
    {
        clock.update(1_000_000L);
    }

    @Test
    void appendsAssignDenseOffsetsAndReadsReturnThemInOrder()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 100; i++)
            {
                assertEquals(i, appendText(log, value(i)));
            }
            assertEquals(100, log.logEndOffset());
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(100, read.size());
            for (int i = 0; i < 100; i++)
            {
                assertEquals(i, read.get(i).offset());
                assertEquals(value(i), read.get(i).value());
                assertEquals(1_000_000L, read.get(i).timestamp());
                assertNull(read.get(i).key());
            }
        }
    }

    @Test
    void batchClaimEncodesManyRecordsWithKeysHeadersAndInPlaceValues()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final UnsafeBuffer headers = new UnsafeBuffer(new byte[256]);
            final HeadersEncoder encoder = new HeadersEncoder().wrap(headers, 0)
                .add("trace", "abc".getBytes()).add("empty", null);
            final BatchClaim claim = log.tryClaim(2048);
            final UnsafeBuffer key = bytes("k1");
            final UnsafeBuffer value = bytes("v1");
            claim.addRecord(42L, key, 0, key.capacity(), value, 0, value.capacity(), headers, 0, encoder.length());
            final int at = claim.addRecord(43L, null, 0, -1, 8);
            claim.buffer().putLong(at, 0x1122334455667788L);
            claim.addRecord(BatchClaim.NOW, null, 0, -1, null, 0, -1);
            assertEquals(0, claim.commit());
            assertEquals(3, log.logEndOffset());

            final List<String> seen = new ArrayList<>();
            try (LogReader reader = log.openReader())
            {
                reader.poll((r) ->
                {
                    if (r.offset() == 0)
                    {
                        assertEquals("k1", new String(r.keyBytes()));
                        assertEquals("v1", r.valueAsString());
                        assertEquals(42L, r.timestamp());
                        final HeadersDecoder h = r.headers();
                        assertTrue(h.next());
                        assertEquals("trace", h.key());
                        assertEquals("abc", h.valueAsString());
                        assertTrue(h.next());
                        assertEquals("empty", h.key());
                        assertEquals(-1, h.valueLength());
                        assertFalse(h.next());
                    }
                    else if (r.offset() == 1)
                    {
                        assertEquals(8, r.valueLength());
                        assertEquals(0x1122334455667788L, r.buffer().getLong(r.valueOffset()));
                    }
                    else
                    {
                        assertEquals(-1, r.valueLength());
                        assertEquals(1_000_000L, r.timestamp());
                    }
                    seen.add(Long.toString(r.offset()));
                }, Long.MAX_VALUE, 10);
            }
            assertEquals(List.of("0", "1", "2"), seen);
        }
    }

    @Test
    void abortedClaimPublishesNothingAndLeavesNoBytesBehind()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final BatchClaim claim = log.tryClaim(1024);
            final UnsafeBuffer value = bytes("lost");
            claim.addRecord(BatchClaim.NOW, null, 0, -1, value, 0, value.capacity());
            claim.abort();
            assertEquals(0, log.logEndOffset());
            appendText(log, "kept");
            assertEquals(List.of("kept"), readAll(log).stream().map(TestLogs.Read::value).toList());
        }
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            assertEquals(1, log.logEndOffset());
        }
    }

    @Test
    void readsStopAtTheLimitOffset()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 50; i++)
            {
                appendText(log, value(i));
            }
            assertEquals(20, TestLogs.readFrom(log, 0, 20).size());
            assertEquals(List.of(10L, 11L), TestLogs.readFrom(log, 10, 12).stream().map(TestLogs.Read::offset).toList());
            try (LogReader reader = log.openReader())
            {
                reader.seek(30);
                final int[] bytes = new int[1];
                final int delivered = reader.pollBatches((b) -> bytes[0] += b.frameLength(), 35, Integer.MAX_VALUE);
                assertEquals(bytes[0], delivered);
                assertEquals(35, reader.position());
            }
        }
    }

    @Test
    void segmentsRollOnSizeAndReadsCrossThem() throws Exception
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final int n = 2000;
            for (int i = 0; i < n; i++)
            {
                appendText(log, value(i));
            }
            assertTrue(log.segmentCount() > 3, "segments: " + log.segmentCount());
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(n, read.size());
            for (int i = 0; i < n; i++)
            {
                assertEquals(value(i), read.get(i).value());
            }
            for (final long offset : new long[]{ 0, 1, 777, 1500, 1999 })
            {
                assertEquals(value((int)offset), TestLogs.readFrom(log, offset, offset + 1).get(0).value());
            }
        }
        try (Stream files = new Stream(dir.resolve("a")))
        {
            assertTrue(files.names().contains("00000000000000000000.log"));
            assertTrue(files.names().stream().allMatch((name) -> name.matches(
                "\\d{20}\\.(log|index|timeindex)|log\\.meta|log\\.checkpoint|\\.lock|\\.clean-shutdown|counters\\.dat")),
                files.names().toString());
        }
    }

    @Test
    void segmentsRollOnAge()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock).segmentMs(1000)))
        {
            appendText(log, "a");
            clock.advance(500);
            appendText(log, "b");
            assertEquals(1, log.segmentCount());
            clock.advance(501);
            appendText(log, "c");
            assertEquals(2, log.segmentCount());
            assertEquals(2, log.activeSegmentBaseOffset());
        }
    }

    @Test
    void closeAndReopenKeepsEverything()
    {
        final LogContext ctx = TestLogs.context(dir.resolve("a"), clock);
        try (Log log = Log.open(ctx))
        {
            for (int i = 0; i < 1500; i++)
            {
                appendText(log, value(i));
            }
        }
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            assertTrue(log.recoveryReport().cleanShutdown());
            assertEquals(0, log.recoveryReport().segmentsRecovered());
            assertEquals(1500, log.logEndOffset());
            assertEquals(1500, log.recoveryPoint());
            for (int i = 1500; i < 1600; i++)
            {
                appendText(log, value(i));
            }
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(1600, read.size());
            for (int i = 0; i < 1600; i++)
            {
                assertEquals(value(i), read.get(i).value());
            }
        }
    }

    @Test
    void seekToTimestampFindsTheFirstRecordAtOrAfterIt()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 1000; i++)
            {
                final UnsafeBuffer v = bytes(value(i));
                log.append(10_000L + i * 10L, null, 0, -1, v, 0, v.capacity());
            }
            assertEquals(0, log.offsetForTimestamp(0));
            assertEquals(0, log.offsetForTimestamp(10_000));
            assertEquals(1, log.offsetForTimestamp(10_001));
            assertEquals(500, log.offsetForTimestamp(15_000));
            assertEquals(999, log.offsetForTimestamp(19_990));
            assertEquals(-1, log.offsetForTimestamp(19_991));
            try (LogReader reader = log.openReader())
            {
                assertTrue(reader.seekToTimestamp(12_345));
                assertEquals(235, reader.position());
            }
        }
    }

    @Test
    void retentionBySizeDeletesOldestSegmentsAndAdvancesTheLogStart()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock).retentionBytes(128 * 1024)))
        {
            for (int i = 0; i < 5000; i++)
            {
                appendText(log, value(i));
            }
            final int before = log.segmentCount();
            final int deleted = log.applyRetention();
            assertTrue(deleted > 0);
            assertEquals(before - deleted, log.segmentCount());
            assertTrue(log.sizeInBytes() <= 128 * 1024 + 64 * 1024);
            final long start = log.logStartOffset();
            assertTrue(start > 0);
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(5000 - start, read.size());
            assertEquals(start, read.get(0).offset());
            try (LogReader reader = log.openReader())
            {
                final StorageException ex = assertThrows(StorageException.class, () -> reader.seek(start - 1));
                assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, ex.code());
            }
        }
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            assertTrue(log.logStartOffset() > 0);
            assertEquals(5000, log.logEndOffset());
        }
    }

    @Test
    void retentionByTimeUsesTheNewestRecordOfEachSegment()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock).retentionMs(60_000)))
        {
            for (int i = 0; i < 1500; i++)
            {
                appendText(log, value(i));
            }
            final int segments = log.segmentCount();
            assertEquals(0, log.applyRetention());
            clock.advance(60_001);
            appendText(log, "fresh");
            assertEquals(segments - 1, log.applyRetention());
            assertEquals(1, log.segmentCount());
        }
    }

    @Test
    void retentionWaitsForReadersInsideADeletedSegment()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock).retentionBytes(0)))
        {
            for (int i = 0; i < 3000; i++)
            {
                appendText(log, value(i));
            }
            final List<String> seen = new ArrayList<>();
            try (LogReader reader = log.openReader())
            {
                reader.poll((r) ->
                {
                    if (seen.isEmpty())
                    {
                        assertTrue(log.applyRetention() > 0); // deletes the segment this record lives in
                    }
                    seen.add(r.valueAsString()); // still readable: the mapping is held until the poll ends
                }, Long.MAX_VALUE, 50);
                assertEquals(value(49), seen.get(49));
                final StorageException ex = assertThrows(StorageException.class,
                    () -> reader.poll((r) -> { }, Long.MAX_VALUE, 1));
                assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, ex.code());
            }
        }
    }

    @Test
    void truncateToInsideTheActiveSegment()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 100; i++)
            {
                appendText(log, value(i));
            }
            assertEquals(60, log.truncateTo(60));
            assertEquals(60, log.logEndOffset());
            assertEquals(60, appendText(log, "new-60"));
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(61, read.size());
            assertEquals("new-60", read.get(60).value());
            assertEquals(value(59), read.get(59).value());
        }
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            assertEquals(61, log.logEndOffset());
            assertEquals("new-60", readAll(log).get(60).value());
        }
    }

    @Test
    void truncateToIntoAnOlderSegmentReopensItForAppends()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 3000; i++)
            {
                appendText(log, value(i));
            }
            final int segments = log.segmentCount();
            assertTrue(segments > 3);
            assertEquals(500, log.truncateTo(500));
            assertTrue(log.segmentCount() < segments);
            for (int i = 500; i < 3000; i++)
            {
                assertEquals(i, appendText(log, "again-" + i));
            }
            final List<TestLogs.Read> read = readAll(log);
            assertEquals(3000, read.size());
            assertEquals(value(499), read.get(499).value());
            assertEquals("again-500", read.get(500).value());
            assertEquals("again-2999", read.get(2999).value());
        }
        final Log reopened = Log.open(TestLogs.context(dir.resolve("a"), clock));
        try (reopened)
        {
            assertEquals(3000, reopened.logEndOffset());
            assertEquals("again-1234", readAll(reopened).get(1234).value());
        }
    }

    @Test
    void truncateToAMultiRecordBatchCutsAtTheBatchStart()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final BatchClaim claim = log.tryClaim(1024);
            for (int i = 0; i < 5; i++)
            {
                final UnsafeBuffer v = bytes(value(i));
                claim.addRecord(BatchClaim.NOW, null, 0, -1, v, 0, v.capacity());
            }
            claim.commit();
            appendText(log, "after");
            assertEquals(0, log.truncateTo(3));
            assertEquals(0, log.logEndOffset());
        }
    }

    @Test
    void truncateFullyAndStartAtEmptiesTheLogAtTheNewOffset()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 2000; i++)
            {
                appendText(log, value(i));
            }
            log.truncateFullyAndStartAt(10_000);
            assertEquals(10_000, log.logStartOffset());
            assertEquals(10_000, log.logEndOffset());
            assertEquals(10_000, appendText(log, "x"));
        }
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            assertEquals(10_000, log.logStartOffset());
            assertEquals(10_001, log.logEndOffset());
            assertEquals(List.of("x"), readAll(log).stream().map(TestLogs.Read::value).toList());
        }
    }

    @Test
    void advanceLogStartOffsetHidesOlderRecords()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 2000; i++)
            {
                appendText(log, value(i));
            }
            log.advanceLogStartOffset(1234);
            assertEquals(1234, log.logStartOffset());
            assertEquals(1234, readAll(log).get(0).offset());
        }
    }

    @Test
    void appendRawCopiesValidBatchesAndRejectsInvalidOnesWhole()
    {
        final Path leaderDir = dir.resolve("leader");
        try (Log leader = Log.open(TestLogs.context(leaderDir, clock));
            Log follower = Log.open(TestLogs.context(dir.resolve("follower"), clock)))
        {
            for (int i = 0; i < 300; i++)
            {
                final BatchClaim claim = leader.tryClaim(512).leaderEpoch(i < 100 ? 1 : 2);
                final UnsafeBuffer v = bytes(value(i));
                claim.addRecord(BatchClaim.NOW, null, 0, -1, v, 0, v.capacity());
                claim.commit();
            }
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[1 << 20]);
            final int[] length = new int[1];
            try (LogReader reader = leader.openReader())
            {
                reader.pollBatches((b) ->
                {
                    copy.putBytes(length[0], b.buffer(), b.offset(), b.frameLength());
                    length[0] += b.frameLength();
                }, Long.MAX_VALUE, Integer.MAX_VALUE);
            }
            // a follower must start where the batches start
            final StorageException gap = assertThrows(StorageException.class, () ->
            {
                final UnsafeBuffer tail = new UnsafeBuffer(copy, 64, length[0] - 64);
                follower.appendRaw(tail, 0, tail.capacity());
            });
            assertEquals(StorageErrorCode.INVALID_BATCH, gap.code());

            final UnsafeBuffer damaged = new UnsafeBuffer(new byte[length[0]]);
            damaged.putBytes(0, copy, 0, length[0]);
            damaged.putByte(length[0] - 3, (byte)(damaged.getByte(length[0] - 3) ^ 1));
            final StorageException crc = assertThrows(StorageException.class,
                () -> follower.appendRaw(damaged, 0, length[0]));
            assertEquals(StorageErrorCode.INVALID_BATCH, crc.code());
            assertEquals(0, follower.logEndOffset());

            assertEquals(300, follower.appendRaw(copy, 0, length[0]));
            assertEquals(2, follower.lastLeaderEpoch());
            assertEquals(readAll(leader), readAll(follower));
        }
    }

    @Test
    void appendRawRejectsAnEpochGoingBackwards()
    {
        try (Log source = Log.open(TestLogs.context(dir.resolve("s"), clock));
            Log target = Log.open(TestLogs.context(dir.resolve("t"), clock)))
        {
            source.tryClaim(256).leaderEpoch(1).addRecord(BatchClaim.NOW, null, 0, -1, bytes("a"), 0, 1).commit();
            final UnsafeBuffer copy = new UnsafeBuffer(new byte[4096]);
            final int[] length = new int[1];
            try (LogReader reader = source.openReader())
            {
                reader.pollBatches((b) ->
                {
                    copy.putBytes(0, b.buffer(), b.offset(), b.frameLength());
                    length[0] = b.frameLength();
                }, Long.MAX_VALUE, Integer.MAX_VALUE);
            }
            target.tryClaim(256).leaderEpoch(5).addRecord(BatchClaim.NOW, null, 0, -1, bytes("b"), 0, 1).commit();
            target.truncateTo(0);
            assertEquals(0, target.logEndOffset());
            assertEquals(-1, target.lastLeaderEpoch());
            assertEquals(1, target.appendRaw(copy, 0, length[0]));
            assertThrows(IllegalArgumentException.class,
                () -> target.tryClaim(256).leaderEpoch(0).addRecord(BatchClaim.NOW, null, 0, -1, bytes("c"), 0, 1)
                    .commit());
            assertEquals(1, target.logEndOffset());
        }
    }

    @Test
    void recordTooLargeIsATypedError()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final UnsafeBuffer big = new UnsafeBuffer(new byte[20_000]);
            final StorageException ex = assertThrows(StorageException.class, () -> log.append(big, 0, 20_000));
            assertEquals(StorageErrorCode.RECORD_TOO_LARGE, ex.code());
            assertEquals(0, log.logEndOffset());
        }
    }

    @Test
    void aSecondOpenOfTheSameDirectoryIsRefused()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final StorageException ex = assertThrows(StorageException.class,
                () -> Log.open(TestLogs.context(dir.resolve("a"), clock)));
            assertEquals(StorageErrorCode.LOCKED, ex.code());
            assertTrue(log.logEndOffset() >= 0);
        }
        Log.open(TestLogs.context(dir.resolve("a"), clock)).close();
    }

    @Test
    void aDirectoryThatIsNotALogIsRefused() throws Exception
    {
        final Path foreign = dir.resolve("foreign");
        Files.createDirectories(foreign);
        Files.writeString(foreign.resolve("notes.txt"), "hello");
        final StorageException ex = assertThrows(StorageException.class,
            () -> Log.open(TestLogs.context(foreign, clock)));
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY, ex.code());
        assertEquals("hello", Files.readString(foreign.resolve("notes.txt")));

        final Path file = dir.resolve("plain-file");
        Files.writeString(file, "x");
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY,
            assertThrows(StorageException.class, () -> Log.open(TestLogs.context(file, clock))).code());
    }

    @Test
    void logNamesCannotEscapeTheRoot()
    {
        assertEquals(dir.resolve("orders-0"), LogNames.resolve(dir, "orders-0"));
        for (final String bad : new String[]{ "..", ".", "", "a/b", "../x", "a\\b", "x".repeat(250), "a b" })
        {
            assertThrows(IllegalArgumentException.class, () -> LogNames.resolve(dir, bad), bad);
        }
    }

    @Test
    void countersTrackThePositions() throws Exception
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            for (int i = 0; i < 10; i++)
            {
                appendText(log, value(i));
            }
            log.flush();
            try (CountersFile counters = CountersFile.openReadOnly(dir.resolve("a").resolve("counters.dat")))
            {
                final long[] values = new long[5];
                counters.reader().forEach((id, typeId, key, label) ->
                {
                    if (typeId >= 1001 && typeId <= 1004)
                    {
                        values[typeId - 1000] = counters.reader().getCounterValue(id);
                    }
                });
                assertEquals(10, values[1]);
                assertEquals(10, values[2]);
                assertEquals(0, values[3]);
                assertEquals(1, values[4]);
                assertEquals(ProcessHandle.current().pid(), counters.pid());
            }
        }
    }

    @Test
    void closedLogAndReaderGiveClosedErrors()
    {
        final Log log = Log.open(TestLogs.context(dir.resolve("a"), clock));
        final LogReader reader = log.openReader();
        log.close();
        log.close();
        assertEquals(StorageErrorCode.CLOSED, assertThrows(StorageException.class, () -> appendText(log, "x")).code());
        assertEquals(StorageErrorCode.CLOSED,
            assertThrows(StorageException.class, () -> reader.poll((r) -> { }, Long.MAX_VALUE, 1)).code());
        reader.close();
    }

    @Test
    void valuesAreReadZeroCopyFromTheMapping()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("a"), clock)))
        {
            final byte[] payload = new byte[100];
            for (int i = 0; i < payload.length; i++)
            {
                payload[i] = (byte)i;
            }
            log.append(payload);
            try (LogReader reader = log.openReader())
            {
                reader.poll((r) ->
                {
                    assertNull(r.buffer().byteArray(), "the view must wrap the mapping, not a copy");
                    final byte[] copy = new byte[r.valueLength()];
                    r.getValue(copy);
                    assertArrayEquals(payload, copy);
                }, Long.MAX_VALUE, 1);
            }
        }
    }

    /** Lists a directory's file names. */
    private static final class Stream implements AutoCloseable
    {
        private final List<String> names = new ArrayList<>();

        Stream(final Path dir) throws java.io.IOException
        {
            try (java.util.stream.Stream<Path> list = Files.list(dir))
            {
                list.forEach((p) -> names.add(p.getFileName().toString()));
            }
        }

        List<String> names()
        {
            return names;
        }

        @Override
        public void close()
        {
        }
    }
}
