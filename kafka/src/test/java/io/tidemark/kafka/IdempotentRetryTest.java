package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
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
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * An idempotent acks=all KafkaProducer whose requests time out at the client while the leader still holds them: the
 * leader is cut off from its followers for longer than the client's request timeout, so its appended batches wait for
 * a high watermark that cannot move, the client gives up on the connection (five requests in flight) and sends the
 * same batches again once the links heal. The leader answers those retries from its last five batches of the
 * producer (their original offsets, nothing appended twice): every record is acknowledged, once, in send order.
 */
class IdempotentRetryTest
{
    @TempDir
    Path root;

    @Test
    void parkedRequestsRetriedByTheClient() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .minInsyncReplicas(2).hostSessionTimeoutMs(2_000).replicaLagTimeMaxMs(60_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
        {
            final String topic = "parked";
            cluster.createTopic(topic, 1, 3);
            assertTrue(cluster.awaitLeaders(topic, 60_000));
            final int leader = cluster.leaderOf(new io.tidemark.replication.TopicPartition(topic, 0));
            final Properties props = ClientProps.producer(kafka.bootstrapServers(), "all", true);
            props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "1000");
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
            props.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, "20");
            props.put(ProducerConfig.BATCH_SIZE_CONFIG, "200");
            final List<Future<RecordMetadata>> sent = new ArrayList<>();
            final int count = 2_000;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(props))
            {
                for (int i = 0; i < count; i++)
                {
                    sent.add(producer.send(new ProducerRecord<>(topic, 0, "k", "value-" + i)));
                    if (i % 500 == 250)
                    {
                        for (int h = 0; h < 3; h++)
                        {
                            if (h != leader)
                            {
                                cluster.transport().isolate(leader, h);
                            }
                        }
                        Thread.sleep(2_500);
                        cluster.transport().heal();
                    }
                    if (i % 20 == 0)
                    {
                        Thread.sleep(1);
                    }
                }
                producer.flush();
            }
            int failed = 0;
            String firstFailure = null;
            for (final Future<RecordMetadata> f : sent)
            {
                try
                {
                    f.get();
                }
                catch (final ExecutionException ex)
                {
                    if (failed++ == 0)
                    {
                        firstFailure = ex.getCause().toString();
                    }
                }
            }
            if (failed > 0)
            {
                fail(failed + " sends failed, first: " + firstFailure);
            }
            final List<String> read = new ArrayList<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(
                ClientProps.consumer(kafka.bootstrapServers(), null)))
            {
                final TopicPartition tp = new TopicPartition(topic, 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final long deadline = System.currentTimeMillis() + 60_000;
                while (read.size() < count && System.currentTimeMillis() < deadline)
                {
                    for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                    {
                        read.add(r.value());
                    }
                }
            }
            assertEquals(count, read.size());
            for (int i = 0; i < count; i++)
            {
                assertEquals("value-" + i, read.get(i));
            }
        }
    }
}
