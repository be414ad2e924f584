package io.tidemark.bench.multiprocess;

import org.HdrHistogram.Histogram;

import java.util.Map;

/**
 * What one fixed-rate latency phase measured.
 *
 * @param acks          the acks mode.
 * @param run           the round, from 1.
 * @param latency       due-to-completion latency of the records due inside the window, in nanoseconds.
 * @param scheduled     records the phase scheduled (warm-up and window).
 * @param sent          records it sent.
 * @param acknowledged  records whose send completed successfully.
 * @param failed        records whose send failed.
 * @param errors        failures by producer error code.
 * @param firstError    the first failure, or null.
 * @param maxSendLagNs  the most a send started after its due time (the pacing thread's own lateness; it is inside
 *                      the measured latency).
 * @param readBack      the read-back of the acknowledged records.
 * @param failure       why the phase stopped early, or null.
 * @param cluster       what the cluster did meanwhile.
 */
record LatencyResult(
    int acks,
    int run,
    Histogram latency,
    long scheduled,
    long sent,
    long acknowledged,
    long failed,
    Map<String, Long> errors,
    String firstError,
    long maxSendLagNs,
    ReadBack.Outcome readBack,
    String failure,
    ClusterWatch.Summary cluster)
{
    /** @return whether every scheduled record was sent and acknowledged and the read-back found them. */
    boolean clean()
    {
        return failed == 0 && null == failure && sent == scheduled && acknowledged == sent && readBack.ok();
    }
}
