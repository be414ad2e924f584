package io.tidemark.client;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.store.ConfigException;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Sends records to the partitions of a {@link ReplicationCluster}'s topics, in three modes:
 * <ul>
 *   <li>{@link #send(ProducerRecord)}: synchronous; returns the record's offset once acknowledged with the
 *       configured acks (-1 for acks=0), or throws a {@link ProducerException}. The record's batch goes out at once,
 *       without lingering.</li>
 *   <li>{@link #sendAsync(ProducerRecord, SendCallback)}: the record joins its partition's batch
 *       ({@code batch.size}, {@code linger.ms}); the callback gets the outcome. Blocks only while
 *       {@code buffer.memory} is full, at most {@code max.block.ms}.</li>
 *   <li>{@link #sendOneWay(ProducerRecord)}: no callback, acks=0: the leader appends it and never answers; a
 *       failure to queue it within {@code delivery.timeout.ms} goes to the error handler.</li>
 * </ul>
 * Batches go out from an Agrona agent ({@link Sender}) on the producer's own thread, or on the caller's
 * ({@link ProducerContext.AgentMode#INVOKER}), and failed ones are retried as {@link PartitionSender} describes;
 * with {@code enable.idempotence} (the default with acks=all) retries neither duplicate nor reorder records within
 * a partition. {@link #flush()} waits until everything sent before it is complete; {@link #close()} sends what is
 * pending, then fails what could not be sent: no record is ever dropped without its callback hearing of it.
 * <p>
 * Thread-safe: any number of threads may send through one producer. Records sent by one thread to one partition
 * keep their order in the log when idempotence is on.
 */
public final class Producer implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(Producer.class.getName());

    private final ProducerContext ctx;
    private final EpochClock clock;
    private final ErrorHandler errorHandler;
    private final BufferPool pool;
    private final RecordAccumulator accumulator;
    private final Sender sender;
    private final AgentRunner runner;
    private final AgentInvoker invoker;
    private final Runnable invokerStep;
    private final int maxRecordSize;
    private final ThreadLocal<SyncWaiter> waiters = ThreadLocal.withInitial(SyncWaiter::new);
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Start a producer (and, in DEDICATED mode, its agent thread).
     *
     * @param cluster the cluster whose topics it writes.
     * @param ctx     configuration, concluded here.
     * @throws ConfigException for an invalid configuration, naming the key.
     */
    public Producer(final ReplicationCluster cluster, final ProducerContext ctx)
    {
        this(ClusterConnection.of(cluster), ctx);
    }

    /**
     * Start a producer on a cluster reached through a connection (module {@code host} connects to hosts in other
     * processes), and in DEDICATED mode its agent thread.
     *
     * @param connection the cluster whose topics it writes.
     * @param ctx        configuration, concluded here.
     * @throws ConfigException for an invalid configuration, naming the key.
     */
    public Producer(final ClusterConnection connection, final ProducerContext ctx)
    {
        this.ctx = ctx.conclude();
        final int queueMax = connection.maxRequestBytes();
        if (ctx.batchSize() > queueMax)
        {
            throw new ConfigException(ProducerContext.BATCH_SIZE, ctx.batchSize() + " exceeds what a leader " +
                "accepts in one request (" + queueMax + " bytes; in one JVM a quarter of produce.ring.bytes)");
        }
        this.maxRecordSize = (int)Math.min(queueMax, ctx.bufferMemory());
        this.clock = null != ctx.epochClock() ? ctx.epochClock() : connection.epochClock();
        this.errorHandler = null != ctx.errorHandler() ? ctx.errorHandler() :
            (t) -> LOGGER.log(System.Logger.Level.ERROR, "producer error", t);
        final ClusterChannel channel = new ClusterChannel(connection);
        this.pool = new BufferPool(ctx.bufferMemory(), ctx.batchSize(), clock);
        this.accumulator = new RecordAccumulator(channel, ctx, pool);
        this.sender = new Sender(ctx, channel, accumulator, pool, clock, errorHandler);
        if (ctx.agentMode() == ProducerContext.AgentMode.DEDICATED)
        {
            this.invoker = null;
            this.invokerStep = null;
            this.runner = new AgentRunner(ctx.idleStrategySupplier().get(), errorHandler, null, sender);
            AgentRunner.startOnThread(runner);
        }
        else
        {
            this.runner = null;
            this.invoker = new AgentInvoker(errorHandler, null, sender);
            this.invoker.start();
            final Runnable idle = null != ctx.invokerIdleAction() ? ctx.invokerIdleAction() :
                connection.waitAction();
            this.invokerStep = () ->
            {
                invoker.invoke();
                idle.run();
            };
        }
    }

    /** @return the configuration. */
    public ProducerContext context()
    {
        return ctx;
    }

    /**
     * Send one record and wait for its acknowledgement.
     *
     * @return its offset (-1 with acks=0: the leader never answers).
     * @throws ProducerException why it failed (see {@link ProducerErrorCode}).
     * @throws IllegalStateException when called from a send callback (it would wait for itself).
     */
    public long send(final ProducerRecord record)
    {
        checkNotDutyThread("send");
        final SyncWaiter waiter = waiters.get().reset();
        append(record, waiter, false, true);
        if (!awaitCompletion(waiter))
        {
            waiters.remove(); // the batch still holds the waiter: never reuse it
            throw ProducerException.of(ProducerErrorCode.INTERRUPTED, "interrupted waiting for the acknowledgement");
        }
        final ProducerException error = waiter.error();
        if (null != error)
        {
            throw new ProducerException(error.code(), error.replicationError(), error.partition(),
                error.outcomeUnknown(), "synchronous send failed: " + error.getMessage());
        }
        return waiter.offset();
    }

    /**
     * Send one record; {@code callback} gets its outcome on the producer's agent thread.
     *
     * @throws ProducerException at once for CLOSED, UNKNOWN_TOPIC, RECORD_TOO_LARGE, and BUFFER_EXHAUSTED after
     *                           {@code max.block.ms} (the callback is not called then).
     */
    public void sendAsync(final ProducerRecord record, final SendCallback callback)
    {
        if (null == callback)
        {
            throw new IllegalArgumentException("callback must not be null (use sendOneWay for none)");
        }
        append(record, callback, false, false);
    }

    /**
     * Send one record with acks=0 and no callback: fire and forget. A record that could not even be queued to its
     * leader within {@code delivery.timeout.ms} is reported to the error handler.
     *
     * @throws ProducerException as {@link #sendAsync}.
     */
    public void sendOneWay(final ProducerRecord record)
    {
        append(record, null, true, false);
    }

    private void append(final ProducerRecord record, final SendCallback callback, final boolean oneWay,
        final boolean sendNow)
    {
        if (accumulator.isClosed())
        {
            throw ProducerException.of(ProducerErrorCode.CLOSED, "the producer is closed");
        }
        final TopicAccumulator topic = accumulator.topic(record.topic());
        final int partition = topic.partition(record);
        final int size = RecordEncoder.encodedLength(record.keyLength(), record.valueLength(), record.headersLength());
        if (size > maxRecordSize)
        {
            throw ProducerException.of(ProducerErrorCode.RECORD_TOO_LARGE, "record of " + size + " encoded bytes; " +
                "at most " + maxRecordSize + " fit buffer.memory and the leader's produce queue");
        }
        final Runnable blocking = sender.isDutyThread() ? BufferPool.NO_WAIT : invokerStep;
        if (topic.accumulator(partition, oneWay).append(record, size, callback, sendNow, clock.time(), blocking))
        {
            topic.onNewBatch(record, partition);
        }
    }

    /** @return the number of partitions of a topic. @throws ProducerException UNKNOWN_TOPIC. */
    public int partitionCount(final String topic)
    {
        return accumulator.topic(topic).partitionCount();
    }

    /**
     * Send every record now, without lingering, and wait until every record sent before this call is complete
     * (acknowledged or failed: its callback has run).
     *
     * @throws IllegalStateException when called from a send callback.
     */
    public void flush()
    {
        checkNotDutyThread("flush");
        if (!flush(Long.MAX_VALUE))
        {
            throw ProducerException.of(ProducerErrorCode.INTERRUPTED, "interrupted while flushing");
        }
    }

    private boolean flush(final long timeoutMs)
    {
        accumulator.beginFlush();
        try
        {
            final long target = accumulator.lastSerial();
            return await(() -> sender.flushedThrough() >= target, timeoutMs);
        }
        finally
        {
            accumulator.endFlush();
        }
    }

    /**
     * Wait (sending-side idle strategy, or invoking the agent in INVOKER mode) until {@code condition} holds.
     *
     * @return whether it held; false when interrupted or the timeout passed.
     */
    private boolean await(final BooleanSupplier condition, final long timeoutMs)
    {
        final boolean forever = timeoutMs >= Long.MAX_VALUE / 1_000_000L;
        final long deadline = forever ? 0 : System.nanoTime() + timeoutMs * 1_000_000L;
        final IdleStrategy idle = null == invokerStep ? new BackoffIdleStrategy(10, 10, 1_000, 1_000_000) : null;
        while (!condition.getAsBoolean())
        {
            if (Thread.currentThread().isInterrupted() || (!forever && System.nanoTime() - deadline > 0))
            {
                return false;
            }
            if (null != invokerStep)
            {
                invokerStep.run();
            }
            else
            {
                idle.idle();
            }
        }
        return true;
    }

    /** @return whether the synchronous send completed; false when interrupted. */
    private boolean awaitCompletion(final SyncWaiter waiter)
    {
        if (null != invokerStep)
        {
            return await(waiter::isDone, Long.MAX_VALUE);
        }
        while (!waiter.isDone())
        {
            LockSupport.park(waiter); // unparked by the agent when the batch completes
            if (Thread.currentThread().isInterrupted())
            {
                return waiter.isDone();
            }
        }
        return true;
    }

    private void checkNotDutyThread(final String call)
    {
        if (sender.isDutyThread())
        {
            throw new IllegalStateException(call + "() from a send callback would wait for the thread running it");
        }
    }

    /**
     * Run one duty cycle of the sending agent ({@link ProducerContext.AgentMode#INVOKER} only).
     *
     * @return work done.
     */
    public int invokeAgent()
    {
        if (null == invoker)
        {
            throw new IllegalStateException("the producer runs its own agent thread (agentMode=DEDICATED)");
        }
        return invoker.invoke();
    }

    /** @return the idempotent producer id, or -1 without idempotence. */
    public long producerId()
    {
        return sender.producerId();
    }

    /** @return bytes of {@code buffer.memory} not used by pending records. */
    public long availableMemory()
    {
        return pool.availableMemory();
    }

    /** Close, waiting as long as it takes for pending records to complete (bounded by their delivery timeout). */
    @Override
    public void close()
    {
        close(Long.MAX_VALUE);
    }

    /**
     * Refuse new sends, wait up to {@code timeoutMs} for pending records to complete, then stop the agent and fail
     * whatever is left with {@link ProducerErrorCode#CLOSED} (outcome unknown for records awaiting an answer).
     * Idempotent.
     *
     * @param timeoutMs 0 to fail pending records at once.
     */
    public void close(final long timeoutMs)
    {
        checkNotDutyThread("close");
        if (!closed.compareAndSet(false, true))
        {
            return;
        }
        accumulator.close();
        if (timeoutMs > 0)
        {
            flush(timeoutMs);
        }
        if (null != runner)
        {
            runner.close();
        }
        else
        {
            invoker.close();
        }
        sender.failAll("not completed before the producer closed");
        sender.close();
        pool.close();
    }
}
