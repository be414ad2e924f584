package io.tidemark.host;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import io.tidemark.replication.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three replica-host processes on loopback with ZooKeeper; an idempotent acks=all producer in this JVM writes while
 * the leader's process is killed with SIGKILL. Every acknowledged record must be there after the failover, exactly
 * once, acknowledgements must resume, and the pause is measured. The checker then re-reads every replica's log.
 */
class LeaderKillTest
{
    private static final String TOPIC = "orders";

    @TempDir
    Path tmp;

    @Test
    void everyAcknowledgedRecordSurvivesKillingTheLeaderProcess() throws Exception
    {
        final Properties replication = new Properties();
        replication.setProperty("min.insync.replicas", "2");
        replication.setProperty("replica.lag.time.max.ms", "1000");
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, replication))
        {
            cluster.start();
            final TidemarkClient client = cluster.client();
            final List<PartitionState> created = client.createTopic(TOPIC, 1, 3, 30_000);
            assertEquals(1, created.size());
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 30_000),
                "all three replicas in sync: " + cluster.state(TOPIC, 0));

            final Map<Long, String> acked = new ConcurrentHashMap<>();
            final List<Long> ackTimes = new ArrayList<>();
            final int oldLeader;
            final long killedAtNs;
            try (Producer producer = new Producer(client, new ProducerContext()
                .acks(Acks.ALL)
                .enableIdempotence(true)
                .requestTimeoutMs(2_000)
                .deliveryTimeoutMs(60_000)))
            {
                final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                int sent = 0;
                for (; sent < 500; sent++)
                {
                    final String value = "before-" + sent;
                    acked.put(producer.send(record.value(value)), value);
                    ackTimes.add(System.nanoTime());
                }
                oldLeader = cluster.state(TOPIC, 0).leader();
                killedAtNs = System.nanoTime();
                cluster.kill(oldLeader);
                for (int i = 0; i < 500; i++)
                {
                    final String value = "after-" + i;
                    acked.put(producer.send(record.value(value)), value);
                    ackTimes.add(System.nanoTime());
                }
            }
            final PartitionState after = cluster.state(TOPIC, 0);
            assertNotEquals(oldLeader, after.leader(), "leadership moved: " + after);
            assertEquals(1000, acked.size(), "every acknowledgement names its own offset");

            long pauseNs = 0;
            for (int i = 1; i < ackTimes.size(); i++)
            {
                if (ackTimes.get(i) > killedAtNs)
                {
                    pauseNs = Math.max(pauseNs, ackTimes.get(i) - Math.max(ackTimes.get(i - 1), killedAtNs));
                }
            }
            System.out.println("multi-process failover: acknowledgements paused " +
                TimeUnit.NANOSECONDS.toMillis(pauseNs) + " ms after SIGKILL of the leader process (host " +
                oldLeader + "); new leader host " + after.leader() + " epoch " + after.leaderEpoch());

            // Read back through the new leader: each acknowledged record at its offset, no value twice.
            final Map<Long, String> read = new HashMap<>();
            try (RemoteReader reader = client.openReader(TOPIC, 0))
            {
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (read.size() < acked.size() && System.nanoTime() < deadline)
                {
                    reader.poll((r) -> read.put(r.offset(), r.valueAsString()), 1_000);
                }
            }
            ClusterChecker.assertAckedPresentOnce(acked, read, "read from the new leader");

            // The killed host comes back as a new incarnation and rejoins the ISR.
            cluster.restart(oldLeader);
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 60_000),
                "the restarted host rejoins the ISR: " + cluster.state(TOPIC, 0));
            final long highWatermark = ClusterChecker.highWatermark(client, TOPIC, 0);
            final PartitionState finalState = cluster.state(TOPIC, 0);

            for (int id = 0; id < 3; id++)
            {
                cluster.stop(id);
            }
            ClusterChecker.checkReplicas(cluster, TOPIC, 0, finalState, highWatermark, acked);
        }
    }

    /** Values that occur more than once in a map of records. */
    static Set<String> duplicates(final Map<Long, String> records)
    {
        final Set<String> seen = new HashSet<>();
        final Set<String> twice = new HashSet<>();
        for (final String value : records.values())
        {
            if (!seen.add(value))
            {
                twice.add(value);
            }
        }
        return twice;
    }
}
