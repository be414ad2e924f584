package io.tidemark.bench.harness;

import io.tidemark.replication.Acks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The study's sweeps, built around a base scenario (closed loop, RF=3, acks=all):
 * <ul>
 *     <li>{@value #ACKS}: acks 0, 1, 2, all with RF=3;</li>
 *     <li>{@value #REPLICAS}: RF 1, 2, 3 with acks=all;</li>
 *     <li>{@value #MIN_INSYNC}: min.insync.replicas 1, 2, 3 with acks=all, RF=3;</li>
 *     <li>{@value #PARTITIONS}: 1, 2, 4, 8, 16, 32 partitions with acks=all, RF=3;</li>
 *     <li>{@value #FLUSH}: flush never, every 1,000 messages, every message, with RF=1, acks=1;</li>
 *     <li>{@value #BATCH}: 16, 64, 256, 1,024 records per produce request with acks=all, RF=3 (saturation with
 *     batching);</li>
 *     <li>{@value #LATENCY}: open loop at fixed rates (10k and 100k records/s) for acks 1, 2 and all, RF=3, one
 *     record per request: the latency percentile curves per acks mode; and the same acks modes one request at a
 *     time (closed loop, one in flight: the round trip by itself, as ReplicationLatencyBenchmark measures it).</li>
 * </ul>
 * A scenario that belongs to several sweeps (the base belongs to four) runs once and is listed under each.
 */
public final class Matrix
{
    /** Sweep names. */
    public static final String ACKS = "acks";
    /** Sweep names. */
    public static final String REPLICAS = "replicas";
    /** Sweep names. */
    public static final String MIN_INSYNC = "min.insync";
    /** Sweep names. */
    public static final String PARTITIONS = "partitions";
    /** Sweep names. */
    public static final String FLUSH = "flush";
    /** Sweep names. */
    public static final String BATCH = "batch";
    /** Sweep names. */
    public static final String LATENCY = "latency";
    /** Every sweep, in report order. */
    public static final List<String> ALL_SWEEPS = List.of(ACKS, REPLICAS, MIN_INSYNC, PARTITIONS, FLUSH, BATCH,
        LATENCY);
    /** Records per request of the batch sweep. */
    public static final List<Integer> BATCH_SIZES = List.of(16, 64, 256, 1024);

    /** Partition counts of the partitions sweep. */
    public static final List<Integer> PARTITION_COUNTS = List.of(1, 2, 4, 8, 16, 32);
    /** Flush policies of the flush sweep ({@code flush.interval.messages}). */
    public static final List<Long> FLUSH_POLICIES = List.of(Scenario.FLUSH_NONE, 1_000L, 1L);
    /** Default fixed rates of the latency sweep. */
    public static final List<Long> DEFAULT_RATES = List.of(10_000L, 100_000L);

    /**
     * One scenario to run and the sweeps it belongs to.
     *
     * @param scenario the scenario.
     * @param sweeps   sweep names.
     */
    public record Entry(Scenario scenario, List<String> sweeps)
    {
    }

    private Matrix()
    {
    }

    /**
     * @param base   the closed-loop base: RF, acks, batch, in-flight, size, threading... (its acks, RF and
     *               min.insync are replaced as each sweep says).
     * @param sweeps which sweeps to include.
     * @param rates  the latency sweep's rates (records/s).
     * @return the scenarios, deduplicated, in sweep order.
     */
    public static List<Entry> build(final Scenario base, final Set<String> sweeps, final List<Long> rates)
    {
        final Map<String, Entry> entries = new LinkedHashMap<>();
        final Scenario closed = base.withLoad(Scenario.Load.CLOSED, 0).withReplicas(3).withAcks(Acks.ALL);
        if (sweeps.contains(ACKS))
        {
            for (final int acks : new int[] {Acks.NONE, Acks.LEADER, Acks.replicas(2), Acks.ALL})
            {
                add(entries, closed.withAcks(acks), ACKS);
            }
        }
        if (sweeps.contains(REPLICAS))
        {
            for (int rf = 1; rf <= 3; rf++)
            {
                add(entries, closed.withReplicas(rf), REPLICAS);
            }
        }
        if (sweeps.contains(MIN_INSYNC))
        {
            for (int isr = 1; isr <= 3; isr++)
            {
                add(entries, closed.withMinInsync(isr), MIN_INSYNC);
            }
        }
        if (sweeps.contains(PARTITIONS))
        {
            for (final int p : PARTITION_COUNTS)
            {
                add(entries, closed.withPartitions(p), PARTITIONS);
            }
        }
        if (sweeps.contains(FLUSH))
        {
            for (final long flush : FLUSH_POLICIES)
            {
                add(entries, closed.withReplicas(1).withAcks(Acks.LEADER).withFlush(flush), FLUSH);
            }
        }
        if (sweeps.contains(BATCH))
        {
            for (final int batch : BATCH_SIZES)
            {
                add(entries, closed.withBatch(batch), BATCH);
            }
        }
        if (sweeps.contains(LATENCY))
        {
            final Scenario open = closed.withBatch(1);
            for (final int acks : new int[] {Acks.LEADER, Acks.replicas(2), Acks.ALL})
            {
                add(entries, open.withInFlight(1).withAcks(acks), LATENCY);
            }
            for (final long rate : rates)
            {
                for (final int acks : new int[] {Acks.LEADER, Acks.replicas(2), Acks.ALL})
                {
                    add(entries, open.withAcks(acks).withLoad(Scenario.Load.OPEN, rate), LATENCY);
                }
            }
        }
        return new ArrayList<>(entries.values());
    }

    /**
     * @param sweep a sweep name.
     * @return the order its scenarios are presented in: by the swept parameter (acks 0, 1, 2.., all; flush from
     *         never to every message; latency by rate, then acks).
     */
    public static java.util.Comparator<Scenario> order(final String sweep)
    {
        final java.util.Comparator<Scenario> byAcks = java.util.Comparator.comparingInt(
            (Scenario s) -> s.acks() == Acks.ALL ? Integer.MAX_VALUE : s.acks());
        switch (sweep)
        {
            case ACKS: return byAcks;
            case REPLICAS: return java.util.Comparator.comparingInt(Scenario::replicas);
            case MIN_INSYNC: return java.util.Comparator.comparingInt(Scenario::minInsync);
            case PARTITIONS: return java.util.Comparator.comparingInt(Scenario::partitions);
            case FLUSH: return java.util.Comparator.comparingLong(Scenario::flush).reversed();
            case BATCH: return java.util.Comparator.comparingInt(Scenario::batchRecords);
            case LATENCY: return java.util.Comparator.comparingLong(Scenario::rate).thenComparing(byAcks);
            default: return (a, b) -> 0;
        }
    }

    private static void add(final Map<String, Entry> entries, final Scenario scenario, final String sweep)
    {
        final Entry existing = entries.get(scenario.id());
        if (null == existing)
        {
            entries.put(scenario.id(), new Entry(scenario, new ArrayList<>(List.of(sweep))));
        }
        else if (!existing.sweeps().contains(sweep))
        {
            existing.sweeps().add(sweep);
        }
    }
}
