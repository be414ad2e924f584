package io.tidemark.client;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * flush() and close() on a threaded cluster: flush sends lingering batches at once and returns only when every
 * record sent before it is complete; close drains; close with a timeout fails what it could not send (outcome
 * unknown for what was awaiting an answer); nothing is ever dropped without its callback hearing of it; many threads
 * may share one producer.
 */
class FlushCloseTest
{
    @TempDir
    Path root;

    private static ReplicationCluster start(final Path root, final String topic, final int partitions)
    {
        final ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2));
        cluster.createTopic(topic, partitions, 3);
        cluster.awaitLeaders(topic, 60_000);
        return cluster;
    }

    @Test
    void flushSendsLingeringBatchesAndWaitsForEveryEarlierRecordFromManyThreads() throws Exception
    {
        try (ReplicationCluster cluster = start(root, "t", 3);
            Producer producer = new Producer(cluster, new ProducerContext().lingerMs(60_000).batchSize(256 * 1024)))
        {
            final Outcomes outcomes = new Outcomes();
            final int threads = 4;
            final int each = 250;
            final CountDownLatch sent = new CountDownLatch(threads);
            final List<Thread> senders = new ArrayList<>();
            for (int t = 0; t < threads; t++)
            {
                final int id = t;
                final Thread thread = new Thread(() ->
                {
                    final ProducerRecord record = new ProducerRecord().topic("t");
                    for (int i = 0; i < each; i++)
                    {
                        final String value = id + "-" + i;
                        producer.sendAsync(record.key("thread-" + id).value(value), outcomes.callback(value));
                    }
                    sent.countDown();
                });
                thread.start();
                senders.add(thread);
            }
            assertTrue(sent.await(30, TimeUnit.SECONDS));
            producer.flush(); // a minute of linger and 256 KiB batches: nothing would go out without it
            assertEquals(threads * each, outcomes.size(), "every record sent before flush() is complete");
            assertEquals(threads * each, outcomes.acknowledged().size());
            for (final Thread thread : senders)
            {
                thread.join();
            }
            for (int t = 0; t < threads; t++)
            {
                final long partition = outcomes.get(t + "-0").partition().partition();
                long last = -1;
                for (int i = 0; i < each; i++)
                {
                    final Outcomes.Outcome outcome = outcomes.get(t + "-" + i);
                    assertEquals(partition, outcome.partition().partition(), "one key, one partition");
                    assertTrue(outcome.offset() > last, "one thread's records keep their order");
                    last = outcome.offset();
                }
            }
        }
    }

    @Test
    void closeDrainsPendingRecords()
    {
        try (ReplicationCluster cluster = start(root, "t", 1))
        {
            final Outcomes outcomes = new Outcomes();
            final Producer producer = new Producer(cluster, new ProducerContext().lingerMs(200));
            final ProducerRecord record = new ProducerRecord().topic("t");
            for (int i = 0; i < 500; i++)
            {
                producer.sendAsync(record.value("v" + i), outcomes.callback("v" + i));
            }
            producer.close();
            assertEquals(500, outcomes.acknowledged().size(), "close() sent and acknowledged everything pending");
            Logs.awaitHighWatermark(cluster, new TopicPartition("t", 0), 500);
            assertEquals(500, Logs.committed(cluster, new TopicPartition("t", 0)).size());
        }
    }

    @Test
    void closeWithATimeoutFailsWhatItCouldNotSendAndReportsEveryRecord()
    {
        try (ReplicationCluster cluster = start(root, "t", 1))
        {
            final TopicPartition tp = new TopicPartition("t", 0);
            final Outcomes outcomes = new Outcomes();
            final List<Throwable> errors = new CopyOnWriteArrayList<>();
            final Producer producer = new Producer(cluster, new ProducerContext().errorHandler(errors::add)
                .requestTimeoutMs(60_000));
            final ProducerRecord record = new ProducerRecord().topic("t");
            assertEquals(0, producer.send(record.value("before")));
            for (int host = 0; host < 3; host++)
            {
                if (host != cluster.leaderOf(tp))
                {
                    cluster.killHost(host); // the ISR will shrink below min.insync: acks=all cannot complete
                }
            }
            for (int i = 0; i < 50; i++)
            {
                producer.sendAsync(record.value("v" + i), outcomes.callback("v" + i));
            }
            producer.sendOneWay(record.value("one-way"));
            producer.close(300);
            assertEquals(50, outcomes.size(), "every record heard of its fate");
            assertEquals(50, outcomes.failed().size(), "acks=all could not complete: " + outcomes.acknowledged());
            for (final String value : outcomes.failed())
            {
                final ProducerException error = outcomes.get(value).error();
                assertEquals(ProducerErrorCode.CLOSED, error.code());
                assertEquals(tp, error.partition());
                assertTrue(error.outcomeUnknown(), "appended by the leader, awaiting acks: may still commit");
            }
            for (final Throwable error : errors)
            {
                assertTrue(error instanceof ProducerException && error.getMessage().contains("one-way"), error.toString());
            }
        }
    }
}
