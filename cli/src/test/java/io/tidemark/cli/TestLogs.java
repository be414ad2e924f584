package io.tidemark.cli;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Logs for the tests: small segments, many index entries. */
final class TestLogs
{
    static final String[] CONFIG = {"--config", "segment.bytes=8192", "--config", "max.message.bytes=1024",
        "--config", "index.interval.bytes=256"};

    private TestLogs()
    {
    }

    static LogContext small(final Path dir)
    {
        return new LogContext().logDir(dir).segmentBytes(8 * 1024).maxMessageBytes(1024).indexIntervalBytes(256)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    static void append(final Log log, final int from, final int count)
    {
        for (int i = from; i < from + count; i++)
        {
            final byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
            final byte[] value = ("value-" + i + "-" + "x".repeat(40)).getBytes(StandardCharsets.UTF_8);
            log.append(1_700_000_000_000L + i * 1000L, new UnsafeBuffer(key), 0, key.length, new UnsafeBuffer(value),
                0, value.length);
        }
    }

    static Path cleanLog(final Path dir, final int records)
    {
        try (Log log = Log.open(small(dir)))
        {
            append(log, 0, records);
        }
        return dir;
    }

    /** First {@code flushed} records flushed, then {@code more} not, then the process "dies". */
    static Path crashedLog(final Path dir, final int flushed, final int more) throws IOException
    {
        final Log log = Log.open(small(dir));
        append(log, 0, flushed);
        log.flush();
        append(log, flushed, more);
        log.halt();
        Files.writeString(dir.resolve(".lock"), ""); // as a process that died leaves it, as far as the pid goes
        return dir;
    }

    static void flip(final Path file, final long position) throws IOException
    {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw"))
        {
            f.seek(position);
            final int b = f.read();
            f.seek(position);
            f.write(b ^ 0x5A);
        }
    }
}
