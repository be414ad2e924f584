package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.inspect.LogInspectionReport;
import io.tidemark.store.inspect.LogInspector;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LogInspectorTest
{
    @TempDir
    Path tmp;

    private static LogContext small(final Path dir)
    {
        return new LogContext().logDir(dir).segmentBytes(8 * 1024).maxMessageBytes(1024).indexIntervalBytes(256)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    private static void append(final Log log, final int from, final int count)
    {
        for (int i = from; i < from + count; i++)
        {
            final byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            final byte[] value = ("value-" + i + "-" + "x".repeat(40)).getBytes(StandardCharsets.UTF_8);
            log.append(1_000L + i, new UnsafeBuffer(key), 0, key.length, new UnsafeBuffer(value), 0, value.length);
        }
    }

    private Path cleanLog(final int records) throws IOException
    {
        final Path dir = tmp.resolve("log");
        try (Log log = Log.open(small(dir)))
        {
            append(log, 0, records);
        }
        return dir;
    }

    /** A log whose first {@code flushed} records are flushed and the rest not, left as after a kill -9. */
    private Path crashedLog(final int flushed, final int more)
    {
        final Path dir = tmp.resolve("crashed");
        final Log log = Log.open(small(dir));
        append(log, 0, flushed);
        log.flush();
        append(log, flushed, more);
        log.halt();
        try
        {
            Files.writeString(dir.resolve(LogInspector.LOCK_FILE), ""); // as if another process had died
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
        return dir;
    }

    @Test
    void aWalkTheVisitorStopsReadsNothingAfterTheStop() throws IOException
    {
        final Path dir = cleanLog(300);
        final LogInspector inspector = LogInspector.open(dir);
        final LogInspector.SegmentInfo first = inspector.segments().get(0);
        final int[] seen = {0};
        final LogInspector.ScanResult stopped = inspector.walk(first, (info, batch) -> ++seen[0] < 2);
        assertEquals(2, seen[0]);
        assertEquals(2, stopped.validBatches());
        assertEquals(RecordBatch.VALID, stopped.stopStatus());
        assertEquals(-1, stopped.dataEnd(), "no look for garbage after a stop: that would read the rest of the file");
        assertTrue(stopped.stopPosition() > 0 && stopped.stopPosition() < stopped.fileSize());
    }

    @Test
    void cleanLogVerifiesAndMatchesTheLog() throws IOException
    {
        final Path dir = cleanLog(300);
        final LogInspector inspector = LogInspector.open(dir);
        assertEquals(CheckpointFile.Status.OK, inspector.meta().status());
        assertTrue(inspector.meta().creationTimeMs() > 0);
        final LogInspector.Checkpoint checkpoint = inspector.checkpoint();
        assertEquals(CheckpointFile.Status.OK, checkpoint.status());
        assertEquals(300, checkpoint.recoveryPoint());
        assertEquals(0, checkpoint.logStartOffset());
        assertTrue(inspector.cleanShutdownMarker());

        final List<LogInspector.SegmentInfo> segments = inspector.segments();
        assertTrue(segments.size() > 2, "small segments roll: " + segments);
        final List<Long> offsets = new ArrayList<>();
        int withIndexEntries = 0;
        for (final LogInspector.SegmentInfo segment : segments)
        {
            final LogInspector.ScanResult result = inspector.walk(segment, (info, batch) ->
            {
                assertTrue(info.valid(), info.toString());
                batch.forEachRecord((record) -> offsets.add(record.offset()));
                return true;
            });
            assertEquals(0, result.damagedBatches());
            assertEquals(result.stopPosition(), result.dataEnd());
            final LogInspector.IndexContent index = inspector.offsetIndex(segment);
            assertTrue(index.exists() && index.wholeEntries());
            withIndexEntries += index.entries() > 0 ? 1 : 0;
        }
        assertTrue(withIndexEntries > 0);
        assertEquals(300, offsets.size());
        for (int i = 0; i < offsets.size(); i++)
        {
            assertEquals(i, offsets.get(i));
        }

        final LogInspectionReport report = inspector.verify();
        assertTrue(report.clean(), report.findings().toString());
        assertTrue(report.warnings().isEmpty(), report.findings().toString());
        assertEquals(300, report.records());
        assertEquals(0, report.logStartOffset());
        assertEquals(300, report.logEndOffset());
        assertEquals(segments.size(), report.segments().size());
    }

    @Test
    void inspectionChangesNothingAndTakesNoLock() throws Exception
    {
        final Path dir = tmp.resolve("open");
        try (Log log = Log.open(small(dir)))
        {
            append(log, 0, 100);
            final Map<String, String> before = snapshot(dir);
            final LogInspector inspector = LogInspector.open(dir);
            final LogInspectionReport report = inspector.verify();
            for (final LogInspector.SegmentInfo segment : inspector.segments())
            {
                inspector.walk(segment, (info, batch) -> true);
                inspector.offsetIndex(segment);
                inspector.timeIndex(segment);
            }
            assertEquals(before, snapshot(dir));
            // The log of a running process: its zero-padded active indexes and its missing marker are no damage.
            assertTrue(report.clean(), report.findings().toString());
            assertTrue(report.lockOwnerRunning());
            assertEquals(ProcessHandle.current().pid(), report.lockOwnerPid());
            assertEquals(100, report.logEndOffset());

            // Still usable by its owner, and a scan from where the last one stopped sees only the new batches.
            final LogInspector.SegmentInfo active = inspector.segments().get(inspector.segments().size() - 1);
            final LogInspector.ScanResult first = inspector.scan(active, 0, (info, batch) -> true);
            append(log, 100, 3);
            final List<Long> seen = new ArrayList<>();
            final LogInspector.ScanResult second = inspector.scan(
                inspector.segments().get(inspector.segments().size() - 1),
                log.activeSegmentBaseOffset() == active.baseOffset() ? first.stopPosition() : 0,
                (info, batch) ->
                {
                    seen.add(info.baseOffset());
                    return true;
                });
            assertEquals(103, second.nextOffset());
            assertTrue(seen.contains(102L));
        }
    }

    @Test
    void damageBelowAndAboveTheRecoveryPointIsReportedAsRecoveryWouldTreatIt() throws IOException
    {
        final Path dir = crashedLog(40, 40);
        final LogInspector inspector = LogInspector.open(dir);
        assertEquals(40, inspector.checkpoint().recoveryPoint());
        assertFalse(inspector.cleanShutdownMarker());
        final LogInspector.SegmentInfo first = inspector.segments().get(0);
        final List<LogInspector.BatchInfo> batches = new ArrayList<>();
        inspector.walk(first, (info, batch) -> batches.add(info));
        final LogInspector.BatchInfo below = batches.get(2);
        assertTrue(below.nextOffset() < 40);
        flip(first.log(), below.position() + RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH + 5);

        final LogInspector.SegmentInfo last = inspector.segments().get(inspector.segments().size() - 1);
        final List<LogInspector.BatchInfo> lastBatches = new ArrayList<>();
        inspector.walk(last, (info, batch) -> lastBatches.add(info));
        final LogInspector.BatchInfo above = lastBatches.get(lastBatches.size() - 2);
        assertTrue(above.baseOffset() >= 40);
        flip(last.log(), above.position() + RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH + 5);

        final LogInspectionReport report = inspector.verify();
        assertFalse(report.clean());
        final String text = report.findings().toString();
        assertTrue(text.contains("damaged batch at position " + below.position() + " (reading offset " +
            below.baseOffset() + "): CRC mismatch"), text);
        assertTrue(text.contains("below the recovery point 40"), text);
        assertTrue(text.contains("damaged batch at position " + above.position()), text);
        assertTrue(text.contains("truncates the log at offset " + above.baseOffset()), text);
        assertTrue(text.contains("no .clean-shutdown marker"), text);
        assertFalse(text.contains(" index "), "the indexes point at the damaged batches, as they should: " + text);
        // The walk stepped over the damage below the recovery point and went on to the end.
        assertEquals(above.baseOffset(), report.logEndOffset());

        // Recovery agrees: the tail is cut where the report said, the damage below the recovery point stays.
        try (Log log = Log.open(small(dir)))
        {
            assertEquals(above.baseOffset(), log.logEndOffset());
            assertTrue(log.recoveryReport().truncated());
        }
    }

    @Test
    void garbageIndexesAndAMissingCheckpointAreReported() throws IOException
    {
        final Path dir = cleanLog(200);
        final LogInspector inspector = LogInspector.open(dir);
        final LogInspector.SegmentInfo segment = inspector.segments().get(0);
        assertTrue(inspector.offsetIndex(segment).entries() > 0);
        Files.write(segment.offsetIndex(), new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
        Files.write(segment.timeIndex(), new byte[] {1, 2, 3});
        Files.delete(dir.resolve(LogInspector.CHECKPOINT_FILE));
        Files.writeString(dir.resolve("log.checkpoint.tmp"), "partial");

        final LogInspectionReport report = inspector.verify();
        assertFalse(report.clean());
        final String text = report.findings().toString();
        assertTrue(text.contains("offset index 00000000000000000000.index entry"), text);
        assertTrue(text.contains("does not point at a batch with that base offset"), text);
        assertTrue(text.contains("time index 00000000000000000000.timeindex is 3 bytes, not a whole number"), text);
        assertTrue(text.contains("log.checkpoint is MISSING"), text);
        assertTrue(text.contains("WARNING leftover temporary file log.checkpoint.tmp"), text);
        assertEquals(CheckpointFile.Status.MISSING, inspector.checkpoint().status());
    }

    @Test
    void aCorruptCheckpointAndGarbageAfterTheDataAreReported() throws IOException
    {
        final Path dir = cleanLog(50);
        final LogInspector inspector = LogInspector.open(dir);
        final Path checkpoint = dir.resolve(LogInspector.CHECKPOINT_FILE);
        final byte[] bytes = Files.readAllBytes(checkpoint);
        bytes[10] ^= 0x40;
        Files.write(checkpoint, bytes);
        final LogInspector.SegmentInfo last = inspector.segments().get(inspector.segments().size() - 1);
        final long size = Files.size(last.log());
        try (RandomAccessFile file = new RandomAccessFile(last.log().toFile(), "rw"))
        {
            file.seek(size + 64);
            file.write(new byte[] {7, 7, 7, 7, 7});
        }

        final LogInspectionReport report = inspector.verify();
        final String text = report.findings().toString();
        assertEquals(CheckpointFile.Status.CORRUPT, inspector.checkpoint().status());
        assertTrue(text.contains("log.checkpoint is CORRUPT"), text);
        assertTrue(text.contains("non-zero byte(s) after the end of the data at position " + size), text);
        assertEquals(50, report.logEndOffset());
    }

    @Test
    void badlyNamedSegmentAndOrphanIndexAreReported() throws IOException
    {
        final Path dir = cleanLog(10);
        Files.writeString(dir.resolve("123.log"), "x");
        Files.write(dir.resolve("00000000000000099999.index"), new byte[8]);
        final LogInspectionReport report = LogInspector.open(dir).verify();
        final String text = report.findings().toString();
        assertTrue(text.contains("ERROR unexpected file 123.log"), text);
        assertTrue(text.contains("WARNING [segment 99999] index file 00000000000000099999.index has no log file"), text);
    }

    @Test
    void refusesWhatIsNotALogDirectory() throws IOException
    {
        final StorageException missing =
            assertThrows(StorageException.class, () -> LogInspector.open(tmp.resolve("nope")));
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY, missing.code());
        final Path other = Files.createDirectories(tmp.resolve("other"));
        Files.writeString(other.resolve("notes.txt"), "hello");
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY,
            assertThrows(StorageException.class, () -> LogInspector.open(other)).code());
        assertEquals(StorageErrorCode.NOT_A_LOG_DIRECTORY,
            assertThrows(StorageException.class, () -> LogInspector.open(other.resolve("notes.txt"))).code());
    }

    @Test
    void aSegmentFileCopiedOutOfItsLogCanStillBeWalked() throws IOException
    {
        final Path dir = cleanLog(20);
        final Path alone = Files.createDirectories(tmp.resolve("alone"));
        final Path copy = Files.copy(dir.resolve("00000000000000000000.log"), alone.resolve("00000000000000000000.log"));
        final LogInspector inspector = LogInspector.open(alone);
        final LogInspector.SegmentInfo segment = inspector.segmentOf(copy);
        assertNotNull(segment);
        final int[] records = {0};
        inspector.walk(segment, (info, batch) ->
        {
            records[0] += info.recordCount();
            return true;
        });
        assertTrue(records[0] > 0);
        final String text = inspector.verify().findings().toString();
        assertTrue(text.contains("log.meta is MISSING"), text);
    }

    private static void flip(final Path file, final long position) throws IOException
    {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw"))
        {
            f.seek(position);
            final int b = f.read();
            f.seek(position);
            f.write(b ^ 0x5A);
        }
    }

    private static Map<String, String> snapshot(final Path dir) throws IOException, NoSuchAlgorithmException
    {
        final Map<String, String> content = new TreeMap<>();
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                if (file.getFileName().toString().equals(LogInspector.COUNTERS_FILE))
                {
                    continue; // the owner updates its counters all the time
                }
                final MessageDigest digest = MessageDigest.getInstance("SHA-256");
                content.put(file.getFileName().toString(), HexFormat.of().formatHex(digest.digest(
                    Files.readAllBytes(file))) + " " + Files.getLastModifiedTime(file));
            }
        }
        return content;
    }
}
