package io.tidemark.aeron;

import org.junit.jupiter.api.Test;

import org.agrona.concurrent.IdleStrategy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The bounds of {@link DatagramWaitIdleStrategy}'s waits on a clock the test moves: no yield, waits of 1 ms from the
 * first empty cycle after work until quiet, then the deep wait; after the driver's work a short park instead, without restarting the
 * quiet clock; the caller's work restarts it.
 */
class DatagramWaitIdleStrategyTest
{
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private long now = 1_000 * MS;
    private int driverWork;
    private final List<Long> waits = new ArrayList<>();
    private int driverParks;
    private final DatagramWaitIdleStrategy idle = new DatagramWaitIdleStrategy(waits::add, () -> driverWork,
        () -> now, new IdleStrategy()
        {
            @Override
            public void idle(final int workCount)
            {
                driverParks++;
            }

            @Override
            public void idle()
            {
                driverParks++;
            }

            @Override
            public void reset()
            {
            }
        });

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
}
