package io.tidemark.bench.multiprocess;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches the topic while a phase runs, on the run's thread: every sample period it reads the partitions' leaders
 * and ISRs (Tidemark: the states its client holds from ZooKeeper, free; Kafka: its admin client, once a second) and
 * checks that every server process is still running. A phase reports the smallest ISR it saw and how many leader
 * changes happened, so that a number measured while a follower had dropped out of the ISR, or while leadership
 * moved, says so.
 * <p>
 * Not thread-safe: one phase at a time, on one thread.
 */
final class ClusterWatch
{
    /** Where the samples come from. */
    interface Source
    {
        /** @throws IllegalStateException when a server process has exited, saying which. */
        void checkAlive(String phase);

        /**
         * @return per partition {@code {isr size, leader marker}}: the marker changes when the leader does (Tidemark:
         *         the leader epoch, which counts every election; Kafka: the leader's id); null when unknown now.
         */
        int[][] sample();

        /**
         * @param checkAlive {@link #checkAlive}.
         * @param sample     {@link #sample}.
         * @return a source of the two.
         */
        static Source of(final java.util.function.Consumer<String> checkAlive,
            final java.util.function.Supplier<int[][]> sample)
        {
            return new Source()
            {
                @Override
                public void checkAlive(final String phase)
                {
                    checkAlive.accept(phase);
                }

                @Override
                public int[][] sample()
                {
                    return sample.get();
                }
            };
        }
    }

    private final Source source;
    private final long sampleNanos;
    private final boolean markerIsEpoch;
    private int minIsr;
    private int leaderChanges;
    private int samples;
    private int[] markers;

    /**
     * What the watch saw during one phase.
     *
     * @param minIsr        smallest ISR of any partition at any sample ({@link Integer#MAX_VALUE}: none read).
     * @param leaderChanges leader changes seen during the phase.
     * @param samples       samples taken.
     */
    record Summary(int minIsr, int leaderChanges, int samples)
    {
    }

    /**
     * @param source        the samples.
     * @param sampleMs      period.
     * @param markerIsEpoch whether the leader marker is an epoch (its increments count elections) or a leader id.
     */
    ClusterWatch(final Source source, final long sampleMs, final boolean markerIsEpoch)
    {
        this.source = source;
        this.sampleNanos = TimeUnit.MILLISECONDS.toNanos(sampleMs);
        this.markerIsEpoch = markerIsEpoch;
    }

    /** Start watching a phase. */
    void begin()
    {
        minIsr = Integer.MAX_VALUE;
        leaderChanges = 0;
        samples = 0;
        markers = null;
        take();
    }

    /**
     * Sample until a deadline.
     *
     * @param deadlineNanos {@link System#nanoTime()} to stop at.
     * @param phase         what runs, for the message when a server has exited.
     * @throws IllegalStateException when a server process has exited.
     */
    void sampleUntil(final long deadlineNanos, final String phase)
    {
        long left;
        while ((left = deadlineNanos - System.nanoTime()) > 0)
        {
            LockSupport.parkNanos(Math.min(left, sampleNanos));
            source.checkAlive(phase);
            if (deadlineNanos - System.nanoTime() > 0 || left >= sampleNanos)
            {
                take();
            }
        }
    }

    /**
     * Check the servers and take one sample now.
     *
     * @param phase what runs, for the message when a server has exited.
     */
    void sampleNow(final String phase)
    {
        source.checkAlive(phase);
        take();
    }

    private void take()
    {
        final int[][] rows = source.sample();
        if (null == rows)
        {
            return;
        }
        samples++;
        final int[] next = new int[rows.length];
        for (int p = 0; p < rows.length; p++)
        {
            minIsr = Math.min(minIsr, rows[p][0]);
            next[p] = rows[p][1];
            if (null != markers && p < markers.length && markers[p] != next[p])
            {
                leaderChanges += markerIsEpoch ? Math.max(1, next[p] - markers[p]) : 1;
            }
        }
        markers = next;
    }

    /** @return what this phase saw. */
    Summary end()
    {
        take();
        return new Summary(minIsr, leaderChanges, samples);
    }
}
