package io.tidemark.bench.multiprocess;

import io.tidemark.replication.PartitionState;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches the topic while a phase runs, on the run's thread: every {@value #SAMPLE_MS} ms it reads the partition
 * states the client holds (from ZooKeeper) and checks that every host's JVM is still running. A phase reports the
 * smallest ISR it saw and how many leader changes happened, so that a number measured while a follower had dropped
 * out of the ISR, or while leadership moved, says so.
 * <p>
 * Not thread-safe: one phase at a time, on one thread.
 */
final class ClusterWatch
{
    private static final long SAMPLE_MS = 100;

    private final LoopbackCluster cluster;
    private final String topic;
    private int minIsr;
    private int epochsAtBegin;
    private int samples;

    /**
     * What the watch saw during one phase.
     *
     * @param minIsr        smallest ISR of any partition at any sample.
     * @param leaderChanges leader elections during the phase (sum of the partitions' leader epoch increments).
     * @param samples       samples taken.
     */
    record Summary(int minIsr, int leaderChanges, int samples)
    {
    }

    ClusterWatch(final LoopbackCluster cluster, final String topic)
    {
        this.cluster = cluster;
        this.topic = topic;
    }

    /** Start watching a phase. */
    void begin()
    {
        minIsr = LoopbackCluster.HOSTS;
        samples = 0;
        epochsAtBegin = sumEpochs(cluster.client().partitions(topic));
    }

    /**
     * Sample until a deadline.
     *
     * @param deadlineNanos {@link System#nanoTime()} to stop at.
     * @param phase         what runs, for the message when a host has exited.
     * @throws IllegalStateException when a host's JVM has exited.
     */
    void sampleUntil(final long deadlineNanos, final String phase)
    {
        long left;
        while ((left = deadlineNanos - System.nanoTime()) > 0)
        {
            LockSupport.parkNanos(Math.min(left, TimeUnit.MILLISECONDS.toNanos(SAMPLE_MS)));
            sample(phase);
        }
    }

    private void sample(final String phase)
    {
        cluster.checkHostsAlive(phase);
        for (final PartitionState state : cluster.client().partitions(topic))
        {
            minIsr = Math.min(minIsr, state.isr().length);
        }
        samples++;
    }

    /** @return what this phase saw. */
    Summary end()
    {
        final List<PartitionState> states = cluster.client().partitions(topic);
        for (final PartitionState state : states)
        {
            minIsr = Math.min(minIsr, state.isr().length);
        }
        return new Summary(minIsr, sumEpochs(states) - epochsAtBegin, samples + 1);
    }

    private static int sumEpochs(final List<PartitionState> states)
    {
        int sum = 0;
        for (final PartitionState state : states)
        {
            sum += state.leaderEpoch();
        }
        return sum;
    }
}
