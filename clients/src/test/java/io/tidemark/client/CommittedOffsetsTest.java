package io.tidemark.client;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consumer groups' committed offsets: stored durably (one checkpoint file per group and partition), resumed by a new
 * consumer of the group across consumer restarts, leader changes and a restart of the whole cluster;
 * auto.offset.reset when nothing is committed or the committed offset is out of range.
 */
class CommittedOffsetsTest
{
    @TempDir
    Path root;

    private static List<String> readUpTo(final Consumer consumer, final int count)
    {
        final List<String> out = new ArrayList<>();
        while (out.size() < count)
        {
            consumer.poll((tp, r) -> out.add(r.valueAsString()), 10_000);
        }
        return out;
    }

    private static List<String> values(final int from, final int to)
    {
        final List<String> out = new ArrayList<>();
        for (int i = from; i < to; i++)
        {
            out.add("m" + i);
        }
        return out;
    }

    private static void produce(final ReplicationCluster cluster, final int from, final int to)
    {
        try (Producer producer = new Producer(cluster, new ProducerContext()))
        {
            final ProducerRecord record = new ProducerRecord().topic("orders");
            for (int i = from; i < to; i++)
            {
                producer.sendAsync(record.value("m" + i), (tp, offset, error) ->
                {
                    if (null != error)
                    {
                        throw error;
                    }
                });
            }
            producer.flush();
        }
    }

    @Test
    void aNewConsumerOfTheGroupResumesFromTheCommittedOffsetAcrossRestartsLeaderChangesAndAClusterRestart()
    {
        final TopicPartition tp = new TopicPartition("orders", 0);
        final ConsumerContext group = new ConsumerContext().groupId("billing")
            .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST).maxPollRecords(30);
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2)))
        {
            cluster.createTopic("orders", 1, 3);
            cluster.awaitLeaders("orders", 60_000);
            produce(cluster, 0, 100);
            try (Consumer first = new Consumer(cluster, group))
            {
                first.assign(List.of(tp));
                assertEquals(values(0, 30), readUpTo(first, 30));
                first.commitSync();
                assertEquals(30, first.committed(tp));
            }
            final int leader = cluster.leaderOf(tp);
            cluster.killHost(leader);
            assertTrue(cluster.await(() -> cluster.leaderOf(tp) >= 0 && cluster.leaderOf(tp) != leader, 60_000));
            produce(cluster, 100, 150);
            try (Consumer second = new Consumer(cluster, new ConsumerContext().groupId("billing")))
            {
                second.assign(List.of(tp));
                assertEquals(30, second.position(tp), "resumed from the committed offset, on the new leader");
                assertEquals(values(30, 150), readUpTo(second, 120), "nothing skipped, nothing twice");
                second.commitSync();
            }
            cluster.restartHost(leader);
        }
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2)))
        {
            assertTrue(cluster.awaitLeaders("orders", 60_000));
            try (Consumer third = new Consumer(cluster, new ConsumerContext().groupId("billing")))
            {
                third.assign(List.of(tp));
                assertEquals(150, third.committed(tp), "durable across a restart of the whole cluster");
                produce(cluster, 150, 151);
                assertEquals(List.of("m150"), readUpTo(third, 1));
            }
            try (Consumer other = new Consumer(cluster, new ConsumerContext().groupId("audit")
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                other.assign(List.of(tp));
                assertEquals(-1, other.committed(tp), "groups are independent");
                assertEquals(0, other.position(tp));
            }
        }
        assertTrue(Files.exists(root.resolve("consumer-offsets").resolve("billing").resolve("orders-0.offset")),
            "the default offsets.dir is beside the hosts' directories");
    }

    @Test
    void asyncCommitsAreStoredInOrderAndCallBackOnTheConsumersThread()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("orders", 1, 1);
            final Producer producer = d.producer(new ProducerContext());
            for (int i = 0; i < 10; i++)
            {
                producer.send(new ProducerRecord().topic("orders").value("m" + i));
            }
            final List<Map<TopicPartition, Long>> done = new ArrayList<>();
            final List<Thread> threads = new ArrayList<>();
            try (Consumer consumer = new Consumer(d.cluster, new ConsumerContext().groupId("g").maxPollRecords(4)
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                consumer.assign(List.of(tp));
                for (int i = 0; i < 3; i++)
                {
                    consumer.poll((p, r) -> { });
                    consumer.commitAsync((offsets, error) ->
                    {
                        assertNull(error);
                        done.add(offsets);
                        threads.add(Thread.currentThread());
                    });
                }
                consumer.commitSync(Map.of(tp, 7L)); // after the async ones: they are stored first
                assertEquals(List.of(Map.of(tp, 4L), Map.of(tp, 8L), Map.of(tp, 10L)), done);
                assertTrue(threads.stream().allMatch((t) -> t == Thread.currentThread()));
                assertEquals(7, consumer.committed(tp), "the explicit commit came last");
            }
            try (Consumer again = new Consumer(d.cluster, new ConsumerContext().groupId("g")))
            {
                again.assign(List.of(tp));
                assertEquals(7, again.position(tp));
            }
        }
    }

    @Test
    void withoutACommittedOffsetAutoOffsetResetDecides()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("orders", 1, 1);
            final Producer producer = d.producer(new ProducerContext());
            for (int i = 0; i < 5; i++)
            {
                producer.send(new ProducerRecord().topic("orders").value("m" + i));
            }
            final ConsumerContext.AutoOffsetReset[] policies = ConsumerContext.AutoOffsetReset.values();
            final long[] expected = { 0, 5 };
            for (int i = 0; i < 2; i++)
            {
                try (Consumer consumer = new Consumer(d.cluster, new ConsumerContext().groupId("g-" + i)
                    .autoOffsetReset(policies[i])))
                {
                    consumer.assign(List.of(tp));
                    assertEquals(expected[i], consumer.position(tp), policies[i].toString());
                }
            }
            try (Consumer strict = new Consumer(d.cluster, new ConsumerContext().groupId("strict")
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.NONE)))
            {
                strict.assign(List.of(tp));
                final OffsetOutOfRangeException ex = assertThrows(OffsetOutOfRangeException.class,
                    () -> strict.poll((p, r) -> { }));
                assertEquals(OffsetOutOfRangeException.Reason.NO_COMMITTED_OFFSET, ex.reason());
                assertEquals(tp, ex.partition());
                strict.seek(tp, 3);
                assertEquals(2, strict.poll((p, r) -> { }), "a seek gives it a position");
            }
            try (Consumer noGroup = new Consumer(d.cluster, new ConsumerContext()))
            {
                noGroup.assign(List.of(tp));
                assertThrows(IllegalStateException.class, noGroup::commitSync, "committing needs a group.id");
            }
        }
    }

    @Test
    void aCommittedOffsetOutOfRangeOrDamagedIsNeverTrustedSilently() throws Exception
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("orders", 1, 1);
            final Producer producer = d.producer(new ProducerContext());
            for (int i = 0; i < 5; i++)
            {
                producer.send(new ProducerRecord().topic("orders").value("m" + i));
            }
            final Path offsets = root.resolve("offsets");
            try (Consumer committer = new Consumer(d.cluster, new ConsumerContext().groupId("g").offsetsDir(offsets)))
            {
                committer.assign(List.of(tp));
                committer.commitSync(Map.of(tp, 1000L)); // beyond the log end
            }
            try (Consumer strict = new Consumer(d.cluster, new ConsumerContext().groupId("g").offsetsDir(offsets)
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.NONE)))
            {
                strict.assign(List.of(tp));
                final OffsetOutOfRangeException ex = assertThrows(OffsetOutOfRangeException.class,
                    () -> strict.poll((p, r) -> { }));
                assertEquals(OffsetOutOfRangeException.Reason.ABOVE_LOG_END, ex.reason());
                assertEquals(1000, ex.position());
            }
            try (Consumer resetting = new Consumer(d.cluster, new ConsumerContext().groupId("g").offsetsDir(offsets)
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                resetting.assign(List.of(tp));
                final List<String> read = new ArrayList<>();
                resetting.poll((p, r) -> read.add(r.valueAsString()));
                resetting.poll((p, r) -> read.add(r.valueAsString()));
                assertEquals(values(0, 5), read, "reset to the earliest offset, as the policy says");
            }
            final Path file = offsets.resolve("g").resolve("orders-0.offset");
            final byte[] bytes = Files.readAllBytes(file);
            bytes[10] ^= 0x40;
            Files.write(file, bytes);
            try (Consumer strict = new Consumer(d.cluster, new ConsumerContext().groupId("g").offsetsDir(offsets)
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.NONE)))
            {
                strict.assign(List.of(tp));
                assertEquals(-1, strict.committed(tp), "a file failing its CRC is not trusted");
                assertSame(OffsetOutOfRangeException.Reason.NO_COMMITTED_OFFSET,
                    assertThrows(OffsetOutOfRangeException.class, () -> strict.position(tp)).reason());
            }
        }
    }

    @Test
    void aCommittedOffsetDeletedByRetentionIsOutOfRange()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx(), (log) -> log.segmentBytes(1024)
            .maxMessageBytes(512).retentionBytes(2048).retentionCheckIntervalMs(100)))
        {
            final TopicPartition tp = d.topic("orders", 1, 1);
            final Producer producer = d.producer(new ProducerContext().batchSize(64).lingerMs(0));
            final ProducerRecord record = new ProducerRecord().topic("orders");
            producer.send(record.value("m0"));
            try (Consumer committer = new Consumer(d.cluster, new ConsumerContext().groupId("g")))
            {
                committer.assign(List.of(tp));
                committer.commitSync(Map.of(tp, 1L));
            }
            for (int i = 1; i < 200; i++)
            {
                producer.send(record.value("m" + i));
            }
            d.advance(500); // retention deletes the oldest segments
            try (Consumer strict = new Consumer(d.cluster, new ConsumerContext().groupId("g")
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.NONE)))
            {
                strict.assign(List.of(tp));
                final OffsetOutOfRangeException ex = assertThrows(OffsetOutOfRangeException.class,
                    () -> strict.poll((p, r) -> { }));
                assertEquals(OffsetOutOfRangeException.Reason.BELOW_LOG_START, ex.reason());
                assertTrue(!ex.truncation(), "retention is not a truncation");
            }
            try (Consumer earliest = new Consumer(d.cluster, new ConsumerContext().groupId("g")
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                earliest.assign(List.of(tp));
                final List<Long> offsets = new ArrayList<>();
                earliest.poll((p, r) -> offsets.add(r.offset()));
                assertTrue(offsets.get(0) > 1, "reset to the log start " + offsets.get(0));
            }
        }
    }

    @Test
    void theDefaultOffsetsDirNeedsARunningHost()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            d.cluster.killHost(0);
            final ConfigException ex = assertThrows(ConfigException.class,
                () -> new Consumer(d.cluster, new ConsumerContext().groupId("g")));
            assertEquals(ConsumerContext.OFFSETS_DIR, ex.key());
        }
    }
}
