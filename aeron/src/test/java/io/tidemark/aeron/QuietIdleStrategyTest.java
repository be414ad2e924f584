package io.tidemark.aeron;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tiers of {@link QuietIdleStrategy} on a clock the test moves: short back-off parks until quiet, then the deep
 * park, then the deeper one, and back to the start on work.
 */
class QuietIdleStrategyTest
{
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    private long now = 1_000 * MS;
    private final List<Long> parks = new ArrayList<>();

    private QuietIdleStrategy strategy(final long deepMs, final long deeperAfterMs, final long deeperMs)
    {
        return new QuietIdleStrategy(deepMs, deeperAfterMs, deeperMs, () -> now, parks::add);
    }

    @Test
    void parksDeepOnceQuietThenDeeperThenBackOnWork()
    {
        final QuietIdleStrategy idle = strategy(10, 1000, 50);
        idle.idle(0); // starts the quiet clock; a short back-off park, not the injected one
        now += QuietIdleStrategy.QUIET_MS * MS;
        idle.idle(0); // quiet from here
        assertTrue(parks.isEmpty(), "no deep park before quiet: " + parks);

        idle.idle(0);
        assertEquals(10 * MS, parks.get(parks.size() - 1));

        now += 500 * MS;
        idle.idle(0);
        assertEquals(10 * MS, parks.get(parks.size() - 1), "still the first tier half a second in");

        now += 500 * MS;
        idle.idle(0);
        assertEquals(50 * MS, parks.get(parks.size() - 1), "the deeper tier a second after the last work");

        idle.idle(1); // work: back to the short parks
        final int before = parks.size();
        idle.idle(0);
        assertEquals(before, parks.size(), "work resets to the back-off parks");
    }

    @Test
    void oneArgumentConstructorNeverParksDeeper()
    {
        final QuietIdleStrategy idle = new QuietIdleStrategy(10, Long.MAX_VALUE / 2, 10, () -> now, parks::add);
        idle.idle(0);
        now += QuietIdleStrategy.QUIET_MS * MS;
        idle.idle(0);
        now += 3_600_000 * MS;
        idle.idle(0);
        assertEquals(List.of(10 * MS), parks);
    }

    @Test
    void refusesTiersOutOfOrder()
    {
        assertThrows(IllegalArgumentException.class, () -> new QuietIdleStrategy(0));
        assertThrows(IllegalArgumentException.class, () -> new QuietIdleStrategy(10, 1000, 5));
        assertThrows(IllegalArgumentException.class, () -> new QuietIdleStrategy(10, -1, 50));
    }
}
