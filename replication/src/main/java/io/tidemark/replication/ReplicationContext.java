package io.tidemark.replication;

import io.tidemark.replication.spi.ControllerStore;
import io.tidemark.replication.spi.HostLiveness;
import io.tidemark.store.ConfigException;
import io.tidemark.store.LogContext;
import io.tidemark.store.config.ConfigDef;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SystemEpochClock;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Configuration of replication, in one place: keys (Kafka's names where Kafka has the setting), defaults,
 * validation that fails fast naming the key, and the runtime collaborators (clock, threading, replica log
 * configuration). Concluded (validated and frozen) when a cluster is built from it. Not thread-safe while being
 * built.
 * <p>
 * <b>Design note on the time defaults.</b> Kafka's defaults ({@code replica.lag.time.max.ms=30000}, an 18 s
 * session) are sized for networks and GC pauses of separate brokers. Inside one JVM a fetch round trip takes
 * microseconds, so the defaults here are a second or less: a dead host is detected and replaced within about a
 * second, and a stuck follower leaves the ISR within 1.5 s.
 * <p>
 * Over 600 lines because of its public API only: a fluent setter and a getter for each key and collaborator. The keys'
 * definitions (defaults, accepted values, documentation) live beside it, in {@code ReplicationKeys}.
 */
public final class ReplicationContext
{
    /** Longest a follower may stay behind the leader's log end before it leaves the ISR: {@link #CONFIG}. */
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    /**
     * A follower more than this many records behind the leader's log end leaves the ISR at the next ISR check, even
     * before {@link #REPLICA_LAG_TIME_MAX_MS} has passed (the old {@code replica.lag.max.messages} of Kafka 0.8); a
     * follower still joins when it has caught up to the high watermark and the leader's epoch start. Default 0: off.
     * <p>
     * <b>Its flaw</b>, why Kafka removed it (KIP-16, KAFKA-1546): a burst of more records than this makes every
     * healthy follower briefly that far behind, so the ISR shrinks and grows back with every burst (it flaps). Each
     * change is a controller write; while the ISR is below {@link #MIN_INSYNC_REPLICAS}, acks=all writes are refused
     * (NOT_ENOUGH_REPLICAS) and those in flight fail with NOT_ENOUGH_REPLICAS_AFTER_APPEND (appended, outcome
     * unknown). Set it well above the largest burst the application sends, or leave it off.
     */
    public static final String REPLICA_LAG_MAX_MESSAGES = "replica.lag.max.messages";
    /** Smallest ISR that accepts acks=all writes and advances the high watermark: {@link #CONFIG}. */
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    /** Whether a replica outside the ISR may be elected (data loss accepted): {@link #CONFIG}. */
    public static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";
    /** Most record bytes in one fetch response: {@link #CONFIG}. */
    public static final String REPLICA_FETCH_MAX_BYTES = "replica.fetch.max.bytes";
    /** Longest the leader holds a fetch that has nothing new: {@link #CONFIG}. */
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    /** Pause of a follower's fetcher after an error: {@link #CONFIG}. */
    public static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";
    /** Longest a produce request waits for its acknowledgement: {@link #CONFIG}. */
    public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    /** A host whose last heartbeat is older is dead: removed from every ISR, loses leadership: {@link #CONFIG}. */
    public static final String HOST_SESSION_TIMEOUT_MS = "host.session.timeout.ms";
    /** How often a host heartbeats to the controller: {@link #CONFIG}. */
    public static final String HOST_HEARTBEAT_INTERVAL_MS = "host.heartbeat.interval.ms";
    /** Host processes: a controller not heard for longer is suspected dead: {@link #CONFIG}. */
    public static final String CONTROLLER_TIMEOUT_MS = "controller.timeout.ms";
    /** How often replicas checkpoint their high watermark: {@link #CONFIG}. */
    public static final String HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = "replica.high.watermark.checkpoint.interval.ms";
    /** Capacity of each host's inbound request ring (power of two): {@link #CONFIG}. */
    public static final String TRANSPORT_REQUEST_RING_BYTES = "transport.request.ring.bytes";
    /** Capacity of each fetcher's response ring (power of two): {@link #CONFIG}. */
    public static final String TRANSPORT_RESPONSE_RING_BYTES = "transport.response.ring.bytes";
    /** Capacity of each partition's produce ring (power of two): {@link #CONFIG}. */
    public static final String PRODUCE_RING_BYTES = "produce.ring.bytes";
    /** Most partitions one topic may have: {@link #CONFIG}. */
    public static final String TOPIC_PARTITIONS_MAX = "topic.partitions.max";
    /** Most replicas one host may hold; sizes the counters file: {@link #CONFIG}. */
    public static final String HOST_REPLICAS_MAX = "host.replicas.max";
    /** Bytes of segment pretouching a host spends over all its replicas: {@link #CONFIG}. */
    public static final String HOST_PRETOUCH_BUDGET_BYTES = "host.pretouch.budget.bytes";

    /** Longest timeout or wait a setting may take: larger ones overflow arithmetic further on, or never end. */
    public static final long MAX_TIMEOUT_MS = 3_600_000;

    /**
     * Every replication key, defined once (name, default, accepted values, documentation) in {@link ReplicationKeys}:
     * {@link #fromProperties} parses with it, {@link #conclude()} validates with it, and the table of
     * docs/configuration.md is its {@link ConfigDef#markdownTable()}.
     */
    public static final ConfigDef<ReplicationContext> CONFIG = ReplicationKeys.CONFIG;

    /** Every key {@link #fromProperties(Map)} accepts: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    /** Which threads run the agents (host agents, fetchers, replica log agents, the controller). */
    public enum ThreadingMode
    {
        /** One thread per agent. */
        DEDICATED,
        /** One thread per replica host for all of its agents, plus one for the controller. */
        PER_HOST,
        /**
         * One thread for every agent of the cluster, idling with the {@link #idleStrategySupplier idle strategy}.
         * With the default (backoff: spins, yields, then parks up to 100 us) no thread spins when there is nothing to
         * do: the in-process form of the {@code shared} profile, for machines whose cores are shared.
         */
        SHARED,
        /**
         * The {@code latency} profile for a machine with few cores: exactly one thread spins. One thread runs every
         * replication agent of the cluster (controller, hosts, fetchers) and busy-spins, whatever the idle strategy;
         * the replica logs' own background agents (block reservation, pre-faulting, flushes, writeback, retention:
         * the work that makes system calls and may wait on the disk) run on one more thread that parks when idle
         * ({@link #housekeepingIdleStrategy()}), so that disk work never stalls the replication path and never
         * spins. The application's threads should wait by parking, not spinning, so that the spinning thread keeps a
         * core to itself.
         */
        LATENCY,
        /** No threads: the application calls {@code ReplicationCluster.invokeAgents()}; with a manual clock the
         * whole pipeline is deterministic on one thread. */
        INVOKER
    }

    private long replicaLagTimeMaxMs;
    private long replicaLagMaxMessages;
    private int minInsyncReplicas;
    private boolean uncleanLeaderElectionEnable;
    private int replicaFetchMaxBytes;
    private long replicaFetchWaitMaxMs;
    private long replicaFetchBackoffMs;
    private long requestTimeoutMs;
    private long hostSessionTimeoutMs;
    private Runnable dutyWakeUp = () ->
    {
    };
    private long hostHeartbeatIntervalMs;
    private long controllerTimeoutMs;
    private long highWatermarkCheckpointIntervalMs;
    private int transportRequestRingBytes;
    private int transportResponseRingBytes;
    private int produceRingBytes;
    private int topicPartitionsMax;
    private int hostReplicasMax;
    private long hostPretouchBudgetBytes;

    private EpochClock epochClock = SystemEpochClock.INSTANCE;
    private ThreadingMode threadingMode = ThreadingMode.PER_HOST;
    private Boolean logMaintenanceThread; // null: the mode's default
    private Supplier<IdleStrategy> logMaintenanceIdleStrategySupplier = ReplicationContext::housekeepingIdleStrategy;
    private Supplier<IdleStrategy> idleStrategySupplier = () -> new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    private ErrorHandler errorHandler;
    private Function<Path, LogContext> logContextFactory = (dir) -> new LogContext().logDir(dir);
    private Function<Path, ControllerStore> controllerStoreFactory = FileControllerStore::new;
    private HostLiveness hostLiveness = HostLiveness.HEARTBEATS_ONLY;
    private java.util.function.IntFunction<String> bootIdSupplier = (host) -> linuxBootId();
    private boolean concluded;

    /** A context with every key at its default ({@link #CONFIG}). */
    public ReplicationContext()
    {
        CONFIG.setDefaults(this);
    }

    /**
     * @param properties key/value pairs using the key constants of this class; unknown keys are rejected.
     * @return a new context.
     */
    public static ReplicationContext fromProperties(final Map<String, String> properties)
    {
        return CONFIG.setAll(new ReplicationContext(), properties);
    }

    /**
     * Validate every value (called when a cluster is built; idempotent).
     *
     * @return this context, frozen.
     */
    public ReplicationContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        CONFIG.validate(this);
        if (hostSessionTimeoutMs < 2 * hostHeartbeatIntervalMs)
        {
            throw new ConfigException(HOST_SESSION_TIMEOUT_MS, "value " + hostSessionTimeoutMs + " is outside [" +
                2 * hostHeartbeatIntervalMs + ", 600000] (at least twice " + HOST_HEARTBEAT_INTERVAL_MS + ")");
        }
        if ((long)transportResponseRingBytes / 8 < replicaFetchMaxBytes + 2048L)
        {
            throw new ConfigException(TRANSPORT_RESPONSE_RING_BYTES, transportResponseRingBytes +
                " cannot carry a fetch response of " + REPLICA_FETCH_MAX_BYTES + "=" + replicaFetchMaxBytes +
                " (a ring message is at most an eighth of the ring)");
        }
        concluded = true;
        return this;
    }

    private void checkNotConcluded()
    {
        if (concluded)
        {
            throw new IllegalStateException("context is concluded (already used to build a cluster)");
        }
    }

    /** @param v see {@link #REPLICA_LAG_TIME_MAX_MS}. @return this */
    public ReplicationContext replicaLagTimeMaxMs(final long v)
    {
        checkNotConcluded();
        replicaLagTimeMaxMs = v;
        return this;
    }

    /** @return see {@link #REPLICA_LAG_TIME_MAX_MS}. */
    public long replicaLagTimeMaxMs()
    {
        return replicaLagTimeMaxMs;
    }

    /** @param v see {@link #REPLICA_LAG_MAX_MESSAGES}; 0 turns the rule off. @return this */
    public ReplicationContext replicaLagMaxMessages(final long v)
    {
        checkNotConcluded();
        replicaLagMaxMessages = v;
        return this;
    }

    /** @return see {@link #REPLICA_LAG_MAX_MESSAGES}; 0 when the rule is off. */
    public long replicaLagMaxMessages()
    {
        return replicaLagMaxMessages;
    }

    /** @param v see {@link #MIN_INSYNC_REPLICAS}. @return this */
    public ReplicationContext minInsyncReplicas(final int v)
    {
        checkNotConcluded();
        minInsyncReplicas = v;
        return this;
    }

    /** @return see {@link #MIN_INSYNC_REPLICAS}. */
    public int minInsyncReplicas()
    {
        return minInsyncReplicas;
    }

    /** @param v see {@link #UNCLEAN_LEADER_ELECTION_ENABLE}. @return this */
    public ReplicationContext uncleanLeaderElectionEnable(final boolean v)
    {
        checkNotConcluded();
        uncleanLeaderElectionEnable = v;
        return this;
    }

    /** @return see {@link #UNCLEAN_LEADER_ELECTION_ENABLE}. */
    public boolean uncleanLeaderElectionEnable()
    {
        return uncleanLeaderElectionEnable;
    }

    /** @param v see {@link #REPLICA_FETCH_MAX_BYTES}. @return this */
    public ReplicationContext replicaFetchMaxBytes(final int v)
    {
        checkNotConcluded();
        replicaFetchMaxBytes = v;
        return this;
    }

    /** @return see {@link #REPLICA_FETCH_MAX_BYTES}. */
    public int replicaFetchMaxBytes()
    {
        return replicaFetchMaxBytes;
    }

    /** @param v see {@link #REPLICA_FETCH_WAIT_MAX_MS}. @return this */
    public ReplicationContext replicaFetchWaitMaxMs(final long v)
    {
        checkNotConcluded();
        replicaFetchWaitMaxMs = v;
        return this;
    }

    /** @return see {@link #REPLICA_FETCH_WAIT_MAX_MS}. */
    public long replicaFetchWaitMaxMs()
    {
        return replicaFetchWaitMaxMs;
    }

    /** @param v see {@link #REPLICA_FETCH_BACKOFF_MS}. @return this */
    public ReplicationContext replicaFetchBackoffMs(final long v)
    {
        checkNotConcluded();
        replicaFetchBackoffMs = v;
        return this;
    }

    /** @return see {@link #REPLICA_FETCH_BACKOFF_MS}. */
    public long replicaFetchBackoffMs()
    {
        return replicaFetchBackoffMs;
    }

    /** @param v see {@link #REQUEST_TIMEOUT_MS}. @return this */
    public ReplicationContext requestTimeoutMs(final long v)
    {
        checkNotConcluded();
        requestTimeoutMs = v;
        return this;
    }

    /** @return see {@link #REQUEST_TIMEOUT_MS}. */
    public long requestTimeoutMs()
    {
        return requestTimeoutMs;
    }

    /** @param v see {@link #HOST_SESSION_TIMEOUT_MS}. @return this */
    public ReplicationContext hostSessionTimeoutMs(final long v)
    {
        checkNotConcluded();
        hostSessionTimeoutMs = v;
        return this;
    }

    /** @return see {@link #HOST_SESSION_TIMEOUT_MS}. */
    public long hostSessionTimeoutMs()
    {
        return hostSessionTimeoutMs;
    }

    /** @param v see {@link #HOST_HEARTBEAT_INTERVAL_MS}. @return this */
    public ReplicationContext hostHeartbeatIntervalMs(final long v)
    {
        checkNotConcluded();
        hostHeartbeatIntervalMs = v;
        return this;
    }

    /** @return see {@link #HOST_HEARTBEAT_INTERVAL_MS}. */
    public long hostHeartbeatIntervalMs()
    {
        return hostHeartbeatIntervalMs;
    }

    /**
     * @return how long an answer may be missing before its request is sent again: a leader's ISR change to the
     *         controller, a follower's fetch (beyond its long poll). {@code max(replica.lag.time.max.ms, two
     *         heartbeat intervals)}, at most the host session. Answers are matched to their requests (the controller
     *         answers every ISR change with its current state; a fetch answer carries its correlation id), so a
     *         request sent again costs one message, while a lost answer costs this long: with the host session as
     *         the wait, a follower whose long poll's answer was lost (a partition healing, say) stayed out of the
     *         ISR for the whole session.
     */
    public long lostAnswerTimeoutMs()
    {
        return Math.min(hostSessionTimeoutMs, Math.max(replicaLagTimeMaxMs, 2 * hostHeartbeatIntervalMs));
    }

    /** @param v see {@link #CONTROLLER_TIMEOUT_MS}. @return this */
    public ReplicationContext controllerTimeoutMs(final long v)
    {
        checkNotConcluded();
        controllerTimeoutMs = v;
        return this;
    }

    /** @return see {@link #CONTROLLER_TIMEOUT_MS}. */
    public long controllerTimeoutMs()
    {
        return controllerTimeoutMs;
    }

    /** @param v see {@link #HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS}. @return this */
    public ReplicationContext highWatermarkCheckpointIntervalMs(final long v)
    {
        checkNotConcluded();
        highWatermarkCheckpointIntervalMs = v;
        return this;
    }

    /** @return see {@link #HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS}. */
    public long highWatermarkCheckpointIntervalMs()
    {
        return highWatermarkCheckpointIntervalMs;
    }

    /** @param v see {@link #TRANSPORT_REQUEST_RING_BYTES}. @return this */
    public ReplicationContext transportRequestRingBytes(final int v)
    {
        checkNotConcluded();
        transportRequestRingBytes = v;
        return this;
    }

    /** @return see {@link #TRANSPORT_REQUEST_RING_BYTES}. */
    public int transportRequestRingBytes()
    {
        return transportRequestRingBytes;
    }

    /** @param v see {@link #TRANSPORT_RESPONSE_RING_BYTES}. @return this */
    public ReplicationContext transportResponseRingBytes(final int v)
    {
        checkNotConcluded();
        transportResponseRingBytes = v;
        return this;
    }

    /** @return see {@link #TRANSPORT_RESPONSE_RING_BYTES}. */
    public int transportResponseRingBytes()
    {
        return transportResponseRingBytes;
    }

    /** @param v see {@link #PRODUCE_RING_BYTES}. @return this */
    public ReplicationContext produceRingBytes(final int v)
    {
        checkNotConcluded();
        produceRingBytes = v;
        return this;
    }

    /** @return see {@link #PRODUCE_RING_BYTES}. */
    public int produceRingBytes()
    {
        return produceRingBytes;
    }

    /** @param v see {@link #TOPIC_PARTITIONS_MAX}. @return this */
    public ReplicationContext topicPartitionsMax(final int v)
    {
        checkNotConcluded();
        topicPartitionsMax = v;
        return this;
    }

    /** @return see {@link #TOPIC_PARTITIONS_MAX}. */
    public int topicPartitionsMax()
    {
        return topicPartitionsMax;
    }

    /** @param v see {@link #HOST_REPLICAS_MAX}. @return this */
    public ReplicationContext hostReplicasMax(final int v)
    {
        checkNotConcluded();
        hostReplicasMax = v;
        return this;
    }

    /** @return see {@link #HOST_REPLICAS_MAX}. */
    public int hostReplicasMax()
    {
        return hostReplicasMax;
    }

    /** @param v see {@link #HOST_PRETOUCH_BUDGET_BYTES}. @return this */
    public ReplicationContext hostPretouchBudgetBytes(final long v)
    {
        checkNotConcluded();
        hostPretouchBudgetBytes = v;
        return this;
    }

    /** @return see {@link #HOST_PRETOUCH_BUDGET_BYTES}. */
    public long hostPretouchBudgetBytes()
    {
        return hostPretouchBudgetBytes;
    }

    /** @param clock the clock of every replication timer (a manual one in tests). @return this */
    public ReplicationContext epochClock(final EpochClock clock)
    {
        checkNotConcluded();
        this.epochClock = clock;
        return this;
    }

    /** @return the clock of every replication timer. */
    public EpochClock epochClock()
    {
        return epochClock;
    }

    /**
     * @return how the housekeeping thread of {@link ThreadingMode#LATENCY} idles: one spin, one yield, then parks
     *         from 10 us doubling to 1 ms. The logs' agents work ahead of the writer (pages 8 MiB ahead by default),
     *         so waking at most 1,000 times a second when idle costs them nothing.
     */
    public static IdleStrategy housekeepingIdleStrategy()
    {
        return new BackoffIdleStrategy(1, 1, 10_000, 1_000_000);
    }

    /** @param mode which threads run the agents. Default {@link ThreadingMode#PER_HOST}. @return this */
    public ReplicationContext threadingMode(final ThreadingMode mode)
    {
        checkNotConcluded();
        this.threadingMode = mode;
        return this;
    }

    /** @return which threads run the agents. */
    public ThreadingMode threadingMode()
    {
        return threadingMode;
    }

    /**
     * Run the replica logs' own background agents (block reservation and pre-faulting of pages ahead of the writer,
     * index reservation, writeback under {@code dirty.bytes.max}, flushes, retention, the next segment's preparation:
     * the work that makes system calls and takes page faults) on one log-maintenance thread of their own per node or
     * in-process cluster, which parks when idle ({@link #housekeepingIdleStrategy()}), instead of on the thread of
     * the replication agents, where the produce and fetch paths would wait behind a pass of pre-faulting. Always on
     * in {@link ThreadingMode#LATENCY}; in {@link ThreadingMode#INVOKER} it adds that one thread (the replication
     * agents stay invoked), so a deterministic simulation leaves it off. Default: on in every threaded mode, off in
     * {@link ThreadingMode#INVOKER} (the store's quick bench, in-process RF=3 acks=all closed loop: p99 1.8 ms with
     * the logs' agents on the replication threads before their pre-faulting kept ahead of fast writers, 12.3-12.6 ms
     * after, as a pass of pre-faulting runs up to ~2 ms on the thread that replicates).
     *
     * @param separate whether the logs' agents get their own thread.
     * @return this
     */
    public ReplicationContext logMaintenanceThread(final boolean separate)
    {
        checkNotConcluded();
        this.logMaintenanceThread = separate;
        return this;
    }

    /**
     * @param wakeUp what {@link LeaderPartitions#wakeUp} runs beside the unpark of the duty thread, from any thread:
     *               for a duty thread that does not wait in a park (a host's, which waits for a datagram on its
     *               embedded driver's sockets: an unpark does not end that wait). Default: nothing.
     * @return this
     */
    public ReplicationContext dutyWakeUp(final Runnable wakeUp)
    {
        checkNotConcluded();
        this.dutyWakeUp = java.util.Objects.requireNonNull(wakeUp, "wakeUp");
        return this;
    }

    /** @return what a wake-up of the duty thread runs beside its unpark (see the setter). */
    public Runnable dutyWakeUp()
    {
        return dutyWakeUp;
    }

    /** @return whether the replica logs' agents run on a log-maintenance thread of their own (see the setter). */
    public boolean logMaintenanceThread()
    {
        if (threadingMode == ThreadingMode.LATENCY)
        {
            return true;
        }
        return null == logMaintenanceThread ? threadingMode != ThreadingMode.INVOKER : logMaintenanceThread;
    }

    /**
     * @param supplier how the log-maintenance thread idles. Default {@link #housekeepingIdleStrategy()}; a process
     *                 whose idle cost counts (a host of the {@code shared} profile) parks longer once quiet.
     * @return this
     */
    public ReplicationContext logMaintenanceIdleStrategySupplier(final Supplier<IdleStrategy> supplier)
    {
        checkNotConcluded();
        this.logMaintenanceIdleStrategySupplier = supplier;
        return this;
    }

    /** @return how the log-maintenance thread idles. */
    public Supplier<IdleStrategy> logMaintenanceIdleStrategySupplier()
    {
        return logMaintenanceIdleStrategySupplier;
    }

    /** @param supplier idle strategy for each agent thread. @return this */
    public ReplicationContext idleStrategySupplier(final Supplier<IdleStrategy> supplier)
    {
        checkNotConcluded();
        this.idleStrategySupplier = supplier;
        return this;
    }

    /** @return idle strategy factory for agent threads. */
    public Supplier<IdleStrategy> idleStrategySupplier()
    {
        return idleStrategySupplier;
    }

    /** @param handler receives errors of every agent (they never escape agent threads). @return this */
    public ReplicationContext errorHandler(final ErrorHandler handler)
    {
        checkNotConcluded();
        this.errorHandler = handler;
        return this;
    }

    /** @return the agent error handler, or null for the default (logged). */
    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /**
     * The identity of the current boot of the machine (Linux: {@code /proc/sys/kernel/random/boot_id}). A host
     * that restarts without a clean stop under a different boot id may have lost unflushed records to a power
     * loss, and is not elected as the last in-sync replica until it has re-synced. Where no boot id exists a
     * constant is returned, and power loss is not detected. Tests substitute their own to simulate power loss.
     *
     * @param supplier the boot id of the machine a host id runs on.
     * @return this
     */
    public ReplicationContext bootIdSupplier(final java.util.function.IntFunction<String> supplier)
    {
        checkNotConcluded();
        this.bootIdSupplier = supplier;
        return this;
    }

    /** @return the boot id source, by host id. */
    public java.util.function.IntFunction<String> bootIdSupplier()
    {
        return bootIdSupplier;
    }

    private static String linuxBootId()
    {
        try
        {
            return java.nio.file.Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
        }
        catch (final java.io.IOException | RuntimeException ex)
        {
            return "no-boot-id";
        }
    }

    /**
     * @param factory configuration of each replica's log, given its directory (flush policy, segment size...). The
     *                agent mode and clock are set by the cluster.
     * @return this
     */
    public ReplicationContext logContextFactory(final Function<Path, LogContext> factory)
    {
        checkNotConcluded();
        this.logContextFactory = factory;
        return this;
    }

    /** @return configuration of each replica's log. */
    public Function<Path, LogContext> logContextFactory()
    {
        return logContextFactory;
    }

    /**
     * Where the controller keeps its durable state: given the cluster's controller directory, a store. The default
     * is a {@link FileControllerStore} in that directory; a ZooKeeper store (module {@code zookeeper}) lets
     * controllers on several machines share it. A controller failover opens a new store.
     *
     * @param factory the factory.
     * @return this
     */
    public ReplicationContext controllerStoreFactory(final Function<Path, ControllerStore> factory)
    {
        checkNotConcluded();
        this.controllerStoreFactory = java.util.Objects.requireNonNull(factory, "controllerStoreFactory");
        return this;
    }

    /** @return see {@link #controllerStoreFactory(Function)}. */
    public Function<Path, ControllerStore> controllerStoreFactory()
    {
        return controllerStoreFactory;
    }

    /**
     * A second source of host liveness for the controller (see {@link HostLiveness}); the default,
     * {@link HostLiveness#HEARTBEATS_ONLY}, leaves it to the heartbeats.
     *
     * @param liveness the source.
     * @return this
     */
    public ReplicationContext hostLiveness(final HostLiveness liveness)
    {
        checkNotConcluded();
        this.hostLiveness = java.util.Objects.requireNonNull(liveness, "hostLiveness");
        return this;
    }

    /** @return see {@link #hostLiveness(HostLiveness)}. */
    public HostLiveness hostLiveness()
    {
        return hostLiveness;
    }
}
