package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The log agent keeps a chunk of each index file reserved past its entries, so that the writer does not write
 * zeros itself in steady state; without an agent the writer's fallback reserves, and nothing is lost either way.
 * Counted ({@link IndexFile#onDemandReservations()}), never timed.
 */
class IndexReserveAheadTest
{
    /** Appends between two checks: fewer index bytes than one chunk of headroom, for both indexes. */
    private static final int STEP = 1000;
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    @TempDir
    Path dir;

    private static LogContext context(final Path logDir, final CachedEpochClock clock, final LogContext.AgentMode mode)
    {
        return new LogContext().logDir(logDir).segmentBytes(64L * 1024 * 1024).segmentIndexBytes(1024 * 1024)
            .indexIntervalBytes(0) // an offset and a time index entry for every batch: chunks fill fast
            .pretouchBytes(1024 * 1024).epochClock(clock).agentMode(mode);
    }

    private static long headroom(final IndexFile index)
    {
        return index.reservedBytes() - (long)index.entries() * index.entryLength();
    }

    private static boolean agentCaughtUp(final Segment segment)
    {
        return headroom(segment.offsetIndex().file()) >= IndexFile.RESERVE_CHUNK &&
            headroom(segment.timeIndex().file()) >= IndexFile.RESERVE_CHUNK;
    }

    private static void append(final Log log, final CachedEpochClock clock, final UnsafeBuffer value, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            clock.advance(1); // a new timestamp per batch, so that the time index takes an entry for each
            value.putLong(0, log.logEndOffset());
            log.append(value, 0, value.capacity());
        }
    }

    @Test
    void withTheAgentRunningTheWriterDoesNotReserveIndexBlocksItself() throws IOException
    {
        final CachedEpochClock clock = new CachedEpochClock();
        clock.update(1_000_000);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[16]);
        final int chunks = 5;
        final int records = chunks * IndexFile.RESERVE_CHUNK / OffsetIndex.ENTRY_LENGTH;
        final int total = (records + STEP - 1) / STEP * STEP;
        try (Log log = Log.open(context(dir, clock, LogContext.AgentMode.DEDICATED)))
        {
            final Segment segment = log.activeSegmentForTest();
            final IndexFile offsets = segment.offsetIndex().file();
            final IndexFile times = segment.timeIndex().file();
            for (int appended = 0; appended < records; appended += STEP)
            {
                // Wait for the condition the writer relies on, not for a time: the agent restored a chunk of headroom
                final long deadline = System.nanoTime() + WAIT_NANOS;
                while (!agentCaughtUp(segment))
                {
                    if (System.nanoTime() - deadline > 0)
                    {
                        fail("the agent did not reserve a chunk ahead: offset index " + offsets.reservedBytes() +
                            " reserved for " + offsets.entries() + " entries, time index " + times.reservedBytes() +
                            " for " + times.entries());
                    }
                    LockSupport.parkNanos(100_000);
                }
                append(log, clock, value, STEP);
            }
            assertTrue(offsets.entries() >= records - 1, "one offset index entry per batch: " + offsets.entries());
            assertTrue(offsets.reservedBytes() >= (long)chunks * IndexFile.RESERVE_CHUNK,
                "the offset index grew past " + chunks + " chunks: " + offsets.reservedBytes());
            assertTrue(times.reservedBytes() >= (long)chunks * IndexFile.RESERVE_CHUNK,
                "the time index grew past " + chunks + " chunks: " + times.reservedBytes());
            assertEquals(0, offsets.onDemandReservations(), "the writer reserved offset index blocks itself");
            assertEquals(0, times.onDemandReservations(), "the writer reserved time index blocks itself");
            assertEquals(total, log.logEndOffset());
        }
        assertIntactAfterReopen(clock, total);
    }

    @Test
    void withoutAnAgentTheWritersFallbackReserves() throws IOException
    {
        final CachedEpochClock clock = new CachedEpochClock();
        clock.update(1_000_000);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[16]);
        final int chunks = 4;
        final int records = chunks * IndexFile.RESERVE_CHUNK / OffsetIndex.ENTRY_LENGTH;
        try (Log log = Log.open(context(dir, clock, LogContext.AgentMode.INVOKER)))
        {
            final Segment segment = log.activeSegmentForTest();
            final IndexFile offsets = segment.offsetIndex().file();
            final IndexFile times = segment.timeIndex().file();
            append(log, clock, value, records); // the agent is never invoked
            final long offsetChunks = offsets.onDemandReservations();
            final long timeChunks = times.onDemandReservations();
            assertTrue(offsetChunks >= chunks - 1, "the writer reserved the offset index chunks: " + offsetChunks);
            assertTrue(timeChunks >= (long)chunks * OffsetIndex.ENTRY_LENGTH * 3 / TimeIndex.ENTRY_LENGTH / 2,
                "the writer reserved the time index chunks: " + timeChunks);
            assertTrue(offsets.reservedBytes() > (long)offsets.entries() * OffsetIndex.ENTRY_LENGTH);
            assertTrue(times.reservedBytes() > (long)times.entries() * TimeIndex.ENTRY_LENGTH);

            // Once invoked, the agent reserves ahead, and appends within its headroom reserve nothing on demand
            while (log.invokeAgent() > 0)
            {
                // until it has nothing left to do
            }
            assertTrue(agentCaughtUp(segment), "the invoked agent reserved a chunk ahead");
            append(log, clock, value, STEP);
            assertEquals(offsetChunks, offsets.onDemandReservations());
            assertEquals(timeChunks, times.onDemandReservations());
            assertEquals(records + STEP, log.logEndOffset());
        }
        assertIntactAfterReopen(clock, records + STEP);
    }

    @Test
    void aReservationNeverOverwritesEntriesWrittenPastTheReservedEnd() throws IOException
    {
        final int maxEntries = 4 * IndexFile.RESERVE_CHUNK / OffsetIndex.ENTRY_LENGTH;
        try (IndexFile file = IndexFile.openForAppend(dir.resolve("0.index"), OffsetIndex.ENTRY_LENGTH, maxEntries,
            0, true))
        {
            final OffsetIndex index = new OffsetIndex(file, 0);
            // As a rebuild by replay does: entries written without reserving, past the first chunk
            final int written = IndexFile.RESERVE_CHUNK / OffsetIndex.ENTRY_LENGTH + 100;
            for (int i = 0; i < written; i++)
            {
                index.append(i, i * 64);
            }
            assertTrue(file.reservedBytes() < (long)written * OffsetIndex.ENTRY_LENGTH);
            assertTrue(file.reserveAhead(IndexFile.RESERVE_CHUNK) > 0);
            file.ensureRoomForOneMore();
            for (int i = 0; i < written; i++)
            {
                assertEquals(i, index.offsetAt(i), "entry " + i);
                assertEquals(i * 64, index.positionAt(i), "entry " + i);
            }
            assertTrue(file.reservedBytes() >= (long)written * OffsetIndex.ENTRY_LENGTH + IndexFile.RESERVE_CHUNK);
        }
    }

    private void assertIntactAfterReopen(final CachedEpochClock clock, final long records) throws IOException
    {
        try (Log log = Log.open(context(dir, clock, LogContext.AgentMode.INVOKER)))
        {
            assertEquals(records, log.logEndOffset());
            final Segment segment = log.activeSegmentForTest();
            assertTrue(segment.offsetIndex().entries() >= records - 1,
                "index entries kept or rebuilt: " + segment.offsetIndex().entries());
            for (final long offset : new long[] {0, records / 3, records / 2, records - 1})
            {
                final List<TestLogs.Read> read = TestLogs.readFrom(log, offset, offset + 1);
                assertEquals(offset, read.get(0).offset(), "record at " + offset);
            }
        }
    }
}
