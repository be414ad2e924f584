package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;

import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Configuration of a {@link Producer}, in one place: keys (Kafka's names and defaults), validation that fails fast
 * with a {@link ConfigException} naming the key, and the runtime collaborators (clock, threading of the sending
 * agent, error handler). Concluded (validated and frozen) when a producer is built from it. Not thread-safe while
 * being built.
 * <p>
 * <b>Idempotence default.</b> As in Kafka 3, {@code enable.idempotence} defaults to true when {@code acks=all} and
 * {@code max.in.flight.requests.per.partition <= 5}, and to false otherwise; set explicitly to true with another
 * acks mode or more in flight, it is rejected.
 */
public final class ProducerContext
{
    /** Acknowledgement mode of acked sends: {@code all} (-1), 0, 1 or N (2..replication factor). Default all. */
    public static final String ACKS = "acks";
    /** Producer id, epoch and per-partition sequences: retries neither duplicate nor reorder. Default true. */
    public static final String ENABLE_IDEMPOTENCE = "enable.idempotence";
    /** Bytes of encoded records per batch (a larger record gets a batch of its own). Default 16384. */
    public static final String BATCH_SIZE = "batch.size";
    /** How long a batch that is not full waits for more records. Default 5. */
    public static final String LINGER_MS = "linger.ms";
    /** Memory for records not yet acknowledged; a send waits for space. Default 33554432. */
    public static final String BUFFER_MEMORY = "buffer.memory";
    /** Longest a send blocks waiting for buffer memory. Default 60000. */
    public static final String MAX_BLOCK_MS = "max.block.ms";
    /** Resends of a failed batch before its error is reported. Default Integer.MAX_VALUE. */
    public static final String RETRIES = "retries";
    /**
     * Pause before a failed batch is resent (one whose leader was gone: until another live host leads). Default 100.
     */
    public static final String RETRY_BACKOFF_MS = "retry.backoff.ms";
    /** Upper bound from send to reported outcome (success or error), retries included. Default 120000. */
    public static final String DELIVERY_TIMEOUT_MS = "delivery.timeout.ms";
    /** How long the leader waits for a request's acknowledgement condition. Default 30000. */
    public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    /** Unacknowledged requests per partition. Default 5 (at most 5 with idempotence). */
    public static final String MAX_IN_FLIGHT = "max.in.flight.requests.per.partition";
    /** How records without key or partition are spread: {@code sticky} or {@code round-robin}. Default sticky. */
    public static final String PARTITIONER = "partitioner";

    /** Most in-flight requests per partition with idempotence (the leader remembers the last 5 batches). */
    public static final int MAX_IN_FLIGHT_IDEMPOTENT = 5;

    /**
     * Every key, defined once (type, default, accepted values, documentation): {@link #fromProperties} parses with
     * it, {@link #conclude()} validates with it, and the table of docs/configuration.md is its
     * {@link ConfigDef#markdownTable()}. The checks across keys (buffer and batch, delivery timeout, idempotence)
     * stay in {@link #conclude()}.
     */
    public static final ConfigDef<ProducerContext> CONFIG = new ConfigDef<ProducerContext>()
        .define(ConfigKey.of(ACKS, Integer.class, Acks.ALL, ProducerContext::parseAcks)
            .withValidator((v) -> v < Acks.ALL || v > 64 ?
                "must be all (-1), 0, 1 or N (2..replication factor): " + v : null)
            .withDefaultText("`all` (-1)")
            .withDoc("When a send is acknowledged: `all`, `0`, `1` or `N` (2..replication factor), as in " +
            "[replication](replication.md#producing-acks-and-mininsyncreplicas)."),
            (c) -> c.acks, ProducerContext::acks)
        .define(ConfigKey.ofBoolean(ENABLE_IDEMPOTENCE, null)
            .withDefaultText("`true` with `acks=all` and at most 5 in flight, else `false`")
            .withDoc("Producer id, per-partition epoch and sequences: retries neither duplicate nor reorder. Set to " +
            "`true` with another `acks` or more than 5 in flight: `ConfigException` naming this key."),
            (c) -> c.enableIdempotence, ProducerContext::enableIdempotence)
        .define(ConfigKey.ofInt(BATCH_SIZE, 16384, 64, 64 * 1024 * 1024)
            .withDoc("Bytes of encoded records per batch. A larger record gets a batch of its own. At most an eighth " +
            "of the cluster's `produce.ring.bytes`."),
            (c) -> c.batchSize, ProducerContext::batchSize)
        .define(ConfigKey.ofLong(LINGER_MS, 5, 0, Integer.MAX_VALUE)
            .withDoc("How long a batch that is not full waits for more records."),
            (c) -> c.lingerMs, ProducerContext::lingerMs)
        .define(ConfigKey.ofLong(BUFFER_MEMORY, 33_554_432L, 64, Long.MAX_VALUE)
            .withDoc("Bytes for records not yet acknowledged. A send waits for space (back-pressure)."),
            (c) -> c.bufferMemory, ProducerContext::bufferMemory)
        .define(ConfigKey.ofLong(MAX_BLOCK_MS, 60_000, 0, Long.MAX_VALUE / 2)
            .withDoc("Longest a send blocks for buffer memory before `BUFFER_EXHAUSTED`."),
            (c) -> c.maxBlockMs, ProducerContext::maxBlockMs)
        .define(ConfigKey.ofInt(RETRIES, Integer.MAX_VALUE, 0, Integer.MAX_VALUE)
            .withDoc("Resends of a failed batch before its error is reported."),
            (c) -> c.retries, ProducerContext::retries)
        .define(ConfigKey.ofLong(RETRY_BACKOFF_MS, 100, 0, Integer.MAX_VALUE)
            .withDoc("Pause before a failed batch is resent; one whose leader was gone goes as soon as another " +
                "live host leads."),
            (c) -> c.retryBackoffMs, ProducerContext::retryBackoffMs)
        .define(ConfigKey.ofLong(DELIVERY_TIMEOUT_MS, 120_000, 1, Long.MAX_VALUE / 2)
            .withDoc("Upper bound from send to reported outcome, retries included. Must be >= `linger.ms` + " +
            "`request.timeout.ms`."),
            (c) -> c.deliveryTimeoutMs, ProducerContext::deliveryTimeoutMs)
        .define(ConfigKey.ofLong(REQUEST_TIMEOUT_MS, 30_000, 1, Integer.MAX_VALUE / 2)
            .withDoc("How long the leader waits for a request's acks condition before `REQUEST_TIMED_OUT`. An attempt " +
            "unanswered for twice this long counts as lost."),
            (c) -> c.requestTimeoutMs, ProducerContext::requestTimeoutMs)
        .define(ConfigKey.ofInt(MAX_IN_FLIGHT, 5, 1, 1024)
            .withDoc("Batches of a partition sent and not yet acknowledged (the window, see " +
            "[ordering](clients.md#ordering-and-exactly-once-what-the-log-already-gives-you))."),
            (c) -> c.maxInFlight, ProducerContext::maxInFlightRequestsPerPartition)
        .define(ConfigKey.of(PARTITIONER, Partitioner.class, Partitioner.STICKY, ProducerContext::parsePartitioner)
            .withDefaultText("`sticky`")
            .withDoc("Keyless records: `sticky` or `round-robin`."),
            (c) -> c.partitioner, ProducerContext::partitioner);

    /** Every key {@link #fromProperties(Map)} accepts: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    /** How records without a key or an explicit partition are spread over the topic's partitions. */
    public enum Partitioner
    {
        /** One partition until its batch is full or sent, then the next (fewer, fuller batches; Kafka KIP-480). */
        STICKY,
        /** Each record to the next partition in turn. */
        ROUND_ROBIN
    }

    /** Which thread runs the producer's sending agent. */
    public enum AgentMode
    {
        /** The producer starts one thread for it. */
        DEDICATED,
        /** No thread: the application calls {@link Producer#invokeAgent()} (deterministic tests, shared threads). */
        INVOKER
    }

    private int acks;
    private Boolean enableIdempotence;
    private boolean idempotence;
    private int batchSize;
    private long lingerMs;
    private long bufferMemory;
    private long maxBlockMs;
    private int retries;
    private long retryBackoffMs;
    private long deliveryTimeoutMs;
    private long requestTimeoutMs;
    private int maxInFlight;
    private Partitioner partitioner;

    private EpochClock epochClock;
    private AgentMode agentMode = AgentMode.DEDICATED;
    private Supplier<IdleStrategy> idleStrategySupplier = () -> new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    private ErrorHandler errorHandler;
    private Runnable invokerIdleAction;
    private boolean concluded;

    /** A context with every key at its default ({@link #CONFIG}; idempotence decided when concluded). */
    public ProducerContext()
    {
        CONFIG.setDefaults(this); // enable.idempotence has none: it depends on acks and the window (conclude())
    }

    /**
     * @param properties key/value pairs using the key constants of this class; unknown keys are rejected.
     * @return a new context.
     */
    public static ProducerContext fromProperties(final Map<String, String> properties)
    {
        return CONFIG.setAll(new ProducerContext(), properties);
    }

    private static Integer parseAcks(final String value)
    {
        if ("all".equalsIgnoreCase(value))
        {
            return Acks.ALL;
        }
        try
        {
            return Integer.parseInt(value.replace("_", ""));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("not all, 0, 1 or N: '" + value + "'", ex);
        }
    }

    private static Partitioner parsePartitioner(final String value)
    {
        switch (value.toLowerCase(java.util.Locale.ROOT))
        {
            case "sticky": return Partitioner.STICKY;
            case "round-robin": return Partitioner.ROUND_ROBIN;
            default: throw new ConfigException(PARTITIONER, "not 'sticky' or 'round-robin': '" + value + "'");
        }
    }

    /**
     * Validate every value (called when a producer is built; idempotent).
     *
     * @return this context, frozen.
     */
    public ProducerContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        CONFIG.validate(this);
        if (bufferMemory < batchSize)
        {
            throw new ConfigException(BUFFER_MEMORY, "value " + bufferMemory + " is outside [" + batchSize + ", " +
                Long.MAX_VALUE + "] (at least " + BATCH_SIZE + ")");
        }
        if (deliveryTimeoutMs < lingerMs + requestTimeoutMs || deliveryTimeoutMs > Long.MAX_VALUE / 2)
        {
            throw new ConfigException(DELIVERY_TIMEOUT_MS, "value " + deliveryTimeoutMs + " must be at least " +
                LINGER_MS + " + " + REQUEST_TIMEOUT_MS + " = " + (lingerMs + requestTimeoutMs));
        }
        if (null == enableIdempotence)
        {
            idempotence = acks == Acks.ALL && maxInFlight <= MAX_IN_FLIGHT_IDEMPOTENT;
        }
        else if (enableIdempotence)
        {
            if (acks != Acks.ALL)
            {
                throw new ConfigException(ENABLE_IDEMPOTENCE, "requires " + ACKS + "=all, not " + Acks.describe(acks) +
                    " (set " + ENABLE_IDEMPOTENCE + "=false to use it)");
            }
            if (maxInFlight > MAX_IN_FLIGHT_IDEMPOTENT)
            {
                throw new ConfigException(ENABLE_IDEMPOTENCE, "requires " + MAX_IN_FLIGHT + " <= " +
                    MAX_IN_FLIGHT_IDEMPOTENT + " (the leader remembers the last 5 batches), not " + maxInFlight);
            }
            idempotence = true;
        }
        else
        {
            idempotence = false;
        }
        if (agentMode == AgentMode.DEDICATED && null == idleStrategySupplier)
        {
            throw new ConfigException("idleStrategySupplier", "required for the DEDICATED agent mode");
        }
        concluded = true;
        return this;
    }

    private void checkNotConcluded()
    {
        if (concluded)
        {
            throw new IllegalStateException("context is concluded (already used to build a producer)");
        }
    }

    /** @param v see {@link #ACKS} ({@link Acks#ALL}, {@link Acks#NONE}, {@link Acks#LEADER}, N). @return this */
    public ProducerContext acks(final int v)
    {
        checkNotConcluded();
        acks = v;
        return this;
    }

    /** @return see {@link #ACKS}. */
    public int acks()
    {
        return acks;
    }

    /** @param v see {@link #ENABLE_IDEMPOTENCE}. @return this */
    public ProducerContext enableIdempotence(final boolean v)
    {
        checkNotConcluded();
        enableIdempotence = v;
        return this;
    }

    /** @return whether the producer is idempotent (resolved by {@link #conclude()}; before it, as set or default). */
    public boolean enableIdempotence()
    {
        if (concluded)
        {
            return idempotence;
        }
        return null != enableIdempotence ? enableIdempotence :
            acks == Acks.ALL && maxInFlight <= MAX_IN_FLIGHT_IDEMPOTENT;
    }

    /** @param v see {@link #BATCH_SIZE}. @return this */
    public ProducerContext batchSize(final int v)
    {
        checkNotConcluded();
        batchSize = v;
        return this;
    }

    /** @return see {@link #BATCH_SIZE}. */
    public int batchSize()
    {
        return batchSize;
    }

    /** @param v see {@link #LINGER_MS}. @return this */
    public ProducerContext lingerMs(final long v)
    {
        checkNotConcluded();
        lingerMs = v;
        return this;
    }

    /** @return see {@link #LINGER_MS}. */
    public long lingerMs()
    {
        return lingerMs;
    }

    /** @param v see {@link #BUFFER_MEMORY}. @return this */
    public ProducerContext bufferMemory(final long v)
    {
        checkNotConcluded();
        bufferMemory = v;
        return this;
    }

    /** @return see {@link #BUFFER_MEMORY}. */
    public long bufferMemory()
    {
        return bufferMemory;
    }

    /** @param v see {@link #MAX_BLOCK_MS}. @return this */
    public ProducerContext maxBlockMs(final long v)
    {
        checkNotConcluded();
        maxBlockMs = v;
        return this;
    }

    /** @return see {@link #MAX_BLOCK_MS}. */
    public long maxBlockMs()
    {
        return maxBlockMs;
    }

    /** @param v see {@link #RETRIES}. @return this */
    public ProducerContext retries(final int v)
    {
        checkNotConcluded();
        retries = v;
        return this;
    }

    /** @return see {@link #RETRIES}. */
    public int retries()
    {
        return retries;
    }

    /** @param v see {@link #RETRY_BACKOFF_MS}. @return this */
    public ProducerContext retryBackoffMs(final long v)
    {
        checkNotConcluded();
        retryBackoffMs = v;
        return this;
    }

    /** @return see {@link #RETRY_BACKOFF_MS}. */
    public long retryBackoffMs()
    {
        return retryBackoffMs;
    }

    /** @param v see {@link #DELIVERY_TIMEOUT_MS}. @return this */
    public ProducerContext deliveryTimeoutMs(final long v)
    {
        checkNotConcluded();
        deliveryTimeoutMs = v;
        return this;
    }

    /** @return see {@link #DELIVERY_TIMEOUT_MS}. */
    public long deliveryTimeoutMs()
    {
        return deliveryTimeoutMs;
    }

    /** @param v see {@link #REQUEST_TIMEOUT_MS}. @return this */
    public ProducerContext requestTimeoutMs(final long v)
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

    /** @param v see {@link #MAX_IN_FLIGHT}. @return this */
    public ProducerContext maxInFlightRequestsPerPartition(final int v)
    {
        checkNotConcluded();
        maxInFlight = v;
        return this;
    }

    /** @return see {@link #MAX_IN_FLIGHT}. */
    public int maxInFlightRequestsPerPartition()
    {
        return maxInFlight;
    }

    /** @param v see {@link #PARTITIONER}. @return this */
    public ProducerContext partitioner(final Partitioner v)
    {
        checkNotConcluded();
        partitioner = v;
        return this;
    }

    /** @return see {@link #PARTITIONER}. */
    public Partitioner partitioner()
    {
        return partitioner;
    }

    /**
     * @param clock the clock of every producer timer (linger, back-off, timeouts); default: the cluster's clock, so
     *              a manual clock driving a deterministic cluster drives the producer too.
     * @return this
     */
    public ProducerContext epochClock(final EpochClock clock)
    {
        checkNotConcluded();
        epochClock = clock;
        return this;
    }

    /** @return the clock, or null for the cluster's. */
    public EpochClock epochClock()
    {
        return epochClock;
    }

    /** @param mode which thread runs the sending agent. Default {@link AgentMode#DEDICATED}. @return this */
    public ProducerContext agentMode(final AgentMode mode)
    {
        checkNotConcluded();
        agentMode = mode;
        return this;
    }

    /** @return which thread runs the sending agent. */
    public AgentMode agentMode()
    {
        return agentMode;
    }

    /**
     * @param supplier how the agent thread idles when there is nothing to do (DEDICATED mode; one strategy per
     *                 producer built from this context). Default: a back-off from spinning to parking 100 us.
     * @return this
     */
    public ProducerContext idleStrategySupplier(final Supplier<IdleStrategy> supplier)
    {
        checkNotConcluded();
        idleStrategySupplier = supplier;
        return this;
    }

    /** @return the agent thread's idle strategy factory. */
    public Supplier<IdleStrategy> idleStrategySupplier()
    {
        return idleStrategySupplier;
    }

    /**
     * @param handler receives errors of the sending agent, callback exceptions and failures of one-way records
     *                (which have no callback). Default: logged.
     * @return this
     */
    public ProducerContext errorHandler(final ErrorHandler handler)
    {
        checkNotConcluded();
        errorHandler = handler;
        return this;
    }

    /** @return the error handler, or null for the default (logged). */
    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /**
     * @param action INVOKER mode: what a blocked call (a synchronous send, {@code flush}, {@code close}, a send
     *               waiting for buffer memory) runs between two invocations of the producer's agent, e.g. invoke the
     *               cluster's agents and advance a manual clock. Default: invoke the cluster's agents when the
     *               cluster is in INVOKER mode, otherwise yield.
     * @return this
     */
    public ProducerContext invokerIdleAction(final Runnable action)
    {
        checkNotConcluded();
        invokerIdleAction = action;
        return this;
    }

    /** @return the INVOKER-mode idle action, or null for the default. */
    public Runnable invokerIdleAction()
    {
        return invokerIdleAction;
    }
}
