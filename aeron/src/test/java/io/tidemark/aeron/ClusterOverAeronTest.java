package io.tidemark.aeron;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replication protocol, unchanged, over Aeron instead of the in-process rings: a three-host cluster whose
 * fetches travel over Aeron IPC through an embedded media driver. Acknowledged records survive the leader's kill,
 * the killed host comes back into the ISR by fetching over Aeron, and every acknowledged record is read back at the
 * offset its acknowledgement gave.
 */
class ClusterOverAeronTest
{
    private static final String TOPIC = "orders";

    @TempDir
    Path tmp;

    @Test
    void acknowledgedRecordsSurviveTheLeadersKillAndTheKilledHostCatchesUpOverAeron() throws Exception
    {
        final ReplicationContext ctx = new ReplicationContext()
            .minInsyncReplicas(2)
            .threadingMode(ReplicationContext.ThreadingMode.SHARED)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1024 * 1024));
        final Map<Long, String> acked = new HashMap<>();
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron"));
            AeronTransport transport = new AeronTransport(media.aeron(), false, 3, AeronTransport.ipc());
            ReplicationCluster cluster = ReplicationCluster.start(tmp.resolve("data"), 3, ctx, transport);
            Producer producer = new Producer(cluster, new ProducerContext()))
        {
            cluster.createTopic(TOPIC, 1, 3);
            assertTrue(cluster.awaitLeaders(TOPIC, 30_000));
            final TopicPartition tp = new TopicPartition(TOPIC, 0);
            final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);

            for (int i = 0; i < 300; i++)
            {
                final String text = "before-" + i;
                acked.put(producer.send(record.value(text)), text);
            }
            final int oldLeader = cluster.leaderOf(tp);
            cluster.killHost(oldLeader);
            for (int i = 0; i < 300; i++)
            {
                final String text = "after-" + i;
                acked.put(producer.send(record.value(text)), text);
            }
            assertNotEquals(oldLeader, cluster.leaderOf(tp));

            cluster.restartHost(oldLeader);
            assertTrue(cluster.await(() ->
            {
                final PartitionState state = cluster.state(tp);
                return state.isr().length == 3;
            }, 30_000), "the restarted host rejoins the ISR: " + cluster.state(tp));
            for (int i = 0; i < 100; i++)
            {
                final String text = "rejoined-" + i;
                acked.put(producer.send(record.value(text)), text);
            }

            assertEquals(700, acked.size(), "every acknowledgement names its own offset");
            final Map<Long, String> read = new HashMap<>();
            try (PartitionReader reader = cluster.openReader(tp))
            {
                reader.seek(0);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (read.size() < acked.size() && System.nanoTime() < deadline)
                {
                    reader.poll((r) -> read.put(r.offset(), r.valueAsString()), 1_000);
                }
            }
            for (final Map.Entry<Long, String> e : acked.entrySet())
            {
                assertEquals(e.getValue(), read.get(e.getKey()), "record at offset " + e.getKey());
            }
        }
    }

    @Test
    void aFetchSizeTheTransportCannotCarryIsAConfigurationError()
    {
        // 1 MiB terms carry messages of at most 128 KiB; the default fetch of 1 MiB cannot travel.
        final java.util.function.IntFunction<String> smallTerms = (host) -> "aeron:ipc?term-length=1m";
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron"));
            AeronTransport transport = new AeronTransport(media.aeron(), false, 3, smallTerms))
        {
            final io.tidemark.store.ConfigException ex = org.junit.jupiter.api.Assertions.assertThrows(
                io.tidemark.store.ConfigException.class, () -> ReplicationCluster.start(tmp.resolve("data"), 3,
                    new ReplicationContext().threadingMode(ReplicationContext.ThreadingMode.SHARED), transport));
            assertTrue(ex.getMessage().contains("replica.fetch.max.bytes"), ex.getMessage());

            // A fetch size that fits starts, and replicates.
            final ReplicationContext fits = new ReplicationContext()
                .replicaFetchMaxBytes(64 * 1024)
                .minInsyncReplicas(3)
                .threadingMode(ReplicationContext.ThreadingMode.SHARED);
            try (ReplicationCluster cluster = ReplicationCluster.start(tmp.resolve("data2"), 3, fits, transport);
                Producer producer = new Producer(cluster, new ProducerContext()))
            {
                cluster.createTopic(TOPIC, 1, 3);
                assertTrue(cluster.awaitLeaders(TOPIC, 30_000));
                final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                for (int i = 0; i < 50; i++)
                {
                    assertEquals(i, producer.send(record.value(new byte[10_000])));
                }
            }
        }
        catch (final Exception ex)
        {
            throw new AssertionError(ex);
        }
    }
}
