package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.RemoteReader;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
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
            // three partitions, led by hosts 0, 1 and 2: one leader is also the controller, the others are not
            cluster.createTopicInSync(TOPIC, 3);
            final int controller = cluster.controllerHost();
            final int plainPartition = cluster.partitionLedBy(TOPIC, (leader) -> leader != controller);
            final int controllerPartition = cluster.partitionLedBy(TOPIC, (leader) -> leader == controller);

            final Map<Integer, Map<Long, String>> acked = new HashMap<>();
            acked.put(plainPartition, killLeaderUnderLoad(cluster, plainPartition, "leader"));
            acked.put(controllerPartition, killLeaderUnderLoad(cluster, controllerPartition,
                "leader that was also the controller"));

            for (final int partition : acked.keySet())
            {
                final Map<Long, String> read = new HashMap<>();
                try (RemoteReader reader = client.openReader(TOPIC, partition))
                {
                    final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (read.size() < acked.get(partition).size() && System.nanoTime() < deadline)
                    {
                        reader.poll((r) -> read.put(r.offset(), r.valueAsString()), 1_000);
                    }
                }
                ClusterChecker.assertAckedPresentOnce(acked.get(partition), read, "read from the new leader");
            }
            final Map<Integer, Long> highWatermarks = new HashMap<>();
            final Map<Integer, PartitionState> states = new HashMap<>();
            for (final int partition : acked.keySet())
            {
                highWatermarks.put(partition, ClusterChecker.highWatermark(client, TOPIC, partition));
                states.put(partition, cluster.state(TOPIC, partition));
            }
            for (int id = 0; id < 3; id++)
            {
                cluster.stop(id);
            }
            for (final int partition : acked.keySet())
            {
                ClusterChecker.checkReplicas(cluster, TOPIC, partition, states.get(partition),
                    highWatermarks.get(partition), acked.get(partition));
            }
        }
    }

    /**
     * Produce to a partition with an idempotent acks=all producer, SIGKILL its leader's process halfway, go on
     * producing, restart the killed host and wait until it is back in the ISR.
     *
     * @return the acknowledged records by offset.
     */
    private static Map<Long, String> killLeaderUnderLoad(final ProcessCluster cluster, final int partition,
        final String what) throws Exception
    {
        final Map<Long, String> acked = new ConcurrentHashMap<>();
        final List<Long> ackTimes = new ArrayList<>();
        final int oldLeader = cluster.state(TOPIC, partition).leader();
        final long killedAtNs;
        try (Producer producer = new Producer(cluster.client(), new ProducerContext()
            .acks(Acks.ALL)
            .enableIdempotence(true)
            .requestTimeoutMs(2_000)
            .deliveryTimeoutMs(60_000)))
        {
            final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(partition);
            for (int i = 0; i < 300; i++)
            {
                final String value = "p" + partition + "-before-" + i;
                acked.put(producer.send(record.value(value)), value);
                ackTimes.add(System.nanoTime());
            }
            killedAtNs = System.nanoTime();
            cluster.kill(oldLeader);
            for (int i = 0; i < 300; i++)
            {
                final String value = "p" + partition + "-after-" + i;
                acked.put(producer.send(record.value(value)), value);
                ackTimes.add(System.nanoTime());
            }
        }
        final PartitionState after = cluster.state(TOPIC, partition);
        assertNotEquals(oldLeader, after.leader(), "leadership moved: " + after);
        assertEquals(600, acked.size(), "every acknowledgement names its own offset");
        long pauseNs = 0;
        for (int i = 1; i < ackTimes.size(); i++)
        {
            if (ackTimes.get(i) > killedAtNs)
            {
                pauseNs = Math.max(pauseNs, ackTimes.get(i) - Math.max(ackTimes.get(i - 1), killedAtNs));
            }
        }
        System.out.println("multi-process failover: acknowledgements paused " +
            TimeUnit.NANOSECONDS.toMillis(pauseNs) + " ms after SIGKILL of the " + what + " (host " + oldLeader +
            "); new leader host " + after.leader() + " epoch " + after.leaderEpoch());

        // the killed host comes back as a new incarnation and rejoins the ISR
        cluster.restart(oldLeader);
        assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, partition).isr().length == 3, 60_000),
            "the restarted host rejoins the ISR: " + cluster.state(TOPIC, partition));
        return acked;
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
