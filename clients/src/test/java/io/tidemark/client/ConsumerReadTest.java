package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.BatchClaim;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The consumer's reads: never at or above the high watermark; seek to an offset, the beginning, the end, a timestamp
 * (time index); max.poll.records and partitions taken in turn; a poll that waits for records, on a threaded cluster.
 */
class ConsumerReadTest
{
    @TempDir
    Path root;

    @Test
    void neverDeliversARecordAtOrAboveTheHighWatermark()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final Producer producer = d.producer(new ProducerContext().acks(Acks.LEADER));
            final ProducerRecord record = new ProducerRecord().topic("t");
            producer.send(record.value("committed"));
            d.advance(100);
            final int leader = d.leader(tp);
            for (int host = 0; host < 3; host++)
            {
                if (host != leader)
                {
                    d.cluster.transport().isolate(leader, host);
                }
            }
            assertEquals(1, producer.send(record.value("above-hw")), "acks=1: acknowledged by the leader alone");
            try (Consumer consumer = new Consumer(d.cluster, new ConsumerContext()
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                consumer.assign(List.of(tp));
                final List<Long> offsets = new ArrayList<>();
                final ConsumerRecordHandler handler = (p, r) ->
                {
                    assertTrue(r.offset() < consumer.highWatermark(p), "offset " + r.offset() + " below the HW");
                    offsets.add(r.offset());
                };
                for (int i = 0; i < 20; i++)
                {
                    consumer.poll(handler);
                    d.advance(10);
                }
                assertEquals(List.of(0L), offsets, "the record above the HW is not delivered");
                d.advance(2000); // the ISR shrinks to the leader: the HW passes it
                consumer.poll(handler);
                assertEquals(List.of(0L, 1L), offsets);
            }
        }
    }

    @Test
    void seeksToOffsetBeginningEndAndTimestamp()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("t", 1, 1);
            final Producer producer = d.producer(new ProducerContext().lingerMs(0));
            final ProducerRecord record = new ProducerRecord().topic("t");
            final long start = d.clock.time();
            for (int i = 0; i < 10; i++)
            {
                producer.send(record.value("v" + i).timestamp(start + i * 1000L));
            }
            producer.send(record.value("now").timestamp(BatchClaim.NOW)); // stamped by the leader's log
            try (Consumer consumer = new Consumer(d.cluster, new ConsumerContext()))
            {
                consumer.assign(List.of(tp));
                assertEquals(11, consumer.position(tp), "latest by default: the high watermark");
                assertEquals(List.of(), Logs.drain(consumer));
                consumer.seekToBeginning(List.of(tp));
                assertEquals(11, Logs.drain(consumer).size());
                consumer.seek(tp, 7);
                assertEquals(List.of("v7", "v8", "v9", "now"), Logs.drain(consumer));
                consumer.seekToTimestamp(tp, start + 4500);
                assertEquals(5, consumer.position(tp), "the first record at or after the time, by the time index");
                assertEquals("v5", Logs.drain(consumer).get(0));
                consumer.seekToTimestamp(tp, d.clock.time() + 60_000);
                assertEquals(11, consumer.position(tp), "nothing that recent: the end");
                consumer.seekToEnd(List.of(tp));
                assertEquals(11, consumer.position(tp), "resolved lazily, like Kafka's: here, by position()");
                producer.send(record.value("after").timestamp(BatchClaim.NOW));
                assertEquals(List.of("after"), Logs.drain(consumer));
                assertThrows(IllegalStateException.class, () -> consumer.seek(new TopicPartition("t", 3), 0));
                assertThrows(IllegalArgumentException.class, () -> consumer.seek(tp, -1));
            }
        }
    }

    @Test
    void maxPollRecordsBoundsAPollAndPartitionsAreTakenInTurn()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            d.topic("t", 2, 1);
            final Producer producer = d.producer(new ProducerContext());
            final ProducerRecord record = new ProducerRecord().topic("t");
            for (int i = 0; i < 30; i++)
            {
                producer.sendAsync(record.partition(i % 2).value("p" + (i % 2) + "-" + i), (tp, o, e) -> { });
            }
            producer.flush();
            try (Consumer consumer = new Consumer(d.cluster, new ConsumerContext().maxPollRecords(4)
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                consumer.assign(List.of(new TopicPartition("t", 0), new TopicPartition("t", 1)));
                assertEquals(Set.of(new TopicPartition("t", 0), new TopicPartition("t", 1)), consumer.assignment());
                final List<Integer> partitions = new ArrayList<>();
                assertEquals(4, consumer.poll((tp, r) -> partitions.add(tp.partition())));
                assertEquals(4, consumer.poll((tp, r) -> partitions.add(tp.partition())));
                assertTrue(partitions.contains(0) && partitions.contains(1), "both partitions served: " + partitions);
                int total = 8;
                for (int n = consumer.poll((tp, r) -> { }); n > 0; n = consumer.poll((tp, r) -> { }))
                {
                    assertTrue(n <= 4);
                    total += n;
                }
                assertEquals(30, total);
                consumer.assign(List.of(new TopicPartition("t", 1)));
                assertEquals(15, consumer.position(new TopicPartition("t", 1)), "a kept partition keeps its position");
            }
        }
    }

    @Test
    void aWaitingPollReturnsAsSoonAsRecordsArriveOnAThreadedCluster() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()))
        {
            cluster.createTopic("t", 1, 3);
            cluster.awaitLeaders("t", 60_000);
            final TopicPartition tp = new TopicPartition("t", 0);
            try (Producer producer = new Producer(cluster, new ProducerContext());
                Consumer idling = new Consumer(cluster, new ConsumerContext());
                Consumer spinning = new Consumer(cluster, new ConsumerContext().idleStrategySupplier(BusySpinIdleStrategy::new)))
            {
                idling.assign(List.of(tp));
                spinning.assign(List.of(tp));
                assertEquals(0, idling.position(tp));
                assertEquals(0, spinning.position(tp));
                final Thread later = new Thread(() ->
                {
                    try
                    {
                        Thread.sleep(50);
                        producer.send(new ProducerRecord().topic("t").value("hello"));
                    }
                    catch (final InterruptedException ex)
                    {
                        Thread.currentThread().interrupt();
                    }
                });
                later.start();
                final List<String> got = new ArrayList<>();
                assertEquals(1, idling.poll((p, r) -> got.add(r.valueAsString()), 30_000), "woke up for the record");
                assertEquals(1, spinning.poll((p, r) -> got.add(r.valueAsString()), 30_000));
                assertEquals(List.of("hello", "hello"), got);
                later.join();
                assertEquals(0, idling.poll((p, r) -> got.add("unexpected"), 20), "nothing new: 0 after the wait");
            }
        }
    }
}
