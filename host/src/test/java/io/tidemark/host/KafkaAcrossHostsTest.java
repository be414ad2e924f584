package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.kafka.ClientProps;
import io.tidemark.replication.protocol.PartitionState;
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
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
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
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Unmodified Kafka clients against three host processes (each with a Kafka listener, ZooKeeper in this JVM): Admin
 * creates and describes a topic; an idempotent acks=all KafkaProducer writes to its three partitions without waiting
 * while one partition's leader process is killed with SIGKILL, and every send is acknowledged, and read back once, at
 * its offset and in send order per partition, by a KafkaConsumer and from every in-sync replica's files; a group of two KafkaConsumers shares the partitions and commits, the commits
 * are where TidemarkClient reads them, and a restarted group resumes from them.
 */
class KafkaAcrossHostsTest
{
    private static final String TOPIC = "kafka-orders";

    @TempDir
    Path tmp;

    /** An idempotent acks=all producer that rides out a leader's death: short requests, long delivery timeout. */
    static Properties producer(final String bootstrap)
    {
        final Properties props = ClientProps.producer(bootstrap, "all", true);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "90000");
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "50");
        return props;
    }

    /** A consumer whose group notices a member gone within seconds. */
    static Properties consumer(final String bootstrap, final String group)
    {
        final Properties props = ClientProps.consumer(bootstrap, group);
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "300");
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

            // an idempotent acks=all run through the SIGKILL of a partition's leader, killed while records are on the
            // wire to it (the producer sends to all three partitions without waiting)
            final int partition = 1;
            final int oldLeader = cluster.state(TOPIC, partition).leader();
            final Map<Integer, Map<Long, String>> acked = new ConcurrentHashMap<>();
            final AtomicInteger ackCount = new AtomicInteger();
            final AtomicBoolean stop = new AtomicBoolean();
            final List<Future<RecordMetadata>> futures = new ArrayList<>();
            final List<String> values = new ArrayList<>();
            final Thread sender;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(producer(bootstrap)))
            {
                sender = new Thread(() ->
                {
                    for (int i = 0; !stop.get(); i++)
                    {
                        final int p = i % 3;
                        final String value = "p" + p + "-" + i / 3;
                        synchronized (futures)
                        {
                            values.add(value);
                            futures.add(producer.send(new ProducerRecord<>(TOPIC, p, "k" + i, value), (m, ex) ->
                            {
                                if (null == ex)
                                {
                                    acked.computeIfAbsent(m.partition(), (k) -> new ConcurrentHashMap<>())
                                        .put(m.offset(), value);
                                    ackCount.incrementAndGet();
                                }
                            }));
                        }
                        if (i % 10 == 9)
                        {
                            LockSupport.parkNanos(2_000_000);
                        }
                    }
                }, "kafka-across-hosts-sender");
                sender.start();
                assertTrue(ProcessCluster.await(() -> ackCount.get() >= 300, 60_000), "300 records acknowledged " +
                    "before the kill: " + ackCount.get());
                cluster.kill(oldLeader);
                final int atKill = ackCount.get();
                assertTrue(ProcessCluster.await(() -> ackCount.get() >= atKill + 600, 120_000), "600 more records " +
                    "acknowledged after the kill: " + (ackCount.get() - atKill));
                stop.set(true);
                sender.join(60_000);
                producer.flush();
            }
            int sent = 0;
            synchronized (futures)
            {
                for (int i = 0; i < futures.size(); i++)
                {
                    assertEquals(values.get(i), acked.get(futures.get(i).get().partition())
                        .get(futures.get(i).get().offset()), "every send acknowledged, each at an offset of its own");
                    sent++;
                }
            }
            final int total = sent;
            assertEquals(total, ackCount.get());
            final PartitionState after = cluster.state(TOPIC, partition);
            assertNotEquals(oldLeader, after.leader(), "leadership moved: " + after);
            cluster.restart(oldLeader);
            for (int p = 0; p < 3; p++)
            {
                final int q = p;
                assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, q).isr().length == 3, 60_000),
                    "the restarted host rejoins the ISR: " + cluster.state(TOPIC, q));
            }

            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumer(bootstrap, null)))
            {
                for (int p = 0; p < 3; p++)
                {
                    final Map<Long, String> read = new HashMap<>();
                    final TopicPartition tp = new TopicPartition(TOPIC, p);
                    consumer.assign(List.of(tp));
                    consumer.seekToBeginning(List.of(tp));
                    final int expected = acked.get(p).size();
                    final long deadline = System.currentTimeMillis() + 60_000;
                    while (read.size() < expected && System.currentTimeMillis() < deadline)
                    {
                        for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200)))
                        {
                            read.put(record.offset(), record.value());
                        }
                    }
                    ClusterChecker.assertAckedPresentOnce(acked.get(p), read, "partition " + p + " read back by a " +
                        "KafkaConsumer");
                    assertInSendOrder(read, "partition " + p + " read back by a KafkaConsumer");
                }
            }

            // a group of two shares the partitions and commits; the commits are TidemarkClient's
            final Set<String> consumed = new HashSet<>();
            try (KafkaConsumer<String, String> a = new KafkaConsumer<>(consumer(bootstrap, "kg"));
                 KafkaConsumer<String, String> b = new KafkaConsumer<>(consumer(bootstrap, "kg")))
            {
                a.subscribe(List.of(TOPIC));
                b.subscribe(List.of(TOPIC));
                final long deadline = System.currentTimeMillis() + 60_000;
                while (!(consumed.size() >= total && a.assignment().size() + b.assignment().size() == 3 &&
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
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, partition, "late", "p1-late-" + i)).get();
                }
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

            final long[] highWatermarks = new long[3];
            final PartitionState[] states = new PartitionState[3];
            for (int p = 0; p < 3; p++)
            {
                highWatermarks[p] = ClusterChecker.highWatermark(cluster.client(), TOPIC, p);
                states[p] = cluster.state(TOPIC, p);
            }
            for (int id = 0; id < 3; id++)
            {
                cluster.stop(id);
            }
            for (int p = 0; p < 3; p++)
            {
                final Map<Long, String> ackedHere = new HashMap<>(acked.get(p));
                ClusterChecker.checkReplicas(cluster, TOPIC, p, states[p], highWatermarks[p], ackedHere);
                for (final int host : states[p].assignedReplicas())
                {
                    assertInSendOrder(cluster.readReplica(host, TOPIC, p), "partition " + p + " in the files of host " +
                        host);
                }
            }
        }
    }

    /** The records {@code p<partition>-<i>} of the run through the kill follow one another in send order. */
    private static void assertInSendOrder(final Map<Long, String> log, final String where)
    {
        int previous = -1;
        long previousOffset = -1;
        for (final Map.Entry<Long, String> e : new TreeMap<>(log).entrySet())
        {
            if (!e.getValue().matches("p[0-9]-[0-9]+"))
            {
                continue; // the group phase's later records
            }
            final int index = Integer.parseInt(e.getValue().substring(e.getValue().indexOf('-') + 1));
            assertEquals(previous + 1, index, where + ": '" + e.getValue() + "' at offset " + e.getKey() +
                " follows index " + previous + " at offset " + previousOffset);
            previous = index;
            previousOffset = e.getKey();
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
}
