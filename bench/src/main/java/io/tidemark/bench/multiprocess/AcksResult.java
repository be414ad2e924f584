package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;

import java.util.Arrays;
import java.util.List;

/**
 * Every run of one acks mode: its saturated-throughput phases and its latency phases, with the figures the report
 * shows: the median records/s and its spread over the runs, and the latency of all runs' windows together.
 *
 * @param acks       the acks mode.
 * @param throughput its throughput phases, one per run that got that far.
 * @param latency    its latency phases, one per run that got that far.
 */
record AcksResult(int acks, List<ThroughputResult> throughput, List<LatencyResult> latency)
{
    /** @return the mode as the reference writes it: 0, 1, 2, all. */
    String name()
    {
        return Acks.describe(acks);
    }

    /** @return the median records/s of the throughput phases, or NaN without one. */
    double medianRecordsPerSecond()
    {
        final double[] values = throughput.stream().mapToDouble(ThroughputResult::recordsPerSecond).sorted()
            .toArray();
        if (values.length == 0)
        {
            return Double.NaN;
        }
        final int mid = values.length / 2;
        return values.length % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
    }

    /** @return (max - min) / median of the throughput phases, or NaN with fewer than two. */
    double spread()
    {
        if (throughput.size() < 2)
        {
            return Double.NaN;
        }
        final double[] values = throughput.stream().mapToDouble(ThroughputResult::recordsPerSecond).toArray();
        return (Arrays.stream(values).max().orElse(0) - Arrays.stream(values).min().orElse(0)) /
            medianRecordsPerSecond();
    }

    /** @return the latency of every run's window in one histogram (nanoseconds); empty without a latency phase. */
    Histogram combinedLatency()
    {
        final Histogram combined = new Histogram(3);
        for (final LatencyResult r : latency)
        {
            combined.add(r.latency());
        }
        return combined;
    }

    /** @return whether both phases ran in every run, with positive throughput and nothing failed or missing. */
    boolean clean(final int runs)
    {
        return throughput.size() == runs && latency.size() == runs &&
            throughput.stream().allMatch((r) -> r.clean() && r.recordsPerSecond() > 0) &&
            latency.stream().allMatch(LatencyResult::clean);
    }

    /** @return the smallest ISR seen during any phase of this mode. */
    int minIsr()
    {
        final int a = throughput.stream().mapToInt((r) -> r.cluster().minIsr()).min().orElse(LoopbackCluster.HOSTS);
        final int b = latency.stream().mapToInt((r) -> r.cluster().minIsr()).min().orElse(LoopbackCluster.HOSTS);
        return Math.min(a, b);
    }

    /** @return leader changes during this mode's phases. */
    int leaderChanges()
    {
        return throughput.stream().mapToInt((r) -> r.cluster().leaderChanges()).sum() +
            latency.stream().mapToInt((r) -> r.cluster().leaderChanges()).sum();
    }

    /** @return the most any latency phase's pacing thread sent a record after its due time, in nanoseconds. */
    long maxSendLagNs()
    {
        return latency.stream().mapToLong(LatencyResult::maxSendLagNs).max().orElse(0);
    }

    /** @return failed sends over this mode's phases. */
    long failedSends()
    {
        return throughput.stream().mapToLong(ThroughputResult::failed).sum() +
            latency.stream().mapToLong(LatencyResult::failed).sum();
    }
}
