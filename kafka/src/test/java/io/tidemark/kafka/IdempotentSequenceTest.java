package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.SimpleRecord;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.ProduceResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leader's sequence rules as a Kafka client meets them, request by request over a socket (the requests an
 * idempotent KafkaProducer sends, written with kafka-clients' own classes, so that each step's timing is the test's).
 * <p>
 * The case that once failed a KafkaProducer with OutOfOrderSequenceException under load: the producer pipelines up to
 * five batches; its first batch to a partition is refused without being appended (NOT_ENOUGH_REPLICAS while the ISR
 * is short, REQUEST_TIMED_OUT from a full leader queue, NOT_LEADER_OR_FOLLOWER during a leader move), and the next
 * one, already on the wire, arrives once the partition can take it. A leader with no state for the producer accepted
 * any sequence, so the second batch was appended before the first: the client then counted the second as its last
 * acknowledged sequence, every retry of the first was refused as out of order (it is not the next one after the
 * second), and at the delivery timeout the first batch failed with OutOfOrderSequenceException, after its successor
 * had been written. A leader now requires sequence 0 from a producer (or producer epoch) it has no state for: the
 * second batch is refused as out of order, which the client retries after the first.
 */
class IdempotentSequenceTest
{
    private static final String TOPIC = "seq";
    private static final short PRODUCE_VERSION = 12;

    @TempDir
    Path root;

    private int correlationId;

    @Test
    void aBatchCannotOvertakeTheRefusedFirstBatchOfItsProducer() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2).replicaLagTimeMaxMs(500).hostSessionTimeoutMs(60_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
        {
            cluster.createTopic(TOPIC, 1, 3);
            assertTrue(cluster.awaitLeaders(TOPIC, 60_000), "a leader");
            final io.tidemark.replication.TopicPartition tp = new io.tidemark.replication.TopicPartition(TOPIC, 0);
            assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 3, 60_000), "a full ISR");
            final int leader = cluster.leaderOf(tp);
            try (Socket socket = new Socket("127.0.0.1", kafka.listener(leader).port()))
            {
                socket.setSoTimeout(60_000);
                final long producerId = initProducerId(socket);

                // the followers are cut off and fall behind (an acks=1 write of another producer): the ISR shrinks
                // to the leader, below min.insync.replicas
                for (int host = 0; host < 3; host++)
                {
                    if (host != leader)
                    {
                        cluster.transport().isolate(leader, host);
                    }
                }
                assertEquals(Errors.NONE, produce(socket, RecordBatch.NO_PRODUCER_ID, -1, -1, 1, (short)1));
                assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 1, 60_000),
                    "the ISR shrinks to the leader: " + cluster.state(tp));
                assertEquals(Errors.NOT_ENOUGH_REPLICAS, produce(socket, producerId, 0, 0, 3),
                    "the first batch is refused, not appended");

                // the second batch was already sent by the client; it arrives once the ISR is whole again
                cluster.transport().heal();
                assertTrue(cluster.await(() -> cluster.state(tp).isr().length >= 2, 60_000),
                    "the ISR grows back: " + cluster.state(tp));
                assertEquals(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, produceWithIsr(cluster, socket, producerId, 3),
                    "a batch whose predecessor the leader never took may not be appended before it");

                // the client retries the first, then the second: both land, in order
                assertEquals(Errors.NONE, produceWithIsr(cluster, socket, producerId, 0));
                assertEquals(Errors.NONE, produceWithIsr(cluster, socket, producerId, 3));
                assertEquals(Errors.NONE, produceWithIsr(cluster, socket, producerId, 3),
                    "a retry is answered, not appended");
                assertEquals(Errors.NONE, produceWithIsr(cluster, socket, producerId, 6));
            }
            assertEquals(List.of("v-1", "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"), readAll(kafka, 10));
        }
    }

    @Test
    void anEpochStartsAtSequenceZero() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2).hostSessionTimeoutMs(60_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
        {
            cluster.createTopic(TOPIC, 1, 3);
            assertTrue(cluster.awaitLeaders(TOPIC, 60_000), "a leader");
            final int leader = cluster.leaderOf(new io.tidemark.replication.TopicPartition(TOPIC, 0));
            try (Socket socket = new Socket("127.0.0.1", kafka.listener(leader).port()))
            {
                socket.setSoTimeout(60_000);
                final long producerId = initProducerId(socket);
                assertEquals(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, produce(socket, producerId, 0, 5, 2),
                    "a producer the leader has no state for starts at sequence 0");
                assertEquals(Errors.NONE, produce(socket, producerId, 0, 0, 2));
                assertEquals(Errors.NONE, produce(socket, producerId, 0, 2, 2));
                assertEquals(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, produce(socket, producerId, 0, 5, 2), "a gap");
                assertEquals(Errors.OUT_OF_ORDER_SEQUENCE_NUMBER, produce(socket, producerId, 1, 4, 2),
                    "a new epoch starts at sequence 0");
                assertEquals(Errors.NONE, produce(socket, producerId, 1, 0, 2));
                assertEquals(Errors.INVALID_PRODUCER_EPOCH, produce(socket, producerId, 0, 4, 2),
                    "the older epoch is fenced");
                assertEquals(Errors.NONE, produce(socket, producerId, 1, 2, 2));
            }
            assertEquals(List.of("v0", "v1", "v2", "v3", "v0", "v1", "v2", "v3"), readAll(kafka, 8));
        }
    }

    private long initProducerId(final Socket socket) throws IOException
    {
        final short version = 5;
        final InitProducerIdRequest request = new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
            .setTransactionalId(null).setTransactionTimeoutMs(Integer.MAX_VALUE)).build(version);
        final int id = ++correlationId;
        final RequestHeader header = new RequestHeader(ApiKeys.INIT_PRODUCER_ID, version, "seq-test", id);
        final InitProducerIdResponse response = (InitProducerIdResponse)ProtocolFuzzTest.exchange(socket,
            ProtocolFuzzTest.frame(request, version, id), header);
        assertEquals(Errors.NONE.code(), response.data().errorCode());
        return response.data().producerId();
    }

    /** Produce one batch of {@code count} records "v{sequence}".. with acks=all. @return the partition's error. */
    /**
     * Produce three records at {@code baseSequence} in epoch 0, retried as a client would while the ISR is below
     * min.insync.replicas: with the cores busy, a follower can lag past the test's short replica.lag.time.max.ms and
     * leave the ISR again (NOT_ENOUGH_REPLICAS, or NOT_ENOUGH_REPLICAS_AFTER_APPEND for a batch appended but not
     * acknowledged, which the retry finds as a duplicate).
     */
    private Errors produceWithIsr(final ReplicationCluster cluster, final Socket socket, final long producerId,
        final int baseSequence) throws IOException
    {
        final io.tidemark.replication.TopicPartition tp = new io.tidemark.replication.TopicPartition(TOPIC, 0);
        final long deadline = System.nanoTime() + 60_000_000_000L;
        Errors result = produce(socket, producerId, 0, baseSequence, 3);
        while ((result == Errors.NOT_ENOUGH_REPLICAS || result == Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND) &&
            System.nanoTime() < deadline)
        {
            assertTrue(cluster.await(() -> cluster.state(tp).isr().length >= 2, 60_000),
                "the ISR grows back: " + cluster.state(tp));
            result = produce(socket, producerId, 0, baseSequence, 3);
        }
        return result;
    }

    private Errors produce(final Socket socket, final long producerId, final int epoch, final int baseSequence,
        final int count) throws IOException
    {
        return produce(socket, producerId, epoch, baseSequence, count, (short)-1);
    }

    private Errors produce(final Socket socket, final long producerId, final int epoch, final int baseSequence,
        final int count, final short acks) throws IOException
    {
        final SimpleRecord[] records = new SimpleRecord[count];
        for (int i = 0; i < count; i++)
        {
            records[i] = new SimpleRecord(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8),
                ("v" + (baseSequence + i)).getBytes(StandardCharsets.UTF_8));
        }
        final MemoryRecords batch = producerId < 0 ? MemoryRecords.withRecords(Compression.NONE, records) :
            MemoryRecords.withIdempotentRecords(RecordBatch.CURRENT_MAGIC_VALUE, 0L, Compression.NONE, producerId,
                (short)epoch, baseSequence, RecordBatch.NO_PARTITION_LEADER_EPOCH, records);
        final ProduceRequestData data = new ProduceRequestData().setAcks(acks).setTimeoutMs(30_000);
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(TOPIC).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(batch))));
        data.setTopicData(topics);
        final ProduceRequest request = new ProduceRequest(data, PRODUCE_VERSION);
        final int id = ++correlationId;
        final RequestHeader header = new RequestHeader(ApiKeys.PRODUCE, PRODUCE_VERSION, "seq-test", id);
        final ProduceResponse response = (ProduceResponse)ProtocolFuzzTest.exchange(socket,
            ProtocolFuzzTest.frame(request, PRODUCE_VERSION, id), header);
        final ProduceResponseData.PartitionProduceResponse partition = response.data().responses().iterator().next()
            .partitionResponses().get(0);
        return Errors.forCode(partition.errorCode());
    }

    private static List<String> readAll(final InProcessKafka kafka, final int expected)
    {
        final List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
            ClientProps.consumer(kafka.bootstrapServers(), null)))
        {
            final TopicPartition tp = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long deadline = System.currentTimeMillis() + 60_000;
            while (values.size() < expected && System.currentTimeMillis() < deadline)
            {
                for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200)))
                {
                    values.add(record.value());
                }
            }
            for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500)))
            {
                values.add(record.value());
            }
        }
        return values;
    }
}
