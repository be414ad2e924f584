package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A log at the largest accepted {@code segment.bytes} (2 GiB - 8), its active segment filled to within a few
 * batches of its end, appends past the roll point: the log rolls, no position or length overflows on the append
 * path, in the reservation or in the agent's pre-touching, and every record reads back, also after a reopen.
 * <p>
 * Writing 2 GiB would make the test slow, so the segment is made sparse: a log closed cleanly with one batch, whose
 * segment file is rewritten with that batch moved to near the end (a hole before it) and an offset index entry
 * pointing at it. A clean open trusts the segment and walks only the tail after its last index entry, so the log
 * opens with its active segment holding almost 2 GiB; no read ever goes to the hole.
 */
class MaxSegmentBytesTest
{
    /** The largest {@code segment.bytes} {@link LogContext} accepts. */
    static final int MAX_SEGMENT_BYTES = Integer.MAX_VALUE - 7;
    private static final long BASE_OFFSET = 1000;

    @TempDir
    Path dir;

    @Test
    @Timeout(120)
    void aLogAtTheLargestSegmentBytesRollsPastItsEnd() throws Exception
    {
        final CachedEpochClock clock = new CachedEpochClock();
        clock.update(1_700_000_000_000L);
        final Path logDir = dir.resolve("log");
        // The data ends 20,000 bytes before the end of the segment: about 18 appends of 1 KiB until the roll.
        final int dataEnd = nearlyFullSegment(logDir, MAX_SEGMENT_BYTES - 20_000, clock);
        final List<Throwable> agentErrors = new CopyOnWriteArrayList<>();
        final LogContext ctx = new LogContext().logDir(logDir).segmentBytes(MAX_SEGMENT_BYTES)
            .pretouchBytes(256 * 1024).epochClock(clock).agentMode(LogContext.AgentMode.INVOKER)
            .errorHandler(agentErrors::add);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[1024]);
        long end;
        try (Log log = Log.open(ctx))
        {
            assertEquals(BASE_OFFSET + 1, log.logEndOffset());
            assertEquals(dataEnd, log.sizeInBytes());
            int appendsInTheLastSegment = 0;
            while (log.segmentCount() == 1)
            {
                value.putLong(0, log.logEndOffset());
                assertEquals(value.getLong(0), log.append(value, 0, value.capacity()));
                log.invokeAgent();
                appendsInTheLastSegment++;
                assertTrue(appendsInTheLastSegment < 100, "the log never rolled: " + log);
            }
            for (int i = 0; i < 50; i++)
            {
                value.putLong(0, log.logEndOffset());
                assertEquals(value.getLong(0), log.append(value, 0, value.capacity()));
                log.invokeAgent();
            }
            log.flush();
            log.invokeAgent();
            assertEquals(List.of(), agentErrors, "the agent failed");
            assertEquals(2, log.segmentCount());
            end = log.logEndOffset();
            assertIntact(log, end);
            System.out.println("max segment.bytes: " + (appendsInTheLastSegment - 1) + " appends fitted before the " +
                "roll; the log holds " + log.sizeInBytes() + " bytes in " + log.segmentCount() + " segments");
        }
        try (Log log = Log.open(ctx))
        {
            assertEquals(end, log.logEndOffset());
            assertIntact(log, end);
            value.putLong(0, end);
            assertEquals(end, log.append(value, 0, value.capacity()));
        }
        assertEquals(List.of(), agentErrors, "the agent failed");
    }

    private static void assertIntact(final Log log, final long end)
    {
        final long[] next = {BASE_OFFSET + 1};
        try (LogReader reader = log.openReader())
        {
            reader.seek(BASE_OFFSET + 1);
            while (reader.poll((r) ->
            {
                assertEquals(next[0], r.offset());
                assertEquals(r.offset(), r.buffer().getLong(r.valueOffset()));
                next[0]++;
            }, Long.MAX_VALUE, 100) > 0)
            {
                // read on
            }
        }
        assertEquals(end, next[0]);
    }

    /**
     * Make {@code logDir} a cleanly closed log whose only segment (base {@value #BASE_OFFSET}) holds one batch at
     * about {@code dataEnd}, a sparse hole before it, and an offset index entry pointing at it.
     *
     * @return the segment's data size.
     */
    static int nearlyFullSegment(final Path logDir, final int dataEnd, final CachedEpochClock clock) throws IOException
    {
        try (Log log = Log.open(new LogContext().logDir(logDir).segmentBytes(1 << 20).pretouchBytes(0)
            .epochClock(clock).agentMode(LogContext.AgentMode.INVOKER)))
        {
            log.truncateFullyAndStartAt(BASE_OFFSET);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1024]);
            value.putLong(0, BASE_OFFSET);
            log.append(value, 0, value.capacity());
        }
        final SegmentFiles files = new SegmentFiles(logDir, BASE_OFFSET);
        final byte[] frame = Files.readAllBytes(files.log());
        final int position = (dataEnd - frame.length) & -RecordBatchDescriptor.FRAME_ALIGNMENT;
        try (RandomAccessFile log = new RandomAccessFile(files.log().toFile(), "rw"))
        {
            log.setLength(0);
            log.seek(position);
            log.write(frame);
        }
        final ByteBuffer entry = ByteBuffer.allocate(OffsetIndex.ENTRY_LENGTH).order(ByteOrder.LITTLE_ENDIAN)
            .putInt(0, 0).putInt(4, position);
        Files.write(files.offsetIndex(), entry.array());
        return position + frame.length;
    }
}
