package io.tidemark.kafka;

import io.tidemark.client.Consumer;
import io.tidemark.client.ConsumerContext;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.store.format.HeadersDecoder;
import io.tidemark.store.format.HeadersEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records cross between Tidemark's own clients and Kafka's, both ways, with their keys (null included), values
 * (null and empty included), headers (null values, repeated keys, none) and timestamps intact: Tidemark's
 * {@link Producer} to a {@link KafkaConsumer}, and a {@link KafkaProducer} (uncompressed and gzip-compressed
 * batches) to Tidemark's {@link Consumer}.
 */
class CrossClientTest extends SharedClusterTest
{
    /** One record as both sides should see it. */
    record Sample(byte[] key, byte[] value, List<String[]> headers, long timestamp)
    {
    }

    static List<Sample> samples(final long seed, final int count)
    {
        final Random random = new Random(seed);
        final List<Sample> samples = new ArrayList<>();
        final long base = 1_700_000_000_000L;
        for (int i = 0; i < count; i++)
        {
            final byte[] key = i % 5 == 0 ? null : bytes(random, random.nextInt(20));
            final byte[] value = i % 11 == 0 ? null : bytes(random, random.nextInt(i % 13 == 0 ? 5_000 : 200));
            final List<String[]> headers = new ArrayList<>();
            for (int h = 0, n = random.nextInt(4); h < n; h++)
            {
                headers.add(new String[] {"h" + random.nextInt(3) + "-é", random.nextInt(4) == 0 ? null :
                    "v" + random.nextInt(1000)});
            }
            samples.add(new Sample(key, value, headers, base + random.nextInt(1_000_000)));
        }
        return samples;
    }

    static byte[] bytes(final Random random, final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    @Test
    void tidemarkProducerToKafkaConsumer() throws Exception
    {
        final String topic = "from-tidemark";
        cluster.createTopic(topic, 1, 3);
        assertTrue(cluster.awaitLeaders(topic, 60_000));
        final List<Sample> samples = samples(42, 500);
        final ExpandableArrayBuffer headerBuffer = new ExpandableArrayBuffer();
        try (Producer producer = new Producer(cluster, new ProducerContext()))
        {
            for (final Sample sample : samples)
            {
                final io.tidemark.client.ProducerRecord record = new io.tidemark.client.ProducerRecord().topic(topic)
                    .partition(0).timestamp(sample.timestamp);
                if (null != sample.key)
                {
                    record.key(sample.key);
                }
                if (null != sample.value)
                {
                    record.value(sample.value);
                }
                final HeadersEncoder encoder = new HeadersEncoder().wrap(headerBuffer, 0);
                for (final String[] header : sample.headers)
                {
                    encoder.add(header[0], null == header[1] ? null : header[1].getBytes(StandardCharsets.UTF_8));
                }
                if (encoder.length() > 0)
                {
                    record.headers(headerBuffer, 0, encoder.length());
                }
                producer.send(record);
            }
        }
        final Properties props = ClientProps.consumer(kafka.bootstrapServers(), null);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        final List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props))
        {
            consumer.assign(List.of(new TopicPartition(topic, 0)));
            consumer.seekToBeginning(List.of(new TopicPartition(topic, 0)));
            final long deadline = System.currentTimeMillis() + 30_000;
            while (read.size() < samples.size() && System.currentTimeMillis() < deadline)
            {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
        }
        assertEquals(samples.size(), read.size());
        for (int i = 0; i < samples.size(); i++)
        {
            final Sample sample = samples.get(i);
            final ConsumerRecord<byte[], byte[]> record = read.get(i);
            assertEquals(i, record.offset());
            assertArrayEquals(sample.key, record.key(), "key of record " + i);
            assertArrayEquals(sample.value, record.value(), "value of record " + i);
            assertEquals(sample.timestamp, record.timestamp(), "timestamp of record " + i);
            final Header[] headers = record.headers().toArray();
            assertEquals(sample.headers.size(), headers.length, "headers of record " + i);
            for (int h = 0; h < headers.length; h++)
            {
                assertEquals(sample.headers.get(h)[0], headers[h].key());
                assertEquals(sample.headers.get(h)[1], null == headers[h].value() ? null :
                    new String(headers[h].value(), StandardCharsets.UTF_8));
            }
        }
    }

    @Test
    void kafkaProducerToTidemarkConsumer() throws Exception
    {
        for (final String compression : new String[] {"none", "gzip"})
        {
            final String topic = "from-kafka-" + compression;
            cluster.createTopic(topic, 1, 3);
            assertTrue(cluster.awaitLeaders(topic, 60_000));
            final List<Sample> samples = samples(7, 500);
            final Properties props = ClientProps.producer(kafka.bootstrapServers(), "all", true);
            props.put("key.serializer", ByteArraySerializer.class.getName());
            props.put("value.serializer", ByteArraySerializer.class.getName());
            props.put("compression.type", compression);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props))
            {
                for (final Sample sample : samples)
                {
                    final RecordHeaders headers = new RecordHeaders();
                    for (final String[] header : sample.headers)
                    {
                        headers.add(new RecordHeader(header[0], null == header[1] ? null :
                            header[1].getBytes(StandardCharsets.UTF_8)));
                    }
                    producer.send(new ProducerRecord<>(topic, 0, sample.timestamp, sample.key, sample.value,
                        headers));
                }
                producer.flush();
            }
            final List<Sample> read = new ArrayList<>();
            try (Consumer consumer = new Consumer(cluster, new ConsumerContext()))
            {
                final io.tidemark.replication.TopicPartition tp = new io.tidemark.replication.TopicPartition(topic, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final long deadline = System.currentTimeMillis() + 30_000;
                while (read.size() < samples.size() && System.currentTimeMillis() < deadline)
                {
                    consumer.poll((partition, record) ->
                    {
                        final List<String[]> headers = new ArrayList<>();
                        final HeadersDecoder decoder = record.headers();
                        while (decoder.next())
                        {
                            headers.add(new String[] {decoder.key(), decoder.valueLength() < 0 ? null :
                                decoder.valueAsString()});
                        }
                        read.add(new Sample(record.keyLength() < 0 ? null : record.keyBytes(),
                            record.valueLength() < 0 ? null : record.valueBytes(), headers, record.timestamp()));
                    }, 200);
                }
            }
            assertEquals(samples.size(), read.size(), compression);
            for (int i = 0; i < samples.size(); i++)
            {
                final Sample sample = samples.get(i);
                final Sample got = read.get(i);
                assertArrayEquals(sample.key, got.key, compression + " key of record " + i);
                if (null == sample.value)
                {
                    assertNull(got.value);
                }
                else
                {
                    assertArrayEquals(sample.value, got.value, compression + " value of record " + i);
                }
                assertEquals(sample.timestamp, got.timestamp, compression + " timestamp of record " + i);
                assertEquals(sample.headers.size(), got.headers.size());
                for (int h = 0; h < got.headers.size(); h++)
                {
                    assertTrue(Arrays.equals(sample.headers.get(h), got.headers.get(h)), "header " + h);
                }
            }
        }
    }
}
