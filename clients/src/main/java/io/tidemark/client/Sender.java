package io.tidemark.client;

import io.tidemark.replication.ReplicationError;
import org.agrona.ErrorHandler;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;

/**
 * The producer's sending agent. Each duty cycle it delivers the leaders' answers (from the {@link CompletionQueue}
 * to the batch awaiting each correlation id), lets every partition lane ({@link PartitionSender}) take its due
 * batches from the accumulators, detect lost attempts, expire, retry and send, and, while a flush is in progress,
 * publishes how far flushing has got. The lanes' sends of one cycle are gathered by the connection and leave at the
 * cycle's end, one request per leader host where the connection can ({@link ClusterConnection#gatherSends}). Errors go to the error handler, never out of the thread.
 * <p>
 * Runs on one thread at a time (the producer's agent thread, or the invoking thread); {@link #flushedThrough()} is
 * readable from any thread.
 */
final class Sender implements Agent
{
    private final ClusterChannel channel;
    private final RecordAccumulator accumulator;
    private final BufferPool pool;
    private final EpochClock clock;
    private final ErrorHandler errorHandler;
    private final CompletionQueue completions;
    private final CompletionQueue.Handler onOutcome = this::onOutcome;
    private final Long2ObjectHashMap<ProducerBatch> awaiting = new Long2ObjectHashMap<>();
    private final int session;
    private final long producerId;
    private final int acks;
    private final boolean idempotent;
    private final long lingerMs;
    private final int retries;
    private final long retryBackoffMs;
    private final long deliveryTimeoutMs;
    private final int requestTimeoutMs;
    private final int maxInFlight;
    private PartitionAccumulator[] known = new PartitionAccumulator[0];
    private PartitionSender[] senders = new PartitionSender[0];
    private long nextCorrelationId = 1;
    private long now;
    private Thread dutyThread;
    private volatile long flushedThrough;

    Sender(final ProducerContext ctx, final ClusterChannel channel, final RecordAccumulator accumulator,
        final BufferPool pool, final EpochClock clock, final ErrorHandler errorHandler)
    {
        this.channel = channel;
        this.accumulator = accumulator;
        this.pool = pool;
        this.clock = clock;
        this.errorHandler = errorHandler;
        this.completions = new CompletionQueue(1 << 20);
        this.session = channel.register(completions);
        this.acks = ctx.acks();
        this.idempotent = ctx.enableIdempotence();
        this.producerId = idempotent ? channel.allocateProducerId() : -1;
        this.lingerMs = ctx.lingerMs();
        this.retries = ctx.retries();
        this.retryBackoffMs = ctx.retryBackoffMs();
        this.deliveryTimeoutMs = ctx.deliveryTimeoutMs();
        this.requestTimeoutMs = (int)ctx.requestTimeoutMs();
        this.maxInFlight = ctx.maxInFlightRequestsPerPartition();
    }

    @Override
    public int doWork()
    {
        dutyThread = Thread.currentThread();
        try
        {
            now = clock.time();
            int work = completions.drain(onOutcome, 4096);
            final PartitionAccumulator[] all = accumulator.all();
            if (all != known)
            {
                refresh(all);
            }
            final boolean flushing = accumulator.flushing();
            channel.gatherSends(); // the lanes' requests leave together, one per leader host, at the cycle's end
            try
            {
                for (final PartitionSender sender : senders)
                {
                    try
                    {
                        work += sender.doWork(now, flushing);
                    }
                    catch (final RuntimeException ex)
                    {
                        errorHandler.onError(ex);
                    }
                }
            }
            finally
            {
                channel.flushSends();
            }
            if (flushing)
            {
                updateFlushedThrough();
            }
            return work;
        }
        finally
        {
            dutyThread = null;
        }
    }

    private void refresh(final PartitionAccumulator[] all)
    {
        final PartitionSender[] next = new PartitionSender[all.length];
        for (int i = 0; i < all.length; i++)
        {
            if (null == all[i].sender)
            {
                all[i].sender = new PartitionSender(this, all[i]);
            }
            next[i] = all[i].sender;
        }
        senders = next;
        known = all;
    }

    private void onOutcome(final long correlationId, final long baseOffset, final ReplicationError error)
    {
        final ProducerBatch batch = awaiting.remove(correlationId);
        if (null != batch) // otherwise the answer to an attempt given up on (lost, then resent): ignored
        {
            batch.owner.onResponse(batch, baseOffset, error, now);
        }
    }

    /**
     * Every batch with a serial up to the scan's start that is not in any lane or accumulator is complete; the
     * accumulators are scanned under their locks, so a batch started before the scan is always seen.
     */
    private void updateFlushedThrough()
    {
        final long scanStart = accumulator.lastSerial();
        final PartitionAccumulator[] all = accumulator.all(); // read after the serial: holds every batch's topic
        if (all != known)
        {
            refresh(all);
        }
        long min = Long.MAX_VALUE;
        for (final PartitionAccumulator partition : known)
        {
            min = Math.min(min, partition.minSerial());
            min = Math.min(min, partition.sender.minSerial());
        }
        final long through = Math.min(scanStart, min - 1);
        if (through > flushedThrough)
        {
            flushedThrough = through;
        }
    }

    /** @return every batch with a serial up to this is complete (published while a flush is in progress). */
    long flushedThrough()
    {
        return flushedThrough;
    }

    /** @return whether the calling thread is running this agent's duty cycle (a callback is calling in). */
    boolean isDutyThread()
    {
        return Thread.currentThread() == dutyThread;
    }

    /** Fail everything not completed (the agent is stopped). */
    void failAll(final String detail)
    {
        refresh(accumulator.all());
        for (final PartitionSender sender : senders)
        {
            try
            {
                sender.failAll(detail);
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
            }
        }
        awaiting.clear();
        flushedThrough = accumulator.lastSerial();
    }

    void close()
    {
        channel.unregister(session);
    }

    @Override
    public String roleName()
    {
        return "tidemark-producer";
    }

    void track(final ProducerBatch batch)
    {
        awaiting.put(batch.correlationId, batch);
    }

    void untrack(final ProducerBatch batch)
    {
        awaiting.remove(batch.correlationId);
    }

    void release(final ProducerBatch batch)
    {
        pool.release(batch);
    }

    long nextCorrelationId()
    {
        return nextCorrelationId++;
    }

    ClusterChannel channel()
    {
        return channel;
    }

    ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    int session()
    {
        return session;
    }

    long producerId()
    {
        return producerId;
    }

    int acks()
    {
        return acks;
    }

    boolean idempotent()
    {
        return idempotent;
    }

    long lingerMs()
    {
        return lingerMs;
    }

    int retries()
    {
        return retries;
    }

    long retryBackoffMs()
    {
        return retryBackoffMs;
    }

    long deliveryTimeoutMs()
    {
        return deliveryTimeoutMs;
    }

    int requestTimeoutMs()
    {
        return requestTimeoutMs;
    }

    int maxInFlight()
    {
        return maxInFlight;
    }
}
