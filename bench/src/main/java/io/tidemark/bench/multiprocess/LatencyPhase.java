package io.tidemark.bench.multiprocess;

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
 * Latency of one cell at a fixed rate, open loop: record {@code i} is due at {@code start + i / rate}, one pacing
 * thread sends each at (or after) its due time, and its latency is from the due time to its send's completion,
 * recorded in an HdrHistogram {@link Recorder}. A stall therefore delays the records behind it and they count it:
 * coordinated omission corrected, as in the harness's open loop. Records due in the warm-up are sent but not
 * recorded.
 * <p>
 * The pacing thread parks until a record is due instead of spinning, so that the two cores are left to the servers;
 * its lateness (reported as {@link CellResult#maxSendLagNs()}) is inside the measured latency. Each in-flight
 * record's completion is one of {@value #RING} preallocated objects, reused round-robin. For acks=0 the completion
 * is the hand-off to the leader (which never answers).
 * <p>
 * The acknowledged records are then read back from their leaders where the target can ({@link ReadBack}).
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

    private final LoadTarget target;
    private final MultiProcessPlan plan;
    private final String topic;
    private final int partitions;
    private final int acks;
    private final int tag;
    private final long windowMs;
    private final int scheduled;
    private final long[] offsets;
    private final int[] partitionOf;
    private final ScheduledSend[] slots = new ScheduledSend[RING];
    private final Recorder latency = new Recorder(3);
    private final LongAdder inWindow = new LongAdder();
    private final SendErrors errors = new SendErrors();
    private final AtomicReference<Throwable> failure = new AtomicReference<>();
    private volatile long windowStart = Long.MAX_VALUE;
    private volatile boolean stop;
    private volatile long sent;
    private volatile long maxSendLagNs;

    LatencyPhase(final LoadTarget target, final MultiProcessPlan plan, final String topic, final int partitions,
        final int acks, final int tag, final long windowMs)
    {
        this.target = target;
        this.plan = plan;
        this.topic = topic;
        this.partitions = partitions;
        this.acks = acks;
        this.tag = tag;
        this.windowMs = windowMs;
        this.scheduled = plan.latencyRecords(windowMs);
        this.offsets = new long[scheduled];
        this.partitionOf = new int[scheduled];
        Arrays.fill(offsets, -1);
        for (int i = 0; i < RING; i++)
        {
            slots[i] = new ScheduledSend();
        }
    }

    /**
     * Send at the plan's rate for its warm-up and the window, wait for the records in flight, read them back.
     *
     * @param watch  watches the cluster meanwhile (its failure ends the phase and is thrown).
     * @param run    the round, for the result.
     * @param during called at the window's start and end (a profiler), or null.
     * @return the measures.
     */
    CellResult run(final ClusterWatch watch, final int run, final ThroughputPhase.Window during)
    {
        final CpuMeter cpu = new CpuMeter(target.servers());
        watch.begin();
        final LoadProducer producer = target.producer(topic, new ProducerSettings(acks, plan.batchSize(),
            plan.latencyLingerMs(), plan.bufferMemory()));
        final long start = System.nanoTime() + START_DELAY_NANOS;
        windowStart = start + TimeUnit.MILLISECONDS.toNanos(plan.warmupMs());
        final long end = windowStart + TimeUnit.MILLISECONDS.toNanos(windowMs);
        final Thread pacer = new Thread(() -> pace(producer, start), "bench-multiprocess-pacer");
        pacer.setDaemon(true);
        boolean finished = false;
        CpuMeter.Usage usage = CpuMeter.Usage.none();
        final String phase = target.name() + " acks=" + io.tidemark.replication.Acks.describe(acks) +
            " partitions=" + partitions + " at " + plan.rate() + " records/s";
        try
        {
            pacer.start();
            usage = ThroughputPhase.measure(watch, windowStart, end, phase, cpu, during);
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
        final ReadBack.Outcome readBack = acks == 0 ? ReadBack.Outcome.notApplicable() :
            target.readBack(topic, partitions, plan.recordSize(), tag, offsets, partitionOf);
        final Throwable t = failure.get();
        return new CellResult(target.name(), CellResult.RATE, acks, partitions, run,
            inWindow.sum() / (windowMs / 1_000.0), inWindow.sum(), histogram, usage, scheduled, sent,
            errors.total(), errors.byCode(), errors.first(), maxSendLagNs, readBack, null == t ? null : t.toString(),
            watch.end());
    }

    private void pace(final LoadProducer producer, final long start)
    {
        final UnsafeBuffer value = RecordValues.filled(plan.recordSize());
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
                producer.send(value, plan.recordSize(), slot);
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

    /** The completion of one in-flight record: which record, and when it was due. */
    private final class ScheduledSend extends LoadProducer.Completion
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
        void onCompletion(final int partition, final long offset, final String errorCode, final String message)
        {
            final long now = System.nanoTime();
            if (null == errorCode)
            {
                if (offset >= 0)
                {
                    offsets[sequence] = offset;
                    partitionOf[sequence] = partition;
                }
                if (due >= windowStart)
                {
                    latency.recordValue(Math.max(0, now - due));
                    inWindow.increment();
                }
            }
            else
            {
                errors.add(errorCode, message);
            }
            pending = false;
        }
    }
}
