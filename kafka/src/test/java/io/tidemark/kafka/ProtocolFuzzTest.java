package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ApiVersionsResponse;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile bytes against a listener: random frames, sizes out of bounds (negative, zero, above
 * {@code kafka.max.request.bytes}), truncated frames, unknown API keys, versions no client has, valid headers with
 * random bodies, and requests of APIs not served. Each attempt gets a connection of its own; after each the listener
 * must still answer a well-formed ApiVersions request, bad frames are counted, unserved APIs get UNSUPPORTED_VERSION,
 * and at the end a real KafkaProducer still writes. {@code -Dtidemark.tries} sets the attempts (200 in CI).
 */
class ProtocolFuzzTest
{
    @TempDir
    static Path root;
    static ReplicationCluster cluster;
    static InProcessKafka kafka;
    static int port;

    @BeforeAll
    static void start()
    {
        cluster = ReplicationCluster.start(root, 3, new ReplicationContext().hostSessionTimeoutMs(3_000));
        kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0").maxRequestBytes(64 * 1024)
            .errorLogIntervalMs(60_000));
        port = kafka.listener(0).port();
    }

    @AfterAll
    static void stop()
    {
        kafka.close();
        cluster.close();
    }

    static byte[] frame(final AbstractRequest request, final short version, final int correlationId)
    {
        final ByteBuffer body = request.serializeWithHeader(new RequestHeader(request.apiKey(), version, "fuzz",
            correlationId));
        final ByteBuffer framed = ByteBuffer.allocate(4 + body.remaining());
        framed.putInt(body.remaining()).put(body);
        return framed.array();
    }

    /** @return the response's body, parsed, or null when the connection closed. */
    static AbstractResponse exchange(final Socket socket, final byte[] frame, final RequestHeader header)
        throws IOException
    {
        socket.getOutputStream().write(frame);
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        try
        {
            final byte[] response = new byte[in.readInt()];
            in.readFully(response);
            return AbstractResponse.parseResponse(ByteBuffer.wrap(response), header);
        }
        catch (final EOFException | SocketException ex)
        {
            return null;
        }
    }

    static void assertServing() throws IOException
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(10_000);
            final ApiVersionsRequest request = new ApiVersionsRequest(new ApiVersionsRequestData()
                .setClientSoftwareName("fuzz").setClientSoftwareVersion("1"), (short)3);
            final RequestHeader header = new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "fuzz", 7);
            final ApiVersionsResponse response = (ApiVersionsResponse)exchange(socket, frame(request, (short)3, 7),
                header);
            assertEquals(Errors.NONE.code(), response.data().errorCode());
            assertTrue(response.data().apiKeys().size() >= 10);
        }
    }

    /** Send bytes, then wait until the listener closes the connection or answers (any answer is fine). */
    static void attack(final byte[] bytes, final boolean thenClose) throws IOException
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(500);
            final OutputStream out = socket.getOutputStream();
            try
            {
                out.write(bytes);
                out.flush();
                if (thenClose)
                {
                    return;
                }
                socket.getInputStream().read(new byte[4096]);
            }
            catch (final IOException ex)
            {
                // closed by the listener, or nothing to read: both fine
            }
        }
    }

    @Test
    void garbageNeverStopsTheListener() throws Exception
    {
        final int tries = Integer.getInteger("tidemark.tries", 200);
        final Random random = new Random(Long.getLong("fuzz.seed", 19L));
        final long badBefore = kafka.listener(0).badFrames();
        int expectedBad = 0;
        final byte[] valid = frame(new MetadataRequest(new MetadataRequestData().setTopics(null), (short)12),
            (short)12, 1);
        for (int i = 0; i < tries; i++)
        {
            final int kind = i % 7;
            final ByteBuffer attempt;
            switch (kind)
            {
                case 0 -> // random bytes, random size prefix
                {
                    final byte[] bytes = new byte[1 + random.nextInt(200)];
                    random.nextBytes(bytes);
                    attempt = ByteBuffer.wrap(bytes);
                }
                case 1 -> // size out of bounds
                {
                    final int[] sizes = {0, -1, Integer.MIN_VALUE, 64 * 1024 + 1, Integer.MAX_VALUE};
                    attempt = ByteBuffer.allocate(8).putInt(sizes[random.nextInt(sizes.length)]).putInt(0).flip();
                    expectedBad++;
                }
                case 2 -> // a valid request cut short, then closed
                {
                    attempt = ByteBuffer.wrap(valid, 0, 1 + random.nextInt(valid.length - 1));
                }
                case 3 -> // unknown API key
                {
                    attempt = ByteBuffer.allocate(4 + 10).putInt(10).putShort((short)(1000 + random.nextInt(30000)))
                        .putShort((short)0).putInt(1).putShort((short)-1).flip();
                    expectedBad++;
                }
                case 4 -> // a version no client has
                {
                    attempt = ByteBuffer.allocate(4 + 10).putInt(10).putShort(ApiKeys.PRODUCE.id)
                        .putShort((short)(100 + random.nextInt(1000))).putInt(1).putShort((short)-1).flip();
                    expectedBad++;
                }
                case 5 -> // a valid header, a random body
                {
                    final byte[] body = new byte[random.nextInt(300)];
                    random.nextBytes(body);
                    final ApiKeys[] apis = {ApiKeys.PRODUCE, ApiKeys.FETCH, ApiKeys.METADATA, ApiKeys.JOIN_GROUP,
                        ApiKeys.OFFSET_COMMIT, ApiKeys.CREATE_TOPICS};
                    final ApiKeys api = apis[random.nextInt(apis.length)];
                    final ByteBuffer header = ByteBuffer.allocate(64);
                    header.putShort(api.id).putShort((short)4).putInt(i).putShort((short)4)
                        .put("fuzz".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
                    header.flip();
                    attempt = ByteBuffer.allocate(4 + header.remaining() + body.length)
                        .putInt(header.remaining() + body.length).put(header).put(body).flip();
                }
                default -> // the valid request with random bytes flipped
                {
                    final byte[] bytes = valid.clone();
                    for (int f = 0; f < 3; f++)
                    {
                        bytes[4 + random.nextInt(bytes.length - 4)] ^= (byte)(1 + random.nextInt(255));
                    }
                    attempt = ByteBuffer.wrap(bytes);
                }
            }
            final byte[] bytes = new byte[attempt.remaining()];
            attempt.get(bytes);
            attack(bytes, kind == 2);
            if (i % 20 == 0)
            {
                assertServing();
            }
        }
        assertServing();
        final long counted = kafka.listener(0).badFrames() - badBefore;
        assertTrue(counted >= expectedBad, "bad frames counted: " + counted + " of at least " + expectedBad);

        // an API kafka-clients knows but Tidemark does not serve: a typed UNSUPPORTED_VERSION answer, not a close
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(10_000);
            final org.apache.kafka.common.requests.DeleteRecordsRequest request =
                new org.apache.kafka.common.requests.DeleteRecordsRequest.Builder(
                    new org.apache.kafka.common.message.DeleteRecordsRequestData().setTopics(java.util.List.of(
                        new org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsTopic()
                            .setName("after-fuzz").setPartitions(java.util.List.of(
                                new org.apache.kafka.common.message.DeleteRecordsRequestData.DeleteRecordsPartition()
                                    .setPartitionIndex(0).setOffset(1)))))).build((short)2);
            final RequestHeader header = new RequestHeader(ApiKeys.DELETE_RECORDS, (short)2, "fuzz", 9);
            final AbstractResponse response = exchange(socket, frame(request, (short)2, 9), header);
            assertEquals(1, response.errorCounts().get(Errors.UNSUPPORTED_VERSION), response.toString());
        }

        cluster.createTopic("after-fuzz", 1, 3);
        assertTrue(cluster.awaitLeaders("after-fuzz", 60_000));
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
            ClientProps.producer(kafka.bootstrapServers(), "all", true)))
        {
            assertTrue(producer.send(new ProducerRecord<>("after-fuzz", "k", "v")).get().offset() >= 0);
        }
    }
}
