package io.tidemark.cli;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(Cli.Transcript.class)
class ProduceTailTest
{
    /** Liveness guard for a command running beside the test: never a timing assumption. */
    private static final long PATIENCE_MS = 120_000;

    @TempDir
    Path tmp;

    private Path input(final String text) throws Exception
    {
        final Path file = tmp.resolve("input-" + System.nanoTime() + ".txt");
        Files.writeString(file, text);
        return file;
    }

    @Test
    void producedLinesAreTailedInEveryFormat() throws Exception
    {
        final Path dir = tmp.resolve("orders-0");
        final Cli.Result produce = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"produce", dir.toString(),
            "--key-separator", ":", "--input", input("order-1:BUY 100 XYZ\norder-2:SELL 5 ABC\nno key here\n\n")
            .toString()}, TestLogs.CONFIG));
        assertEquals(ExitCodes.OK, produce.exitCode(), produce.toString());
        assertEquals("produced 4 record(s) to " + dir + " (new log): offsets 0..3, log end offset 4\n", produce.out());

        final Cli.Result full = Cli.run("tail", dir.toString());
        assertEquals(ExitCodes.OK, full.exitCode(), full.toString());
        final String[] lines = full.out().split("\n");
        assertEquals(4, lines.length, full.out());
        assertTrue(lines[0].matches("0\t20[0-9-]+T[0-9:.]+Z\torder-1\tBUY 100 XYZ"), lines[0]);
        assertTrue(lines[2].matches("2\t.*\tnull\tno key here"), lines[2]);
        assertTrue(lines[3].matches("3\t.*\tnull\t"), lines[3]);

        final Cli.Result kv = Cli.run("consume", dir.toString(), "--format", "kv", "--key-separator", "=",
            "--from-offset", "1", "--max-records", "2");
        assertEquals(ExitCodes.OK, kv.exitCode(), kv.toString());
        assertEquals("order-2=SELL 5 ABC\n=no key here\n", kv.out());

        final Cli.Result values = Cli.run("tail", dir.toString(), "--format", "value", "--max", "1");
        assertEquals("BUY 100 XYZ\n", values.out());
        final Cli.Result last = Cli.run("tail", dir.toString(), "--format", "value", "-n", "2");
        assertEquals("no key here\n\n", last.out(), "-n N: the last N records, as tail -n");

        // A second produce appends after the first, from stdin.
        final InputStream stdin = System.in;
        try
        {
            System.setIn(new ByteArrayInputStream("from stdin\n".getBytes(StandardCharsets.UTF_8)));
            final Cli.Result again = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"produce", dir.toString()},
                TestLogs.CONFIG));
            assertEquals(ExitCodes.OK, again.exitCode(), again.toString());
            assertEquals("produced 1 record(s) to " + dir + ": offsets 4..4, log end offset 5\n", again.out());
        }
        finally
        {
            System.setIn(stdin);
        }
        assertEquals("from stdin\n", Cli.run("tail", dir.toString(), "--from-end", "--format", "value").out() +
            Cli.run("tail", dir.toString(), "--from-offset", "4", "--format", "value").out());
        assertEquals(ExitCodes.OK, Cli.run("verify", dir.toString()).exitCode());
    }

    @Test
    void tailFromATimestamp()
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 50); // record i at 1_700_000_000_000 + i s
        final Cli.Result millis = Cli.run("tail", dir.toString(), "--from-timestamp", "1700000042000", "--format",
            "kv", "--key-separator", " ");
        assertEquals(ExitCodes.OK, millis.exitCode(), millis.toString());
        assertTrue(millis.out().startsWith("key-42 value-42-"), millis.out());
        assertEquals(8, millis.out().split("\n").length, millis.out());
        final Cli.Result iso = Cli.run("tail", dir.toString(), "--from-timestamp", "2023-11-14T22:14:05Z", "--max",
            "1");
        assertTrue(iso.out().startsWith("45\t2023-11-14T22:14:05Z\tkey-45\t"), iso.out());
        final Cli.Result later = Cli.run("tail", dir.toString(), "--from-timestamp", "2030-01-01T00:00:00Z");
        assertEquals(ExitCodes.OK, later.exitCode(), later.toString());
        assertEquals("", later.out());
        final Cli.Result readOnly = Cli.run("tail", dir.toString(), "--read-only", "--from-timestamp",
            "1700000042000", "--format", "value", "--max", "1");
        assertTrue(readOnly.out().startsWith("value-42-"), readOnly.toString());
    }

    @Test
    void badArgumentsAreUsageErrors() throws Exception
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 5);
        final Cli.Result range = Cli.run("tail", dir.toString(), "--from-offset", "99");
        assertEquals(ExitCodes.USAGE, range.exitCode(), range.toString());
        assertTrue(range.err().contains("OFFSET_OUT_OF_RANGE: offset 99 is outside [0, 5]"), range.err());
        final Cli.Result both = Cli.run("tail", dir.toString(), "--from-offset", "1", "--from-end");
        assertEquals(ExitCodes.USAGE, both.exitCode(), both.toString());
        assertTrue(both.err().contains("mutually exclusive"), both.err());
        final Cli.Result twoTargets = Cli.run("tail", dir.toString(), "--cluster", tmp.toString(), "--topic", "t",
            "--partition", "0");
        assertEquals(ExitCodes.USAGE, twoTargets.exitCode(), twoTargets.toString());
        assertTrue(twoTargets.err().contains("give either a <log dir> or --cluster"), twoTargets.err());
        assertEquals(ExitCodes.USAGE, Cli.run("tail").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", dir.toString(), "--idle-timeout-ms", "5").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", dir.toString(), "--format", "xml").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", dir.toString(), "--from-timestamp", "yesterday").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", dir.toString(), "--from-offset", "ten").exitCode());
        final Cli.Result config = Cli.run("produce", dir.toString(), "--config", "segment.bytes=tiny");
        assertEquals(ExitCodes.USAGE, config.exitCode(), config.toString());
        assertTrue(config.err().contains("segment.bytes"), config.err());
        final Cli.Result unknown = Cli.run("produce", dir.toString(), "--config", "no.such.key=1");
        assertEquals(ExitCodes.USAGE, unknown.exitCode(), unknown.toString());
        final Cli.Result acks = Cli.run("produce", dir.toString(), "--acks", "1");
        assertEquals(ExitCodes.USAGE, acks.exitCode(), acks.toString());
        final Cli.Result missingInput = Cli.run("produce", dir.toString(), "--input", tmp.resolve("no.txt").toString());
        assertEquals(ExitCodes.IO, missingInput.exitCode(), missingInput.toString());
        final Cli.Result tooLarge = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"produce", dir.toString(),
            "--input", input("ok\n" + "x".repeat(5000) + "\n").toString()}, TestLogs.CONFIG));
        assertEquals(ExitCodes.USAGE, tooLarge.exitCode(), tooLarge.toString());
        assertTrue(tooLarge.err().contains("RECORD_TOO_LARGE: line 2"), tooLarge.err());
    }

    @Test
    void tailFollowsTheLogOfARunningWriterReadOnlyAcrossSegmentRolls() throws Exception
    {
        final Path dir = tmp.resolve("orders-0");
        try (Log log = Log.open(TestLogs.small(dir).agentMode(LogContext.AgentMode.DEDICATED)))
        {
            TestLogs.append(log, 0, 10);
            final Cli.Running tail = Cli.start("tail", dir.toString(), "--from-end", "--follow", "--max-records",
                "150", "--format", "value");
            // It announces where it follows from once positioned at the end: append only then.
            assertTrue(tail.awaitErr((err) -> err.contains("from offset 10 (Ctrl-C stops)"), PATIENCE_MS),
                tail.err().toString());
            for (int i = 10; i < 160; i++)
            {
                TestLogs.append(log, i, 1); // 150 records: several segment rolls at 8 KiB
            }
            final Cli.Result result = tail.result().get(PATIENCE_MS, TimeUnit.MILLISECONDS);
            assertEquals(ExitCodes.OK, result.exitCode(), result.toString());
            assertTrue(result.err().contains("is open in another process (locked): reading its files read-only"),
                result.err());
            final String[] values = result.out().split("\n");
            assertEquals(150, values.length, result.out());
            for (int i = 0; i < 150; i++)
            {
                assertTrue(values[i].startsWith("value-" + (i + 10) + "-"), values[i]);
            }
            assertTrue(log.segmentCount() > 2, "the log rolled: " + log.segmentCount());

            final Cli.Result idle = Cli.run("tail", dir.toString(), "--from-offset", "155", "--follow",
                "--idle-timeout-ms", "300", "--format", "value");
            assertEquals(ExitCodes.OK, idle.exitCode(), idle.toString());
            assertEquals(5, idle.out().split("\n").length, idle.out());
        }
    }

    @Test
    void lastNRecordsAsTailDoes() throws Exception
    {
        final Path dir = TestLogs.cleanLog(tmp.resolve("orders-0"), 50);
        final Cli.Result three = Cli.run("tail", dir.toString(), "-n", "3", "--format", "kv", "--key-separator", " ");
        assertEquals(ExitCodes.OK, three.exitCode(), three.toString());
        final String[] lines = three.out().split("\n");
        assertEquals(3, lines.length, three.out());
        assertTrue(lines[0].startsWith("key-47 ") && lines[2].startsWith("key-49 "), three.out());
        assertEquals(50, Cli.run("tail", dir.toString(), "--last", "500", "--format", "value").out().split("\n").length);
        assertEquals("", Cli.run("tail", dir.toString(), "-n", "0").out());
        final Cli.Result readOnly = Cli.run("tail", dir.toString(), "--read-only", "-n", "2", "--format", "value");
        assertEquals(2, readOnly.out().split("\n").length, readOnly.toString());
        assertTrue(readOnly.out().startsWith("value-48-"), readOnly.toString());
        final Cli.Result both = Cli.run("tail", dir.toString(), "-n", "2", "--from-offset", "3");
        assertEquals(ExitCodes.USAGE, both.exitCode(), both.toString());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", dir.toString(), "-n", "-1").exitCode());

        // -n with --follow: the last N, then what is appended.
        try (Log log = Log.open(TestLogs.small(dir).agentMode(LogContext.AgentMode.DEDICATED)))
        {
            final Cli.Running tail = Cli.start("tail", dir.toString(), "-n", "2", "--follow", "--max", "4",
                "--format", "value");
            assertTrue(tail.awaitErr((err) -> err.contains("from offset 48 (Ctrl-C stops)"), PATIENCE_MS),
                tail.err().toString());
            TestLogs.append(log, 50, 2);
            final Cli.Result followed = tail.result().get(PATIENCE_MS, TimeUnit.MILLISECONDS);
            assertEquals(ExitCodes.OK, followed.exitCode(), followed.toString());
            final String[] values = followed.out().split("\n");
            assertEquals(4, values.length, followed.out());
            assertTrue(values[0].startsWith("value-48-") && values[3].startsWith("value-51-"), followed.out());
        }
    }

    @Test
    void keysAndValuesArePrintedSafelyUnlessRaw() throws Exception
    {
        final Path dir = tmp.resolve("binary-0");
        final byte[] escape = "red \u001b[31mALERT\u001b[0m\ttab\nline two \\ \u202e".getBytes(StandardCharsets.UTF_8);
        final byte[] binary = {(byte)0xff, (byte)0xfe, 0, 'o', 'k', (byte)0xc3};
        try (Log log = Log.open(TestLogs.small(dir)))
        {
            final byte[] key = "k\u0007".getBytes(StandardCharsets.UTF_8);
            log.append(1_700_000_000_000L, new UnsafeBuffer(key), 0, key.length, new UnsafeBuffer(escape), 0,
                escape.length);
            log.append(1_700_000_000_000L, null, 0, -1, new UnsafeBuffer(binary), 0, binary.length);
            final byte[] text = "caf\u00e9 \u2713".getBytes(StandardCharsets.UTF_8);
            log.append(1_700_000_000_000L, null, 0, -1, new UnsafeBuffer(text), 0, text.length);
        }
        final Cli.Result safe = Cli.run("tail", dir.toString());
        assertEquals(ExitCodes.OK, safe.exitCode(), safe.toString());
        assertEquals("0\t2023-11-14T22:13:20Z\tk\\u0007\tred \\u001b[31mALERT\\u001b[0m\\ttab\\nline two " +
            "\\\\ \\u202e\n" +
            "1\t2023-11-14T22:13:20Z\tnull\t\\xff\\xfe\\u0000ok\\xc3\n" +
            "2\t2023-11-14T22:13:20Z\tnull\tcaf\u00e9 \u2713\n", safe.out());
        assertFalse(safe.out().contains("\u001b"), "no escape sequence reaches the terminal");

        final Cli.Result raw = Cli.run("tail", dir.toString(), "--raw", "--format", "value", "--max", "2");
        assertEquals(ExitCodes.OK, raw.exitCode(), raw.toString());
        final byte[] expected = new byte[escape.length + 1 + binary.length + 1];
        System.arraycopy(escape, 0, expected, 0, escape.length);
        expected[escape.length] = '\n';
        System.arraycopy(binary, 0, expected, escape.length + 1, binary.length);
        expected[expected.length - 1] = '\n';
        assertArrayEquals(expected, raw.outBytes(), "--raw: the bytes as produced");
    }

    @Test
    void readOnlyTailChangesNothingAndReportsDamage() throws Exception
    {
        final Path dir = TestLogs.crashedLog(tmp.resolve("orders-0"), 10, 10);
        final io.tidemark.store.inspect.LogInspector inspector = io.tidemark.store.inspect.LogInspector.open(dir);
        final io.tidemark.store.inspect.LogInspector.SegmentInfo segment = inspector.segments().get(0);
        final long[] position = {-1};
        inspector.walk(segment, (info, batch) ->
        {
            if (info.baseOffset() == 15)
            {
                position[0] = info.position();
            }
            return true;
        });
        TestLogs.flip(segment.log(), position[0] + 100);
        final long before = Files.size(segment.log());
        final Cli.Result tail = Cli.run("tail", dir.toString(), "--read-only", "--format", "value");
        assertEquals(ExitCodes.CORRUPT, tail.exitCode(), tail.toString());
        assertEquals(15, tail.out().split("\n").length, tail.out());
        assertTrue(tail.err().contains("CORRUPT_BATCH: batch at position " + position[0]), tail.err());
        assertEquals(before, Files.size(segment.log()));
        assertFalse(Files.exists(dir.resolve(".clean-shutdown")), "not opened, so not closed either");
    }
}
