package io.tidemark.replication;

import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The same pipeline on real threads, in every threading mode. */
class ThreadedClusterTest
{
    @TempDir
    Path root;

    @ParameterizedTest
    @EnumSource(value = ReplicationContext.ThreadingMode.class, names = { "DEDICATED", "PER_HOST", "SHARED" })
    @Timeout(300) // a liveness guard, not a speed assertion
    void acksAllRecordsAreCommittedOnEveryReplica(final ReplicationContext.ThreadingMode mode)
    {
        final ConcurrentMap<Long, ReplicationError> outcomes = new ConcurrentHashMap<>();
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .threadingMode(mode)
            // threading, not failover, is under test: sessions and lag that a loaded machine's starved threads
            // do not run out (with 600 ms a busy 2-core machine moved leaderships mid-test)
            .hostSessionTimeoutMs(30_000)
            .replicaLagTimeMaxMs(30_000)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1 << 20).maxMessageBytes(64 * 1024))))
        {
            cluster.createTopic("t", 2, 3);
            assertTrue(cluster.awaitLeaders("t", 120_000)); // a liveness guard: SHARED mode at load 80 took > 10 s
            final ConcurrentMap<Long, Boolean> retry = new ConcurrentHashMap<>();
            final int session = cluster.sessions().register((tp, id, offset, error) ->
            {
                if (error == ReplicationError.NOT_LEADER)
                {
                    retry.put(id, Boolean.TRUE); // a leader change (a starved heartbeat on a loaded machine): resend
                }
                else
                {
                    outcomes.put(id, error);
                }
            });
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            final int n = 2000;
            for (long i = 0; i < n; i++)
            {
                final TopicPartition tp = new TopicPartition("t", (int)(i % 2));
                ReplicationError queued;
                while ((queued = cluster.produce(session, tp, i, Acks.ALL, 10_000, null, 0, -1, value, 0, 100)) ==
                    ReplicationError.BACK_PRESSURED)
                {
                    Thread.onSpinWait();
                }
                assertEquals(ReplicationError.NONE, queued);
            }
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (outcomes.size() < n && System.nanoTime() < deadline)
            {
                for (final Long id : retry.keySet())
                {
                    retry.remove(id);
                    final TopicPartition tp = new TopicPartition("t", (int)(id % 2));
                    if (cluster.produce(session, tp, id, Acks.ALL, 10_000, null, 0, -1, value, 0, 100) !=
                        ReplicationError.NONE)
                    {
                        retry.put(id, Boolean.TRUE);
                    }
                }
                Thread.onSpinWait();
            }
            assertEquals(n, outcomes.size(), "acknowledged");
            final long failed = outcomes.values().stream().filter((e) -> e != ReplicationError.NONE).count();
            assertEquals(0, failed, "failed: " + failed + " first: " + outcomes.entrySet().stream()
                .filter((e) -> e.getValue() != ReplicationError.NONE).limit(3).toList() + " states " +
                cluster.partitions("t") + " replicas " + java.util.Arrays.toString(new Object[]{
                cluster.host(0), cluster.host(1), cluster.host(2)}));
            for (int p = 0; p < 2; p++)
            {
                final TopicPartition tp = new TopicPartition("t", p);
                final List<String> leaderValues = Harness.values(cluster.leaderReplica(tp));
                assertEquals(n / 2, leaderValues.size());
                for (int host = 0; host < 3; host++)
                {
                    final int h = host;
                    assertTrue(cluster.await(() -> null != cluster.replica(h, tp) &&
                        cluster.replica(h, tp).log.logEndOffset() == n / 2, 60_000));
                    assertEquals(leaderValues, Harness.values(cluster.replica(host, tp)));
                }
            }
        }
    }
}
