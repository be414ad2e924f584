package io.tidemark.kafka;

import io.tidemark.client.Consumer;
import io.tidemark.client.ConsumerContext;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * KafkaConsumers in a group of two (the classic protocol, range assignment) on an in-process cluster: the
 * partitions are split between them, one leaving hands its partitions to the other, commits are kept, and a new
 * consumer of the group after both stopped resumes from the committed offsets, reading only records produced
 * after them. Tidemark's own consumer of the same group id reads the same committed offsets.
 */
class ConsumerGroupTest extends SharedClusterTest
{
    private static final String TOPIC = "grouped";
    private static final int PARTITIONS = 4;

    @BeforeAll
    static void createTopic()
    {
        cluster.createTopic(TOPIC, PARTITIONS, 3);
        assertTrue(cluster.awaitLeaders(TOPIC, 60_000));
    }

    static Properties groupConsumer()
    {
        final Properties props = ClientProps.consumer(kafka.bootstrapServers(), "g1");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
        props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
            "org.apache.kafka.clients.consumer.RangeAssignor");
        return props;
    }

    static void produce(final int from, final int to) throws Exception
    {
        final Properties props = ClientProps.producer(kafka.bootstrapServers(), "all", true);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props))
        {
            for (int i = from; i < to; i++)
            {
                producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i));
            }
            producer.flush();
        }
    }

    static void pollUntil(final BooleanSupplier done, final Set<String> seen,
        final List<KafkaConsumer<String, String>> consumers)
    {
        final long deadline = System.currentTimeMillis() + 60_000;
        while (!done.getAsBoolean())
        {
            assertTrue(System.currentTimeMillis() < deadline, "timed out");
            for (final KafkaConsumer<String, String> consumer : consumers)
            {
                for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(50)))
                {
                    seen.add(record.value());
                }
                try
                {
                    consumer.commitSync();
                }
                catch (final org.apache.kafka.clients.consumer.CommitFailedException |
                    org.apache.kafka.common.errors.RebalanceInProgressException ex)
                {
                    // a rebalance started: the next poll rejoins, and the records are read again
                }
            }
        }
    }

    @Test
    void twoConsumersShareRebalanceCommitAndResume() throws Exception
    {
        produce(0, 400);
        final Set<String> seen = new HashSet<>();
        try (KafkaConsumer<String, String> a = new KafkaConsumer<>(groupConsumer()))
        {
            final KafkaConsumer<String, String> b = new KafkaConsumer<>(groupConsumer());
            a.subscribe(List.of(TOPIC));
            b.subscribe(List.of(TOPIC));
            pollUntil(() -> a.assignment().size() == 2 && b.assignment().size() == 2 && seen.size() == 400, seen,
                List.of(a, b));
            final Set<TopicPartition> union = new HashSet<>(a.assignment());
            union.addAll(b.assignment());
            assertEquals(PARTITIONS, union.size(), "the partitions are split between the two");

            b.close(); // leaves the group
            produce(400, 500);
            pollUntil(() -> a.assignment().size() == PARTITIONS && seen.size() == 500, seen, List.of(a));
        }
        assertEquals(500, seen.size());

        // Tidemark's consumer of the same group sees the committed offsets: everything was read
        long committed = 0;
        try (Consumer tidemark = new Consumer(cluster, new ConsumerContext().groupId("g1")))
        {
            for (int p = 0; p < PARTITIONS; p++)
            {
                committed += tidemark.committed(new io.tidemark.replication.TopicPartition(TOPIC, p));
            }
        }
        assertEquals(500, committed, "committed offsets add up to every record");

        produce(500, 550);
        final Set<String> resumed = new HashSet<>();
        try (KafkaConsumer<String, String> c = new KafkaConsumer<>(groupConsumer()))
        {
            c.subscribe(List.of(TOPIC));
            pollUntil(() -> resumed.size() >= 50, resumed, List.of(c));
            for (int i = 0; i < 20; i++)
            {
                c.poll(Duration.ofMillis(50)).forEach((r) -> resumed.add(r.value()));
            }
        }
        assertEquals(50, resumed.size(), "a restarted group reads only what came after its commits: " + resumed);
        for (int i = 500; i < 550; i++)
        {
            assertTrue(resumed.contains("v" + i));
        }
    }
}
