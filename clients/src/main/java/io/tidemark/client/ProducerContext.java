package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.store.ConfigException;
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
    /** Pause before a failed batch is resent. Default 100. */
    public static final String RETRY_BACKOFF_MS = "retry.backoff.ms";
    /** Upper bound from send to reported outcome (success or error), retries included. Default 120000. */
    public static final String DELIVERY_TIMEOUT_MS = "delivery.timeout.ms";
    /** How long the leader waits for a request's acknowledgement condition. Default 30000. */
    public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    /** Unacknowledged requests per partition. Default 5 (at most 5 with idempotence). */
    public static final String MAX_IN_FLIGHT = "max.in.flight.requests.per.partition";
    /** How records without key or partition are spread: {@code sticky} or {@code round-robin}. Default sticky. */
    public static final String PARTITIONER = "partitioner";

    /** Every key {@link #fromProperties(Map)} accepts. */
    public static final Set<String> KEYS = Set.of(ACKS, ENABLE_IDEMPOTENCE, BATCH_SIZE, LINGER_MS, BUFFER_MEMORY,
        MAX_BLOCK_MS, RETRIES, RETRY_BACKOFF_MS, DELIVERY_TIMEOUT_MS, REQUEST_TIMEOUT_MS, MAX_IN_FLIGHT, PARTITIONER);

    /** Most in-flight requests per partition with idempotence (the leader remembers the last 5 batches). */
    public static final int MAX_IN_FLIGHT_IDEMPOTENT = 5;

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

    private int acks = Acks.ALL;
    private Boolean enableIdempotence;
    private boolean idempotence;
    private int batchSize = 16384;
    private long lingerMs = 5;
    private long bufferMemory = 33_554_432L;
    private long maxBlockMs = 60_000;
    private int retries = Integer.MAX_VALUE;
    private long retryBackoffMs = 100;
    private long deliveryTimeoutMs = 120_000;
    private long requestTimeoutMs = 30_000;
    private int maxInFlight = 5;
    private Partitioner partitioner = Partitioner.STICKY;

    private EpochClock epochClock;
    private AgentMode agentMode = AgentMode.DEDICATED;
    private Supplier<IdleStrategy> idleStrategySupplier = () -> new BackoffIdleStrategy(100, 10, 1_000, 100_000);
    private ErrorHandler errorHandler;
    private Runnable invokerIdleAction;
    private boolean concluded;

    /**
     * @param properties key/value pairs using the key constants of this class; unknown keys are rejected.
     * @return a new context.
     */
    public static ProducerContext fromProperties(final Map<String, String> properties)
    {
        final ProducerContext ctx = new ProducerContext();
        for (final Map.Entry<String, String> e : properties.entrySet())
        {
            final String key = e.getKey();
            final String value = null == e.getValue() ? "" : e.getValue().trim();
            switch (key)
            {
                case ACKS: ctx.acks("all".equalsIgnoreCase(value) ? Acks.ALL : (int)Config.parseLong(key, value)); break;
                case ENABLE_IDEMPOTENCE: ctx.enableIdempotence(Config.parseBoolean(key, value)); break;
                case BATCH_SIZE: ctx.batchSize((int)Config.parseLong(key, value)); break;
                case LINGER_MS: ctx.lingerMs(Config.parseLong(key, value)); break;
                case BUFFER_MEMORY: ctx.bufferMemory(Config.parseLong(key, value)); break;
                case MAX_BLOCK_MS: ctx.maxBlockMs(Config.parseLong(key, value)); break;
                case RETRIES: ctx.retries((int)Config.parseLong(key, value)); break;
                case RETRY_BACKOFF_MS: ctx.retryBackoffMs(Config.parseLong(key, value)); break;
                case DELIVERY_TIMEOUT_MS: ctx.deliveryTimeoutMs(Config.parseLong(key, value)); break;
                case REQUEST_TIMEOUT_MS: ctx.requestTimeoutMs(Config.parseLong(key, value)); break;
                case MAX_IN_FLIGHT: ctx.maxInFlightRequestsPerPartition((int)Config.parseLong(key, value)); break;
                case PARTITIONER: ctx.partitioner(parsePartitioner(value)); break;
                default: throw new ConfigException(key, "unknown configuration key; known keys are " + KEYS);
            }
        }
        return ctx;
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
        if (acks < Acks.ALL || acks > 64)
        {
            throw new ConfigException(ACKS, "must be all (-1), 0, 1 or N (2..replication factor): " + acks);
        }
        Config.range(BATCH_SIZE, batchSize, 64, 64 * 1024 * 1024);
        Config.range(LINGER_MS, lingerMs, 0, Integer.MAX_VALUE);
        Config.range(BUFFER_MEMORY, bufferMemory, batchSize, Long.MAX_VALUE);
        Config.range(MAX_BLOCK_MS, maxBlockMs, 0, Long.MAX_VALUE / 2);
        Config.range(RETRIES, retries, 0, Integer.MAX_VALUE);
        Config.range(RETRY_BACKOFF_MS, retryBackoffMs, 0, Integer.MAX_VALUE);
        Config.range(REQUEST_TIMEOUT_MS, requestTimeoutMs, 1, Integer.MAX_VALUE / 2);
        Config.range(MAX_IN_FLIGHT, maxInFlight, 1, 1024);
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
