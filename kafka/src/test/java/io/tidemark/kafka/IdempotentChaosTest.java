package io.tidemark.kafka;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Idempotent acks=all KafkaProducers through faults: several producers write to several partitions while a seeded
 * schedule kills or stops the leader's host and restarts it, cuts a leader off from its followers (NOT_ENOUGH_REPLICAS,
 * then the ISR grows back), cuts one link, or closes a listener (connections break with requests in flight, whose
 * batches the leader may still append). After each fault the test waits for the cluster to be whole again (a
 * liveness guard, not a fixed time), so that every batch is acknowledged well within the producers' delivery timeout;
 * then every send must have succeeded (no OutOfOrderSequenceException, no timeout), and each producer's records must
 * be in each partition exactly once, in send order, at the offsets acknowledged: read back through a KafkaConsumer and
 * from every replica's files.
 * <p>
 * CI runs {@value #FAULTS} faults; {@code -Plong} runs {@value #LONG_FAULTS}. {@code -Dchaos.seed} repeats a schedule.
 */
class IdempotentChaosTest
{
    private static final int FAULTS = 5;
    private static final int LONG_FAULTS = 60;
    private static final int HOSTS = 3;
    private static final int PARTITIONS = 3;
    private static final int PRODUCERS = 2;
    private static final String TOPIC = "chaos";
    private static final int MAX_RECORDS = 60_000;

    @TempDir
    Path root;

    @Test
    void everyAcknowledgedRecordOnceAndInOrderThroughFaults() throws Exception
    {
        final long seed = Long.getLong("chaos.seed", System.nanoTime());
        final int faults = Boolean.getBoolean("tidemark.long") ? LONG_FAULTS : FAULTS;
        System.out.println("IdempotentChaosTest: -Dchaos.seed=" + seed + ", " + faults + " faults");
        final Map<Integer, List<Sent>> sent = new ConcurrentHashMap<>();
        final List<String> schedule = new ArrayList<>();
        final Map<Integer, Map<Long, String>> consumed = new HashMap<>();
        final Map<Integer, Map<Long, Sent>> ackedByPartition = new HashMap<>();
        try (ReplicationCluster cluster = ReplicationCluster.start(root, HOSTS, new ReplicationContext()
            .minInsyncReplicas(2).hostSessionTimeoutMs(2_000).replicaLagTimeMaxMs(1_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
        {
            cluster.createTopic(TOPIC, PARTITIONS, HOSTS);
            awaitWhole(cluster, kafka, "at the start");
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
            final List<Thread> producers = new ArrayList<>();
            for (int p = 0; p < PRODUCERS; p++)
            {
                final int id = p;
                final List<Sent> mine = new ArrayList<>();
                sent.put(id, mine);
                producers.add(new Thread(() -> produce(kafka.bootstrapServers(), id, mine, stop, producerFailure),
                    "chaos-producer-" + id));
            }
            producers.forEach(Thread::start);
            final Random random = new Random(seed);
            try
            {
                for (int f = 0; f < faults; f++)
                {
                    Thread.sleep(200 + random.nextInt(600));
                    schedule.add(fault(cluster, kafka, random));
                    awaitWhole(cluster, kafka, "after " + schedule);
                }
                Thread.sleep(300);
            }
            finally
            {
                stop.set(true);
                for (final Thread producer : producers)
                {
                    producer.join(300_000);
                    assertTrue(!producer.isAlive(), producer.getName() + " did not finish");
                }
            }
            assertNull(producerFailure.get(), "a producer failed: " + producerFailure.get());

            final Map<Integer, Map<Long, Sent>> acked = new HashMap<>();
            int total = 0;
            for (final List<Sent> mine : sent.values())
            {
                for (final Sent s : mine)
                {
                    final RecordMetadata metadata;
                    try
                    {
                        metadata = s.future.get();
                    }
                    catch (final ExecutionException ex)
                    {
                        throw new AssertionError("send of " + s.value + " failed (faults: " + schedule + ", seed " +
                            seed + ")", ex.getCause());
                    }
                    final Sent previous = acked.computeIfAbsent(metadata.partition(), (k) -> new HashMap<>())
                        .put(metadata.offset(), s);
                    assertNull(previous, "two acknowledgements with offset " + metadata.offset());
                    total++;
                }
            }
            assertTrue(total > 0, "records were sent");
            System.out.println("IdempotentChaosTest: " + total + " records acknowledged through " + schedule);
            for (int p = 0; p < PARTITIONS; p++)
            {
                final Map<Long, Sent> mine = acked.getOrDefault(p, Map.of());
                final Map<Long, String> read = readThroughConsumer(kafka, p, mine);
                check("read by a KafkaConsumer", p, read, mine, schedule, seed);
                consumed.put(p, read);
                ackedByPartition.put(p, mine);
            }
        }
        // every replica's files, read after the cluster stopped: what each holds agrees with what the consumer read,
        // and every acknowledged record is complete on at least min.insync.replicas of them
        for (int p = 0; p < PARTITIONS; p++)
        {
            int complete = 0;
            for (int host = 0; host < HOSTS; host++)
            {
                final Map<Long, String> replica = readReplica(root.resolve("host-" + host).resolve(TOPIC + "-" + p));
                final String where = "replica on host " + host;
                for (final Map.Entry<Long, String> e : consumed.get(p).entrySet())
                {
                    final String mine = replica.get(e.getKey());
                    if (null != mine)
                    {
                        assertEquals(e.getValue(), mine, where + " disagrees at offset " + e.getKey() + " of partition "
                            + p + " (faults " + schedule + ", seed " + seed + ")");
                    }
                }
                if (replica.keySet().containsAll(ackedByPartition.get(p).keySet()))
                {
                    check(where, p, replica, ackedByPartition.get(p), schedule, seed);
                    complete++;
                }
            }
            assertTrue(complete >= 2, "partition " + p + ": every acknowledged record on " + complete +
                " replicas only (faults " + schedule + ", seed " + seed + ")");
        }
    }

    /** One send: its value {@code p<producer>-<index>} and its outcome. */
    private record Sent(String value, int producer, int index, int partition, Future<RecordMetadata> future)
    {
    }

    private static void produce(final String bootstrap, final int id, final List<Sent> sent, final AtomicBoolean stop,
        final AtomicReference<Throwable> failure)
    {
        final Properties props = ClientProps.producer(bootstrap, "all", true);
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "600000");
        props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "20");
        props.put(ProducerConfig.BATCH_SIZE_CONFIG, "1024"); // many small batches: five in flight per partition
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props))
        {
            for (int i = 0; !stop.get(); i++)
            {
                if (i >= MAX_RECORDS)
                {
                    Thread.sleep(10); // enough sent: wait for the faults to end
                    continue;
                }
                final int partition = i % PARTITIONS;
                final String value = "p" + id + "-" + i;
                sent.add(new Sent(value, id, i, partition, producer.send(new ProducerRecord<>(TOPIC, partition,
                    "k" + id, value))));
                if (i % 4 == 3)
                {
                    Thread.sleep(1);
                }
            }
            producer.flush();
        }
        catch (final Throwable t)
        {
            failure.compareAndSet(null, t);
        }
    }

    /** Inject one fault and undo it; @return what it was. */
    private static String fault(final ReplicationCluster cluster, final InProcessKafka kafka, final Random random)
        throws InterruptedException
    {
        final int partition = random.nextInt(PARTITIONS);
        final int leader = cluster.leaderOf(new io.tidemark.replication.TopicPartition(TOPIC, partition));
        final int victim = leader >= 0 ? leader : random.nextInt(HOSTS);
        switch (random.nextInt(5))
        {
            case 0 ->
            {
                cluster.killHost(victim);
                Thread.sleep(random.nextInt(1_500));
                cluster.restartHost(victim);
                return "kill " + victim;
            }
            case 1 ->
            {
                cluster.stopHost(victim);
                Thread.sleep(random.nextInt(1_500));
                cluster.restartHost(victim);
                return "stop " + victim;
            }
            case 2 ->
            {
                for (int host = 0; host < HOSTS; host++)
                {
                    if (host != victim)
                    {
                        cluster.transport().isolate(victim, host);
                    }
                }
                Thread.sleep(1_000 + random.nextInt(1_500)); // past replica.lag.time.max.ms: the ISR shrinks
                cluster.transport().heal();
                return "cut off " + victim;
            }
            case 3 ->
            {
                final int other = (victim + 1 + random.nextInt(HOSTS - 1)) % HOSTS;
                cluster.transport().isolate(victim, other);
                Thread.sleep(random.nextInt(2_000));
                cluster.transport().heal();
                return "cut " + victim + "-" + other;
            }
            default ->
            {
                kafka.stopBroker(victim);
                Thread.sleep(random.nextInt(1_000));
                kafka.startBroker(victim);
                return "listener " + victim;
            }
        }
    }

    /** Wait until every host runs and every partition has a leader and its full ISR (a liveness guard). */
    private static void awaitWhole(final ReplicationCluster cluster, final InProcessKafka kafka, final String when)
    {
        final boolean whole = cluster.await(() ->
        {
            for (int p = 0; p < PARTITIONS; p++)
            {
                final PartitionState state = cluster.state(new io.tidemark.replication.TopicPartition(TOPIC, p));
                if (null == state || state.leader() == PartitionState.NO_LEADER || state.isr().length != HOSTS)
                {
                    return false;
                }
            }
            for (int host = 0; host < HOSTS; host++)
            {
                if (null == cluster.host(host) || null == kafka.listener(host))
                {
                    return false;
                }
            }
            return true;
        }, 120_000);
        if (!whole)
        {
            final List<PartitionState> states = cluster.partitions(TOPIC);
            fail("the cluster was not whole again within 120 s " + when + ": " + states);
        }
    }

    private static Map<Long, String> readThroughConsumer(final InProcessKafka kafka, final int partition,
        final Map<Long, Sent> acked)
    {
        final long last = acked.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
        final Map<Long, String> read = new TreeMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
            ClientProps.consumer(kafka.bootstrapServers(), null)))
        {
            final TopicPartition tp = new TopicPartition(TOPIC, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long deadline = System.currentTimeMillis() + 120_000;
            while (consumer.position(tp) <= last && System.currentTimeMillis() < deadline)
            {
                for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200)))
                {
                    read.put(record.offset(), record.value());
                }
            }
        }
        return read;
    }

    private static Map<Long, String> readReplica(final Path dir) throws Exception
    {
        final Map<Long, String> records = new TreeMap<>();
        if (!Files.isDirectory(dir))
        {
            return records;
        }
        try (Log log = Log.open(new LogContext().logDir(dir));
             LogReader reader = log.openReader())
        {
            reader.seek(log.logStartOffset());
            while (reader.poll((r) -> records.put(r.offset(), r.valueAsString()), log.logEndOffset(), 10_000) > 0)
            {
                // to the end
            }
        }
        return records;
    }

    /**
     * Each acknowledged record at its offset; no value twice; each producer's records in send order; and (the sends
     * all succeeded) none of a producer's records missing between its first and last in the partition.
     */
    private static void check(final String where, final int partition, final Map<Long, String> log,
        final Map<Long, Sent> acked, final List<String> schedule, final long seed)
    {
        final String context = " (" + where + ", partition " + partition + ", faults " + schedule + ", seed " + seed +
            ")";
        for (final Map.Entry<Long, Sent> e : acked.entrySet())
        {
            assertEquals(e.getValue().value(), log.get(e.getKey()), "acknowledged record at offset " + e.getKey() +
                context);
        }
        final Map<String, Long> seen = new HashMap<>();
        final Map<Integer, Integer> lastIndex = new HashMap<>();
        for (final Map.Entry<Long, String> e : new TreeMap<>(log).entrySet())
        {
            final Long before = seen.put(e.getValue(), e.getKey());
            assertNull(before, "'" + e.getValue() + "' at offsets " + before + " and " + e.getKey() + context);
            final String[] parts = e.getValue().substring(1).split("-");
            final int producer = Integer.parseInt(parts[0]);
            final int index = Integer.parseInt(parts[1]);
            final Integer previous = lastIndex.put(producer, index);
            if (null != previous)
            {
                assertEquals(previous + PARTITIONS, index, "producer " + producer + "'s record after index " +
                    previous + " is " + index + " at offset " + e.getKey() + context);
            }
        }
        final long last = acked.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
        assertEquals(acked.size(), seen.entrySet().stream().filter((e) -> e.getValue() <= last).count(),
            "records in the log that were never acknowledged" + context);
    }
}
