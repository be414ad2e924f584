package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.ConfigException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.SslAuthenticationException;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslAuthenticateResponse;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SaslHandshakeResponse;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A SASL_SSL listener against unmodified Kafka clients (kafka-clients 4.x) and against hostile peers: Admin,
 * KafkaProducer and KafkaConsumer authenticate with SASL/PLAIN and SCRAM-SHA-256 over TLS and work; a wrong password
 * or an unknown user fails with SaslAuthenticationException; a client that does not trust the listener's certificate
 * fails with SslAuthenticationException; requests before authentication, a TLS 1.2 renegotiation, garbage,
 * truncated handshakes and clients that stop mid-handshake close their connections (those that stall, at
 * {@code kafka.authentication.timeout.ms}) while the listener keeps serving the others. The configuration errors
 * (PLAINTEXT on a network address, a wrong key store password, a users file others may read) are typed and name
 * their key. The key stores are made by keytool in the test.
 */
class KafkaSecurityTest
{
    private static final String TOPIC = "secure";
    private static final String ALICE = "alice";
    private static final String ALICE_PASSWORD = "alice-pass=with-equals";
    private static final String BOB = "bob";
    private static final String BOB_PASSWORD = "bob-scram-secret";

    @TempDir
    static Path root;
    static TestCertificates certificates;
    static Path users;
    static ReplicationCluster cluster;
    static InProcessKafka kafka;

    @BeforeAll
    static void start() throws Exception
    {
        certificates = TestCertificates.generate(Files.createDirectories(root.resolve("tls")));
        users = TestCertificates.users(root.resolve("users"), Map.of(ALICE, ALICE_PASSWORD, BOB, BOB_PASSWORD));
        cluster = ReplicationCluster.start(root.resolve("cluster"), 3, new ReplicationContext()
            .hostSessionTimeoutMs(10_000));
        kafka = InProcessKafka.start(cluster, certificates.saslSsl(users).authenticationTimeoutMs(2_000)
            .errorLogIntervalMs(60_000).groupInitialRebalanceDelayMs(0));
    }

    @AfterAll
    static void stop()
    {
        if (null != kafka)
        {
            kafka.close();
        }
        if (null != cluster)
        {
            cluster.close();
        }
    }

    private static Properties secure(final Properties props, final String mechanism, final String user,
        final String password)
    {
        return TestCertificates.client(props, mechanism, user, password, certificates.truststore);
    }

    private static Properties admin(final String mechanism, final String user, final String password)
    {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
        return secure(props, mechanism, user, password);
    }

    private static long failedAuthentications()
    {
        long failed = 0;
        for (int id = 0; id < 3; id++)
        {
            failed += kafka.listener(id).failedAuthentications();
        }
        return failed;
    }

    @Test
    void plainAndScramClientsWriteReadAndAdminister() throws Exception
    {
        try (Admin admin = Admin.create(admin("PLAIN", ALICE, ALICE_PASSWORD)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)3))).all().get(60, TimeUnit.SECONDS);
            assertEquals(2, admin.describeTopics(List.of(TOPIC)).allTopicNames().get(60, TimeUnit.SECONDS)
                .get(TOPIC).partitions().size());
            assertEquals(3, admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).size());
        }
        final List<String> sent = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(secure(ClientProps.producer(
            kafka.bootstrapServers(), "all", true), "PLAIN", ALICE, ALICE_PASSWORD));
             KafkaProducer<String, String> scramProducer = new KafkaProducer<>(secure(ClientProps.producer(
                 kafka.bootstrapServers(), "all", true), "SCRAM-SHA-256", BOB, BOB_PASSWORD)))
        {
            final List<Future<RecordMetadata>> acks = new ArrayList<>();
            for (int i = 0; i < 100; i++)
            {
                final KafkaProducer<String, String> p = i % 2 == 0 ? producer : scramProducer;
                // every tenth record is large: requests and fetches span many TLS records and fill the sockets
                final String value = (i % 2 == 0 ? "plain-" : "scram-") + i + (i % 10 == 0 ? "x".repeat(300_000) : "");
                sent.add(value);
                acks.add(p.send(new ProducerRecord<>(TOPIC, "k" + i, value)));
            }
            for (final Future<RecordMetadata> ack : acks)
            {
                assertTrue(ack.get(60, TimeUnit.SECONDS).offset() >= 0);
            }
        }
        final List<String> read = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(secure(ClientProps.consumer(
            kafka.bootstrapServers(), "secure-group"), "SCRAM-SHA-256", BOB, BOB_PASSWORD)))
        {
            consumer.subscribe(List.of(TOPIC));
            final long deadline = System.currentTimeMillis() + 60_000;
            while (read.size() < sent.size() && System.currentTimeMillis() < deadline)
            {
                for (final ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(record.value());
                }
            }
            consumer.commitSync();
        }
        read.sort(null);
        sent.sort(null);
        assertEquals(sent, read);
    }

    @Test
    void aWrongPasswordOrAnUnknownUserIsRefused() throws Exception
    {
        final long before = failedAuthentications();
        for (final String[] attempt : List.of(new String[] {"PLAIN", ALICE, "not-her-password"},
            new String[] {"PLAIN", "mallory", ALICE_PASSWORD}, new String[] {"SCRAM-SHA-256", BOB, "wrong"},
            new String[] {"SCRAM-SHA-256", "mallory", BOB_PASSWORD}))
        {
            try (Admin admin = Admin.create(admin(attempt[0], attempt[1], attempt[2])))
            {
                final ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
                assertTrue(failure.getCause() instanceof SaslAuthenticationException,
                    Arrays.toString(attempt) + ": " + failure.getCause());
            }
        }
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(secure(ClientProps.producer(
            kafka.bootstrapServers(), "all", true), "PLAIN", ALICE, "wrong")))
        {
            final Exception failure = assertThrows(Exception.class, () -> producer.partitionsFor(TOPIC));
            assertTrue(causedBy(failure, SaslAuthenticationException.class), failure.toString());
        }
        assertTrue(await(() -> failedAuthentications() >= before + 5, 30_000),
            "counted: " + (failedAuthentications() - before));
    }

    @Test
    void aClientThatDoesNotTrustTheCertificateIsRefused() throws Exception
    {
        final Properties props = admin("PLAIN", ALICE, ALICE_PASSWORD);
        props.put("ssl.truststore.location", certificates.untrustedTruststore.toString());
        try (Admin admin = Admin.create(props))
        {
            final ExecutionException failure = assertThrows(ExecutionException.class,
                () -> admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
            assertTrue(failure.getCause() instanceof SslAuthenticationException, failure.getCause().toString());
        }
        // and a client without TLS (PLAINTEXT against SASL_SSL) gets nowhere either
        final Properties plain = new Properties();
        plain.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        plain.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "3000");
        plain.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "3000");
        try (Admin admin = Admin.create(plain))
        {
            assertThrows(ExecutionException.class, () -> admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
        }
    }

    @Test
    void requestsBeforeAuthenticationAndRenegotiationCloseTheConnection() throws Exception
    {
        final long before = failedAuthentications();
        final int port = kafka.listener(0).port();
        try (SSLSocket socket = tlsSocket(port, "TLSv1.3"))
        {
            // ApiVersions is served before authentication, and lists the SASL APIs
            final ApiVersionsRequest versions = new ApiVersionsRequest(new ApiVersionsRequestData()
                .setClientSoftwareName("test").setClientSoftwareVersion("1"), (short)3);
            final ApiVersionsResponse answer = (ApiVersionsResponse)ProtocolFuzzTest.exchange(socket,
                ProtocolFuzzTest.frame(versions, (short)3, 1), new RequestHeader(ApiKeys.API_VERSIONS, (short)3,
                    "fuzz", 1));
            assertNotNull(answer);
            assertNotNull(answer.data().apiKeys().find(ApiKeys.SASL_HANDSHAKE.id));
            assertNotNull(answer.data().apiKeys().find(ApiKeys.SASL_AUTHENTICATE.id));
            // on an established TLS 1.3 connection the JDK's startHandshake sends a KeyUpdate: served, not refused
            socket.startHandshake();
            assertNotNull(ProtocolFuzzTest.exchange(socket, ProtocolFuzzTest.frame(versions, (short)3, 3),
                new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "fuzz", 3)), "answered after a key update");
            // Metadata is not
            final MetadataRequest metadata = new MetadataRequest(new MetadataRequestData().setTopics(null),
                (short)12);
            assertEquals(null, ProtocolFuzzTest.exchange(socket, ProtocolFuzzTest.frame(metadata, (short)12, 2),
                new RequestHeader(ApiKeys.METADATA, (short)12, "fuzz", 2)), "closed, not answered");
        }
        try (SSLSocket socket = tlsSocket(port, "TLSv1.3"))
        {
            // a large request before authentication is refused at its size prefix
            socket.getOutputStream().write(ByteBuffer.allocate(4).putInt(KafkaListener
                .MAX_UNAUTHENTICATED_REQUEST_BYTES + 1).array());
            socket.getOutputStream().flush();
            assertTrue(closedByPeer(socket, 30_000));
        }
        final long badBefore = kafka.listener(0).badFrames();
        try (SSLSocket socket = tlsSocket(port, "TLSv1.2"))
        {
            socket.startHandshake(); // a second handshake on the connection: renegotiation, refused
            assertTrue(closedByPeer(socket, 30_000), "the listener closes a renegotiating connection");
        }
        catch (final IOException expected)
        {
            // the refusal may surface in startHandshake itself
        }
        assertTrue(await(() -> kafka.listener(0).badFrames() > badBefore, 30_000),
            "the listener saw the renegotiation and refused it");
        assertTrue(await(() -> failedAuthentications() >= before + 2, 30_000));
        assertServing();
    }

    @Test
    void badSaslExchangesAreAnsweredAndClosed() throws Exception
    {
        final int port = kafka.listener(2).port();
        final long before = kafka.listener(2).failedAuthentications();
        final Random random = new Random(7);
        int refused = 0;
        for (int round = 0; round < 12; round++)
        {
            try (SSLSocket socket = tlsSocket(port, "TLSv1.3"))
            {
                final String mechanism = round % 3 == 0 ? "GSSAPI" : round % 3 == 1 ? "PLAIN" : "SCRAM-SHA-256";
                final SaslHandshakeResponse handshake = (SaslHandshakeResponse)ProtocolFuzzTest.exchange(socket,
                    ProtocolFuzzTest.frame(new SaslHandshakeRequest.Builder(new SaslHandshakeRequestData()
                        .setMechanism(mechanism)).build((short)1), (short)1, 1),
                    new RequestHeader(ApiKeys.SASL_HANDSHAKE, (short)1, "fuzz", 1));
                assertNotNull(handshake);
                if (mechanism.equals("GSSAPI"))
                {
                    assertEquals(Errors.UNSUPPORTED_SASL_MECHANISM.code(), handshake.data().errorCode());
                    assertTrue(handshake.data().mechanisms().contains("PLAIN"));
                    assertTrue(closedByPeer(socket, 30_000));
                    refused++;
                    continue;
                }
                assertEquals(Errors.NONE.code(), handshake.data().errorCode());
                final byte[] token = new byte[random.nextInt(300)];
                random.nextBytes(token);
                if (round % 4 == 1 && token.length > 2)
                {
                    token[0] = 0; // PLAIN's shape: authzid NUL user NUL password, with a random password
                    token[token.length / 2] = 0;
                }
                final SaslAuthenticateResponse answer = (SaslAuthenticateResponse)ProtocolFuzzTest.exchange(socket,
                    ProtocolFuzzTest.frame(new SaslAuthenticateRequest.Builder(new SaslAuthenticateRequestData()
                        .setAuthBytes(token)).build((short)2), (short)2, 2),
                    new RequestHeader(ApiKeys.SASL_AUTHENTICATE, (short)2, "fuzz", 2));
                assertNotNull(answer);
                assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.data().errorCode(),
                    mechanism + ": " + answer.data());
                assertTrue(closedByPeer(socket, 30_000));
                refused++;
            }
        }
        assertEquals(12, refused);
        final long counted = kafka.listener(2).failedAuthentications() - before;
        assertTrue(counted >= 12, "counted " + counted);
        assertServing();
    }

    @Test
    void garbageTruncatedAndStalledHandshakesDoNotStopTheListener() throws Exception
    {
        final int port = kafka.listener(1).port();
        final byte[] hello = clientHello(port);
        final Random random = new Random(42);
        final List<Socket> stalled = new ArrayList<>();
        try
        {
            for (int round = 0; round < 20; round++)
            {
                final byte[] garbage = new byte[1 + random.nextInt(4000)];
                random.nextBytes(garbage);
                final byte[] bytes = switch (round % 5)
                {
                    case 0 -> garbage;
                    case 1 -> Arrays.copyOf(hello, 1 + random.nextInt(hello.length - 1)); // truncated record
                    case 2 -> concat(hello, garbage); // a hello, then noise
                    case 3 -> concat(Arrays.copyOf(hello, 5), garbage); // a record header, then noise
                    default -> {
                        final byte[] flipped = hello.clone();
                        flipped[5 + random.nextInt(flipped.length - 5)] ^= (byte)(1 + random.nextInt(255));
                        yield flipped;
                    }
                };
                final Socket socket = new Socket("127.0.0.1", port);
                socket.getOutputStream().write(bytes);
                if (round % 5 == 1)
                {
                    socket.close(); // a client that gives up mid-record
                }
                else
                {
                    stalled.add(socket);
                }
            }
            final Socket silent = new Socket("127.0.0.1", port); // connects and never speaks
            stalled.add(silent);
            final Socket midHandshake = new Socket("127.0.0.1", port); // a whole hello, then silence
            midHandshake.getOutputStream().write(hello);
            stalled.add(midHandshake);

            assertServing(); // while those connections are open
            for (final Socket socket : stalled)
            {
                assertTrue(closedByPeer(socket, 60_000), "the listener closes a connection that does not " +
                    "authenticate (garbage at once, silence at kafka.authentication.timeout.ms)");
            }
        }
        finally
        {
            for (final Socket socket : stalled)
            {
                socket.close();
            }
        }
        assertTrue(kafka.listener(1).failedAuthentications() >= 18, "counted: " +
            kafka.listener(1).failedAuthentications());
        assertServing();
    }

    @Test
    void saslPlaintextOnLoopbackAndMutualTls() throws Exception
    {
        try (InProcessKafka saslPlaintext = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")
            .securityProtocol(SecurityProtocol.SASL_PLAINTEXT).saslUsersFile(users).errorLogIntervalMs(60_000));
             InProcessKafka mutualTls = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")
                 .securityProtocol(SecurityProtocol.SSL).sslKeystore(certificates.keystore, TestCertificates.PASSWORD)
                 .sslTruststore(certificates.untrustedTruststore, TestCertificates.PASSWORD).sslClientAuth("required")
                 .errorLogIntervalMs(60_000)))
        {
            final Properties sasl = new Properties();
            sasl.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, saslPlaintext.bootstrapServers());
            sasl.put("security.protocol", "SASL_PLAINTEXT");
            sasl.put("sasl.mechanism", "SCRAM-SHA-256");
            sasl.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required " +
                "username=\"" + BOB + "\" password=\"" + BOB_PASSWORD + "\";");
            try (Admin admin = Admin.create(sasl))
            {
                assertEquals(3, admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).size());
            }

            // mutual TLS: a client with a certificate the listener trusts gets in, one without does not
            final Properties tls = new Properties();
            tls.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, mutualTls.bootstrapServers());
            tls.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "60000");
            tls.put("security.protocol", "SSL");
            tls.put("ssl.truststore.location", certificates.truststore.toString());
            tls.put("ssl.truststore.password", TestCertificates.PASSWORD);
            tls.put("ssl.truststore.type", "PKCS12");
            try (Admin admin = Admin.create(tls))
            {
                final ExecutionException failure = assertThrows(ExecutionException.class,
                    () -> admin.describeCluster().nodes().get(60, TimeUnit.SECONDS));
                assertTrue(causedBy(failure, SslAuthenticationException.class), failure.getCause().toString());
            }
            tls.put("ssl.keystore.location", certificates.otherKeystore.toString());
            tls.put("ssl.keystore.password", TestCertificates.PASSWORD);
            tls.put("ssl.key.password", TestCertificates.PASSWORD);
            tls.put("ssl.keystore.type", "PKCS12");
            try (Admin admin = Admin.create(tls))
            {
                assertEquals(3, admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).size());
            }
        }
    }

    @Test
    void configurationErrorsNameTheirKey() throws Exception
    {
        assertEquals(KafkaContext.SECURITY_PROTOCOL, assertThrows(ConfigException.class,
            () -> new KafkaContext().listener("0.0.0.0:0").validate()).key(), "PLAINTEXT on a network address");
        new KafkaContext().listener("0.0.0.0:0").allowPlaintext(true).validate();
        new KafkaContext().listener("localhost:0").validate();
        assertEquals(KafkaContext.SECURITY_PROTOCOL, assertThrows(ConfigException.class,
            () -> new KafkaContext().listener("0.0.0.0:0").allowPlaintext(true)
                .securityProtocol(SecurityProtocol.SASL_PLAINTEXT).saslUsersFile(users).validate()).key());
        assertEquals(KafkaContext.SSL_KEYSTORE_LOCATION, assertThrows(ConfigException.class,
            () -> new KafkaContext().listener("0.0.0.0:0").securityProtocol(SecurityProtocol.SSL).validate())
            .key());
        assertEquals(KafkaContext.SASL_USERS_FILE, assertThrows(ConfigException.class,
            () -> new KafkaContext().securityProtocol(SecurityProtocol.SASL_SSL)
                .sslKeystore(certificates.keystore, TestCertificates.PASSWORD).validate()).key());

        final Map<String, String> properties = new HashMap<>();
        properties.put(KafkaContext.LISTENER, "0.0.0.0:0");
        properties.put(KafkaContext.SECURITY_PROTOCOL, "SASL_SSL");
        properties.put(KafkaContext.SSL_KEYSTORE_LOCATION, certificates.keystore.toString());
        properties.put(KafkaContext.SSL_KEYSTORE_PASSWORD, TestCertificates.PASSWORD);
        properties.put(KafkaContext.SASL_USERS_FILE, users.toString());
        properties.put(KafkaContext.SASL_ENABLED_MECHANISMS, "PLAIN");
        properties.put(KafkaContext.QUEUED_MAX_REQUEST_BYTES, "1048576");
        final KafkaContext parsed = KafkaContext.fromProperties(properties);
        assertEquals(SecurityProtocol.SASL_SSL, parsed.securityProtocol());
        assertEquals(List.of("PLAIN"), parsed.saslEnabledMechanisms());
        assertEquals(1048576, parsed.queuedMaxRequestBytes());
        properties.put(KafkaContext.SECURITY_PROTOCOL, "TLS");
        assertEquals(KafkaContext.SECURITY_PROTOCOL, assertThrows(ConfigException.class,
            () -> KafkaContext.fromProperties(properties)).key());
        properties.put(KafkaContext.SECURITY_PROTOCOL, "SSL");
        properties.put(KafkaContext.SSL_CLIENT_AUTH, "required");
        assertEquals(KafkaContext.SSL_TRUSTSTORE_LOCATION, assertThrows(ConfigException.class,
            () -> KafkaContext.fromProperties(properties)).key());

        // what only the listener's start can check: the stores and the users file
        try (ReplicationCluster one = ReplicationCluster.start(root.resolve("config-errors"), 1,
            new ReplicationContext()))
        {
            assertEquals(KafkaContext.SSL_KEYSTORE_PASSWORD, assertThrows(ConfigException.class,
                () -> InProcessKafka.start(one, certificates.saslSsl(users).sslKeystore(certificates.keystore,
                    "wrong-password"))).key());
            assertEquals(KafkaContext.SSL_KEYSTORE_LOCATION, assertThrows(ConfigException.class,
                () -> InProcessKafka.start(one, certificates.saslSsl(users).sslKeystore(root.resolve("none.p12"),
                    "x"))).key());
            assertEquals(KafkaContext.SSL_KEYSTORE_LOCATION, assertThrows(ConfigException.class,
                () -> InProcessKafka.start(one, certificates.saslSsl(users).sslKeystore(certificates.truststore,
                    TestCertificates.PASSWORD))).key(), "a trust store has no private key");
            final Path open = TestCertificates.users(root.resolve("open-users"), Map.of("a", "b"));
            Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rw-r--r--"));
            final ConfigException readable = assertThrows(ConfigException.class,
                () -> InProcessKafka.start(one, certificates.saslSsl(open)));
            assertEquals(KafkaContext.SASL_USERS_FILE, readable.key());
            assertTrue(readable.getMessage().contains("owner only"), readable.getMessage());
            final Path malformed = TestCertificates.users(root.resolve("bad-users"), Map.of());
            Files.writeString(malformed, "alice\n");
            final ConfigException bad = assertThrows(ConfigException.class,
                () -> InProcessKafka.start(one, certificates.saslSsl(malformed)));
            assertEquals(KafkaContext.SASL_USERS_FILE, bad.key());
        }
    }

    /** A real client still authenticates and reads metadata. */
    private static void assertServing() throws Exception
    {
        try (Admin admin = Admin.create(admin("PLAIN", ALICE, ALICE_PASSWORD)))
        {
            assertEquals(3, admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).size());
        }
    }

    private static SSLContext clientContext() throws Exception
    {
        final KeyStore trusted = KeyStore.getInstance(certificates.truststore.toFile(),
            TestCertificates.PASSWORD.toCharArray());
        final TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        factory.init(trusted);
        final SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, factory.getTrustManagers(), null);
        return context;
    }

    private static SSLSocket tlsSocket(final int port, final String protocol) throws Exception
    {
        final SSLSocket socket = (SSLSocket)clientContext().getSocketFactory().createSocket("127.0.0.1", port);
        socket.setEnabledProtocols(new String[] {protocol});
        socket.setSoTimeout(30_000);
        socket.startHandshake();
        return socket;
    }

    /** @return the first flight of a TLS client (its ClientHello record). */
    private static byte[] clientHello(final int port) throws Exception
    {
        final SSLEngine engine = clientContext().createSSLEngine("127.0.0.1", port);
        engine.setUseClientMode(true);
        final ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        final byte[] bytes = new byte[out.remaining()];
        out.get(bytes);
        return bytes;
    }

    private static byte[] concat(final byte[] a, final byte[] b)
    {
        final byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    /** @return whether the peer closed the connection (end of stream or reset) within the time. */
    static boolean closedByPeer(final Socket socket, final long timeoutMs) throws IOException
    {
        final long deadline = System.currentTimeMillis() + timeoutMs;
        socket.setSoTimeout(200);
        final InputStream in = socket.getInputStream();
        final byte[] buffer = new byte[4096];
        while (System.currentTimeMillis() < deadline)
        {
            try
            {
                if (in.read(buffer) < 0)
                {
                    return true;
                }
            }
            catch (final java.net.SocketTimeoutException ex)
            {
                // still open
            }
            catch (final IOException ex)
            {
                return true; // reset, or a TLS alert
            }
        }
        return false;
    }

    static boolean causedBy(final Throwable failure, final Class<? extends Throwable> type)
    {
        for (Throwable t = failure; null != t; t = t.getCause())
        {
            if (type.isInstance(t))
            {
                return true;
            }
        }
        return false;
    }

    static boolean await(final BooleanSupplier condition, final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline)
        {
            if (condition.getAsBoolean())
            {
                return true;
            }
            Thread.sleep(20);
        }
        return condition.getAsBoolean();
    }
}
