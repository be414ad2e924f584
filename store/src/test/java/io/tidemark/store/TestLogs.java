package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Helpers shared by the store tests. */
final class TestLogs
{
    private TestLogs()
    {
    }

    /** A context for tests: small segments, invoked agent, manual clock. */
    static LogContext context(final Path dir, final CachedEpochClock clock)
    {
        return new LogContext()
            .logDir(dir)
            .segmentBytes(64 * 1024)
            .segmentIndexBytes(64 * 1024)
            .indexIntervalBytes(512)
            .maxMessageBytes(16 * 1024)
            .pretouchBytes(16 * 1024)
            .epochClock(clock)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    static UnsafeBuffer bytes(final String text)
    {
        return new UnsafeBuffer(text.getBytes(StandardCharsets.UTF_8));
    }

    static String value(final int i)
    {
        return "value-" + i + "-" + "x".repeat(i % 97);
    }

    static long appendText(final Log log, final String text)
    {
        final UnsafeBuffer value = bytes(text);
        return log.append(value, 0, value.capacity());
    }

    /** A record as read back, copied out of the mapping. */
    record Read(long offset, long timestamp, String key, String value)
    {
    }

    static List<Read> readAll(final Log log)
    {
        return readFrom(log, log.logStartOffset(), Long.MAX_VALUE);
    }

    static List<Read> readFrom(final Log log, final long from, final long maxOffset)
    {
        final List<Read> out = new ArrayList<>();
        try (LogReader reader = log.openReader())
        {
            reader.seek(from);
            while (reader.poll((r) -> out.add(new Read(r.offset(), r.timestamp(),
                r.keyLength() < 0 ? null : new String(r.keyBytes(), StandardCharsets.UTF_8),
                r.valueAsString())), maxOffset, 1000) > 0)
            {
                // keep polling
            }
        }
        return out;
    }
}
