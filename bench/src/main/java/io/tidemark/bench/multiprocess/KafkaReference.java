package io.tidemark.bench.multiprocess;

import java.util.Locale;

/**
 * What a real three-broker Kafka does on the same machine, <b>as the issue states it</b>: this bench does not run
 * Kafka, and the settings behind these figures (Kafka version, producer settings, partitions, record size) are not
 * recorded here. They are printed beside the measured numbers, labelled as the issue's, with the ratios.
 */
final class KafkaReference
{
    /** Saturated records/s at acks=all (the issue: "about 170k records/s"). */
    static final double SATURATED_RECORDS_PER_SECOND = 170_000;
    /** p99 latency in milliseconds at {@link #P99_RATE} (the issue: "p99 about 12 ms"). */
    static final double P99_MILLIS = 12.0;
    /** The rate of {@link #P99_MILLIS}, records/s. */
    static final long P99_RATE = 10_000;
    /** The acks mode of both figures. */
    static final String ACKS = "all";
    /** Where the figures come from. */
    static final String SOURCE = "the issue's stated figures for a real 3-broker Kafka on the same machine; not " +
        "measured by this bench";

    private KafkaReference()
    {
    }

    /**
     * @param recordsPerSecond a measured saturated rate.
     * @return it as a multiple of Kafka's, e.g. {@code 1.25x}, or "-" when not measured.
     */
    static String throughputRatio(final double recordsPerSecond)
    {
        return ratio(recordsPerSecond / SATURATED_RECORDS_PER_SECOND);
    }

    /**
     * @param p99Millis a measured p99.
     * @param rate      the rate it was measured at.
     * @return it as a multiple of Kafka's p99 (below 1: lower latency than Kafka's), or why it cannot be compared.
     */
    static String latencyRatio(final double p99Millis, final long rate)
    {
        if (rate != P99_RATE)
        {
            return "not comparable (measured at " + rate + " records/s, Kafka's figure is at " + P99_RATE + ")";
        }
        return ratio(p99Millis / P99_MILLIS);
    }

    private static String ratio(final double r)
    {
        if (Double.isNaN(r) || Double.isInfinite(r))
        {
            return "-";
        }
        return String.format(Locale.ROOT, r >= 10 ? "%.1fx" : r >= 0.1 ? "%.2fx" : "%.3fx", r);
    }
}
