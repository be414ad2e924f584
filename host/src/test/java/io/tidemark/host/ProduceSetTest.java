package io.tidemark.host;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameReader;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.client.remote.protocol.ProduceSet;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationError;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PRODUCE_SET across the wire, against a real host: a producer writing to several partitions of one host has its
 * requests gathered into sets, and every record is acknowledged in order per partition at the offset it holds;
 * a set from an authenticated client is answered per entry (a partition the host does not lead gets NOT_LEADER,
 * the others are appended); damaged and forged sets (truncated, a forged count, an entry length out of bounds,
 * trailing bytes, an unknown version) are refused whole, counted as bad requests, and the host keeps serving.
 */
class ProduceSetTest
{
    private static final String CLUSTER = "sets";
    private static final String TOPIC = "sets";
    private static final int PARTITIONS = 4;

    @TempDir
    Path tmp;

    @Test
    void setsAreAnsweredPerEntryAndDamagedOnesRefusedWhole() throws Exception
    {
        final int port = OneHostSettings.freeUdpPort();
        try (TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1,
            true, -1, 250, -1), true))
        {
            final Properties common = OneHostSettings.common(CLUSTER, zooKeeper.getConnectString());
            common.setProperty("zookeeper.session.timeout.ms", "5000");
            common.setProperty("zookeeper.connection.timeout.ms", "5000");
            final Path secretFile = tmp.resolve("cluster.secret");
            OneHostSettings.secret(common, secretFile);
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(
                OneHostSettings.host(common, tmp.resolve("host-0"), port)));
                TidemarkClient client = TidemarkClient.connect(ClientConfig.fromProperties(common)))
            {
                client.createTopic(TOPIC, PARTITIONS, 1, 60_000);
                producerAcrossPartitions(client, host, 16 * 1024, 8);
                // batches of 100 KiB: a cycle's sets outgrow the first buffer and reach the 256 KiB bound
                producerAcrossPartitions(client, host, 100 * 1024, 2_000);
                // batches of 300 KiB: longer than a set may gather, each sent alone after what was gathered
                producerAcrossPartitions(client, host, 300 * 1024, 5_000);
                rawSets(host, client, ClusterSecret.load(secretFile, "cluster.secret.file"), port);
                producerAcrossPartitions(client, host, 16 * 1024, 8); // still serving after the damaged sets
            }
        }
    }

    /** Every record acknowledged, per partition in send order at consecutive offsets; no request refused. */
    private static void producerAcrossPartitions(final TidemarkClient client, final TidemarkHost host,
        final int batchSize, final int valueBytes) throws Exception
    {
        final int perPartition = 400;
        final String padding = "x".repeat(valueBytes);
        final Map<Integer, List<Long>> offsets = new ConcurrentHashMap<>();
        final AtomicLong failed = new AtomicLong();
        final long badBefore = host.droppedMessages().dropped(EdgeCounters.Stream.CLIENT,
            EdgeCounters.Reason.BAD_REQUEST);
        try (Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL).enableIdempotence(true)
            .lingerMs(5).batchSize(batchSize).bufferMemory(64L << 20).deliveryTimeoutMs(120_000)))
        {
            final ProducerRecord record = new ProducerRecord().topic(TOPIC);
            for (int i = 0; i < perPartition * PARTITIONS; i++)
            {
                final int partition = i % PARTITIONS;
                producer.sendAsync(record.partition(partition).value(padding + i), (tp, offset, error) ->
                {
                    if (null != error)
                    {
                        failed.incrementAndGet();
                        return;
                    }
                    offsets.computeIfAbsent(tp.partition(), (p) -> new CopyOnWriteArrayList<>()).add(offset);
                });
            }
            producer.flush();
        }
        assertEquals(0, failed.get(), "sends that failed");
        for (int p = 0; p < PARTITIONS; p++)
        {
            final List<Long> got = offsets.get(p);
            assertEquals(perPartition, got.size(), "partition " + p);
            for (int i = 1; i < got.size(); i++)
            {
                assertEquals(got.get(i - 1) + 1, got.get(i), "partition " + p + ": acknowledged in order");
            }
        }
        assertEquals(badBefore, host.droppedMessages().dropped(EdgeCounters.Stream.CLIENT,
            EdgeCounters.Reason.BAD_REQUEST), "no request of the producer was refused");
    }

    /** A client of our own: HELLO, then sets written by hand, damaged and whole. */
    private static void rawSets(final TidemarkHost host, final TidemarkClient client, final ClusterSecret secret,
        final int port) throws Exception
    {
        final Path aeronDir = Path.of(System.getProperty("java.io.tmpdir"), "tidemark-produce-set-test-" +
            ProcessHandle.current().pid());
        try (MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
            .aeronDirectoryName(aeronDir.toString())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .termBufferSparseFile(true)
            .threadingMode(ThreadingMode.SHARED));
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(driver.aeronDirectoryName())))
        {
            final int replyPort = OneHostSettings.freeUdpPort();
            final Subscription replies = aeron.addSubscription("aeron:udp?endpoint=127.0.0.1:" + replyPort,
                GatewayMessages.REPLY_STREAM_ID);
            final Publication gateway = aeron.addPublication("aeron:udp?endpoint=127.0.0.1:" + port,
                GatewayMessages.GATEWAY_STREAM_ID);
            final int clusterHash = GatewayMessages.clusterHash(CLUSTER);
            final long clientId = 0x5E7_0000_0001L;
            final long incarnation = client.incarnationOf(0);
            final FrameWriter writer = new FrameWriter(secret, clusterHash, FrameDescriptor.CLIENT, clientId, 0, 0);
            final FrameReader reader = new FrameReader(secret, clusterHash);
            final List<long[]> results = new CopyOnWriteArrayList<>(); // partition, error, correlation, offset
            final AtomicLong token = new AtomicLong();
            final io.aeron.logbuffer.FragmentHandler onReply = new io.aeron.FragmentAssembler(
                (buffer, offset, length, header) ->
                {
                    if (null != reader.verify(buffer, offset, length, GatewayMessages.REPLY_STREAM_ID))
                    {
                        return;
                    }
                    final int at = reader.payloadOffset();
                    if (reader.type() == GatewayMessages.HELLO_ACK)
                    {
                        token.set(buffer.getLong(at, GatewayMessages.ORDER));
                    }
                    else if (reader.type() == GatewayMessages.PRODUCE_RESULT)
                    {
                        results.add(new long[]{
                            buffer.getInt(at + GatewayMessages.RESULT_PARTITION_OFFSET, GatewayMessages.ORDER),
                            buffer.getInt(at + GatewayMessages.RESULT_ERROR_OFFSET, GatewayMessages.ORDER),
                            buffer.getLong(at + GatewayMessages.RESULT_CORRELATION_OFFSET, GatewayMessages.ORDER),
                            buffer.getLong(at + GatewayMessages.PRODUCE_RESULT_BASE_OFFSET, GatewayMessages.ORDER)});
                    }
                });
            final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH]);
            GatewayMessages.encodeHello(InetAddress.getByName("127.0.0.1"), replyPort, hello);
            final long helloDeadline = System.currentTimeMillis() + 30_000;
            long nextHello = 0;
            while (0 == token.get() && System.currentTimeMillis() < helloDeadline)
            {
                if (System.currentTimeMillis() >= nextHello)
                {
                    writer.offer(gateway, GatewayMessages.HELLO, 0, incarnation, hello, 0, hello.capacity());
                    nextHello = System.currentTimeMillis() + 100;
                }
                if (replies.poll(onReply, 16) == 0)
                {
                    Thread.sleep(1);
                }
            }
            assertTrue(0 != token.get(), "the host answered the HELLO");
            writer.senderEpoch(token.get());

            final UnsafeBuffer set = new UnsafeBuffer(new byte[4096]);
            final List<byte[]> damaged = damagedSets(set);
            final long badBefore = host.droppedMessages().dropped(EdgeCounters.Stream.CLIENT,
                EdgeCounters.Reason.BAD_REQUEST);
            for (final byte[] bytes : damaged)
            {
                offer(writer, gateway, incarnation, new UnsafeBuffer(bytes), bytes.length);
            }
            assertTrue(ProcessCluster.await(() -> host.droppedMessages().dropped(EdgeCounters.Stream.CLIENT,
                EdgeCounters.Reason.BAD_REQUEST) >= badBefore + damaged.size(), 30_000),
                "each damaged set was refused and counted: " + damaged.size());

            // a whole set: partitions 2, 0, 3 and one this host has no replica of; answered per entry
            final int[] partitions = { 2, 0, 3, 77 };
            final int length = wholeSet(set, partitions);
            offer(writer, gateway, incarnation, set, length);
            assertTrue(ProcessCluster.await(() ->
            {
                replies.poll(onReply, 16);
                return results.size() >= partitions.length;
            }, 30_000), "an answer per entry: " + results.size());
            final Map<Long, long[]> byCorrelation = new ConcurrentHashMap<>();
            for (final long[] result : results)
            {
                byCorrelation.put(result[2], result);
            }
            for (int i = 0; i < partitions.length; i++)
            {
                final long[] result = byCorrelation.get(GatewayMessages.wireCorrelation(1, 900 + i));
                assertTrue(null != result, "an answer to entry " + i);
                assertEquals(partitions[i], result[0]);
                assertEquals(i == 3 ? ReplicationError.NOT_LEADER.code() : ReplicationError.NONE.code(),
                    (int)result[1], "entry " + i);
                assertTrue(i == 3 || result[3] >= 0, "entry " + i + " appended at " + result[3]);
            }
            assertEquals(partitions.length, results.size(), "no answer to any damaged set");
        }
    }

    private static void offer(final FrameWriter writer, final Publication gateway, final long incarnation,
        final DirectBuffer payload, final int length) throws InterruptedException
    {
        final long deadline = System.currentTimeMillis() + 30_000;
        while (writer.offer(gateway, GatewayMessages.PRODUCE_SET, 0, incarnation, payload, 0, length) <= 0)
        {
            assertTrue(System.currentTimeMillis() < deadline, "the gateway takes the frame");
            Thread.sleep(1);
        }
    }

    /** @return a well-formed set of one record per entry for these partitions; its length. */
    private static int wholeSet(final UnsafeBuffer set, final int... partitions)
    {
        final UnsafeBuffer records = new UnsafeBuffer(new byte[256]);
        int at = ProduceSet.ENTRIES_OFFSET;
        for (int i = 0; i < partitions.length; i++)
        {
            final byte[] value = ("set-" + i).getBytes(StandardCharsets.UTF_8);
            final int recordsLength = RecordEncoder.encode(records, 0, 0, System.currentTimeMillis(), null, 0, 0,
                new UnsafeBuffer(value), 0, value.length, null, 0, 0);
            at += ProduceSet.putEntry(set, at, partitions[i], Acks.ALL, 10_000, (short)-1, -1, -1,
                GatewayMessages.wireCorrelation(1, 900 + i), records, 0, recordsLength);
        }
        ProduceSet.putHeader(set, 0, partitions.length);
        return at;
    }

    /** @return sets damaged or forged in each way {@link ProduceSet#check} refuses, all naming real partitions. */
    private static List<byte[]> damagedSets(final UnsafeBuffer set)
    {
        final List<byte[]> damaged = new ArrayList<>();
        final int length = wholeSet(set, 0, 1);
        final byte[] whole = new byte[length];
        set.getBytes(0, whole);
        damaged.add(java.util.Arrays.copyOf(whole, 5)); // truncated header
        damaged.add(java.util.Arrays.copyOf(whole, length - 1)); // truncated records
        damaged.add(java.util.Arrays.copyOf(whole, length + 3)); // trailing bytes
        for (final int count : new int[]{ 0, 3, 0xFFFF })
        {
            final byte[] forged = whole.clone();
            new UnsafeBuffer(forged).putShort(ProduceSet.COUNT_OFFSET, (short)count, GatewayMessages.ORDER);
            damaged.add(forged);
        }
        for (final int recordsLength : new int[]{ -1, Integer.MAX_VALUE, 1 << 20 })
        {
            final byte[] forged = whole.clone();
            new UnsafeBuffer(forged).putInt(ProduceSet.ENTRIES_OFFSET + ProduceSet.ENTRY_RECORDS_LENGTH_OFFSET,
                recordsLength, GatewayMessages.ORDER);
            damaged.add(forged);
        }
        final byte[] version = whole.clone();
        version[ProduceSet.VERSION_OFFSET] = 2;
        damaged.add(version);
        return damaged;
    }
}
