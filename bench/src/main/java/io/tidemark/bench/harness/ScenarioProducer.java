package io.tidemark.bench.harness;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.BufferUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.locks.LockSupport;

/**
 * One producer thread of a {@link ScenarioRunner} run: its partitions (round robin), its request encoded once (each
 * send writes only the correlation id and record index into the values), and its pacing: closed loop (at most
 * {@code maxInFlight} outstanding) or open loop (a fixed schedule; a request is timed from when it was due). It
 * writes its own slot of the {@link RunCounters}.
 */
final class ScenarioProducer
{
    private final RunCounters counters;
    private final Scenario s;
    private final ReplicationCluster cluster;
    private final int session;
    private final TopicPartition[] tps;
    private final int thread;
    private final int[] partitions;
    private final long[] sendTimes;
    private final UnsafeBuffer value;
    private final UnsafeBuffer run;
    private final int runLength;
    private final int[] valueAt;

    /**
     * @param counters   the run's counters.
     * @param cluster    the cluster produced to.
     * @param session    the run's producer session.
     * @param tps        the topic's partitions.
     * @param thread     this producer's slot in the counters.
     * @param partitions the partitions it sends to, by index into {@code tps}.
     */
    ScenarioProducer(final RunCounters counters, final ReplicationCluster cluster, final int session,
        final TopicPartition[] tps, final int thread, final int[] partitions)
    {
        this.counters = counters;
        this.s = counters.s;
        this.cluster = cluster;
        this.session = session;
        this.tps = tps;
        this.thread = thread;
        this.partitions = partitions;
        this.sendTimes = counters.times[thread];
        this.value = ScenarioRunner.filled(s.messageSize());
        final int recordLength = RecordEncoder.encodedLength(-1, s.messageSize(), 0);
        this.runLength = recordLength * s.batchRecords();
        this.run = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            org.agrona.BitUtil.align(Math.max(runLength, 64), 64), 64));
        this.valueAt = new int[s.batchRecords()];
        int at = 0;
        for (int i = 0; i < s.batchRecords(); i++)
        {
            RecordEncoder.encode(run, at, i, BatchClaim.NOW, null, 0, 0, value, 0, s.messageSize(), null, 0, 0);
            valueAt[i] = at + RecordDescriptor.HEADER_LENGTH;
            at += recordLength;
        }
    }

    /** Send until the run's {@code stop}; a refusal other than back-pressure or no leader fails the thread. */
    void run()
    {
        final long[] sent = counters.sent;
        final long[] queued = counters.queued;
        final boolean acked = s.acknowledged();
        final long base = (long)thread << ScenarioRunner.SEQUENCE_BITS;
        final boolean open = s.load() == Scenario.Load.OPEN;
        final boolean parks = s.producerParks();
        final long period = open ?
            Math.max(1, Math.round(1e9 * s.batchRecords() * s.producerThreads() / s.rate())) : 0;
        long due = counters.startAt + (open ? period * thread / s.producerThreads() : 0);
        long seq = 0;
        int next = 0;
        // A full window: spin, then yield, then park briefly, so that a waiting producer does not take
        // CPU from the agents when the machine has fewer free cores than spinning threads.
        final BackoffIdleStrategy windowIdle = new BackoffIdleStrategy(100, 10, 1_000, 50_000);
        ScenarioRunner.parkUntil(counters.startAt);
        while (!counters.stop)
        {
            if (acked && sent[thread] - counters.completed(thread) >=
                (open ? ScenarioRunner.TIMES_RING : s.maxInFlight()))
            {
                windowIdle.idle();
                continue;
            }
            windowIdle.reset();
            if (open)
            {
                for (long now = System.nanoTime(); now < due; now = System.nanoTime())
                {
                    if (counters.stop)
                    {
                        return;
                    }
                    if (parks)
                    {
                        LockSupport.parkNanos(due - now);
                    }
                    else
                    {
                        Thread.onSpinWait();
                    }
                }
            }
            final long correlationId = base | seq;
            final int p = partitions[next];
            sendTimes[(int)(seq & RunCounters.TIMES_MASK)] = open ? due : System.nanoTime();
            final ReplicationError outcome = send(p, correlationId, s.acks());
            if (outcome == ReplicationError.NONE)
            {
                seq++;
                sent[thread]++;
                queued[thread] += s.batchRecords();
                due += period;
            }
            else if (outcome != ReplicationError.BACK_PRESSURED &&
                outcome != ReplicationError.LEADER_NOT_AVAILABLE)
            {
                throw new IllegalStateException("produce to " + tps[p] + " refused: " + outcome);
            }
            else
            {
                Thread.onSpinWait(); // retried (open loop: still measured from the due time)
                if (!open)
                {
                    next = (next + 1) % partitions.length; // a full queue: try the next partition
                }
                continue;
            }
            next = (next + 1) % partitions.length;
        }
    }

    /** Queue one request to partition {@code p}. @return the leader's immediate answer. */
    ReplicationError send(final int p, final long correlationId, final int acks)
    {
        if (s.batchRecords() == 1)
        {
            value.putLong(0, correlationId);
            value.putInt(8, 0);
            return cluster.produce(session, tps[p], correlationId, acks, ScenarioRunner.REQUEST_TIMEOUT_MS, null, 0,
                -1, value, 0, s.messageSize());
        }
        for (int i = 0; i < valueAt.length; i++)
        {
            run.putLong(valueAt[i], correlationId);
            run.putInt(valueAt[i] + 8, i);
        }
        return cluster.produceRecords(session, tps[p], correlationId, acks, ScenarioRunner.REQUEST_TIMEOUT_MS, run, 0,
            runLength);
    }
}
