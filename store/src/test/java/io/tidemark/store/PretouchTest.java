package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent pre-faults pages ahead of the writer: once it has run, appends into the prepared window take no page
 * faults on the writer's thread. Counted with the kernel's per-thread minor-fault counter, not timed. A writer that
 * writes more than {@code pretouch.bytes} in the lead time gets a longer distance, bounded; a writer that overtook
 * the agent reserves a small step itself; a pass never touches past the reservation.
 */
class PretouchTest
{
    private static final int WINDOW = 2 * 1024 * 1024;

    @TempDir
    Path dir;

    static long writerMinorFaults() throws IOException
    {
        final String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]); // field 10 of stat(5): minflt
    }

    private long faultsAppending(final Path logDir, final int pretouchBytes) throws IOException
    {
        return faultsAppending(logDir, pretouchBytes, 4096);
    }

    private long faultsAppending(final Path logDir, final int pretouchBytes, final int indexIntervalBytes)
        throws IOException
    {
        return faultsAppending(logDir, pretouchBytes, indexIntervalBytes, 1000);
    }

    private long faultsAppending(
        final Path logDir, final int pretouchBytes, final int indexIntervalBytes, final int valueLength)
        throws IOException
    {
        final CachedEpochClock clock = new CachedEpochClock();
        try (Log log = Log.open(new LogContext().logDir(logDir).segmentBytes(64L * 1024 * 1024)
            .indexIntervalBytes(indexIntervalBytes).pretouchBytes(pretouchBytes).epochClock(clock)
            .agentMode(LogContext.AgentMode.INVOKER)))
        {
            final UnsafeBuffer value = new UnsafeBuffer(new byte[valueLength]);
            for (int i = 0; i < 200; i++)
            {
                clock.advance(1);
                log.append(value, 0, value.capacity()); // warm the code path
            }
            while (log.invokeAgent() > 0)
            {
                // let the agent reserve and pre-fault its whole window
            }
            final int records = Math.min((WINDOW - 512 * 1024) / (valueLength + 100), 5000);
            final long before = writerMinorFaults();
            for (int i = 0; i < records; i++)
            {
                clock.advance(1); // a new timestamp per batch: the time index takes an entry when one is due
                log.append(value, 0, value.capacity());
            }
            return writerMinorFaults() - before;
        }
    }

    @Test
    void appendsIntoThePretouchedWindowDoNotFault() throws IOException
    {
        Assumptions.assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "needs Linux /proc");
        final long cold = faultsAppending(dir.resolve("cold"), 0);
        final long warm = faultsAppending(dir.resolve("warm"), WINDOW);
        System.out.println("pretouch: writer minor faults appending ~1.5 MiB: without=" + cold + " with=" + warm);
        // Without pretouch the writer faults on fresh pages (how often depends on the kernel's fault-around);
        // with it, the agent has taken those faults already.
        assertTrue(cold > 10, "without pretouch the writer should fault on fresh pages: " + cold);
        assertTrue(warm <= Math.max(2, cold / 4),
            "with pretouch the writer should (almost) not fault: " + warm + " (without: " + cold + ")");
    }

    @Test
    void indexEntriesIntoThePretouchedChunkDoNotFault() throws IOException
    {
        Assumptions.assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "needs Linux /proc");
        // An index entry for every batch: 5,000 entries, 25 pages of the two index files (without pre-faulting them the
        // writer took 17-19 faults on this machine's kernel, which maps large folios per fault), all within the chunk the
        // agent reserved (64 KiB past the entries) and pre-faulted.
        final long faults = faultsAppending(dir.resolve("indexed"), WINDOW, 0, 200);
        System.out.println("pretouch: writer minor faults appending 5,000 batches with an index entry each: " + faults);
        assertTrue(faults <= 5, "index entry stores land on pre-faulted pages: " + faults);
    }

    @Test
    void theDistanceFollowsTheWritersRateBetweenPretouchBytesAndFourTimesIt()
    {
        final int ahead = 8 * 1024 * 1024;
        assertEquals(ahead, SegmentPrefaulter.leadDistance(ahead, 0));
        // 5 MB in 250 ms: less than pretouch.bytes
        assertEquals(ahead, SegmentPrefaulter.leadDistance(ahead, 20_000_000));
        assertEquals(25_000_000, SegmentPrefaulter.leadDistance(ahead, 100_000_000));
        assertEquals(4L * ahead, SegmentPrefaulter.leadDistance(ahead, 10_000_000_000L));
        // no overflow at the largest values
        assertEquals(4L << 30, SegmentPrefaulter.leadDistance(1 << 30, Long.MAX_VALUE));
    }

    @Test
    void aFastWriterGetsALongerDistanceAndTheAgentNeverTouchesPastTheReservation() throws Exception
    {
        final int ahead = 64 * 1024;
        try (Log log = Log.open(new LogContext().logDir(dir.resolve("fast")).segmentBytes(64L * 1024 * 1024)
            .pretouchBytes(ahead).agentMode(LogContext.AgentMode.INVOKER)))
        {
            final Segment segment = log.activeSegmentForTest();
            while (log.invokeAgent() > 0)
            {
                // the first pass samples the writer's position
            }
            assertTrue(segment.touchedPosition() - segment.size() <= ahead, "at rest: pretouch.bytes ahead");
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
            final long start = System.nanoTime();
            for (int i = 0; i < 1024; i++) // 1 MiB and more: 4 MB/s over even a second is well past 256 KiB/s
            {
                log.append(value, 0, value.capacity());
            }
            while (System.nanoTime() - start < 2 * SegmentPrefaulter.LEAD_NS / 25) // past the rate's sampling interval
            {
                Thread.sleep(1);
            }
            while (log.invokeAgent() > 0)
            {
                // reserve and touch up to the longer distance
            }
            final int distance = segment.touchedPosition() - segment.size();
            assertTrue(distance > ahead + Segment.PAGE_SIZE && distance <= SegmentPrefaulter.LEAD_FACTOR * ahead,
                "a fast writer's distance grows past pretouch.bytes, at most 4 times it: " + distance);
            assertTrue(segment.touchedPosition() <= segment.reservation().reservedPosition(),
                "pages are touched only below the reservation");
        }
    }

    @Test
    void theAgentRefillsOnceAQuarterOfTheDistanceIsUsedNotForEveryPage()
    {
        final int ahead = 1024 * 1024;
        try (Log log = Log.open(new LogContext().logDir(dir.resolve("steps")).segmentBytes(64L * 1024 * 1024)
            .pretouchBytes(ahead).agentMode(LogContext.AgentMode.INVOKER)))
        {
            final Segment segment = log.activeSegmentForTest();
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
            for (int i = 0; i < 10; i++) // the indexes' first entries: each index reserves its next chunk
            {
                log.append(value, 0, value.capacity());
            }
            while (log.invokeAgent() > 0)
            {
                // prepare the whole distance
            }
            final int touched = segment.touchedPosition();
            for (int i = 0; i < 20; i++) // five pages: at most 2 MB/s over the rate's 10 ms, so the distance stays
            {
                log.append(value, 0, value.capacity());
            }
            assertEquals(0, log.invokeAgent(), "a few pages used: nothing to do yet");
            assertEquals(touched, segment.touchedPosition());
            while (touched - segment.size() >= ahead - ahead / SegmentPrefaulter.REFILL_PARTS)
            {
                log.append(value, 0, value.capacity());
            }
            assertTrue(log.invokeAgent() > 0, "a quarter of the distance used: the agent refills");
            while (log.invokeAgent() > 0)
            {
                // a pass is budgeted: the refill may take more than one
            }
            assertTrue(segment.touchedPosition() >= segment.size() + ahead - Segment.PAGE_SIZE,
                "refilled to the whole distance: " + (segment.touchedPosition() - segment.size()));
        }
    }

    @Test
    void aWriterThatOvertookTheAgentReservesOneSmallStepItself()
    {
        try (Log log = Log.open(new LogContext().logDir(dir.resolve("overtaken")).segmentBytes(64L * 1024 * 1024)
            .pretouchBytes(1024 * 1024).agentMode(LogContext.AgentMode.INVOKER)))
        {
            final Segment segment = log.activeSegmentForTest();
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
            log.append(value, 0, value.capacity()); // the agent never ran: the writer reserved for itself
            assertEquals(SegmentReservation.WRITER_RESERVE_CHUNK, segment.reservation().reservedPosition(),
                "one writer step, not an agent chunk");
            while (log.invokeAgent() > 0)
            {
                // the agent takes over from the writer's position
            }
            assertTrue(segment.reservation().reservedPosition() >= segment.size() + 1024 * 1024);
        }
    }
}
