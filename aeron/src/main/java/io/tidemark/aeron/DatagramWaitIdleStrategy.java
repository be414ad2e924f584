package io.tidemark.aeron;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The idle strategy of a thread that runs an embedded media driver in its duty cycle: it waits for the next datagram
 * on the driver's receive sockets rather than parking blind, so a message from another process is handled as soon
 * as the kernel has it, whether the thread was busy a moment ago or idle for minutes.
 * <p>
 * {@link QuietIdleStrategy}, which this replaces on such threads, parks from 1 us doubling to 1 ms after work, then
 * 10 ms once quiet: a message arriving meanwhile waits out the park, up to 1 ms on a busy host and 10 ms on a quiet
 * one, at every hop of a replicated write (client to leader, leader to followers, followers back, leader to client).
 * Here the waits are bounded 1 ms after work and {@value #DEEP_WAIT_MS} ms once quiet for
 * {@value QuietIdleStrategy#QUIET_MS} ms (or, graduated, by the time since the last work, from 1 ms to
 * {@value #DEEP_WAIT_MS} ms: a host's duty thread), and a datagram ends them: the bounds only matter for work that does not
 * come from the network, the duty cycle's timers (heartbeats every few hundred milliseconds, fetch and request
 * deadlines, which tolerate being that late) and work handed over by another thread of the process, whose hand-offs
 * ring the wait's doorbell ({@link AeronMedia#wakeDatagramWait}). The deep bound is longer than a blind park's
 * because nothing from outside waits for it: at 10 ms, an idle host's thread woke a hundred times a second for the
 * bound alone (a quiet A/B of 20 s idle windows, 3 hosts and ZooKeeper: 11.1 and 12.4 % of one core at 10 ms, 8.7
 * and 9.1 % at 50 ms).
 * <p>
 * Work is counted in two kinds. The caller's own (the gateway's and the agents') restarts the quiet clock. The
 * driver's (a sender that has more datagrams to send than one cycle sends, a receiver that read, a conductor timer)
 * does not: the driver's heartbeats and status messages come every few hundred milliseconds whatever happens, and
 * would otherwise keep an idle host from ever waiting long. After a cycle in which only the driver worked, the thread
 * parks as {@link QuietIdleStrategy} does after work (from 1 us doubling), so that a send of many datagrams goes on
 * without waiting for a datagram in, and without the busy loop that cycling again at once would be: under
 * saturation the driver works in nearly every cycle, and three hosts looping on two cores halved the throughput.
 * Two exceptions: a datagram already waiting (the driver reads one per socket per cycle, and an idle host's
 * heartbeats and status messages arrive in bursts of several) is read by another cycle at once; and every wait starts
 * the next burst's parks over at their first step (they used to go on from where the last burst left them, 1 ms, so
 * that an idle host parked 1 ms and cycled once more after nearly every heartbeat it read: 60 of its duty thread's
 * 107 wake-ups a second, counted with strace per cause, perf-results/2026-12-02_idle-s10).
 * <p>
 * No yield before a wait: a wait finds a datagram that is already there at once, whereas a yield on a machine whose
 * cores are all taken queues the thread behind the others for a time slice (the per-thread schedstat of a
 * one-at-a-time round trip on two loaded cores showed 0.35-1 ms of run-queue wait per wake-up).
 */
public final class DatagramWaitIdleStrategy implements IdleStrategy
{
    /** The longest wait once quiet: a bound for timers and for a hand-off whose doorbell was missed. */
    public static final long DEEP_WAIT_MS = 50;
    /** The longest wait within {@link QuietIdleStrategy#QUIET_MS} of work. */
    public static final long SHORT_WAIT_MS = 1;

    private static final long QUIET_NS = TimeUnit.MILLISECONDS.toNanos(QuietIdleStrategy.QUIET_MS);

    private final LongConsumer waitMs;
    private final IntSupplier driverWork;
    private final BooleanSupplier datagramReady;
    private final LongSupplier nanoClock;
    private final IdleStrategy driverBackoff;
    private final boolean graduated;
    private long quietSinceNs;

    /**
     * @param waitMs        waits for a datagram, at most the given ms ({@link AeronMedia#awaitDatagram}).
     * @param driverWork    the driver's work in the last cycle (see the class comment); 0 for a caller that does not
     *                      separate it.
     * @param nanoClock     the clock of the quiet spell.
     * @param driverBackoff the parks after a cycle in which only the driver worked.
     */
    public DatagramWaitIdleStrategy(final LongConsumer waitMs, final IntSupplier driverWork, final LongSupplier nanoClock,
        final IdleStrategy driverBackoff)
    {
        this(waitMs, driverWork, () -> false, nanoClock, driverBackoff, false);
    }

    /**
     * @param waitMs        waits for a datagram, at most the given ms ({@link AeronMedia#awaitDatagram}).
     * @param driverWork    the driver's work in the last cycle (see the class comment); 0 for a caller that does not
     *                      separate it.
     * @param datagramReady whether a datagram is already waiting on the driver's sockets, without waiting
     *                      ({@link AeronMedia#datagramReady}): after a cycle in which only the driver worked, another
     *                      cycle at once reads it instead of a park (the driver reads one datagram per socket per
     *                      cycle, and an idle host's heartbeats and status messages come in bursts of several).
     * @param nanoClock     the clock of the quiet spell.
     * @param driverBackoff the parks after a cycle in which only the driver worked and no datagram waits.
     * @param graduated     whether the bound grows with the quiet spell ({@link #boundMs}) instead of stepping from
     *                      {@value #SHORT_WAIT_MS} ms to {@value #DEEP_WAIT_MS} ms after
     *                      {@value QuietIdleStrategy#QUIET_MS} ms: for a thread whose timers tolerate being as late
     *                      as the time since its last work.
     */
    public DatagramWaitIdleStrategy(final LongConsumer waitMs, final IntSupplier driverWork,
        final BooleanSupplier datagramReady, final LongSupplier nanoClock, final IdleStrategy driverBackoff,
        final boolean graduated)
    {
        this.waitMs = waitMs;
        this.driverWork = driverWork;
        this.datagramReady = datagramReady;
        this.nanoClock = nanoClock;
        this.driverBackoff = driverBackoff;
        this.graduated = graduated;
    }

    /**
     * The graduated bound: the time since the caller's last work, at least {@value #SHORT_WAIT_MS} ms and at most
     * {@value #DEEP_WAIT_MS} ms. A timer due {@code t} ms after the last work then runs at most {@code max(t, 1)} ms
     * late (the wait in progress at {@code t} began at {@code a <= t} and lasts at most {@code max(a, 1)}), and a
     * thread that had work once wakes about seven times on its way to the deep bound (1, 1, 2, 4, 8, 16, 32 ms),
     * where the stepped bound woke it twenty times in its first 20 ms.
     *
     * @param quietNs the time since the caller's last work.
     * @return the wait's bound in ms.
     */
    static long boundMs(final long quietNs)
    {
        return Math.max(SHORT_WAIT_MS, Math.min(DEEP_WAIT_MS, TimeUnit.NANOSECONDS.toMillis(quietNs)));
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
        if (driverWork.getAsInt() > 0)
        {
            if (!datagramReady.getAsBoolean())
            {
                driverBackoff.idle(); // the driver is mid-send or just read: the old short parks, not a busy loop
            }
            return; // else the next datagram of a burst is already in: read it now, a park would be a wake-up more
        }
        // the driver's burst is over: the next one starts again with a cycle at once, not where this one's parks
        // had grown to (else every datagram of an idle host, a heartbeat read, costs a 1 ms park and a wake-up more)
        driverBackoff.reset();
        final long now = nanoClock.getAsLong();
        if (0 == quietSinceNs)
        {
            quietSinceNs = now;
        }
        final long quietNs = now - quietSinceNs;
        waitMs.accept(graduated ? boundMs(quietNs) : quietNs >= QUIET_NS ? DEEP_WAIT_MS : SHORT_WAIT_MS);
    }

    @Override
    public void reset()
    {
        quietSinceNs = 0;
        driverBackoff.reset();
    }

    @Override
    public String alias()
    {
        return "datagram-wait";
    }
}
