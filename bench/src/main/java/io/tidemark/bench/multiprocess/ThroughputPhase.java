package io.tidemark.bench.multiprocess;

import org.agrona.concurrent.UnsafeBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Saturated throughput of one cell: {@link MultiProcessPlan#producerThreads()} threads of this JVM send records as
 * fast as one producer of the target takes them (batching on: {@code batch.size}, {@code linger.ms}; a send waits
 * while {@code buffer.memory} is full, which is what paces the threads). The measure is the records whose send
 * completed successfully inside the window, per second (acks=0: handed to the leader), and the CPU the servers used
 * in that window.
 * <p>
 * One use: build, {@link #run}, discard.
 */
final class ThroughputPhase extends LoadProducer.Completion
{
    private static final long DRAIN_TIMEOUT_MS = 60_000;
    private static final long JOIN_TIMEOUT_MS = 10_000;

    private final LoadTarget target;
    private final MultiProcessPlan plan;
    private final String topic;
    private final int partitions;
    private final int acks;
    private final int tag;
    private final LongAdder inWindow = new LongAdder();
    private final SendErrors errors = new SendErrors();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile long windowEnd = Long.MAX_VALUE;
    private volatile boolean stop;

    ThroughputPhase(final LoadTarget target, final MultiProcessPlan plan, final String topic, final int partitions,
        final int acks, final int tag)
    {
        this.target = target;
        this.plan = plan;
        this.topic = topic;
        this.partitions = partitions;
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
     * @param during    called at the window's start and end (a profiler), or null.
     * @return the measures.
     */
    CellResult run(final ClusterWatch watch, final int run, final long warmupMs, final long measureMs,
        final Window during)
    {
        final CpuMeter cpu = new CpuMeter(target.servers());
        watch.begin();
        final LoadProducer producer = target.producer(topic, new ProducerSettings(acks, plan.batchSize(),
            plan.lingerMs(), plan.bufferMemory()));
        final List<Thread> threads = new ArrayList<>();
        boolean finished = false;
        CpuMeter.Usage usage = CpuMeter.Usage.none();
        final String phase = target.name() + " acks=" + io.tidemark.replication.Acks.describe(acks) + " partitions=" +
            partitions + " saturated";
        try
        {
            windowStart = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(warmupMs);
            windowEnd = windowStart + TimeUnit.MILLISECONDS.toNanos(measureMs);
            for (int t = 0; t < plan.producerThreads(); t++)
            {
                final int thread = t;
                final Thread sender = new Thread(() -> sendLoop(producer, thread), "bench-multiprocess-producer-" + t);
                sender.setDaemon(true);
                threads.add(sender);
                sender.start();
            }
            usage = measure(watch, windowStart, windowEnd, phase, cpu, during);
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
        return new CellResult(target.name(), CellResult.SATURATED, acks, partitions, run, inWindow.sum() / seconds,
            inWindow.sum(), null, usage, 0, 0, errors.total(), errors.byCode(), errors.first(), 0, null,
            null == t ? null : t.toString(), watch.end());
    }

    private void sendLoop(final LoadProducer producer, final int thread)
    {
        final UnsafeBuffer value = RecordValues.filled(plan.recordSize());
        long sequence = 0;
        try
        {
            while (!stop)
            {
                value.putLong(0, RecordValues.id(tag, thread, sequence++), RecordValues.ORDER);
                producer.send(value, plan.recordSize(), this);
            }
        }
        catch (final RuntimeException ex)
        {
            if (!stop)
            {
                failure.compareAndSet(null, ex);
            }
        }
    }

    @Override
    void onCompletion(final int partition, final long offset, final String errorCode, final String message)
    {
        if (null != errorCode)
        {
            errors.add(errorCode, message);
            return;
        }
        final long now = System.nanoTime();
        if (now >= windowStart && now < windowEnd)
        {
            inWindow.increment();
        }
    }

    /** Something that runs alongside a measured window: a profiler. */
    interface Window
    {
        /** The window starts. */
        void begin();

        /** The window ends. */
        void end();
    }

    /**
     * The measurement window of a phase: sample the leaders and ISRs until it starts, then measure the servers' CPU
     * (and run {@code during}) until it ends, still sampling.
     *
     * @return the servers' CPU over the window.
     */
    static CpuMeter.Usage measure(final ClusterWatch watch, final long windowStart, final long windowEnd,
        final String phase, final CpuMeter cpu, final Window during)
    {
        watch.sampleUntil(windowStart, phase);
        cpu.begin();
        if (null != during)
        {
            during.begin();
        }
        watch.sampleUntil(windowEnd, phase);
        final CpuMeter.Usage usage = cpu.end();
        if (null != during)
        {
            during.end();
        }
        return usage;
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
