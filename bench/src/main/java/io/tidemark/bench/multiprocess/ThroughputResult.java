package io.tidemark.bench.multiprocess;

import java.util.Map;

/**
 * What one saturated-throughput phase measured.
 *
 * @param acks             the acks mode.
 * @param run              the round, from 1.
 * @param recordsPerSecond records whose send completed successfully inside the window, per second (acks=0: handed
 *                         to the leader; it never answers).
 * @param windowRecords    those records.
 * @param completed        every record completed successfully, warm-up and drain included.
 * @param failed           records whose send failed.
 * @param errors           failures by producer error code.
 * @param firstError       the first failure, or null.
 * @param failure          why the phase stopped early (a sending thread failed), or null.
 * @param cluster          what the cluster did meanwhile.
 */
record ThroughputResult(
    int acks,
    int run,
    double recordsPerSecond,
    long windowRecords,
    long completed,
    long failed,
    Map<String, Long> errors,
    String firstError,
    String failure,
    ClusterWatch.Summary cluster)
{
    /** @return whether the phase ran to its end without a failed send. */
    boolean clean()
    {
        return failed == 0 && null == failure;
    }
}
