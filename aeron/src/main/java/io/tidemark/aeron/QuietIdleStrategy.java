package io.tidemark.aeron;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;
import java.util.concurrent.locks.LockSupport;

/**
 * The idle strategy of a thread that runs an invoked media driver in its duty cycle, for machines whose cores are
 * shared: after work, one spin and one yield, then parks from 1 us doubling to 1 ms (a message after a short pause
 * waits at most 1 ms); once the thread has had no work for {@link #QUIET_MS}, parks of {@link #DEEP_PARK_MS} (or the
 * constructor's). Each wake-up of such a thread runs a driver duty cycle, a system call per socket, so an idle
 * process's cost is its wake-ups: a thread parking 1 ms at most wakes 1,000 times a second, one parking 10 ms 100
 * times. The first message after a quiet spell waits up to the deep park; the ones after it are back on the short
 * parks. A thread may park deeper still once quiet for longer (the three-argument constructor; not used by the
 * host yet: a trial with 50 ms parks after a quiet second, together with not counting expired long polls as work,
 * kept a follower that fell behind during an acks=1 burst out of the ISR for good, and was reverted).
 * <p>
 * "Work" is what the caller counts: a host counts its gateway's and agents' work, not the driver's own periodic
 * heartbeats and status messages, which would otherwise keep it from ever being quiet.
 */
public final class QuietIdleStrategy implements IdleStrategy
{
    /** No work for this long and the parks deepen. */
    public static final long QUIET_MS = 20;
    /** The park once quiet. */
    public static final long DEEP_PARK_MS = 10;

    private static final long QUIET_NS = TimeUnit.MILLISECONDS.toNanos(QUIET_MS);

    private final long deepParkNs;
    private final long deeperAfterNs;
    private final long deeperParkNs;
    private final LongSupplier nanoClock;
    private final LongConsumer parker;

    private final BackoffIdleStrategy backoff = new BackoffIdleStrategy(1, 1, TimeUnit.MICROSECONDS.toNanos(1),
        TimeUnit.MILLISECONDS.toNanos(1));
    private long quietSinceNs;
    private boolean quiet;

    /** Parks of {@link #DEEP_PARK_MS} once quiet: for a thread whose first message after a pause must not wait long. */
    public QuietIdleStrategy()
    {
        this(DEEP_PARK_MS);
    }

    /**
     * @param deepParkMs the park once quiet, at least 1 ms: for a thread whose work after a pause may wait that long
     *                   (housekeeping, a watch of timeouts in seconds), so that an idle process wakes it less often.
     */
    public QuietIdleStrategy(final long deepParkMs)
    {
        this(deepParkMs, Long.MAX_VALUE / 2, deepParkMs);
    }

    /**
     * @param deepParkMs    the park once quiet, at least 1 ms.
     * @param deeperAfterMs once quiet for this long, parks of {@code deeperParkMs} instead.
     * @param deeperParkMs  the park once quiet for {@code deeperAfterMs}, at least {@code deepParkMs}.
     */
    public QuietIdleStrategy(final long deepParkMs, final long deeperAfterMs, final long deeperParkMs)
    {
        this(deepParkMs, deeperAfterMs, deeperParkMs, System::nanoTime, LockSupport::parkNanos);
    }

    QuietIdleStrategy(final long deepParkMs, final long deeperAfterMs, final long deeperParkMs,
        final LongSupplier nanoClock, final LongConsumer parker)
    {
        if (deepParkMs < 1 || deeperParkMs < deepParkMs || deeperAfterMs < 0)
        {
            throw new IllegalArgumentException("need 1 <= deepParkMs <= deeperParkMs and deeperAfterMs >= 0: " +
                deepParkMs + ", " + deeperParkMs + ", " + deeperAfterMs);
        }
        this.deepParkNs = TimeUnit.MILLISECONDS.toNanos(deepParkMs);
        this.deeperAfterNs = TimeUnit.MILLISECONDS.toNanos(deeperAfterMs);
        this.deeperParkNs = TimeUnit.MILLISECONDS.toNanos(deeperParkMs);
        this.nanoClock = nanoClock;
        this.parker = parker;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            reset();
            return;
        }
        idle();
    }

    @Override
    public void idle()
    {
        if (quiet)
        {
            parker.accept(deeperParkNs == deepParkNs || nanoClock.getAsLong() - quietSinceNs < deeperAfterNs ?
                deepParkNs : deeperParkNs);
            return;
        }
        final long now = nanoClock.getAsLong();
        if (0 == quietSinceNs)
        {
            quietSinceNs = now;
        }
        else if (now - quietSinceNs >= QUIET_NS)
        {
            quiet = true;
        }
        backoff.idle();
    }

    @Override
    public void reset()
    {
        quietSinceNs = 0;
        quiet = false;
        backoff.reset();
    }

    @Override
    public String alias()
    {
        return "quiet-backoff";
    }
}
