package io.tidemark.bench.harness;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationContext;

import java.util.Locale;

/**
 * One point of the matrix: a replicated topic ({@code partitions} x {@code replicas} hosts, {@code min.insync}),
 * a load ({@link Load#CLOSED} at maximum throughput, or {@link Load#OPEN} at a fixed {@code rate}), the record size,
 * the producer threads, the flush policy of every replica log, and how the cluster's agents are threaded.
 *
 * @param load            closed loop (maximum throughput) or open loop (fixed rate).
 * @param partitions      partitions of the topic.
 * @param acks            acks mode: 0, 1, 2..replicas, or -1 (all).
 * @param replicas        replication factor; the cluster has this many hosts.
 * @param minInsync       {@code min.insync.replicas}.
 * @param messageSize     value bytes per record (no key); at least {@link #MIN_MESSAGE_SIZE}.
 * @param producerThreads producer threads; partition p is produced to by thread {@code p % producerThreads}.
 * @param flush           {@code flush.interval.messages} of every replica log; {@link #FLUSH_NONE} for never.
 * @param batchRecords    records per produce request.
 * @param maxInFlight     closed loop: produce requests in flight per producer thread.
 * @param rate            open loop: records per second over all producer threads; ignored when closed.
 * @param threading       how the cluster's agents are threaded.
 * @param busySpin        agents busy-spin when idle (else Agrona backoff to park).
 */
public record Scenario(
    Load load,
    int partitions,
    int acks,
    int replicas,
    int minInsync,
    int messageSize,
    int producerThreads,
    long flush,
    int batchRecords,
    int maxInFlight,
    long rate,
    ReplicationContext.ThreadingMode threading,
    boolean busySpin)
{
    /**
     * @return whether an open-loop producer waits for a record's due time by parking rather than spinning: in the
     *         threading that promises at most one spinning thread ({@code LATENCY}) or none (backoff idle), the
     *         application's producer must not spin either. Parking wakes late by the timer slack (about 50 us on
     *         Linux), and latency is measured from the due time, so the lateness is in the figures.
     */
    public boolean producerParks()
    {
        return threading == ReplicationContext.ThreadingMode.LATENCY || !busySpin;
    }

    /** Flush policy "never by count" (page-cache durability, the store's default). */
    public static final long FLUSH_NONE = Long.MAX_VALUE;
    /** Each record's value starts with its producer's correlation id (8 bytes) and its index in the request (4). */
    public static final int MIN_MESSAGE_SIZE = 12;

    /** Closed loop (maximum throughput) or open loop (fixed rate). */
    public enum Load
    {
        /** Each producer keeps {@code maxInFlight} requests outstanding: maximum throughput. */
        CLOSED,
        /** Records are due at a fixed rate; latency is measured from the due time (coordinated omission corrected). */
        OPEN
    }

    /** Validate. */
    public Scenario
    {
        if (partitions < 1 || replicas < 1 || minInsync < 1 || minInsync > replicas || producerThreads < 1 ||
            batchRecords < 1 || maxInFlight < 1 || flush < 1)
        {
            throw new IllegalArgumentException("invalid scenario: partitions=" + partitions + " replicas=" + replicas +
                " min.insync=" + minInsync + " producers=" + producerThreads + " batch=" + batchRecords +
                " in-flight=" + maxInFlight + " flush=" + flush);
        }
        if (acks < Acks.ALL || acks > replicas)
        {
            throw new IllegalArgumentException("acks must be -1 (all), 0, 1 or 2.." + replicas + ": " + acks);
        }
        if (messageSize < MIN_MESSAGE_SIZE)
        {
            throw new IllegalArgumentException("message size must be at least " + MIN_MESSAGE_SIZE + ": " +
                messageSize);
        }
        if (load == Load.OPEN && rate < 1)
        {
            throw new IllegalArgumentException("an open-loop scenario needs a rate: " + rate);
        }
        if (producerThreads > partitions)
        {
            throw new IllegalArgumentException("more producer threads than partitions: " + producerThreads);
        }
    }

    /** @return a copy with another load and rate. */
    public Scenario withLoad(final Load newLoad, final long newRate)
    {
        return new Scenario(newLoad, partitions, acks, replicas, minInsync, messageSize, producerThreads, flush,
            batchRecords, maxInFlight, newRate, threading, busySpin);
    }

    /** @return a copy with another partition count. */
    public Scenario withPartitions(final int n)
    {
        return new Scenario(load, n, acks, replicas, minInsync, messageSize, Math.min(producerThreads, n), flush,
            batchRecords, maxInFlight, rate, threading, busySpin);
    }

    /** @return a copy with another acks mode. */
    public Scenario withAcks(final int a)
    {
        return new Scenario(load, partitions, a, replicas, minInsync, messageSize, producerThreads, flush,
            batchRecords, maxInFlight, rate, threading, busySpin);
    }

    /** @return a copy with another replication factor (min.insync capped at it). */
    public Scenario withReplicas(final int rf)
    {
        return new Scenario(load, partitions, acks, rf, Math.min(minInsync, rf), messageSize, producerThreads, flush,
            batchRecords, maxInFlight, rate, threading, busySpin);
    }

    /** @return a copy with another min.insync.replicas. */
    public Scenario withMinInsync(final int m)
    {
        return new Scenario(load, partitions, acks, replicas, m, messageSize, producerThreads, flush, batchRecords,
            maxInFlight, rate, threading, busySpin);
    }

    /** @return a copy with another flush policy. */
    public Scenario withFlush(final long f)
    {
        return new Scenario(load, partitions, acks, replicas, minInsync, messageSize, producerThreads, f, batchRecords,
            maxInFlight, rate, threading, busySpin);
    }

    /** @return a copy with another number of requests in flight per producer. */
    public Scenario withInFlight(final int n)
    {
        return new Scenario(load, partitions, acks, replicas, minInsync, messageSize, producerThreads, flush,
            batchRecords, n, rate, threading, busySpin);
    }

    /** @return a copy with another batch size. */
    public Scenario withBatch(final int b)
    {
        return new Scenario(load, partitions, acks, replicas, minInsync, messageSize, producerThreads, flush, b,
            maxInFlight, rate, threading, busySpin);
    }

    /** @return whether requests are acknowledged at all (acks != 0). */
    public boolean acknowledged()
    {
        return acks != Acks.NONE;
    }

    /** @return "all", "0", "1", "2", ... */
    public String acksName()
    {
        return Acks.describe(acks);
    }

    /** @return the flush policy as the report writes it. */
    public String flushName()
    {
        return flushName(flush);
    }

    /**
     * @param flush {@code flush.interval.messages}.
     * @return "none", "every message" or "every N messages".
     */
    public static String flushName(final long flush)
    {
        if (flush == FLUSH_NONE)
        {
            return "none";
        }
        return flush == 1 ? "every message" : "every " + flush + " messages";
    }

    /**
     * @return a stable identifier, also the name of the scenario's {@code .hgrm} file, e.g.
     *         {@code closed_p1_rf3_acks-all_isr1_100B_t1_flush-none_b64x16}.
     */
    public String id()
    {
        final StringBuilder id = new StringBuilder();
        id.append(load == Load.CLOSED ? "closed" : "open-" + rateName(rate))
            .append("_p").append(partitions)
            .append("_rf").append(replicas)
            .append("_acks-").append(acksName())
            .append("_isr").append(minInsync)
            .append('_').append(messageSize).append('B')
            .append("_t").append(producerThreads)
            .append("_flush-").append(flush == FLUSH_NONE ? "none" : Long.toString(flush))
            .append("_b").append(batchRecords);
        if (load == Load.CLOSED)
        {
            id.append('x').append(maxInFlight);
        }
        if (threading != ReplicationContext.ThreadingMode.SHARED || !busySpin)
        {
            id.append('_').append(threading.name().toLowerCase(Locale.ROOT)).append(busySpin ? "-spin" : "-backoff");
        }
        return id.toString();
    }

    /**
     * @param rate records per second.
     * @return e.g. "10k", "1.5M", "750".
     */
    public static String rateName(final long rate)
    {
        if (rate >= 1_000_000 && rate % 100_000 == 0)
        {
            return trim(rate / 1_000_000.0) + "M";
        }
        if (rate >= 1_000 && rate % 100 == 0)
        {
            return trim(rate / 1_000.0) + "k";
        }
        return Long.toString(rate);
    }

    private static String trim(final double v)
    {
        return v == Math.rint(v) ? Long.toString((long)v) : Double.toString(v);
    }

    /** @return a one-line description for progress and tables. */
    public String describe()
    {
        return (load == Load.CLOSED ? "closed-loop" : "open-loop " + rateName(rate) + "/s") +
            " P=" + partitions + " RF=" + replicas + " acks=" + acksName() + " min.insync=" + minInsync +
            " " + messageSize + "B flush=" + flushName() + " batch=" + batchRecords +
            (load == Load.CLOSED ? " in-flight=" + maxInFlight : "") + " producers=" + producerThreads;
    }
}
