package io.tidemark.host;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three host processes whose Kafka listeners serve SASL_SSL (a key store made by keytool here, users in a 0600
 * file, given as {@code kafka.*} keys in the hosts' files): Admin creates a topic, an idempotent acks=all
 * KafkaProducer writes and a KafkaConsumer group reads it back, all with SASL/PLAIN over TLS, and SCRAM-SHA-256
 * works too; a wrong password fails with SaslAuthenticationException.
 */
class KafkaSecurityAcrossHostsTest
{
    private static final String TOPIC = "secure-orders";
    private static final String STORE_PASSWORD = "host-test-store";

    @TempDir
    Path tmp;

    @Test
    void saslSslAcrossThreeHostProcesses() throws Exception
    {
        final Path keystore = tmp.resolve("listener.p12");
        final Path truststore = tmp.resolve("trust.p12");
        keytool("-genkeypair", "-alias", "listener", "-keyalg", "EC", "-groupname", "secp256r1", "-dname",
            "CN=localhost", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2", "-keystore",
            keystore.toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD);
        keytool("-exportcert", "-alias", "listener", "-keystore", keystore.toString(), "-storepass", STORE_PASSWORD,
            "-rfc", "-file", tmp.resolve("listener.crt").toString());
        keytool("-importcert", "-noprompt", "-alias", "listener", "-file", tmp.resolve("listener.crt").toString(),
            "-keystore", truststore.toString(), "-storetype", "PKCS12", "-storepass", STORE_PASSWORD);
        final Path users = tmp.resolve("kafka-users");
        Files.createFile(users, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        Files.writeString(users, "app=app-password\nanalytics=analytics-password\n", StandardCharsets.UTF_8);

        final Properties extra = new Properties();
        extra.setProperty("min.insync.replicas", "2");
        extra.setProperty("kafka.security.protocol", "SASL_SSL");
        extra.setProperty("kafka.ssl.keystore.location", keystore.toString());
        extra.setProperty("kafka.ssl.keystore.password", STORE_PASSWORD);
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
        props.put("security.protocol", "SASL_SSL");
        props.put("sasl.mechanism", mechanism);
        props.put("sasl.jaas.config", (mechanism.equals("PLAIN") ?
            "org.apache.kafka.common.security.plain.PlainLoginModule" :
            "org.apache.kafka.common.security.scram.ScramLoginModule") + " required username=\"" + user +
            "\" password=\"" + password + "\";");
        props.put("ssl.truststore.location", truststore.toString());
        props.put("ssl.truststore.password", STORE_PASSWORD);
        props.put("ssl.truststore.type", "PKCS12");
        return props;
    }

    private static void keytool(final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0)
        {
            process.destroyForcibly();
            throw new IOException("keytool " + command + " failed: " + output);
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
