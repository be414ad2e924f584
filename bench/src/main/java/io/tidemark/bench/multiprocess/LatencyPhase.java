package io.tidemark.bench.multiprocess;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.SendCallback;
import io.tidemark.host.TidemarkClient;
import io.tidemark.replication.Acks;
import io.tidemark.replication.TopicPartition;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Latency of one acks mode at a fixed rate, open loop: record {@code i} is due at {@code start + i / rate}, one
 * pacing thread sends each with {@link Producer#sendAsync} at (or after) its due time, and its latency is from the
 * due time to its send's completion, recorded in an HdrHistogram {@link Recorder}. A stall therefore delays the
 * records behind it and they count it: coordinated omission corrected, as in the harness's open loop. Records due in
 * the warm-up are sent but not recorded.
 * <p>
 * The pacing thread parks until a record is due instead of spinning, so that the two cores are left to the hosts;
 * its lateness (tens of microseconds, reported as {@link LatencyResult#maxSendLagNs()}) is inside the measured
 * latency. Each in-flight record's callback is one of {@value #RING} preallocated objects, reused round-robin: no
 * allocation per record. For acks=0 the completion is the hand-off to the leader (which never answers).
 * <p>
 * The acknowledged records are then read back from their leaders ({@link ReadBack}).
 * <p>
 * One use: build, {@link #run}, discard.
 */
final class LatencyPhase
{
    private static final int RING = 1 << 16;
    private static final int RING_MASK = RING - 1;
    private static final long START_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private static final long SLOT_WAIT_NANOS = TimeUnit.MICROSECONDS.toNanos(20);
    private static final long SPIN_NANOS = TimeUnit.MICROSECONDS.toNanos(10);
    private static final long DRAIN_TIMEOUT_MS = 60_000;
    private static final long JOIN_TIMEOUT_MS = 10_000;
    private static final long READ_BACK_TIMEOUT_MS = 60_000;

    private final TidemarkClient client;
    private final MultiProcessPlan plan;
    private final String topic;
    private final int acks;
    private final int tag;
    private final int scheduled;
    private final long[] offsets;
    private final int[] partitionOf;
    private final ScheduledSend[] slots = new ScheduledSend[RING];
    private final Recorder latency = new Recorder(3);
    private final LongAdder acknowledged = new LongAdder();
    private final SendErrors errors = new SendErrors();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile boolean stop;
    private volatile long sent;
    private volatile long maxSendLagNs;

    /**
     * @param client the cluster's client.
     * @param plan   the run's settings.
     * @param topic  the topic.
     * @param acks   the acks mode.
     * @param tag    this phase's record tag ({@link RecordValues}).
     */
    LatencyPhase(final TidemarkClient client, final MultiProcessPlan plan, final String topic, final int acks,
        final int tag)
    {
        this.client = client;
        this.plan = plan;
        this.topic = topic;
        this.acks = acks;
        this.tag = tag;
        this.scheduled = plan.latencyRecords();
        this.offsets = new long[scheduled];
        this.partitionOf = new int[scheduled];
        Arrays.fill(offsets, -1);
        for (int i = 0; i < RING; i++)
        {
            slots[i] = new ScheduledSend();
        }
    }

    /**
     * Send at the plan's rate for its warm-up and latency window, wait for the records in flight, read them back.
     *
     * @param watch watches the cluster meanwhile (its failure ends the phase and is thrown).
     * @param run   the round, for the result.
     * @return the measures.
     */
    LatencyResult run(final ClusterWatch watch, final int run)
    {
        final ProducerContext ctx = new ProducerContext()
            .acks(acks)
            .batchSize(plan.batchSize())
            .lingerMs(plan.latencyLingerMs())
            .bufferMemory(plan.bufferMemory())
            .errorHandler((t) -> failure.compareAndSet(null, t));
        watch.begin();
        final Producer producer = new Producer(client, ctx);
        final long start = System.nanoTime() + START_DELAY_NANOS;
        windowStart = start + TimeUnit.MILLISECONDS.toNanos(plan.warmupMs());
        final long end = windowStart + TimeUnit.MILLISECONDS.toNanos(plan.latencyMs());
        final Thread pacer = new Thread(() -> pace(producer, start), "bench-multiprocess-pacer");
        pacer.setDaemon(true);
        boolean finished = false;
        try
        {
            pacer.start();
            watch.sampleUntil(end, "acks=" + Acks.describe(acks) + " latency at " + plan.rate() + " records/s");
            ThroughputPhase.joinAll(List.of(pacer), JOIN_TIMEOUT_MS);
            finished = true;
        }
        finally
        {
            stop = true;
            producer.close(finished ? DRAIN_TIMEOUT_MS : 0);
            ThroughputPhase.joinAll(List.of(pacer), JOIN_TIMEOUT_MS);
        }
        final Histogram histogram = latency.getIntervalHistogram();
        final ReadBack.Outcome readBack = acks == Acks.NONE ? ReadBack.Outcome.notApplicable() :
            ReadBack.verify(client, topic, plan.partitions(), plan.recordSize(), tag, offsets, partitionOf,
                READ_BACK_TIMEOUT_MS);
        final Throwable t = failure.get();
        return new LatencyResult(acks, run, histogram, scheduled, sent, acknowledged.sum(), errors.total(),
            errors.byCode(), errors.first(), maxSendLagNs, readBack, null == t ? null : t.toString(), watch.end());
    }

    private void pace(final Producer producer, final long start)
    {
        final UnsafeBuffer value = RecordValues.filled(plan.recordSize());
        final ProducerRecord record = new ProducerRecord().topic(topic).value(value, 0, plan.recordSize());
        final double periodNanos = 1e9 / plan.rate();
        long lag = 0;
        try
        {
            for (int sequence = 0; sequence < scheduled && !stop; sequence++)
            {
                final long due = start + (long)(sequence * periodNanos);
                awaitDue(due);
                final ScheduledSend slot = slots[sequence & RING_MASK];
                while (slot.pending)
                {
                    if (stop)
                    {
                        return;
                    }
                    LockSupport.parkNanos(SLOT_WAIT_NANOS); // 65,536 in flight: still measured from the due time
                }
                slot.arm(sequence, due);
                value.putLong(0, RecordValues.id(tag, 0, sequence), RecordValues.ORDER);
                lag = Math.max(lag, System.nanoTime() - due);
                producer.sendAsync(record, slot);
                sent = sequence + 1L;
            }
        }
        catch (final RuntimeException ex)
        {
            if (!stop)
            {
                failure.compareAndSet(null, ex);
            }
        }
        finally
        {
            maxSendLagNs = lag;
        }
    }

    private static void awaitDue(final long due)
    {
        long left;
        while ((left = due - System.nanoTime()) > 0)
        {
            if (left > SPIN_NANOS)
            {
                LockSupport.parkNanos(left - SPIN_NANOS);
            }
            else
            {
                Thread.onSpinWait();
            }
        }
    }

    /** The callback of one in-flight record: which record, and when it was due. */
    private final class ScheduledSend implements SendCallback
    {
        private int sequence;
        private long due;
        private volatile boolean pending;

        void arm(final int sequence, final long due)
        {
            this.sequence = sequence;
            this.due = due;
            this.pending = true;
        }

        @Override
        public void onCompletion(final TopicPartition partition, final long offset, final ProducerException error)
        {
            final long now = System.nanoTime();
            if (null == error)
            {
                acknowledged.increment();
                if (offset >= 0)
                {
                    offsets[sequence] = offset;
                    partitionOf[sequence] = partition.partition();
                }
                if (due >= windowStart)
                {
                    latency.recordValue(Math.max(0, now - due));
                }
            }
            else
            {
                errors.add(error);
            }
            pending = false;
        }
    }
}
