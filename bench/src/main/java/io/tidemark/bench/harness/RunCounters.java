package io.tidemark.bench.harness;

import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.HdrHistogram.Recorder;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * The counters and flags of one run of a {@link ScenarioRunner}, shared by its producer threads
 * ({@link ScenarioProducer}), the produce listener (this class: {@link #onComplete}, on the leaders' agent threads)
 * and the main thread: send times per producer thread, requests sent and answered, acknowledgements per partition
 * ({@link AckLog}), the latency {@link Recorder}, errors, the measurement window and the leader kill.
 * <p>
 * Each producer thread writes only its own slot of {@link #sent}, {@link #queued} and {@link #times}; answers are
 * counted in {@link #completed}, {@value #PAD} longs apart per thread so that two threads' counters never share a
 * cache line.
 */
final class RunCounters implements ProduceListener
{
    /** Longs between two producer threads' counters in {@link #completed} (no false sharing). */
    static final int PAD = 16;
    static final int TIMES_MASK = ScenarioRunner.TIMES_RING - 1;

    final Scenario s;
    /** Per thread: when each request outstanding was sent (closed loop) or due (open loop), by sequence. */
    final long[][] times;
    final AtomicLongArray completed;
    final long[] sent;
    final long[] queued;
    final AckLog[] acks;
    final Recorder latency = new Recorder(3);
    final LongAdder windowAcked = new LongAdder();
    final LongAdder ackedRecords = new LongAdder();
    final AtomicLongArray errors = new AtomicLongArray(ReplicationError.values().length);
    final LongAdder agentErrors = new LongAdder();
    final AtomicReference<Throwable> firstAgentError = new AtomicReference<>();
    final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
    final LongAdder ackedAfterKill = new LongAdder();
    private final boolean killing;
    volatile long windowStart = Long.MAX_VALUE;
    volatile long windowEnd = Long.MAX_VALUE;
    volatile long startAt;
    volatile boolean stop;
    volatile long killNanos;
    volatile long lastAckBeforeKill;
    volatile long firstAckAfterKill;

    /**
     * @param s       the scenario.
     * @param killing whether the run kills a leader (then acknowledgements before and after it are told apart).
     */
    RunCounters(final Scenario s, final boolean killing)
    {
        this.s = s;
        this.killing = killing;
        final int threads = s.producerThreads() + 1; // the last slot sends the settling requests
        this.times = new long[threads][ScenarioRunner.TIMES_RING];
        this.completed = new AtomicLongArray(threads * PAD);
        this.sent = new long[threads];
        this.queued = new long[threads];
        this.acks = new AckLog[s.partitions()];
        for (int p = 0; p < acks.length; p++)
        {
            acks[p] = new AckLog();
        }
    }

    /** @return requests of producer thread {@code thread} answered so far. */
    long completed(final int thread)
    {
        return completed.get(thread * PAD);
    }

    @Override
    public void onComplete(final TopicPartition partition, final long correlationId, final long baseOffset,
        final ReplicationError error)
    {
        final long now = System.nanoTime();
        final int thread = (int)(correlationId >>> ScenarioRunner.SEQUENCE_BITS);
        final long seq = correlationId & ScenarioRunner.SEQUENCE_MASK;
        if (error == ReplicationError.NONE)
        {
            final int count = s.batchRecords();
            acks[partition.partition()].add(baseOffset, correlationId, count);
            ackedRecords.add(count);
            final long sentAt = times[thread][(int)(seq & TIMES_MASK)];
            if (sentAt >= windowStart && sentAt < windowEnd)
            {
                latency.recordValue(Math.max(0, now - sentAt));
            }
            if (now >= windowStart && now < windowEnd)
            {
                windowAcked.add(count);
            }
            if (killing)
            {
                final long kill = killNanos;
                if (kill != 0 && now > kill)
                {
                    if (firstAckAfterKill == 0)
                    {
                        firstAckAfterKill = now;
                    }
                    ackedAfterKill.add(count);
                }
                else
                {
                    lastAckBeforeKill = now;
                }
            }
        }
        else
        {
            errors.incrementAndGet(error.ordinal());
        }
        completed.incrementAndGet(thread * PAD);
    }

    /** The replication agents' error handler. */
    void onAgentError(final Throwable t)
    {
        agentErrors.increment();
        firstAgentError.compareAndSet(null, t);
    }

    /**
     * Wait until every request sent was answered, or no answer came for {@code stallNanos} (a killed leader's queue).
     *
     * @return requests never answered.
     */
    long drain(final long stallNanos)
    {
        if (!s.acknowledged())
        {
            return 0;
        }
        long lastProgress = System.nanoTime();
        long lastCompleted = -1;
        while (true)
        {
            long outstanding = 0;
            long done = 0;
            for (int t = 0; t < sent.length; t++)
            {
                final long c = completed(t);
                outstanding += sent[t] - c;
                done += c;
            }
            if (outstanding == 0)
            {
                return 0;
            }
            final long now = System.nanoTime();
            if (done != lastCompleted)
            {
                lastCompleted = done;
                lastProgress = now;
            }
            else if (now - lastProgress > stallNanos)
            {
                return outstanding;
            }
            LockSupport.parkNanos(1_000_000);
        }
    }

    /** @return produce errors so far, of every kind. */
    long sumErrors()
    {
        long n = 0;
        for (int i = 0; i < errors.length(); i++)
        {
            n += errors.get(i);
        }
        return n;
    }
}
