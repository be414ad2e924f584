package io.tidemark.bench.jmh;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Calls every {@code @Benchmark} method in a loop, with the state lifecycle JMH would run (trial setup, iteration
 * setup/teardown, trial teardown), and checks what the log holds afterwards. Counts, never timings.
 */
class BenchmarksSmokeTest
{
    private static final int OPS = 5_000;

    @Test
    void appendBenchmarksAppendOneRecordPerCall() throws Exception
    {
        final StoreAppendBenchmark bench = new StoreAppendBenchmark();
        bench.valueSize = 100;
        bench.openLog();
        try
        {
            for (int iteration = 0; iteration < 2; iteration++)
            {
                bench.emptyLog();
                final long start = bench.log.logEndOffset();
                for (int i = 0; i < OPS; i++)
                {
                    assertEquals(start + 2L * i, bench.append());
                    assertEquals(start + 2L * i + 1, bench.claimAndCommit());
                }
                assertEquals(start + 2L * OPS, bench.log.logEndOffset());
                assertEquals(start, bench.log.logStartOffset(), "each iteration starts from an empty log");
            }
        }
        finally
        {
            bench.closeLog();
        }
        assertFalse(Files.exists(bench.dir), "the trial's directory is deleted");
    }

    @Test
    void readBenchmarksWrapAroundAndLookUpRandomOffsets() throws Exception
    {
        final StoreReadBenchmark bench = new StoreReadBenchmark();
        bench.records = 1_000;
        bench.valueSize = 100;
        bench.verifyCrc = true;
        bench.fillLog();
        final StoreReadBenchmark.Cursor cursor = new StoreReadBenchmark.Cursor();
        try
        {
            assertEquals(1_000, bench.log.logEndOffset());
            cursor.openReader(bench);
            long checksum = 0;
            for (int i = 0; i < 25; i++)
            {
                final long next = bench.sequentialPoll(cursor);
                assertNotEquals(checksum, next);
                checksum = next;
            }
            assertEquals(2_500 % 1_000, cursor.reader.position(), "25 x 100 records read, wrapping at 1000");

            for (int i = 0; i < OPS; i++)
            {
                final long next = bench.randomLookup(cursor);
                assertNotEquals(checksum, next);
                checksum = next;
            }
        }
        finally
        {
            cursor.closeReader();
            bench.closeLog();
        }
        assertFalse(Files.exists(bench.dir));
    }

    @Test
    void lockingAppenderTakesAppendsFromTwoThreads() throws Exception
    {
        final ConcurrentAppendBenchmark bench = new ConcurrentAppendBenchmark();
        final ConcurrentAppendBenchmark.LockingLog state = new ConcurrentAppendBenchmark.LockingLog();
        state.valueSize = 100;
        state.openLog();
        try
        {
            state.emptyLog();
            runOnTwoThreads(() ->
            {
                for (int i = 0; i < OPS; i++)
                {
                    bench.lockingAppender(state);
                }
                return null;
            });
            assertEquals(2L * OPS, state.log.logEndOffset());
        }
        finally
        {
            state.closeLog();
        }
    }

    @Test
    void ringBufferAppenderDrainsEveryRecordFromTwoThreads() throws Exception
    {
        final ConcurrentAppendBenchmark bench = new ConcurrentAppendBenchmark();
        final ConcurrentAppendBenchmark.RingLog state = new ConcurrentAppendBenchmark.RingLog();
        state.valueSize = 100;
        state.drainIdle = "yielding";
        state.openLog();
        try
        {
            for (int iteration = 0; iteration < 2; iteration++)
            {
                state.startDrainer();
                final long start = state.log.logEndOffset();
                final long appendedBefore = state.listener.appended();
                runOnTwoThreads(() ->
                {
                    final ConcurrentAppendBenchmark.Producer producer = new ConcurrentAppendBenchmark.Producer();
                    for (int i = 0; i < OPS; i++)
                    {
                        bench.ringBufferAppender(state, producer);
                    }
                    return null;
                });
                state.stopDrainer();
                assertEquals(2L * OPS, state.listener.appended() - appendedBefore);
                assertEquals(start + 2L * OPS, state.log.logEndOffset());
            }
        }
        finally
        {
            state.closeLog();
        }
    }

    /**
     * Fill the ring to just short of its end, drain it, then offer one record more: the producer pads the end of
     * the buffer and writes the record at its start, and the next {@code doWork()} only steps over the padding and
     * returns 0. Draining must not stop there.
     */
    @Test
    void drainAtTheEndOfTheRingLeavesNothingBehind() throws Exception
    {
        final ConcurrentAppendBenchmark.RingLog state = new ConcurrentAppendBenchmark.RingLog();
        state.valueSize = 100;
        state.drainIdle = "yielding";
        state.openLog();
        try
        {
            // Agrona record header (8) + ring message header (24) + value, aligned to 8: how much one offer takes
            final int recordSpan = (8 + 24 + state.valueSize + 7) & ~7;
            final int oneLap = ConcurrentAppendBenchmark.RING_CAPACITY / recordSpan;
            long offered = 0;
            for (int i = 0; i < oneLap; i++)
            {
                assertTrue(state.appender.offer(offered++, state.value, 0, state.valueSize));
            }
            state.drainRemaining();
            assertEquals(offered, state.listener.appended());

            assertTrue(state.appender.offer(offered++, state.value, 0, state.valueSize)); // wraps: padding + record
            state.drainRemaining();
            assertEquals(offered, state.listener.appended());
            assertEquals(offered, state.log.logEndOffset());
        }
        finally
        {
            state.closeLog();
        }
    }

    @Test
    void transportDeliversEveryMessage() throws Exception
    {
        final RingBufferTransportBenchmark bench = new RingBufferTransportBenchmark();
        bench.messageBytes = 16_384;
        bench.start();
        long checksum = 0;
        for (int i = 0; i < OPS; i++)
        {
            final long next = bench.sendAndPoll();
            assertNotEquals(checksum, next);
            checksum = next;
        }
        final org.openjdk.jmh.infra.Control control = new org.openjdk.jmh.infra.Control();
        for (int i = 0; i < 100; i++)
        {
            assertTrue(bench.send(control));
        }
        for (int i = 0; i < 100; i++)
        {
            final long next = bench.poll(control);
            assertNotEquals(checksum, next);
            checksum = next;
        }
        control.stopMeasurement = true;
        assertEquals(checksum, bench.poll(control), "an empty ring at the end of an iteration: no wait");
    }

    private static void runOnTwoThreads(final Callable<Void> task) throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        try
        {
            final List<Future<Void>> futures = new ArrayList<>();
            futures.add(pool.submit(task));
            futures.add(pool.submit(task));
            for (final Future<Void> future : futures)
            {
                future.get();
            }
        }
        finally
        {
            pool.shutdownNow();
        }
    }

    @Test
    void badDrainIdleParameterFailsFast()
    {
        final ConcurrentAppendBenchmark.RingLog state = new ConcurrentAppendBenchmark.RingLog();
        state.valueSize = 100;
        state.drainIdle = "sleepy";
        assertThrows(IllegalArgumentException.class, state::openLog);
        assertNull(state.dir, "nothing was created");
    }

    @Test
    void frameAuthenticationBenchmarkTagsAndVerifiesItsFrame() throws Exception
    {
        for (final int payloadBytes : new int[]{ 40, 1024, 1 << 20 })
        {
            final FrameAuthenticationBenchmark bench = new FrameAuthenticationBenchmark();
            bench.payloadBytes = payloadBytes;
            bench.setUp(); // checks that its frame verifies
            try
            {
                final byte first = bench.tag();
                for (int i = 0; i < 100; i++)
                {
                    assertEquals(first, bench.tag(), "the same frame, the same tag");
                    assertNull(bench.verify(), "the frame verifies every time (no replay state in the reader)");
                }
            }
            finally
            {
                bench.tearDown();
            }
        }
    }
}
