package io.tidemark.host;

import io.tidemark.replication.PartitionState;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Unmodified Kafka clients against three host processes (each with a Kafka listener, ZooKeeper in this JVM): Admin
 * creates and describes a topic; an idempotent acks=all KafkaProducer writes while the partition's leader process
 * is killed with SIGKILL, and every acknowledged record is read back once, at its offset, by a KafkaConsumer and
 * from every in-sync replica's files; a group of two KafkaConsumers shares the partitions and commits, the commits
 * are where TidemarkClient reads them, and a restarted group resumes from them.
 */
class KafkaAcrossHostsTest
{
    private static final String TOPIC = "kafka-orders";

    @TempDir
    Path tmp;

    static Properties producer(final String bootstrap)
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.LINGER_MS_CONFIG, "5");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "90000");
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return props;
    }

    static Properties consumer(final String bootstrap, final String group)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
        if (null != group)
        {
            props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        }
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        return props;
    }

    @Test
    void kafkaClientsAcrossThreeHostProcesses() throws Exception
    {
        final Properties replication = new Properties();
        replication.setProperty("min.insync.replicas", "2");
        replication.setProperty("replica.lag.time.max.ms", "1000");
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, replication).withKafka())
        {
            cluster.start();
            final String bootstrap = cluster.kafkaBootstrap();
            final Properties adminProps = new Properties();
            adminProps.put("bootstrap.servers", bootstrap);
            try (Admin admin = Admin.create(adminProps))
            {
                assertTrue(ProcessCluster.await(() -> nodes(admin) == 3, 60_000), "three brokers in the metadata");
                admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short)3))).all().get();
                final TopicDescription description = admin.describeTopics(List.of(TOPIC)).allTopicNames().get()
                    .get(TOPIC);
                assertEquals(3, description.partitions().size());
                for (int p = 0; p < 3; p++)
                {
                    final int partition = p;
                    assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, partition).isr().length == 3,
                        30_000), "all three replicas in sync: " + cluster.state(TOPIC, partition));
                }
            }

            // an idempotent acks=all run through the SIGKILL of the partition's leader
            final int partition = 1;
            final int oldLeader = cluster.state(TOPIC, partition).leader();
            final Map<Long, String> acked = new ConcurrentHashMap<>();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producer(bootstrap)))
            {
                send(producer, partition, "before", 300, acked);
                cluster.kill(oldLeader);
                send(producer, partition, "after", 300, acked);
            }
            assertEquals(600, acked.size(), "every acknowledgement names its own offset");
            final PartitionState after = cluster.state(TOPIC, partition);
            assertNotEquals(oldLeader, after.leader(), "leadership moved: " + after);
            cluster.restart(oldLeader);
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, partition).isr().length == 3, 60_000),
                "the restarted host rejoins the ISR: " + cluster.state(TOPIC, partition));

            final Map<Long, String> read = new HashMap<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumer(bootstrap, null)))
            {
                final TopicPartition tp = new TopicPartition(TOPIC, partition);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final long deadline = System.currentTimeMillis() + 30_000;
                while (read.size() < 600 && System.currentTimeMillis() < deadline)
                {
                    for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200)))
                    {
                        read.put(record.offset(), record.value());
                    }
                }
            }
            ClusterChecker.assertAckedPresentOnce(acked, read, "read back by a KafkaConsumer");

            // a group of two shares the partitions and commits; the commits are TidemarkClient's
            final Set<String> consumed = new HashSet<>();
            try (KafkaConsumer<String, String> a = new KafkaConsumer<>(consumer(bootstrap, "kg"));
                 KafkaConsumer<String, String> b = new KafkaConsumer<>(consumer(bootstrap, "kg")))
            {
                a.subscribe(List.of(TOPIC));
                b.subscribe(List.of(TOPIC));
                final long deadline = System.currentTimeMillis() + 60_000;
                while (!(consumed.size() >= 600 && a.assignment().size() + b.assignment().size() == 3 &&
                    !a.assignment().isEmpty() && !b.assignment().isEmpty()))
                {
                    assertTrue(System.currentTimeMillis() < deadline, "the group did not settle: " + consumed.size());
                    for (final KafkaConsumer<String, String> c : List.of(a, b))
                    {
                        c.poll(Duration.ofMillis(50)).forEach((r) -> consumed.add(r.value()));
                        try
                        {
                            c.commitSync();
                        }
                        catch (final org.apache.kafka.clients.consumer.CommitFailedException |
                            org.apache.kafka.common.errors.RebalanceInProgressException ex)
                        {
                            // a rebalance is on: the next poll rejoins
                        }
                    }
                }
            }
            final long end = cluster.client().committedOffset("kg", TOPIC, partition);
            try (Admin admin = Admin.create(adminProps))
            {
                final TopicPartition tp = new TopicPartition(TOPIC, partition);
                assertEquals(admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset(),
                    end, "the group committed the partition's end, as TidemarkClient reads it");
            }
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producer(bootstrap)))
            {
                send(producer, partition, "late", 10, new ConcurrentHashMap<>());
            }
            final Set<String> resumed = new HashSet<>();
            try (KafkaConsumer<String, String> c = new KafkaConsumer<>(consumer(bootstrap, "kg")))
            {
                c.subscribe(List.of(TOPIC));
                final long deadline = System.currentTimeMillis() + 60_000;
                while (resumed.size() < 10 && System.currentTimeMillis() < deadline)
                {
                    c.poll(Duration.ofMillis(100)).forEach((r) -> resumed.add(r.value()));
                }
                for (int i = 0; i < 10; i++)
                {
                    c.poll(Duration.ofMillis(50)).forEach((r) -> resumed.add(r.value()));
                }
            }
            assertEquals(10, resumed.size(), "the group resumes from its commits: " + resumed);
            assertTrue(resumed.stream().allMatch((v) -> v.startsWith("p1-late-")), resumed.toString());

            final long highWatermark = ClusterChecker.highWatermark(cluster.client(), TOPIC, partition);
            final PartitionState state = cluster.state(TOPIC, partition);
            for (int id = 0; id < 3; id++)
            {
                cluster.stop(id);
            }
            ClusterChecker.checkReplicas(cluster, TOPIC, partition, state, highWatermark, acked);
        }
    }

    private static int nodes(final Admin admin)
    {
        try
        {
            return admin.describeCluster().nodes().get().size();
        }
        catch (final Exception ex)
        {
            return -1;
        }
    }

    private static void send(final KafkaProducer<String, String> producer, final int partition, final String what,
        final int count, final Map<Long, String> acked) throws Exception
    {
        final List<Future<org.apache.kafka.clients.producer.RecordMetadata>> futures = new ArrayList<>();
        final List<String> values = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            final String value = "p" + partition + "-" + what + "-" + i;
            values.add(value);
            futures.add(producer.send(new ProducerRecord<>(TOPIC, partition, "k" + i, value)));
            if (i % 20 == 19)
            {
                producer.flush();
            }
        }
        producer.flush();
        for (int i = 0; i < count; i++)
        {
            final String previous = acked.put(futures.get(i).get().offset(), values.get(i));
            assertEquals(null, previous, "two acknowledgements with one offset");
        }
    }
}
