package io.tidemark.host;

import org.agrona.DirectBuffer;

import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * Messages between clients and replica hosts, and between the hosts' control channels, over Aeron. Every message
 * starts with the cluster's id (a hash of {@code cluster.id}) and its type; fields are little-endian.
 * <pre>
 *  0        4        8                16       20       24       28   30   32                40       44   48
 *  +--------+--------+----------------+--------+--------+--------+----+----+----------------+--------+----+
 *  |cluster | type   | ...type-specific fields, below                                                      |
 *
 *  HELLO          clientId:8 replyChannelLength:4 replyChannel:n           (client to host)
 *  HELLO_ACK      clientId:8 hostId:4 incarnation:8                        (host to client, on the reply channel)
 *  PRODUCE        clientId:8 partitionId:4 acks:4 timeoutMs:4 producerEpoch:2 pad:2 producerId:8
 *                 baseSequence:4 pad:4 correlationId:8 records...          (at 56)
 *  PRODUCE_RESULT partitionId:4 error:4 correlationId:8 baseOffset:8
 *  READ           clientId:8 partitionId:4 maxBytes:4 offset:8 correlationId:8
 *  READ_RESULT    partitionId:4 error:4 correlationId:8 highWatermark:8 logStartOffset:8 leaderEpoch:4 pad:4
 *                 batches...                                               (at 56)
 *  GOODBYE        clientId:8                                               (client to host: forget me)
 *  CONTROL        control-channel message (ControlChannel.deliver)         (host to host)
 * </pre>
 * Streams on each host's channel: {@link #GATEWAY_STREAM_ID} (client requests), {@link #CONTROL_STREAM_ID}
 * (control messages between hosts and the controller); on each client's reply channel {@link #REPLY_STREAM_ID}.
 */
final class GatewayMessages
{
    static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    static final int GATEWAY_STREAM_ID = 2_000;
    static final int CONTROL_STREAM_ID = 2_001;
    static final int REPLY_STREAM_ID = 3_000;

    static final int HELLO = 1;
    static final int HELLO_ACK = 2;
    static final int PRODUCE = 3;
    static final int PRODUCE_RESULT = 4;
    static final int READ = 5;
    static final int READ_RESULT = 6;
    static final int GOODBYE = 7;
    static final int CONTROL = 8;

    static final int CLUSTER_OFFSET = 0;
    static final int TYPE_OFFSET = 4;
    static final int HEADER_LENGTH = 8;

    static final int CLIENT_ID_OFFSET = 8;

    static final int HELLO_CHANNEL_LENGTH_OFFSET = 16;
    static final int HELLO_CHANNEL_OFFSET = 20;
    static final int MAX_REPLY_CHANNEL_LENGTH = 1024;

    static final int HELLO_ACK_HOST_OFFSET = 16;
    static final int HELLO_ACK_INCARNATION_OFFSET = 20;
    static final int HELLO_ACK_LENGTH = 28;

    static final int PRODUCE_PARTITION_OFFSET = 16;
    static final int PRODUCE_ACKS_OFFSET = 20;
    static final int PRODUCE_TIMEOUT_OFFSET = 24;
    static final int PRODUCE_EPOCH_OFFSET = 28;
    static final int PRODUCE_PRODUCER_ID_OFFSET = 32;
    static final int PRODUCE_SEQUENCE_OFFSET = 40;
    static final int PRODUCE_CORRELATION_OFFSET = 48;
    static final int PRODUCE_RECORDS_OFFSET = 56;

    static final int RESULT_PARTITION_OFFSET = 8;
    static final int RESULT_ERROR_OFFSET = 12;
    static final int RESULT_CORRELATION_OFFSET = 16;
    static final int PRODUCE_RESULT_BASE_OFFSET = 24;
    static final int PRODUCE_RESULT_LENGTH = 32;

    static final int READ_PARTITION_OFFSET = 16;
    static final int READ_MAX_BYTES_OFFSET = 20;
    static final int READ_OFFSET_OFFSET = 24;
    static final int READ_CORRELATION_OFFSET = 32;
    static final int READ_LENGTH = 40;

    static final int READ_RESULT_HW_OFFSET = 24;
    static final int READ_RESULT_LOG_START_OFFSET = 32;
    static final int READ_RESULT_EPOCH_OFFSET = 40;
    static final int READ_RESULT_BATCHES_OFFSET = 56;

    static final int GOODBYE_LENGTH = 16;

    private GatewayMessages()
    {
    }

    /**
     * @param clusterId the configured {@code cluster.id}.
     * @return the 32-bit id every message of the cluster carries.
     */
    static int clusterHash(final String clusterId)
    {
        final CRC32 crc = new CRC32();
        crc.update(clusterId.getBytes(StandardCharsets.UTF_8));
        return (int)crc.getValue();
    }

    /** @return whether the message is long enough for a header and carries this cluster's id. */
    static boolean isOurs(final DirectBuffer buffer, final int offset, final int length, final int clusterHash)
    {
        return length >= HEADER_LENGTH && buffer.getInt(offset + CLUSTER_OFFSET, ORDER) == clusterHash;
    }

    /** @return the message type. */
    static int type(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + TYPE_OFFSET, ORDER);
    }

    /**
     * Wire correlation id of a client request: the client's session in the top 16 bits, its own id below, so that
     * one host session per client serves every session of the client.
     */
    static long wireCorrelation(final int session, final long correlationId)
    {
        return ((long)session << 48) | (correlationId & 0xFFFF_FFFF_FFFFL);
    }

    static int sessionOf(final long wireCorrelation)
    {
        return (int)(wireCorrelation >>> 48);
    }

    static long correlationOf(final long wireCorrelation)
    {
        return wireCorrelation & 0xFFFF_FFFF_FFFFL;
    }
}
