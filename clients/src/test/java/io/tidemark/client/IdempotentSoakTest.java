package io.tidemark.client;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Real threads: several senders share one idempotent producer while requests and answers are dropped at random and
 * partition leaders are killed and restarted. Afterwards every acknowledged record is in its partition exactly
 * once, at the offset its callback reported, and each sender's records of one key are in send order (the
 * consistency check of Redpanda's and Jepsen's tests: re-read the log and compare with the client's history).
 */
class IdempotentSoakTest
{
    private static final int THREADS = 3;
    private static final int KEYS = 4;

    @TempDir
    Path root;

    /** Drops about 2% of requests and 2% of answers. */
    private static final class RandomDrops implements ProduceFaults
    {
        private final Random random = new Random(42);
        final AtomicLong requests = new AtomicLong();
        final AtomicLong answers = new AtomicLong();

        @Override
        public boolean dropRequest(final TopicPartition tp, final long correlationId, final int attempt,
            final int sequence)
        {
            final boolean drop;
            synchronized (random)
            {
                drop = random.nextInt(50) == 0;
            }
            if (drop)
            {
                requests.incrementAndGet();
            }
            return drop;
        }

        @Override
        public boolean dropResponse(final TopicPartition tp, final long correlationId, final ReplicationError error)
        {
            final boolean drop;
            synchronized (random)
            {
                drop = random.nextInt(50) == 0;
            }
            if (drop)
            {
                answers.incrementAndGet();
            }
            return drop;
        }
    }

    @Test
    void everyAcknowledgedRecordOnceAtItsOffsetInSendOrderUnderDropsAndLeaderKills() throws Exception
    {
        final boolean longRun = Boolean.getBoolean("tidemark.long");
        final int perThread = longRun ? 20_000 : 1_500;
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2)))
        {
            cluster.createTopic("soak", 3, 3);
            assertTrue(cluster.awaitLeaders("soak", 60_000));
            final RandomDrops faults = new RandomDrops();
            final Outcomes outcomes = new Outcomes();
            final List<Throwable> errors = new java.util.concurrent.CopyOnWriteArrayList<>();
            final Producer producer = new Producer(
                new FaultInjectingConnection(ClusterConnection.of(cluster), faults), new ProducerContext()
                .requestTimeoutMs(300).retryBackoffMs(20).lingerMs(1).batchSize(1024).errorHandler(errors::add));
            final List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < THREADS; t++)
            {
                final int id = t;
                final Thread sender = new Thread(() ->
                {
                    final ProducerRecord record = new ProducerRecord().topic("soak");
                    for (int i = 0; i < perThread; i++)
                    {
                        final String value = id + ":" + (i % KEYS) + ":" + i;
                        producer.sendAsync(record.key("key-" + id + "-" + (i % KEYS)).value(value),
                            outcomes.callback(value));
                        if (i % 100 == 0)
                        {
                            Thread.yield();
                        }
                    }
                }, "sender-" + t);
                sender.start();
                senders.add(sender);
            }
            final Random random = new Random(7);
            for (int kill = 0; kill < (longRun ? 10 : 2); kill++)
            {
                final long target = (long)(kill + 1) * THREADS * perThread / 4;
                assertTrue(cluster.await(() -> outcomes.size() >= target, 60_000), "progress before kill " + kill);
                final TopicPartition tp = new TopicPartition("soak", random.nextInt(3));
                final int victim = cluster.leaderOf(tp);
                if (victim >= 0)
                {
                    cluster.killHost(victim);
                    assertTrue(cluster.await(() -> cluster.leaderOf(tp) >= 0 && cluster.leaderOf(tp) != victim,
                        10_000));
                    cluster.restartHost(victim);
                }
            }
            for (final Thread sender : senders)
            {
                sender.join();
            }
            producer.flush();
            producer.close();

            assertEquals(THREADS * perThread, outcomes.size());
            final java.util.Set<String> reasons = new java.util.TreeSet<>();
            outcomes.failed().forEach((v) -> reasons.add(outcomes.get(v).error().getMessage()));
            assertEquals(List.of(), outcomes.failed(), "with retries and a long delivery timeout, all succeed: " +
                reasons);
            assertTrue(faults.requests.get() > 0 && faults.answers.get() > 0, "faults were injected");
            for (int p = 0; p < 3; p++)
            {
                checkPartition(cluster, new TopicPartition("soak", p), outcomes);
            }
            assertTrue(errors.isEmpty(), errors.toString());
        }
    }

    private static void checkPartition(final ReplicationCluster cluster, final TopicPartition tp,
        final Outcomes outcomes)
    {
        final List<String> acknowledged = new ArrayList<>();
        outcomes.byValue.forEach((value, outcome) ->
        {
            if (outcome.partition().equals(tp))
            {
                acknowledged.add(value);
            }
        });
        Logs.awaitHighWatermark(cluster, tp, acknowledged.size());
        final Map<String, Long> seen = new HashMap<>();
        final Map<String, Integer> lastIndexPerSenderKey = new HashMap<>();
        try (PartitionReader reader = cluster.openReader(tp))
        {
            reader.seek(0);
            while (reader.poll((r) ->
            {
                final String value = r.valueAsString();
                if (null != seen.put(value, r.offset()))
                {
                    throw new AssertionError(value + " twice in " + tp);
                }
                final String[] parts = value.split(":");
                final Integer last = lastIndexPerSenderKey.put(parts[0] + ":" + parts[1], Integer.parseInt(parts[2]));
                if (null != last && last > Integer.parseInt(parts[2]))
                {
                    throw new AssertionError(value + " after index " + last + " in " + tp + ": reordered");
                }
            }, 1000) > 0)
            {
                // read on
            }
        }
        assertEquals(acknowledged.size(), seen.size(), tp + ": no phantom, nothing lost");
        for (final String value : acknowledged)
        {
            assertEquals(outcomes.get(value).offset(), seen.get(value), value + " at its acknowledged offset");
        }
    }
}
