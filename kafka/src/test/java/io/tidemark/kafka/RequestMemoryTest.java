package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.tidemark.kafka.KafkaSecurityTest.await;
import static io.tidemark.kafka.KafkaSecurityTest.closedByPeer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code kafka.queued.max.request.bytes}: the bytes of requests read and not yet answered, over all connections,
 * stay within the budget. A connection whose next request does not fit stops being read (its bytes wait in the
 * socket, no buffer is allocated) and resumes, first come first served, when answers give bytes back; a request
 * larger than the whole budget closes its connection. Shown step by step with raw sockets, then with eight
 * KafkaProducers sending large batches at once.
 */
class RequestMemoryTest
{
    /** The raw-socket tests' request budget ({@code kafka.queued.max.request.bytes}) and request size. */
    private static final int BUDGET = 64 * 1024;
    private static final int FRAME = 40_000;

    @TempDir
    Path root;

    /** One listener on an ephemeral port, requests up to 1 MiB, {@link #BUDGET} bytes of them queued at most. */
    private static KafkaContext budgeted()
    {
        return new KafkaContext().listener("127.0.0.1:0").maxRequestBytes(1024 * 1024).queuedMaxRequestBytes(BUDGET)
            .errorLogIntervalMs(60_000);
    }

    private static byte[] prefix(final int size)
    {
        return ByteBuffer.allocate(4).putInt(size).array();
    }

    private static byte[] garbage(final int size)
    {
        final byte[] bytes = new byte[size];
        Arrays.fill(bytes, (byte)0xFF); // API key -1: a bad frame once read
        return bytes;
    }

    @Test
    void aConnectionWaitsForBudgetAndAnOversizedRequestIsRefused() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 1, new ReplicationContext());
             InProcessKafka kafka = InProcessKafka.start(cluster, budgeted()))
        {
            final KafkaListener listener = kafka.listener(0);
            final int port = listener.port();
            try (Socket a = new Socket("127.0.0.1", port); Socket b = new Socket("127.0.0.1", port))
            {
                // A announces 40000 bytes and sends 100: the listener holds 40000 of the budget for it
                final OutputStream outA = a.getOutputStream();
                outA.write(prefix(FRAME));
                outA.write(garbage(100));
                outA.flush();
                assertTrue(await(() -> listener.queuedRequestBytes() == FRAME, 30_000),
                    "A's request is reserved: " + listener.queuedRequestBytes());

                // B sends a whole 40000-byte request: it does not fit beside A's, so B is not read
                final OutputStream outB = b.getOutputStream();
                outB.write(prefix(FRAME));
                outB.write(garbage(FRAME));
                outB.flush();
                assertTrue(await(() -> listener.memoryWaiters() == 1, 30_000), "B waits for budget");
                assertEquals(1, listener.memoryMutes());
                assertEquals(FRAME, listener.queuedRequestBytes(), "no buffer for B while it waits");
                assertEquals(0, listener.badFrames());

                // A's request completes (a bad frame: closed), its bytes come back, and B is read
                outA.write(garbage(FRAME - 100));
                outA.flush();
                assertTrue(closedByPeer(a, 30_000));
                assertTrue(closedByPeer(b, 30_000), "B was read once A's bytes came back (and closed: garbage)");
                assertEquals(2, listener.badFrames());
                assertTrue(await(() -> listener.queuedRequestBytes() == 0, 30_000));
                assertEquals(0, listener.memoryWaiters());
                assertTrue(listener.maxQueuedRequestBytes() <= BUDGET);
            }
            try (Socket c = new Socket("127.0.0.1", port))
            {
                // within kafka.max.request.bytes, above the whole budget: refused at its size prefix
                c.getOutputStream().write(prefix(BUDGET + 1));
                assertTrue(closedByPeer(c, 30_000));
                assertEquals(3, listener.badFrames());
            }
            assertEquals(0, listener.queuedRequestBytes());
        }
    }

    /**
     * {@code kafka.request.read.timeout.ms}: a peer that sends a request's size prefix and part of its bytes, then
     * stalls, would keep its reservation until {@code kafka.connections.max.idle.ms} (ten minutes by default): the
     * connection is closed once the request has not arrived whole within the timeout, its bytes come back, and other
     * clients are served all along. A stall inside the size prefix is closed the same way.
     */
    @Test
    void aRequestThatStallsHalfWayIsClosedAndItsBudgetComesBack() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 1, new ReplicationContext());
             InProcessKafka kafka = InProcessKafka.start(cluster, budgeted().requestReadTimeoutMs(3_000)))
        {
            final KafkaListener listener = kafka.listener(0);
            final int port = listener.port();
            final Properties adminProps = new Properties();
            adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            try (Socket stalled = new Socket("127.0.0.1", port); Admin admin = Admin.create(adminProps))
            {
                final OutputStream out = stalled.getOutputStream();
                out.write(prefix(FRAME));
                out.write(garbage(100));
                out.flush();
                assertTrue(await(() -> listener.queuedRequestBytes() == FRAME, 30_000),
                    "the stalled request is reserved: " + listener.queuedRequestBytes());

                // another client is served meanwhile, its requests fitting beside the stalled one's
                assertEquals(1, admin.describeCluster().nodes().get(60, TimeUnit.SECONDS).size());
                admin.createTopics(List.of(new NewTopic("served", 1, (short)1))).all().get(60, TimeUnit.SECONDS);

                assertTrue(closedByPeer(stalled, 60_000), "the stalled connection is closed");
                assertEquals(1, listener.slowRequests());
                assertEquals(0, listener.badFrames());
                assertTrue(await(() -> listener.queuedRequestBytes() == 0, 30_000),
                    "its reservation came back: " + listener.queuedRequestBytes());

                try (Socket halfPrefix = new Socket("127.0.0.1", port))
                {
                    halfPrefix.getOutputStream().write(new byte[]{0, 0});
                    halfPrefix.getOutputStream().flush();
                    assertTrue(closedByPeer(halfPrefix, 60_000), "a stall inside the size prefix is closed too");
                    assertEquals(2, listener.slowRequests());
                }

                // and the other client is still served
                assertTrue(admin.listTopics().names().get(60, TimeUnit.SECONDS).contains("served"));
                assertEquals(0, listener.queuedRequestBytes());
            }
        }
    }

    /**
     * A connection waiting for request budget is not the stalling peer: its clock starts when the listener resumes
     * reading it, so it is read (here: a bad frame) and not closed as slow, even after waiting longer than the timeout.
     */
    @Test
    void waitingForBudgetDoesNotCountAgainstTheReadTimeout() throws Exception
    {
        final long timeoutMs = 4_000;
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 1, new ReplicationContext());
             InProcessKafka kafka = InProcessKafka.start(cluster, budgeted().requestReadTimeoutMs(timeoutMs)))
        {
            final KafkaListener listener = kafka.listener(0);
            final int port = listener.port();
            try (Socket stalled = new Socket("127.0.0.1", port); Socket waiting = new Socket("127.0.0.1", port))
            {
                stalled.getOutputStream().write(prefix(FRAME));
                stalled.getOutputStream().write(garbage(100));
                stalled.getOutputStream().flush();
                assertTrue(await(() -> listener.queuedRequestBytes() == FRAME, 30_000));
                final long waitStarted = System.currentTimeMillis();
                waiting.getOutputStream().write(prefix(FRAME));
                waiting.getOutputStream().write(garbage(FRAME));
                waiting.getOutputStream().flush();
                assertTrue(await(() -> listener.memoryWaiters() == 1, 30_000), "the second waits for budget");

                assertTrue(closedByPeer(stalled, 60_000));
                assertTrue(closedByPeer(waiting, 60_000), "read once the stalled one's bytes came back");
                assertTrue(System.currentTimeMillis() - waitStarted >= timeoutMs / 2, "it waited a while");
                assertEquals(1, listener.slowRequests(), "only the stalled connection was slow");
                assertEquals(1, listener.badFrames(), "the waiting one was read whole (garbage)");
                assertTrue(await(() -> listener.queuedRequestBytes() == 0, 30_000));
            }
        }
    }

    @Test
    void theReadTimeoutIsValidated()
    {
        assertThrows(io.tidemark.store.ConfigException.class, () -> new KafkaContext().requestReadTimeoutMs(0)
            .validate());
        assertThrows(io.tidemark.store.ConfigException.class, () -> KafkaContext.fromProperties(
            java.util.Map.of(KafkaContext.REQUEST_READ_TIMEOUT_MS, "86400001")));
        assertEquals(5_000, KafkaContext.fromProperties(java.util.Map.of(KafkaContext.REQUEST_READ_TIMEOUT_MS,
            "5000")).requestReadTimeoutMs());
        assertEquals(30_000, new KafkaContext().requestReadTimeoutMs());
    }

    @Test
    void manyProducersSendingLargeBatchesStayWithinTheBudget() throws Exception
    {
        manyProducers(new KafkaContext().listener("127.0.0.1:0"), (props) -> props);
    }

    /** The same over SASL_SSL: requests wait for budget with their bytes already decrypted in the TLS buffers. */
    @Test
    void manyProducersOverSaslSslStayWithinTheBudget() throws Exception
    {
        final TestCertificates certificates = TestCertificates.generate(
            java.nio.file.Files.createDirectories(root.resolve("tls")));
        final Path users = TestCertificates.users(root.resolve("users"), java.util.Map.of("app", "app-password"));
        manyProducers(certificates.saslSsl(users), (props) -> TestCertificates.client(props, "PLAIN", "app",
            "app-password", certificates.truststore));
    }

    private void manyProducers(final KafkaContext ctx, final java.util.function.UnaryOperator<Properties> secure)
        throws Exception
    {
        final int budget = 1024 * 1024;
        final int producers = 8;
        final int recordsEach = 120;
        final String topic = "big";
        try (ReplicationCluster cluster = ReplicationCluster.start(root.resolve("cluster"), 3,
            new ReplicationContext().hostSessionTimeoutMs(10_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, ctx.queuedMaxRequestBytes(budget)))
        {
            final Properties adminProps = new Properties();
            adminProps.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
            try (Admin admin = Admin.create(secure.apply(adminProps)))
            {
                admin.createTopics(List.of(new NewTopic(topic, 3, (short)3))).all().get(60, TimeUnit.SECONDS);
            }
            final ExecutorService pool = Executors.newFixedThreadPool(producers);
            final List<Future<Integer>> results = new ArrayList<>();
            final String value = "v".repeat(10_000);
            for (int p = 0; p < producers; p++)
            {
                final int id = p;
                results.add(pool.submit(() ->
                {
                    final Properties props = secure.apply(ClientProps.producer(kafka.bootstrapServers(), "all",
                        true));
                    props.put(ProducerConfig.BATCH_SIZE_CONFIG, Integer.toString(200 * 1024));
                    props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, Integer.toString(400 * 1024));
                    props.put(ProducerConfig.LINGER_MS_CONFIG, "20");
                    props.put(ProducerConfig.BUFFER_MEMORY_CONFIG, Integer.toString(8 * 1024 * 1024));
                    int acknowledged = 0;
                    try (KafkaProducer<String, String> producer = new KafkaProducer<>(props))
                    {
                        final List<Future<RecordMetadata>> acks = new ArrayList<>();
                        for (int i = 0; i < recordsEach; i++)
                        {
                            acks.add(producer.send(new ProducerRecord<>(topic, id + "-" + i, value)));
                        }
                        for (final Future<RecordMetadata> ack : acks)
                        {
                            ack.get(120, TimeUnit.SECONDS);
                            acknowledged++;
                        }
                    }
                    return acknowledged;
                }));
            }
            int acknowledged = 0;
            for (final Future<Integer> result : results)
            {
                acknowledged += result.get(300, TimeUnit.SECONDS);
            }
            pool.shutdown();
            assertEquals(producers * recordsEach, acknowledged);
            long mutes = 0;
            for (int id = 0; id < 3; id++)
            {
                final KafkaListener listener = kafka.listener(id);
                assertTrue(listener.maxQueuedRequestBytes() <= budget, "broker " + id + " held " +
                    listener.maxQueuedRequestBytes() + " bytes of requests, above the budget " + budget);
                assertEquals(0, listener.badFrames());
                mutes += listener.memoryMutes();
            }
            // 8 producers x up to 400 KiB in flight against 1 MiB: the listeners had to stop reading
            assertTrue(mutes > 0, "no connection ever waited for budget");
        }
    }
}
