package io.tidemark.host;

import io.tidemark.kafka.TestCertificates;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three host processes whose Kafka listeners serve SASL_SSL (a key store made by keytool through the kafka module's
 * TestCertificates, users in a 0600 file, given as {@code kafka.*} keys in the hosts' files): Admin creates a topic, an idempotent acks=all
 * KafkaProducer writes and a KafkaConsumer group reads it back, all with SASL/PLAIN over TLS, and SCRAM-SHA-256
 * works too; a wrong password fails with SaslAuthenticationException.
 */
class KafkaSecurityAcrossHostsTest
{
    private static final String TOPIC = "secure-orders";

    @TempDir
    Path tmp;

    @Test
    void saslSslAcrossThreeHostProcesses() throws Exception
    {
        final TestCertificates certificates = TestCertificates.generate(tmp);
        final Path keystore = certificates.keystore;
        final Path truststore = certificates.truststore;
        final Path users = TestCertificates.users(tmp.resolve("kafka-users"),
            Map.of("app", "app-password", "analytics", "analytics-password"));

        final Properties extra = new Properties();
        extra.setProperty("min.insync.replicas", "2");
        extra.setProperty("kafka.security.protocol", "SASL_SSL");
        extra.setProperty("kafka.ssl.keystore.location", keystore.toString());
        extra.setProperty("kafka.ssl.keystore.password", TestCertificates.PASSWORD);
        extra.setProperty("kafka.sasl.users.file", users.toString());
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, extra).withKafka())
        {
            cluster.start();
            final String bootstrap = cluster.kafkaBootstrap();
            // the host's start line names the listener's protocol (as tidemark host prints it)
            assertTrue(ProcessCluster.await(() -> cluster.host(0).output().contains("Kafka listener 127.0.0.1:") &&
                cluster.host(0).output().contains(" SASL_SSL (SASL PLAIN,SCRAM-SHA-256"), 30_000),
                cluster.host(0).output());
            try (Admin admin = Admin.create(secure(new Properties(), bootstrap, "PLAIN", "app", "app-password",
                truststore)))
            {
                assertTrue(ProcessCluster.await(() -> nodes(admin) == 3, 60_000), "three brokers in the metadata");
                admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short)3))).all().get(60, TimeUnit.SECONDS);
            }
            final Set<String> sent = new HashSet<>();
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(secure(
                KafkaAcrossHostsTest.producer(bootstrap), bootstrap, "PLAIN", "app", "app-password", truststore)))
            {
                final List<Future<RecordMetadata>> acks = new ArrayList<>();
                for (int i = 0; i < 300; i++)
                {
                    sent.add("v" + i);
                    acks.add(producer.send(new ProducerRecord<>(TOPIC, "k" + i, "v" + i)));
                }
                for (final Future<RecordMetadata> ack : acks)
                {
                    ack.get(120, TimeUnit.SECONDS);
                }
            }
            final Set<String> read = new HashSet<>();
            try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(secure(
                KafkaAcrossHostsTest.consumer(bootstrap, "secure-group"), bootstrap, "SCRAM-SHA-256", "analytics",
                "analytics-password", truststore)))
            {
                consumer.subscribe(List.of(TOPIC));
                final long deadline = System.currentTimeMillis() + 120_000;
                while (read.size() < sent.size() && System.currentTimeMillis() < deadline)
                {
                    consumer.poll(Duration.ofMillis(200)).forEach((r) -> read.add(r.value()));
                }
                consumer.commitSync();
            }
            assertEquals(sent, read);

            try (Admin admin = Admin.create(secure(new Properties(), bootstrap, "PLAIN", "app", "wrong",
                truststore)))
            {
                final ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
                assertTrue(failure.getCause() instanceof SaslAuthenticationException, failure.getCause().toString());
            }
        }
    }

    private static Properties secure(final Properties props, final String bootstrap, final String mechanism,
        final String user, final String password, final Path truststore)
    {
        props.put("bootstrap.servers", bootstrap);
        return TestCertificates.client(props, mechanism, user, password, truststore);
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
