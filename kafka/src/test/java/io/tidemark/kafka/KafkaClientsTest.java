package io.tidemark.kafka;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real KafkaProducer (acks 0, 1 and all; idempotence on with acks=all) and KafkaConsumer (assigned partitions)
 * against an in-process cluster of 3 hosts (min.insync.replicas=2) behind one Kafka listener per host: every record
 * acknowledged is read back once, in order per partition, with its key and value.
 */
class KafkaClientsTest extends SharedClusterTest
{
    @ParameterizedTest
    @CsvSource({"all,true", "all,false", "1,false", "0,false"})
    void producedRecordsAreReadBack(final String acks, final boolean idempotent) throws Exception
    {
        final String topic = "t-acks-" + acks + "-" + idempotent;
        cluster.createTopic(topic, 3, 3);
        assertTrue(cluster.awaitLeaders(topic, 60_000));
        final int count = 3_000;
        final List<Future<RecordMetadata>> sent = new ArrayList<>();
        final Set<String> acknowledged = new HashSet<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
            ClientProps.producer(kafka.bootstrapServers(), acks, idempotent)))
        {
            for (int i = 0; i < count; i++)
            {
                sent.add(producer.send(new ProducerRecord<>(topic, "key-" + (i % 7), "value-" + i)));
            }
            producer.flush();
            for (int i = 0; i < count; i++)
            {
                final RecordMetadata metadata = sent.get(i).get();
                if (!acks.equals("0"))
                {
                    assertTrue(metadata.offset() >= 0);
                    acknowledged.add("value-" + i);
                }
            }
        }
        long logEnd = 0;
        for (int p = 0; p < 3; p++)
        {
            final io.tidemark.replication.TopicPartition tp = new io.tidemark.replication.TopicPartition(topic, p);
            try (io.tidemark.replication.PartitionReader reader = cluster.openReader(tp))
            {
                assertTrue(cluster.await(() -> reader.highWatermark() == reader.logEndOffset(), 60_000));
                logEnd += reader.highWatermark();
            }
        }
        final List<ConsumerRecord<String, String>> read = readAll(topic, 3, logEnd);
        if (acks.equals("0"))
        {
            // acks=0: the producer's close does not wait for the listener to append what it sent, so records may
            // still land after the logs' ends were read above; none may be missing and none made up
            assertTrue(read.size() >= logEnd && read.size() <= count, "every record in the logs is read: " +
                read.size() + " read, " + logEnd + " in the logs at the check, " + count + " sent");
        }
        else
        {
            assertEquals(logEnd, read.size(), "every record in the logs is read");
        }
        final long[] nextOffset = new long[3];
        final int[] lastValue = {-1, -1, -1};
        final Set<String> values = new HashSet<>();
        for (final ConsumerRecord<String, String> record : read)
        {
            assertEquals(nextOffset[record.partition()]++, record.offset(), "offsets are dense");
            final int value = Integer.parseInt(record.value().substring("value-".length()));
            assertEquals("key-" + (value % 7), record.key());
            final boolean first = values.add(record.value());
            if (idempotent || acks.equals("0"))
            {
                // idempotence: each record once, in send order; acks=0 never retries (it may lose, not repeat)
                assertTrue(first, "no duplicate " + record.value());
                assertTrue(value > lastValue[record.partition()], "in send order per partition");
            }
            lastValue[record.partition()] = value;
        }
        assertTrue(values.containsAll(acknowledged), "every acknowledged record is in the log");
        if (idempotent)
        {
            assertEquals(count, read.size());
        }
    }

    List<ConsumerRecord<String, String>> readAll(final String topic, final int partitions, final long count)
    {
        final List<ConsumerRecord<String, String>> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
            ClientProps.consumer(kafka.bootstrapServers(), null)))
        {
            final List<TopicPartition> assigned = new ArrayList<>();
            for (int p = 0; p < partitions; p++)
            {
                assigned.add(new TopicPartition(topic, p));
            }
            consumer.assign(assigned);
            consumer.seekToBeginning(assigned);
            final long deadline = System.currentTimeMillis() + 60_000; // a liveness guard
            while (read.size() < count && System.currentTimeMillis() < deadline)
            {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        return read;
    }
}
