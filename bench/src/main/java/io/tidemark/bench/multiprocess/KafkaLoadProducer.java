package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;
import org.agrona.DirectBuffer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

/**
 * Kafka's own {@link KafkaProducer} in the bench's JVM, configured as {@link ProducerSettings} says: the producer of
 * a real Kafka ({@link KafkaTarget}) and of Tidemark's hosts through their Kafka listeners ({@link TidemarkTarget}
 * in the {@code kafka-clients} mode). Thread-safe as KafkaProducer is.
 */
final class KafkaLoadProducer implements LoadProducer
{
    private final KafkaProducer<byte[], byte[]> producer;
    private final String topic;

    /**
     * @param bootstrap {@code bootstrap.servers}.
     * @param topic     the topic every record goes to (null keys: the producer spreads them over its partitions).
     * @param settings  acks, batch, linger, buffer; idempotence on for acks=all only, no compression.
     */
    KafkaLoadProducer(final String bootstrap, final String topic, final ProducerSettings settings)
    {
        this.topic = topic;
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, settings.acks() == Acks.ALL ? "all" : Integer.toString(settings.acks()));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, settings.batchSize());
        p.put(ProducerConfig.LINGER_MS_CONFIG, (int)settings.lingerMs());
        p.put(ProducerConfig.BUFFER_MEMORY_CONFIG, settings.bufferMemory());
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, ProducerSettings.MAX_IN_FLIGHT);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, settings.acks() == Acks.ALL);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        this.producer = new KafkaProducer<>(p);
    }

    @Override
    public void send(final DirectBuffer value, final int length, final Completion completion)
    {
        Callback callback = (Callback)completion.targetCallback;
        if (null == callback)
        {
            callback = new Adapter(completion);
            completion.targetCallback = callback;
        }
        producer.send(new ProducerRecord<>(topic, null, copy(value, length)), callback);
    }

    @Override
    public long sendAndWait(final DirectBuffer value, final int length)
    {
        try
        {
            return producer.send(new ProducerRecord<>(topic, null, copy(value, length))).get().offset();
        }
        catch (final ExecutionException ex)
        {
            throw new IllegalStateException("send failed: " + ex.getCause(), ex.getCause());
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    /** A Kafka value is a byte[] the producer keeps until it is in a batch: a fresh one per record. */
    private static byte[] copy(final DirectBuffer value, final int length)
    {
        final byte[] bytes = new byte[length];
        value.getBytes(0, bytes);
        return bytes;
    }

    @Override
    public void close(final long drainMs)
    {
        producer.close(Duration.ofMillis(drainMs));
    }

    /** A completion as Kafka's callback (one per completion). */
    private record Adapter(LoadProducer.Completion completion) implements Callback
    {
        @Override
        public void onCompletion(final RecordMetadata metadata, final Exception exception)
        {
            if (null == exception)
            {
                completion.onCompletion(metadata.partition(), metadata.hasOffset() ? metadata.offset() : -1, null,
                    null);
            }
            else
            {
                completion.onCompletion(null == metadata ? -1 : metadata.partition(), -1,
                    exception.getClass().getSimpleName(), exception.toString());
            }
        }
    }
}
