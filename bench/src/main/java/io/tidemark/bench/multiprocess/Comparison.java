package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * What a run of the multiprocess machinery compares, and against which goals: Tidemark's own producer against a
 * real Kafka ({@link #MULTIPROCESS}, issue 14's goals), or Kafka's KafkaProducer against Tidemark's Kafka listener
 * and against a real Kafka ({@link #KAFKA_CLIENTS}, issue 19's). Both run the same phases on the same two targets,
 * {@code kafka} and {@code tidemark}; only how the bench produces to Tidemark, the report's title and its goals
 * differ.
 */
enum Comparison
{
    /** {@code tidemark-bench multiprocess}: Tidemark's Producer over TidemarkClient. */
    MULTIPROCESS("multiprocess", "Tidemark across processes beside a real Kafka: 3 server JVMs each, RF=3, on one " +
        "machine", "Tidemark's Producer over TidemarkClient")
    {
        @Override
        List<Goal> goals(final CellStats stats, final MultiProcessPlan plan,
            final Map<String, MultiProcessBench.Idle> idle)
        {
            final List<Goal> goals = new ArrayList<>();
            final boolean both = (stats.has(KAFKA) || idle.containsKey(KAFKA)) &&
                (stats.has(TIDEMARK) || idle.containsKey(TIDEMARK));
            for (final int partitions : new int[]{ 1, 16 })
            {
                goals.add(throughput(stats, partitions, 3, both, false));
            }
            goals.add(p99(stats, plan, 1, 0.1, "1/10", both, false));
            final double kc = stats.cpuPerRecord(KAFKA, CellResult.SATURATED, Acks.ALL, 1);
            final double tc = stats.cpuPerRecord(TIDEMARK, CellResult.SATURATED, Acks.ALL, 1);
            goals.add(new Goal("server CPU per record, acks=all saturated, 1 partition: <= 1/3 of Kafka's",
                String.format(Locale.ROOT, "Tidemark %.2f us, Kafka %.2f us: %s", tc, kc, ratio(tc / kc)), tc / kc,
                both && !Double.isNaN(tc / kc) ? tc / kc <= 1.0 / 3 : null));
            final MultiProcessBench.Idle tIdle = idle.get(TIDEMARK);
            final double idlePercent = null == tIdle ? Double.NaN : tIdle.usage().serverPercentOfCore();
            goals.add(new Goal("idle 3-host cluster, all its processes together (ZooKeeper included): <= 3% of one " +
                "core", String.format(Locale.ROOT, "%.2f%% of one core", idlePercent), idlePercent,
                Double.isNaN(idlePercent) ? null : idlePercent <= 3));
            final Histogram rt = stats.latency(TIDEMARK, CellResult.ROUND_TRIP, Acks.ALL, 1);
            final double rtP99 = rt.getTotalCount() == 0 ? Double.NaN : rt.getValueAtPercentile(99) / 1e3;
            goals.add(new Goal("linger 0, acks=all, one-at-a-time round trip across processes: p99 < 250 us",
                String.format(Locale.ROOT, "p99 %.0f us", rtP99), rtP99, Double.isNaN(rtP99) ? null : rtP99 < 250));
            return goals;
        }
    },

    /** {@code tidemark-bench kafka-clients}: Kafka's KafkaProducer to both, Tidemark through its Kafka listeners. */
    KAFKA_CLIENTS("kafka-clients", "Kafka's own producer against Tidemark's Kafka listener and against a real " +
        "Kafka: 3 server JVMs each, RF=3, on one machine", "Kafka's KafkaProducer through the hosts' Kafka listeners")
    {
        @Override
        List<Goal> goals(final CellStats stats, final MultiProcessPlan plan,
            final Map<String, MultiProcessBench.Idle> idle)
        {
            final List<Goal> goals = new ArrayList<>();
            final boolean both = stats.has(KAFKA) && stats.has(TIDEMARK);
            for (final int partitions : plan.partitions())
            {
                goals.add(throughput(stats, partitions, 2, both, true));
            }
            for (final int partitions : plan.partitions())
            {
                goals.add(p99(stats, plan, partitions, 0.5, "1/2", both, true));
            }
            return goals;
        }

        @Override
        TidemarkTarget tidemark(final MultiProcessPlan plan, final Path dir, final Path logCopies)
        {
            return new TidemarkTarget(plan, dir, logCopies, true);
        }
    };

    /** The real Kafka's target name. */
    static final String KAFKA = "kafka";
    /** Tidemark's target name. */
    static final String TIDEMARK = "tidemark";

    private final String kind;
    private final String title;
    private final String tidemarkProducer;

    Comparison(final String kind, final String title, final String tidemarkProducer)
    {
        this.kind = kind;
        this.title = title;
        this.tidemarkProducer = tidemarkProducer;
    }

    /** @return the subcommand, the results directory's kind and summary.json's {@code kind}. */
    String kind()
    {
        return kind;
    }

    /** @return the report's title. */
    String title()
    {
        return title;
    }

    /** @return how the bench produces to Tidemark, in words. */
    String tidemarkProducer()
    {
        return tidemarkProducer;
    }

    /**
     * @param stats every cell of every run.
     * @param plan  what ran.
     * @param idle  the idle windows, by target.
     * @return the goals with what this run measured.
     */
    abstract List<Goal> goals(CellStats stats, MultiProcessPlan plan, Map<String, MultiProcessBench.Idle> idle);

    /** @return the Tidemark target this comparison produces to. */
    TidemarkTarget tidemark(final MultiProcessPlan plan, final Path dir, final Path logCopies)
    {
        return new TidemarkTarget(plan, dir, logCopies);
    }

    /**
     * One of the goals, with what this run measured.
     *
     * @param goal     the goal, in words.
     * @param measured what was measured, in words.
     * @param value    the measured ratio or value.
     * @param met      whether it is met; null when it could not be measured in this run.
     */
    record Goal(String goal, String measured, double value, Boolean met)
    {
    }

    /**
     * acks=all saturated records/s, Tidemark over Kafka (medians over the runs), at least {@code factor}; with
     * {@code ranges} each side's lowest and highest run too.
     */
    static Goal throughput(final CellStats stats, final int partitions, final double factor, final boolean both,
        final boolean ranges)
    {
        final double k = stats.rps(KAFKA, CellResult.SATURATED, Acks.ALL, partitions);
        final double t = stats.rps(TIDEMARK, CellResult.SATURATED, Acks.ALL, partitions);
        final double r = t / k;
        final String tRange = ranges ? stats.range(TIDEMARK, CellResult.SATURATED, Acks.ALL, partitions,
            CellResult::recordsPerSecond, "%,.0f") : "";
        final String kRange = ranges ? stats.range(KAFKA, CellResult.SATURATED, Acks.ALL, partitions,
            CellResult::recordsPerSecond, "%,.0f") : "";
        return new Goal(String.format(Locale.ROOT, "acks=all saturated records/s, %d partition(s): >= %sx Kafka's",
            partitions, number(factor)), String.format(Locale.ROOT, "Tidemark %,.0f%s, Kafka %,.0f%s: %s", t, tRange,
            k, kRange, ratio(r)), r, both && !Double.isNaN(r) ? r >= factor : null);
    }

    /**
     * acks=all p99 at the fixed rate, Tidemark over Kafka (every run's window together), at most {@code factor};
     * with {@code ranges} each side's lowest and highest p99 of one run too.
     */
    static Goal p99(final CellStats stats, final MultiProcessPlan plan, final int partitions, final double factor,
        final String fraction, final boolean both, final boolean ranges)
    {
        final double k = CellStats.ms(stats.latency(KAFKA, CellResult.RATE, Acks.ALL, partitions), 99);
        final double t = CellStats.ms(stats.latency(TIDEMARK, CellResult.RATE, Acks.ALL, partitions), 99);
        final double r = t / k;
        final ToDoubleFunction<CellResult> p99 = (c) -> null == c.latency() ? Double.NaN :
            CellStats.ms(c.latency(), 99);
        final String tRange = ranges ? stats.range(TIDEMARK, CellResult.RATE, Acks.ALL, partitions, p99, "%.2f") : "";
        final String kRange = ranges ? stats.range(KAFKA, CellResult.RATE, Acks.ALL, partitions, p99, "%.2f") : "";
        return new Goal(String.format(Locale.ROOT, "acks=all p99 at %,d records/s, %d partition%s: <= %s of " +
            "Kafka's", plan.rate(), partitions, partitions == 1 ? "" : "s", fraction),
            String.format(Locale.ROOT, "Tidemark %.2f ms%s, Kafka %.2f ms%s: %s", t, tRange, k, kRange, ratio(r)), r,
            both && !Double.isNaN(r) ? r <= factor : null);
    }

    /** @return a ratio in words: {@code 2.31x}; {@code -} when not a number. */
    static String ratio(final double r)
    {
        if (Double.isNaN(r) || Double.isInfinite(r))
        {
            return "-";
        }
        return String.format(Locale.ROOT, r >= 10 ? "%.1fx" : r >= 0.1 ? "%.2fx" : "%.3fx", r);
    }

    private static String number(final double v)
    {
        return v == Math.rint(v) ? Long.toString((long)v) : Double.toString(v);
    }
}
