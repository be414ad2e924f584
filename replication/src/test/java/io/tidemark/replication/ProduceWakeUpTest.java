package io.tidemark.replication;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LeaderPartitions#wakeUp()}: a produce request queued while the leader's agent thread is parked in its idle
 * strategy is served at once when the server that queued it wakes the thread, not when the park ends. The agent
 * threads here park for {@value #LONG_PARK_S} s once told to, so an answer within half that shows the wake-up.
 */
class ProduceWakeUpTest
{
    private static final long LONG_PARK_S = 30;

    @TempDir
    Path dir;

    private final Set<Thread> idleThreads = ConcurrentHashMap.newKeySet();
    private final AtomicInteger inLongPark = new AtomicInteger();
    private volatile boolean longParks;

    /** Parks 50 us when idle, or {@value #LONG_PARK_S} s while {@link #longParks}. */
    private final class SwitchableIdleStrategy implements IdleStrategy
    {
        @Override
        public void idle(final int workCount)
        {
            if (workCount <= 0)
            {
                idle();
            }
        }

        @Override
        public void idle()
        {
            idleThreads.add(Thread.currentThread());
            if (longParks)
            {
                inLongPark.incrementAndGet();
                LockSupport.parkNanos(TimeUnit.SECONDS.toNanos(LONG_PARK_S));
                inLongPark.decrementAndGet();
            }
            else
            {
                LockSupport.parkNanos(50_000);
            }
        }

        @Override
        public void reset()
        {
        }
    }

    @Test
    void aQueuedRequestIsServedWhenTheParkedLeaderThreadIsWoken() throws Exception
    {
        final ReplicationContext ctx = new ReplicationContext()
            .minInsyncReplicas(1)
            .threadingMode(ReplicationContext.ThreadingMode.PER_HOST)
            .idleStrategySupplier(SwitchableIdleStrategy::new);
        try (ReplicationCluster cluster = ReplicationCluster.start(dir, 1, ctx))
        {
            cluster.createTopic("t", 1, 1);
            assertTrue(cluster.awaitLeaders("t", 30_000));
            final TopicPartition tp = new TopicPartition("t", 0);
            final LeaderPartitions partitions = cluster.host(cluster.leaderOf(tp)).leaderPartitions();
            final int partitionId = cluster.state(tp).partitionId();
            assertTrue(cluster.await(() -> partitions.isLeading(partitionId), 30_000), "leading");
            final CountDownLatch answered = new CountDownLatch(1);
            final AtomicLong offset = new AtomicLong(-2);
            final int session = cluster.sessions().register((p, correlationId, baseOffset, error) ->
            {
                if (correlationId == 7 && error == ReplicationError.NONE)
                {
                    offset.set(baseOffset);
                    answered.countDown();
                }
            });
            final UnsafeBuffer records = new UnsafeBuffer(new byte[256]);
            final UnsafeBuffer value = new UnsafeBuffer(new byte[10]);
            final int length = RecordEncoder.encode(records, 0, 0, RecordBatchDescriptor.NO_TIMESTAMP, null, 0, -1,
                value, 0, value.capacity(), null, 0, 0);

            longParks = true;
            final int threads = idleThreads.size();
            assertTrue(cluster.await(() -> inLongPark.get() >= threads, 30_000),
                "every agent thread in its long park: " + inLongPark.get() + " of " + threads);
            assertEquals(ReplicationError.NONE, partitions.produce(session, partitionId, 7, Acks.LEADER, 30_000,
                -1, (short)-1, -1, records, 0, length));
            partitions.wakeUp();

            assertTrue(answered.await(LONG_PARK_S / 2, TimeUnit.SECONDS),
                "answered before the leader's park of " + LONG_PARK_S + " s ended");
            assertEquals(0, offset.get());

            longParks = false;
            idleThreads.forEach(LockSupport::unpark);
        }
        finally
        {
            longParks = false;
            idleThreads.forEach(LockSupport::unpark);
        }
    }
}
