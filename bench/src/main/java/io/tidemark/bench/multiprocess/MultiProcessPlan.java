package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * What a multiprocess run does, in one place: the systems compared, the cells swept (acks modes x partition
 * counts, each saturated and at a fixed rate), the one-at-a-time round trips, the idle window, the profiles, the
 * timing of each phase, the record and producer settings, the clusters' settings and where their files go.
 * {@link #validate()} fails fast naming the option. Immutable.
 *
 * @param targets          systems run, in order: {@code kafka}, {@code tidemark}.
 * @param acks             acks modes, in the order run ({@link Acks#ALL} is -1).
 * @param jitWarmupMs      unreported saturated run (acks=1) before the sweep; 0 to skip.
 * @param warmupMs         unreported start of every phase.
 * @param throughputMs     measurement window of each saturated-throughput phase.
 * @param latencyMs        measurement window of each fixed-rate latency phase.
 * @param rate             records/s of the latency phases.
 * @param recordSize       value bytes per record.
 * @param partitions       partition counts swept (a topic for each; RF is always {@link LoopbackCluster#HOSTS}).
 * @param roundTripMs      window of the one-at-a-time round trips (linger 0, acks=all, one partition); 0 to skip.
 * @param idleMs           the idle window, CPU of every server process; 0 to skip.
 * @param profileMs        window of each profiled phase (JFR and per-thread CPU: idle, fixed rate, saturated);
 *                         0 to skip.
 * @param producerThreads  threads sending in the throughput phases (one producer shared by them).
 * @param minInsync        {@code min.insync.replicas} of every host.
 * @param batchSize        producer {@code batch.size}.
 * @param lingerMs         producer {@code linger.ms} of the throughput phases.
 * @param latencyLingerMs  producer {@code linger.ms} of the latency phases.
 * @param bufferMemory     producer {@code buffer.memory}.
 * @param runs             rounds of the sweep (round 1 of every acks mode, then round 2, ...).
 * @param hostProperties   further replication keys written into every host's configuration.
 * @param workDir          where the run's directory (ZooKeeper data, configurations, host logs, replica logs) goes.
 * @param keepData         keep the run's directory at the end.
 * @param hostClasspath    class path of the host JVMs (this JVM's, normally the bench's shaded jar).
 * @param kafkaLib         the Kafka server's jars, or null to look for them (KafkaLib.find).
 * @param startTimeoutMs   longest wait for the hosts to register, and for the topic.
 * @param stopTimeoutMs    longest wait for a host to exit after SIGTERM before it is killed.
 * @param settleTimeoutMs  longest wait before a phase for the ISR to be full again.
 * @param faults           run Tidemark's fault phase (leader kills, restarts, a ZooKeeper restart) at the end.
 */
public record MultiProcessPlan(
    List<String> targets,
    List<Integer> acks,
    List<Integer> partitions,
    long jitWarmupMs,
    long warmupMs,
    long throughputMs,
    long latencyMs,
    long rate,
    long roundTripMs,
    long idleMs,
    long profileMs,
    int recordSize,
    int producerThreads,
    int minInsync,
    int batchSize,
    long lingerMs,
    long latencyLingerMs,
    long bufferMemory,
    int runs,
    Map<String, String> hostProperties,
    Path workDir,
    boolean keepData,
    String hostClasspath,
    Path kafkaLib,
    long startTimeoutMs,
    long stopTimeoutMs,
    long settleTimeoutMs,
    boolean faults)
{
    /** Smallest record: its first bytes carry the record's id, which the read-back checks. */
    public static final int MIN_RECORD_SIZE = RecordValues.ID_LENGTH;
    /** The systems this bench can run. */
    public static final List<String> TARGETS = List.of("kafka", "tidemark");

    private static final int MAX_PHASES = 1 << 16; // each phase tags its records with its number (RecordValues)

    /**
     * @param text {@code all}, {@code -1}, or a number of replicas.
     * @return the acks value.
     * @throws IllegalArgumentException for anything else.
     */
    public static int parseAcks(final String text)
    {
        final String t = text.trim();
        if ("all".equalsIgnoreCase(t) || "-1".equals(t))
        {
            return Acks.ALL;
        }
        try
        {
            return Integer.parseInt(t);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("--acks: '" + text + "' is not 0, 1 or all");
        }
    }

    /**
     * @return this, checked.
     * @throws IllegalArgumentException naming the first bad option.
     */
    public MultiProcessPlan validate()
    {
        if (targets.isEmpty() || !TARGETS.containsAll(targets) || targets.stream().distinct().count() != targets.size())
        {
            throw new IllegalArgumentException("--targets: one or both of " + TARGETS + ", each once: " + targets);
        }
        if (acks.isEmpty())
        {
            throw new IllegalArgumentException("--acks: at least one mode");
        }
        if (acks.stream().distinct().count() != acks.size())
        {
            throw new IllegalArgumentException("--acks: a mode is listed twice: " + acks);
        }
        for (final int a : acks)
        {
            if (a != Acks.ALL && a != 0 && a != 1)
            {
                throw new IllegalArgumentException("--acks: " + a + " is not 0, 1 or all (the modes both systems " +
                    "have)");
            }
        }
        if (partitions.isEmpty() || partitions.stream().distinct().count() != partitions.size())
        {
            throw new IllegalArgumentException("--partitions: at least one count, each once: " + partitions);
        }
        for (final int p : partitions)
        {
            if (p < 1 || p > 1024)
            {
                throw new IllegalArgumentException("--partitions: " + p + " is not in [1, 1024]");
            }
        }
        if ((long)runs * acks.size() * partitions.size() * 2 + 8 > MAX_PHASES)
        {
            throw new IllegalArgumentException("--runs: at most " + MAX_PHASES + " phases in one run");
        }
        positive("--duration", throughputMs);
        positive("--latency-duration", latencyMs);
        positive("--rate", rate);
        positive("--producers", producerThreads);
        positive("--runs", runs);
        positive("--start-timeout", startTimeoutMs);
        positive("--stop-timeout", stopTimeoutMs);
        notNegative("--settle-timeout", settleTimeoutMs);
        notNegative("--jit-warmup", jitWarmupMs);
        notNegative("--warmup", warmupMs);
        notNegative("--round-trip-duration", roundTripMs);
        notNegative("--idle", idleMs);
        notNegative("--profile", profileMs);
        notNegative("--linger-ms", lingerMs);
        notNegative("--latency-linger-ms", latencyLingerMs);
        if (recordSize < MIN_RECORD_SIZE)
        {
            throw new IllegalArgumentException("--size: at least " + MIN_RECORD_SIZE + " bytes (the record id)");
        }
        if (minInsync < 1 || minInsync > LoopbackCluster.HOSTS)
        {
            throw new IllegalArgumentException("--min-insync: 1 to " + LoopbackCluster.HOSTS + ", not " + minInsync);
        }
        if (producerThreads > RecordValues.MAX_THREADS)
        {
            throw new IllegalArgumentException("--producers: at most " + RecordValues.MAX_THREADS);
        }
        if (rate * (warmupMs + Math.max(latencyMs, profileMs)) / 1_000 >= Integer.MAX_VALUE / 2)
        {
            throw new IllegalArgumentException("--rate: too many records for one latency phase");
        }
        if (hostProperties.containsKey("min.insync.replicas"))
        {
            throw new IllegalArgumentException("--host-property: set min.insync.replicas with --min-insync");
        }
        return this;
    }

    /** @return records one latency phase of {@code windowMs} schedules: warm-up and window at {@link #rate()}. */
    public int latencyRecords(final long windowMs)
    {
        return (int)(rate * (warmupMs + windowMs) / 1_000);
    }

    /** @return seconds of sending and idling the plan asks for (not start-up, drains and read-backs). */
    public double plannedSeconds()
    {
        final double cells = (double)acks.size() * partitions.size() * (2 * warmupMs + throughputMs + latencyMs);
        final double perTarget = jitWarmupMs + runs * (cells + roundTripMs) + idleMs +
            (profileMs > 0 ? 3 * profileMs + 2 * warmupMs : 0) + (faults ? 30_000 : 0);
        return perTarget * targets.size() / 1_000.0;
    }

    private static void positive(final String option, final long value)
    {
        if (value <= 0)
        {
            throw new IllegalArgumentException(option + ": must be positive, not " + value);
        }
    }

    private static void notNegative(final String option, final long value)
    {
        if (value < 0)
        {
            throw new IllegalArgumentException(option + ": must not be negative, not " + value);
        }
    }
}
