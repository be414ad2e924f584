package io.tidemark.bench.multiprocess;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.SendCallback;
import io.tidemark.host.TidemarkClient;
import io.tidemark.replication.Acks;
import io.tidemark.replication.TopicPartition;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Saturated throughput of one acks mode: {@link MultiProcessPlan#producerThreads()} threads of this JVM send
 * records with {@link Producer#sendAsync} as fast as one {@link Producer} over the {@link TidemarkClient} takes them
 * (batching on: {@code batch.size}, {@code linger.ms}; a send waits while {@code buffer.memory} is full, which is
 * what paces the threads). The measure is the records whose send completed successfully inside the window, per
 * second: acknowledged by the leader with the acks mode, or for acks=0 handed to the leader (which never answers).
 * <p>
 * One use: build, {@link #run}, discard.
 */
final class ThroughputPhase implements SendCallback
{
    private static final long DRAIN_TIMEOUT_MS = 60_000;
    private static final long JOIN_TIMEOUT_MS = 10_000;

    private final TidemarkClient client;
    private final MultiProcessPlan plan;
    private final String topic;
    private final int acks;
    private final int tag;
    private final LongAdder inWindow = new LongAdder();
    private final LongAdder completed = new LongAdder();
    private final SendErrors errors = new SendErrors();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    private volatile boolean stop;

    /**
     * @param client the cluster's client.
     * @param plan   the run's settings.
     * @param topic  the topic.
     * @param acks   the acks mode.
     * @param tag    this phase's record tag ({@link RecordValues}).
     */
    ThroughputPhase(final TidemarkClient client, final MultiProcessPlan plan, final String topic, final int acks,
        final int tag)
    {
        this.client = client;
        this.plan = plan;
        this.topic = topic;
        this.acks = acks;
        this.tag = tag;
    }

    /**
     * Send for {@code warmupMs + measureMs}, then wait for the records in flight.
     *
     * @param watch     watches the cluster meanwhile (its failure ends the phase and is thrown).
     * @param run       the round, for the result.
     * @param warmupMs  unmeasured start.
     * @param measureMs the window.
     * @return the measures.
     */
    ThroughputResult run(final ClusterWatch watch, final int run, final long warmupMs, final long measureMs)
    {
        final ProducerContext ctx = new ProducerContext()
            .acks(acks)
            .batchSize(plan.batchSize())
            .lingerMs(plan.lingerMs())
            .bufferMemory(plan.bufferMemory())
            .errorHandler((t) -> failure.compareAndSet(null, t));
        watch.begin();
        final Producer producer = new Producer(client, ctx);
        final List<Thread> threads = new ArrayList<>();
        boolean finished = false;
        try
        {
            windowStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmupMs);
            windowEnd = windowStart + TimeUnit.MILLISECONDS.toNanos(measureMs);
            for (int t = 0; t < plan.producerThreads(); t++)
            {
                final int thread = t;
                final Thread sender = new Thread(() -> sendLoop(producer, thread),
                    "bench-multiprocess-producer-" + t);
                sender.setDaemon(true);
                threads.add(sender);
                sender.start();
            }
            watch.sampleUntil(windowEnd, "acks=" + Acks.describe(acks) + " saturated throughput");
            finished = true;
        }
        finally
        {
            stop = true;
            joinAll(threads, JOIN_TIMEOUT_MS);
            producer.close(finished ? DRAIN_TIMEOUT_MS : 0);
            joinAll(threads, JOIN_TIMEOUT_MS);
        }
        final double seconds = measureMs / 1_000.0;
        final Throwable t = failure.get();
        return new ThroughputResult(acks, run, inWindow.sum() / seconds, inWindow.sum(), completed.sum(),
            errors.total(), errors.byCode(), errors.first(), null == t ? null : t.toString(), watch.end());
    }

    private void sendLoop(final Producer producer, final int thread)
    {
        final UnsafeBuffer value = RecordValues.filled(plan.recordSize());
        final ProducerRecord record = new ProducerRecord().topic(topic).value(value, 0, plan.recordSize());
        long sequence = 0;
        try
        {
            while (!stop)
            {
                value.putLong(0, RecordValues.id(tag, thread, sequence++), RecordValues.ORDER);
                producer.sendAsync(record, this);
            }
        }
        catch (final ProducerException ex)
        {
            if (!stop)
            {
                failure.compareAndSet(null, ex);
            }
        }
        catch (final RuntimeException ex)
        {
            failure.compareAndSet(null, ex);
        }
    }

    @Override
    public void onCompletion(final TopicPartition partition, final long offset, final ProducerException error)
    {
        if (null != error)
        {
            errors.add(error);
            return;
        }
        completed.increment();
        final long now = System.nanoTime();
        if (now >= windowStart && now < windowEnd)
        {
            inWindow.increment();
        }
    }

    static void joinAll(final List<Thread> threads, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (final Thread thread : threads)
        {
            final long left = deadline - System.nanoTime();
            if (left <= 0)
            {
                return;
            }
            try
            {
                thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
