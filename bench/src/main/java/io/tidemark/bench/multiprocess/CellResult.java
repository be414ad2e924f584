package io.tidemark.bench.multiprocess;

import org.HdrHistogram.Histogram;

import java.util.Map;

/**
 * What one cell of one target measured in one run.
 *
 * @param target           {@code kafka} or {@code tidemark}.
 * @param kind             what ran: {@link #SATURATED}, {@link #RATE} or {@link #ROUND_TRIP}.
 * @param acks             the acks mode.
 * @param partitions       partitions of the topic.
 * @param run              the round, from 1.
 * @param recordsPerSecond records completed successfully inside the window, per second.
 * @param windowRecords    those records.
 * @param latency          due-to-completion (or round-trip) latency of the window's records, in nanoseconds; null
 *                         for a saturated phase.
 * @param cpu              CPU over the window.
 * @param scheduled        records the phase meant to send (rate phases; 0 otherwise).
 * @param sent             records it sent.
 * @param failed           records whose send failed.
 * @param errors           failures by name.
 * @param firstError       the first failure, or null.
 * @param maxSendLagNs     rate phases: the most a send started after its due time.
 * @param readBack         rate phases: the read-back of the acknowledged records.
 * @param failure          why the phase stopped early, or null.
 * @param cluster          what the cluster did meanwhile.
 */
record CellResult(
    String target,
    String kind,
    int acks,
    int partitions,
    int run,
    double recordsPerSecond,
    long windowRecords,
    Histogram latency,
    CpuMeter.Usage cpu,
    long scheduled,
    long sent,
    long failed,
    Map<String, Long> errors,
    String firstError,
    long maxSendLagNs,
    ReadBack.Outcome readBack,
    String failure,
    ClusterWatch.Summary cluster)
{
    /** Saturated throughput. */
    static final String SATURATED = "saturated";
    /** Fixed rate, open loop. */
    static final String RATE = "rate";
    /** One record at a time, linger 0, synchronous. */
    static final String ROUND_TRIP = "roundtrip";

    /** @return server CPU per record of the window, in microseconds (NaN without records). */
    double serverMicrosPerRecord()
    {
        return windowRecords <= 0 ? Double.NaN : cpu.server() / 1_000.0 / windowRecords;
    }

    /** @return client (bench JVM) CPU per record of the window, in microseconds. */
    double clientMicrosPerRecord()
    {
        return windowRecords <= 0 ? Double.NaN : cpu.client() / 1_000.0 / windowRecords;
    }

    /** @return whether the phase ran to its end without a failed send, lost record or early stop. */
    boolean clean()
    {
        final boolean allSent = !RATE.equals(kind) || sent == scheduled;
        return failed == 0 && null == failure && allSent && (null == readBack || readBack.ok()) &&
            windowRecords > 0;
    }
}
