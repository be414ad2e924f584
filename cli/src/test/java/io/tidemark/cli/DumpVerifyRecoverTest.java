package io.tidemark.cli;

import io.tidemark.store.Log;
import io.tidemark.store.inspect.LogInspector;
import io.tidemark.store.format.RecordBatchDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(Cli.Transcript.class)
class DumpVerifyRecoverTest
{
    private static final int VALUE_BYTE = RecordBatchDescriptor.HEADER_LENGTH + 28 + 8; // inside the first value

    @TempDir
    Path tmp;

    @Test
    void aCleanLogDumpsAndVerifies()
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 120);
        final Cli.Result verify = Cli.run("verify", dir.toString());
        assertEquals(ExitCodes.OK, verify.exitCode(), verify.toString());
        assertTrue(verify.out().contains("log.checkpoint: OK (recovery point 120, log start offset 0)"), verify.out());
        assertTrue(verify.out().contains("log: offsets [0, 120)"), verify.out());
        assertTrue(verify.out().contains("Result: OK (0 error(s), 0 warning(s))"), verify.out());

        final Cli.Result dump = Cli.run("dump", dir.toString(), "--index");
        assertEquals(ExitCodes.OK, dump.exitCode(), dump.toString());
        assertTrue(dump.out().contains("Segment 00000000000000000000.log (base offset 0,"), dump.out());
        assertTrue(dump.out().contains("position=0 offsets=0..0 records=1 length="), dump.out());
        assertTrue(dump.out().contains("epoch=-1 firstTimestamp=2023-11-14T22:13:20Z"), dump.out());
        assertTrue(dump.out().contains("    offset=7 timestamp=2023-11-14T22:13:27Z key=\"key-7\" value=\"value-7-xxx"),
            dump.out());
        assertTrue(dump.out().matches("(?s).*offset index 00000000000000000000.index: [1-9][0-9]* entries.*"),
            dump.out());
        assertTrue(dump.out().contains("  ok"), dump.out());
        assertFalse(dump.out().contains("MISMATCH"), dump.out());
        assertTrue(dump.out().contains("Summary: "), dump.out());
        assertTrue(dump.out().contains("120 record(s), 0 damaged batch(es), 0 index mismatch(es)"), dump.out());

        final Cli.Result batchesOnly = Cli.run("dump", dir.resolve("00000000000000000000.log").toString(),
            "--no-records", "--max-batches", "2");
        assertEquals(ExitCodes.OK, batchesOnly.exitCode(), batchesOnly.toString());
        assertFalse(batchesOnly.out().contains("    offset="), batchesOnly.out());
        assertTrue(batchesOnly.out().contains("offsets=1..1"), batchesOnly.out());
        assertFalse(batchesOnly.out().contains("offsets=2..2"), batchesOnly.out());
        assertFalse(batchesOnly.out().contains("Segment 0000000000000000005"), batchesOnly.out());
    }

    @Test
    void dumpStopsAtADefaultLimitAndStopsReadingThere()
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 300); // 300 one-record batches, ~35 segments
        final int segments = LogInspector.open(dir).segments().size();

        final Cli.Result byDefault = Cli.run("dump", dir.toString());
        assertEquals(ExitCodes.OK, byDefault.exitCode(), byDefault.toString());
        assertEquals(DumpCommand.DEFAULT_MAX_BATCHES, count(byDefault.out(), "  position="), byDefault.out());
        assertTrue(byDefault.out().contains("offsets=99..99 "), byDefault.out());
        assertFalse(byDefault.out().contains("offsets=100..100 "), byDefault.out());
        assertTrue(byDefault.out().contains("Stopped at the limit of 100 batch(es) printed ("), byDefault.out());
        assertTrue(byDefault.out().contains("more segment(s) not read): --max-batches N, --max-records N or --all"),
            byDefault.out());

        final Cli.Result three = Cli.run("dump", dir.toString(), "--max-batches", "3");
        assertEquals(3, count(three.out(), "  position="), three.out());
        assertEquals(1, count(three.out(), "Segment "), "one segment read, the others not opened: " + three.out());
        assertTrue(three.out().contains("  stopped at the limit (at position "), three.out());
        assertTrue(three.out().contains("Summary of what was read: 1 of " + segments + " segment(s) read, "),
            three.out());

        final Cli.Result records = Cli.run("dump", dir.toString(), "--max-records", "5");
        assertEquals(5, count(records.out(), "    offset="), records.out());
        assertTrue(records.out().contains("Stopped at the limit of 5 record(s) printed"), records.out());

        final Cli.Result all = Cli.run("dump", dir.toString(), "--all");
        assertEquals(300, count(all.out(), "  position="));
        assertEquals(segments, count(all.out(), "Segment "));
        assertFalse(all.out().contains("Stopped at the limit"), all.out());
        assertTrue(all.out().contains("Summary: " + segments + " segment(s), 300 valid batch(es), 300 record(s)"),
            all.out());

        final Cli.Result from = Cli.run("dump", dir.toString(), "--from-offset", "290", "--max-batches", "2");
        assertTrue(from.out().contains("offsets=290..290 ") && from.out().contains("offsets=291..291 "), from.out());
        assertEquals(1, count(from.out(), "Segment "), "segments below offset 290 are not read: " + from.out());
        assertEquals(ExitCodes.USAGE, Cli.run("dump", dir.toString(), "--max-batches", "-1").exitCode());
    }

    private static long count(final String text, final String what)
    {
        long n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + 1))
        {
            n++;
        }
        return n;
    }

    @Test
    void aCorruptedLogDirectoryFailsVerificationPreciselyAndRecoverRepairsWhatItMay() throws IOException
    {
        final Path dir = TestLogs.crashedLog(tmp.resolve("orders-0"), 40, 60);
        final LogInspector inspector = LogInspector.open(dir);
        final List<LogInspector.SegmentInfo> segments = inspector.segments();
        assertTrue(segments.size() >= 2, segments.toString());
        final LogInspector.BatchInfo below = batchAt(inspector, 5);
        final LogInspector.BatchInfo above = batchAt(inspector, 70);
        final LogInspector.SegmentInfo belowSegment = segmentOf(segments, 5);
        final LogInspector.SegmentInfo aboveSegment = segmentOf(segments, 70);
        TestLogs.flip(belowSegment.log(), below.position() + VALUE_BYTE);     // bit rot below the recovery point
        TestLogs.flip(aboveSegment.log(), above.position() + VALUE_BYTE);     // a torn write above it
        Files.write(belowSegment.offsetIndex(), new byte[] {9, 9, 9, 9, 1, 2, 3, 4, 77, 0, 0, 0, 5, 0, 0, 0});

        final Cli.Result verify = Cli.run("verify", dir.toString());
        assertEquals(ExitCodes.CORRUPT, verify.exitCode(), verify.toString());
        final String out = verify.out();
        assertTrue(out.contains("ERROR [segment " + belowSegment.baseOffset() + "] damaged batch at position " +
            below.position() + " (reading offset 5): CRC mismatch"), out);
        assertTrue(out.contains("below the recovery point 40 (flushed data): the next open keeps it in place and " +
            "reading it fails with CORRUPT_BATCH"), out);
        assertTrue(out.contains("ERROR [segment " + aboveSegment.baseOffset() + "] damaged batch at position " +
            above.position() + " (reading offset 70): CRC mismatch"), out);
        assertTrue(out.contains("the next open truncates the log at offset 70"), out);
        assertTrue(out.contains("offset index " + belowSegment.offsetIndex().getFileName() + " entry 0"), out);
        assertTrue(out.contains("WARNING no .clean-shutdown marker"), out);
        assertTrue(out.contains("log: offsets [0, 70)"), out);
        assertTrue(out.contains("Result: FAILED (3 error(s), 1 warning(s))"), out);
        final Cli.Result quiet = Cli.run("verify", "-q", dir.toString());
        assertEquals(ExitCodes.CORRUPT, quiet.exitCode());
        assertFalse(quiet.out().contains("segment 0: offsets"), quiet.out());

        final Cli.Result dump = Cli.run("dump", dir.toString(), "--index", "--no-records");
        assertEquals(ExitCodes.CORRUPT, dump.exitCode(), dump.toString());
        assertTrue(dump.out().contains("position=" + below.position() + " length=" + below.length() +
            " DAMAGED: CRC mismatch (header as read: baseOffset=5"), dump.out());
        assertTrue(dump.out().contains("DAMAGED: CRC mismatch (header as read: baseOffset=70"), dump.out());
        assertTrue(dump.out().contains("MISMATCH: no valid batch starts at position"), dump.out());
        assertTrue(dump.out().contains("state: not closed cleanly (the next open runs recovery)"), dump.out());
        final Cli.Result index = Cli.run("dump", belowSegment.offsetIndex().toString());
        assertEquals(ExitCodes.CORRUPT, index.exitCode(), index.toString());
        assertTrue(index.out().contains("offset index " + belowSegment.offsetIndex().getFileName() + ": 2 entries"),
            index.out());

        // Dump and verify changed nothing: recovery still has everything to do.
        final Cli.Result recover = Cli.run("recover", dir.toString(), TestLogs.CONFIG[0], TestLogs.CONFIG[1],
            TestLogs.CONFIG[2], TestLogs.CONFIG[3], TestLogs.CONFIG[4], TestLogs.CONFIG[5]);
        assertEquals(ExitCodes.OK, recover.exitCode(), recover.toString());
        assertTrue(recover.out().contains("previous shutdown: unclean (re-validated from the recovery point)"),
            recover.out());
        assertTrue(recover.out().contains("checkpoint: OK, recovery point 40"), recover.out());
        assertTrue(recover.out().matches("(?s).*truncated: [1-9][0-9]* byte\\(s\\).*"), recover.out());
        assertTrue(recover.out().contains("log: offsets [0, 70)"), recover.out());
        assertTrue(recover.out().contains("note: segment " + aboveSegment.baseOffset() + ": truncated at position " +
            above.position() + " (CRC mismatch)"), recover.out());
        assertTrue(recover.out().contains("Closed cleanly: log end offset 70, recovery point 70"), recover.out());

        // What recovery may not repair stays: the flushed batch below the recovery point, and only that.
        final Cli.Result after = Cli.run("verify", dir.toString());
        assertEquals(ExitCodes.CORRUPT, after.exitCode(), after.toString());
        assertTrue(after.out().contains("damaged batch at position " + below.position() + " (reading offset 5)"),
            after.out());
        assertTrue(after.out().contains("Result: FAILED (1 error(s), 0 warning(s))"), after.out());

        // A reader meets it as a typed error: what came before is printed, then exit 1.
        final Cli.Result tail = Cli.run("tail", dir.toString());
        assertEquals(ExitCodes.CORRUPT, tail.exitCode(), tail.toString());
        assertTrue(tail.out().startsWith("0\t"), tail.out());
        assertTrue(tail.out().contains("\n4\t"), tail.out());
        assertFalse(tail.out().contains("\n5\t"), tail.out());
        assertTrue(tail.err().contains("tidemark tail: CORRUPT_BATCH"), tail.err());
        assertTrue(tail.err().contains("run `tidemark verify <log dir>` for a full report"), tail.err());
        assertFalse(tail.err().contains("\tat "), "no stack trace without --verbose: " + tail.err());

        final Cli.Result verbose = Cli.run("tail", dir.toString(), "--verbose");
        assertEquals(ExitCodes.CORRUPT, verbose.exitCode());
        assertTrue(verbose.err().contains("\tat io.tidemark.store.LogReader"), verbose.err());
    }

    @Test
    void aMissingCheckpointFailsVerificationUntilRecoverRewritesIt() throws IOException
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 30);
        Files.delete(dir.resolve("log.checkpoint"));
        final Cli.Result verify = Cli.run("verify", dir.toString());
        assertEquals(ExitCodes.CORRUPT, verify.exitCode(), verify.toString());
        assertTrue(verify.out().contains("ERROR log.checkpoint is MISSING: the next open trusts nothing and " +
            "re-validates every segment from the first"), verify.out());

        final Cli.Result recover = Cli.run(concat(new String[] {"recover", dir.toString()}, TestLogs.CONFIG));
        assertEquals(ExitCodes.OK, recover.exitCode(), recover.toString());
        assertTrue(recover.out().contains("checkpoint: MISSING"), recover.out());
        assertTrue(recover.out().contains("note: checkpoint MISSING: recovering every segment from the first"),
            recover.out());
        final Cli.Result after = Cli.run("verify", dir.toString());
        assertEquals(ExitCodes.OK, after.exitCode(), after.toString());
        assertTrue(after.out().contains("log.checkpoint: OK (recovery point 30, log start offset 0)"), after.out());
    }

    @Test
    void verifyStrictFailsOnWarnings() throws IOException
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 10);
        Files.writeString(dir.resolve("log.checkpoint.tmp"), "half written");
        assertEquals(ExitCodes.OK, Cli.run("verify", dir.toString()).exitCode());
        final Cli.Result strict = Cli.run("verify", "--strict", dir.toString());
        assertEquals(ExitCodes.CORRUPT, strict.exitCode(), strict.toString());
        assertTrue(strict.out().contains("WARNING leftover temporary file log.checkpoint.tmp"), strict.out());
    }

    @Test
    void missingAndForeignPathsAreClearErrors() throws IOException
    {
        final Path nowhere = tmp.resolve("nowhere");
        for (final String command : new String[] {"dump", "verify", "recover", "tail"})
        {
            final Cli.Result result = Cli.run(command, nowhere.toString());
            assertEquals(ExitCodes.IO, result.exitCode(), command + ": " + result);
            assertTrue(result.err().contains(nowhere.toString()), result.err());
            assertFalse(Files.exists(nowhere), command + " must not create the directory");
        }
        final Path foreign = Files.createDirectories(tmp.resolve("photos"));
        Files.writeString(foreign.resolve("cat.jpg"), "meow");
        final Cli.Result verify = Cli.run("verify", foreign.toString());
        assertEquals(ExitCodes.IO, verify.exitCode(), verify.toString());
        assertTrue(verify.err().contains("NOT_A_LOG_DIRECTORY"), verify.err());
        assertTrue(verify.err().contains("give the directory that holds log.meta"), verify.err());
        final Cli.Result notSegment = Cli.run("dump", foreign.resolve("cat.jpg").toString());
        assertEquals(ExitCodes.IO, notSegment.exitCode(), notSegment.toString());
    }

    @Test
    void recoverRefusesALockedLog()
    {
        final Path dir = tmp.resolve("orders-0");
        try (Log log = Log.open(TestLogs.small(dir)))
        {
            TestLogs.append(log, 0, 5);
            final Cli.Result recover = Cli.run("recover", dir.toString());
            assertEquals(ExitCodes.LOCKED, recover.exitCode(), recover.toString());
            assertTrue(recover.err().contains("LOCKED"), recover.err());
            assertTrue(recover.err().contains("stop it first"), recover.err());
            // Read-only commands still work on the open log.
            final Cli.Result verify = Cli.run("verify", dir.toString());
            assertEquals(ExitCodes.OK, verify.exitCode(), verify.toString());
            assertTrue(verify.out().contains("state: open in running process " + ProcessHandle.current().pid()),
                verify.out());
            assertEquals(ExitCodes.OK, Cli.run("dump", dir.toString()).exitCode());
        }
    }

    static String[] concat(final String[] a, final String[] b)
    {
        final String[] all = new String[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    private static LogInspector.SegmentInfo segmentOf(final List<LogInspector.SegmentInfo> segments, final long offset)
    {
        LogInspector.SegmentInfo found = null;
        for (final LogInspector.SegmentInfo segment : segments)
        {
            if (segment.baseOffset() <= offset)
            {
                found = segment;
            }
        }
        return found;
    }

    private static LogInspector.BatchInfo batchAt(final LogInspector inspector, final long offset)
    {
        final List<LogInspector.BatchInfo> found = new ArrayList<>();
        inspector.walk(segmentOf(inspector.segments(), offset), (info, batch) ->
        {
            if (info.baseOffset() <= offset && offset < info.nextOffset())
            {
                found.add(info);
            }
            return true;
        });
        return found.get(0);
    }
}
