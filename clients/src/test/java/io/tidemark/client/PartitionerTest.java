package io.tidemark.client;

import io.tidemark.replication.TopicPartition;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where records go: an explicit partition; the key's murmur2 hash (Kafka's, so keys land where Kafka puts them);
 * keyless records sticky (one partition until its batch is full) or round-robin, both avoiding a partition without
 * a leader.
 */
class PartitionerTest
{
    @TempDir
    Path root;

    @Test
    void murmur2IsKafkasHash()
    {
        // the vectors of Kafka's UtilsTest.testMurmur2
        final Map<String, Integer> cases = Map.of("21", -973932308, "foobar", -790332482,
            "a-little-bit-long-string", -985981536, "a-little-bit-longer-string", -1486304829,
            "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971, "abc", 479470107);
        cases.forEach((key, hash) ->
        {
            final byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[bytes.length + 3]);
            buffer.putBytes(3, bytes);
            assertEquals(hash, Murmur2.hash(buffer, 3, bytes.length), key);
        });
    }

    private static List<Integer> partitionsOf(final Deterministic d, final Producer producer,
        final ProducerRecord record, final int count)
    {
        final Integer[] partitions = new Integer[count];
        for (int i = 0; i < count; i++)
        {
            final int index = i;
            producer.sendAsync(record.value("v" + i), (tp, offset, error) -> partitions[index] = tp.partition());
        }
        producer.flush();
        d.settle();
        return new ArrayList<>(List.of(partitions)); // in send order
    }

    @Test
    void keysHashExplicitPartitionsWinAndKeylessRecordsStickOrRotate()
    {
        try (Deterministic d = new Deterministic(root, 2, Deterministic.ctx()))
        {
            d.topic("t", 4, 2);
            final Producer sticky = d.producer(new ProducerContext().batchSize(200).lingerMs(60_000));
            final ProducerRecord record = new ProducerRecord().topic("t");

            final List<Integer> keyed = partitionsOf(d, sticky, record.key("order-42"), 20);
            assertEquals(1, new HashSet<>(keyed).size(), "one key, one partition: " + keyed);
            final byte[] key = "order-42".getBytes(StandardCharsets.UTF_8);
            assertEquals(Murmur2.partition(new UnsafeBuffer(key), 0, key.length, 4), keyed.get(0));

            assertEquals(List.of(3, 3, 3), partitionsOf(d, sticky, record.clear().partition(3), 3), "explicit");

            final List<Integer> keyless = partitionsOf(d, sticky, record.clear(), 40);
            int switches = 0;
            for (int i = 1; i < keyless.size(); i++)
            {
                switches += keyless.get(i).equals(keyless.get(i - 1)) ? 0 : 1;
            }
            assertTrue(switches >= 3 && switches <= 10, "sticky: runs of a batch each, then the next partition: " +
                keyless);
            assertEquals(4, new HashSet<>(keyless).size(), "spread over every partition: " + keyless);

            final Producer roundRobin = d.producer(new ProducerContext()
                .partitioner(ProducerContext.Partitioner.ROUND_ROBIN));
            final List<Integer> rotated = partitionsOf(d, roundRobin, record.clear(), 8);
            assertEquals(rotated.subList(0, 4), rotated.subList(4, 8), "round-robin: each partition in turn: " + rotated);
            assertEquals(4, new HashSet<>(rotated.subList(0, 4)).size(), rotated.toString());
        }
    }

    @Test
    void keylessRecordsAvoidAPartitionWithoutALeader()
    {
        try (Deterministic d = new Deterministic(root, 2, Deterministic.ctx()))
        {
            d.cluster.createTopic("t", 4, 1); // replication factor 1: a dead host leaves its partitions leaderless
            d.cluster.awaitLeaders("t", 60_000);
            d.settle();
            d.cluster.killHost(0);
            d.advance(1000);
            final Set<Integer> leaderless = new HashSet<>();
            for (int p = 0; p < 4; p++)
            {
                if (d.leader(new TopicPartition("t", p)) < 0)
                {
                    leaderless.add(p);
                }
            }
            assertFalse(leaderless.isEmpty());
            final ProducerRecord record = new ProducerRecord().topic("t");
            for (final ProducerContext.Partitioner partitioner : ProducerContext.Partitioner.values())
            {
                final Producer producer = d.producer(new ProducerContext().partitioner(partitioner).batchSize(64));
                final List<Integer> partitions = partitionsOf(d, producer, record.clear(), 12);
                for (final int p : partitions)
                {
                    assertFalse(leaderless.contains(p), partitioner + " chose leaderless partition " + p);
                }
            }
        }
    }
}
