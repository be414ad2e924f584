package io.tidemark.aeron;

import org.junit.jupiter.api.Test;

import org.agrona.concurrent.IdleStrategy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds of {@link DatagramWaitIdleStrategy}'s waits on a clock the test moves: no yield, waits of 1 ms from the
 * first empty cycle after work until quiet, then the deep wait; after the driver's work a short park instead, without
 * restarting the quiet clock; the caller's work restarts it; a wait starts the driver's next burst over at its first
 * step. Graduated: the bound is the time since the last work, from 1 ms to the deep wait. With a readiness check, the
 * driver's work with a datagram already in cycles again at once, without a park.
 */
class DatagramWaitIdleStrategyTest
{
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private long now = 1_000 * MS;
    private int driverWork;
    private final List<Long> waits = new ArrayList<>();
    private int driverParks;
    private int driverStepsSinceReset;
    private final IdleStrategy driverBackoff = new IdleStrategy()
    {
        @Override
        public void idle(final int workCount)
        {
            idle();
        }

        @Override
        public void idle()
        {
            driverParks++;
            driverStepsSinceReset++;
        }

        @Override
        public void reset()
        {
            driverStepsSinceReset = 0;
        }
    };
    private final DatagramWaitIdleStrategy idle = new DatagramWaitIdleStrategy(waits::add, () -> driverWork,
        () -> now, driverBackoff);
    private boolean datagramReady;
    private final DatagramWaitIdleStrategy graduated = new DatagramWaitIdleStrategy(waits::add, () -> driverWork,
        () -> datagramReady, () -> now, driverBackoff, true);

    @Test
    void shortWaitsThenTheDeepWaitOnceQuiet()
    {
        idle.idle(0);
        assertEquals(List.of(DatagramWaitIdleStrategy.SHORT_WAIT_MS), waits, "the first empty cycle waits at once");
        idle.idle(0);
        assertEquals(List.of(DatagramWaitIdleStrategy.SHORT_WAIT_MS, DatagramWaitIdleStrategy.SHORT_WAIT_MS), waits);

        now += QuietIdleStrategy.QUIET_MS * MS;
        idle.idle(0);
        assertEquals(DatagramWaitIdleStrategy.DEEP_WAIT_MS, waits.get(waits.size() - 1));

        idle.idle(3); // the caller's work: back to short waits
        idle.idle(0);
        assertEquals(DatagramWaitIdleStrategy.SHORT_WAIT_MS, waits.get(waits.size() - 1));
        assertEquals(4, waits.size());
    }

    @Test
    void driverWorkCyclesAgainAtOnceButKeepsTheQuietClock()
    {
        idle.idle(0); // quiet clock starts here
        now += QuietIdleStrategy.QUIET_MS * MS;

        driverWork = 1; // a heartbeat sent, a datagram read: the short parks, no wait for a datagram
        idle.idle(0);
        idle.idle(0);
        assertEquals(List.of(DatagramWaitIdleStrategy.SHORT_WAIT_MS), waits);
        assertEquals(2, driverParks);

        driverWork = 0; // still quiet: the driver's own traffic did not restart the clock
        idle.idle(0);
        assertEquals(DatagramWaitIdleStrategy.DEEP_WAIT_MS, waits.get(waits.size() - 1));
    }

    @Test
    void aWaitStartsTheDriversNextBurstAtItsFirstStep()
    {
        idle.idle(0);
        driverWork = 1; // a burst of the driver's: its backoff steps on
        idle.idle(0);
        idle.idle(0);
        idle.idle(0);
        assertEquals(3, driverStepsSinceReset);

        driverWork = 0; // the burst is over: a wait, and the next burst starts again at the backoff's first step
        idle.idle(0);
        assertEquals(0, driverStepsSinceReset,
            "a lone heartbeat read after a wait must not inherit the last burst's parks");
        driverWork = 1;
        idle.idle(0);
        assertEquals(1, driverStepsSinceReset);
    }

    @Test
    void graduatedBoundIsTheTimeSinceTheLastWorkFromOneMsToTheDeepWait()
    {
        graduated.idle(5); // work: the quiet clock starts at the next empty cycle
        final long[] quietMs = {0, 1, 2, 4, 8, 16, 32, 49, 50, 64, 1_000};
        final long start = now;
        graduated.idle(0);
        for (final long q : quietMs)
        {
            now = start + q * MS;
            graduated.idle(0);
            final long expected = Math.max(DatagramWaitIdleStrategy.SHORT_WAIT_MS,
                Math.min(DatagramWaitIdleStrategy.DEEP_WAIT_MS, q));
            assertEquals(expected, waits.get(waits.size() - 1), "bound after " + q + " ms quiet");
        }
        assertEquals(List.of(1L, 1L, 1L, 2L, 4L, 8L, 16L, 32L, 49L, 50L, 50L, 50L), waits);

        graduated.idle(1); // work again: back to 1 ms
        graduated.idle(0);
        assertEquals(DatagramWaitIdleStrategy.SHORT_WAIT_MS, waits.get(waits.size() - 1));
    }

    @Test
    void graduatedBoundMakesATimerLateByAtMostItsAge()
    {
        // a thread that waits each bound in full from its last work: a timer due t ms later runs by 2t (t + 1 below
        // 1 ms), and the waits up to the deep bound are few
        for (final long dueMs : new long[] {1, 3, 7, 10, 20, 33, 50, 99, 100, 250})
        {
            long at = 0;
            int wakeUps = 0;
            while (at < dueMs)
            {
                at += DatagramWaitIdleStrategy.boundMs(at * MS);
                wakeUps++;
            }
            assertTrue(at - dueMs <= Math.max(1, dueMs), "timer due at " + dueMs + " ms ran at " + at);
            if (dueMs <= 64)
            {
                assertTrue(wakeUps <= 8, wakeUps + " wake-ups to reach " + dueMs + " ms");
            }
        }
    }

    @Test
    void driverWorkWithADatagramAlreadyInCyclesAtOnceWithoutAPark()
    {
        graduated.idle(0);
        driverWork = 1; // a heartbeat of a burst read, the next one already in
        datagramReady = true;
        graduated.idle(0);
        graduated.idle(0);
        graduated.idle(0);
        graduated.idle(0);
        assertEquals(0, driverParks, "a burst is read cycle after cycle");
        assertEquals(1, waits.size());

        datagramReady = false; // the burst's last datagram read: the backoff's step (the sender may be mid-send)
        graduated.idle(0);
        assertEquals(1, driverParks);
        driverWork = 0; // nothing more: the wait
        graduated.idle(0);
        assertEquals(2, waits.size());
    }
}
