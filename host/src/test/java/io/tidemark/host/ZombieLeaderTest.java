package io.tidemark.host;

import io.tidemark.client.remote.FaultDrills;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationError;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A zombie leader: the leader's ZooKeeper session is expired while its process lives on, and it hears nothing from
 * the controller (its control channel is cut), so it still believes it leads. Once the new leader's epoch is
 * committed in ZooKeeper, acks=all writes sent straight to the zombie must never be acknowledged; after it hears
 * again it steps down, drops what it wrote alone, and rejoins. Every acknowledged record survives.
 */
class ZombieLeaderTest
{
    private static final String TOPIC = "payments";

    @TempDir
    Path tmp;

    @Test
    void aZombieLeaderAcknowledgesNothingAfterTheNewEpochIsCommitted() throws Exception
    {
        final Properties replication = new Properties();
        replication.setProperty("min.insync.replicas", "2");
        replication.setProperty("replica.lag.time.max.ms", "1000");
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, replication))
        {
            cluster.start();
            cluster.createTopicInSync(TOPIC, 1);
            final TidemarkClient client = cluster.client();
            final Map<Long, String> acked = new ConcurrentHashMap<>();
            final ProducerContext producerContext = new ProducerContext().acks(Acks.ALL).enableIdempotence(true)
                .requestTimeoutMs(2_000).deliveryTimeoutMs(60_000);
            final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
            try (Producer producer = new Producer(client, producerContext))
            {
                for (int i = 0; i < 200; i++)
                {
                    acked.put(producer.send(record.value("before-" + i)), "before-" + i);
                }
            }

            final PartitionState before = cluster.state(TOPIC, 0);
            final int zombie = before.leader();
            cluster.host(zombie).command("zombie");
            assertTrue(ProcessCluster.await(() ->
            {
                final PartitionState now = cluster.state(TOPIC, 0);
                return now.leader() != zombie && now.leader() != PartitionState.NO_LEADER &&
                    now.leaderEpoch() > before.leaderEpoch();
            }, 30_000), "a new leader's epoch is committed: " + cluster.state(TOPIC, 0));
            final PartitionState elected = cluster.state(TOPIC, 0);

            // acks=all writes straight to the zombie, after the new epoch is in ZooKeeper
            final ConcurrentLinkedQueue<ReplicationError> outcomes = new ConcurrentLinkedQueue<>();
            final ConcurrentLinkedQueue<Long> ackedByZombie = new ConcurrentLinkedQueue<>();
            final int session = client.register((tp, correlationId, baseOffset, error) ->
            {
                outcomes.add(error);
                if (error == ReplicationError.NONE)
                {
                    ackedByZombie.add(baseOffset);
                }
            });
            final UnsafeBuffer records = new UnsafeBuffer(new byte[256]);
            int accepted = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
            for (int i = 0; System.nanoTime() < deadline; i++)
            {
                final byte[] value = ("zombie-" + i).getBytes(StandardCharsets.UTF_8);
                final int length = RecordEncoder.encode(records, 0, 0, System.currentTimeMillis(), null, 0, 0,
                    new UnsafeBuffer(value), 0, value.length, null, 0, 0);
                if (FaultDrills.sendTo(client, zombie, session, before.partitionId(), i, Acks.ALL, 1_500, records,
                    length) ==
                    ReplicationError.NONE)
                {
                    accepted++;
                }
                Thread.sleep(20);
            }
            Thread.sleep(2_000); // every request's timeout has passed
            System.out.println("zombie leader (host " + zombie + ", epoch " + before.leaderEpoch() + ") after epoch " +
                elected.leaderEpoch() + " of host " + elected.leader() + " was committed: requests sent=" + accepted +
                " outcomes=" + outcomes.size() + " acknowledged=" + ackedByZombie.size() + " " +
                outcomes.stream().collect(java.util.stream.Collectors.groupingBy((e) -> e,
                java.util.stream.Collectors.counting())));
            assertTrue(accepted > 0, "requests reached the zombie");
            assertTrue(ackedByZombie.isEmpty(), "the zombie acknowledged acks=all writes at offsets " +
                ackedByZombie);

            // It hears again: steps down, truncates what only it wrote, rejoins; writing goes on.
            cluster.host(zombie).command("unzombie");
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 30_000),
                "the former zombie rejoins the ISR: " + cluster.state(TOPIC, 0));
            try (Producer producer = new Producer(client, producerContext))
            {
                for (int i = 0; i < 200; i++)
                {
                    acked.put(producer.send(record.value("after-" + i)), "after-" + i);
                }
            }
            assertNotEquals(zombie, cluster.state(TOPIC, 0).leader());
            final long highWatermark = ClusterChecker.stopAllAndCheckReplicas(cluster, TOPIC, 0, acked);
            for (int id = 0; id < 3; id++)
            {
                final Map<Long, String> replica = cluster.readReplica(id, TOPIC, 0);
                for (long offset = 0; offset < highWatermark; offset++)
                {
                    assertFalse(String.valueOf(replica.get(offset)).startsWith("zombie-"), "host " + id +
                        " holds the zombie's unacknowledged write at committed offset " + offset);
                }
            }
            assertEquals(400, acked.size());
        }
    }
}
