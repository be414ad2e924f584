package io.tidemark.client.remote.protocol;

import io.tidemark.aeron.FrameDescriptor;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32;

/**
 * Messages between clients and replica hosts, and between the hosts' control channels, over Aeron. Each is the
 * payload of a frame ({@link FrameDescriptor}) that carries the cluster id, the message type, the sender (host id
 * and incarnation, or client id and session), the receiver, a sequence number and the authentication tag. Payload
 * fields are little-endian, at offsets from the payload's start:
 * <pre>
 *  HELLO          family:1 pad:1 port:2 address:16                         (client to host: where to answer)
 *  HELLO_ACK      token:8                                                  (host to client, on the reply channel)
 *  PRODUCE        partitionId:4 acks:4 timeoutMs:4 producerEpoch:2 pad:2 producerId:8 baseSequence:4 pad:4
 *                 correlationId:8 records...                               (records at 40)
 *  PRODUCE_RESULT partitionId:4 error:4 correlationId:8 baseOffset:8
 *  READ           partitionId:4 maxBytes:4 offset:8 correlationId:8
 *  READ_RESULT    partitionId:4 error:4 correlationId:8 highWatermark:8 logStartOffset:8 leaderEpoch:4 pad:4
 *                 batches...                                               (batches at 40)
 *  GOODBYE        (empty)                                                  (client to host: forget me)
 *  CONTROL        control-channel message (ControlChannel.deliver)         (host to host)
 *  PRODUCE_SET    version:1 pad:1 count:2 pad:4 entries...                 (PRODUCE payloads with their records'
 *                                                                           lengths, for many partitions: ProduceSet)
 * </pre>
 * Frames from a client carry its client id as sender id and, once the host has answered its HELLO, the random token
 * the host gave it as sender epoch (0 before); frames to a host carry the host's incarnation as receiver epoch.
 * Frames from a host to a client carry the host's id and incarnation, and the client id as receiver epoch.
 * <p>
 * <b>Design note: the reply address.</b> A client states where it listens as an address family, an IP address and
 * a port, never as an Aeron channel string: the host builds the channel itself, with its own parameters, so nothing
 * a client sends reaches Aeron's channel parser (a channel string could otherwise ask the host for any term length,
 * file layout or interface).
 * <p>
 * Streams on each host's channel: {@link #GATEWAY_STREAM_ID} (client requests), {@link #CONTROL_STREAM_ID}
 * (control messages between hosts and the controller); on each client's reply channel {@link #REPLY_STREAM_ID}.
 */
public final class GatewayMessages
{
    public static final ByteOrder ORDER = FrameDescriptor.ORDER;

    public static final int GATEWAY_STREAM_ID = 2_000;
    public static final int CONTROL_STREAM_ID = 2_001;
    public static final int REPLY_STREAM_ID = 3_000;

    public static final int HELLO = 1;
    public static final int HELLO_ACK = 2;
    public static final int PRODUCE = 3;
    public static final int PRODUCE_RESULT = 4;
    public static final int READ = 5;
    public static final int READ_RESULT = 6;
    public static final int GOODBYE = 7;
    public static final int CONTROL = 8;
    public static final int PRODUCE_SET = 9;

    public static final int HELLO_FAMILY_OFFSET = 0;
    public static final int HELLO_PORT_OFFSET = 2;
    public static final int HELLO_ADDRESS_OFFSET = 4;
    public static final int HELLO_LENGTH = 20;
    public static final int FAMILY_IPV4 = 4;
    public static final int FAMILY_IPV6 = 6;

    public static final int HELLO_ACK_TOKEN_OFFSET = 0;
    public static final int HELLO_ACK_LENGTH = 8;

    public static final int PRODUCE_PARTITION_OFFSET = 0;
    public static final int PRODUCE_ACKS_OFFSET = 4;
    public static final int PRODUCE_TIMEOUT_OFFSET = 8;
    public static final int PRODUCE_EPOCH_OFFSET = 12;
    public static final int PRODUCE_PRODUCER_ID_OFFSET = 16;
    public static final int PRODUCE_SEQUENCE_OFFSET = 24;
    public static final int PRODUCE_CORRELATION_OFFSET = 32;
    public static final int PRODUCE_RECORDS_OFFSET = 40;

    public static final int RESULT_PARTITION_OFFSET = 0;
    public static final int RESULT_ERROR_OFFSET = 4;
    public static final int RESULT_CORRELATION_OFFSET = 8;
    public static final int PRODUCE_RESULT_BASE_OFFSET = 16;
    public static final int PRODUCE_RESULT_LENGTH = 24;

    public static final int READ_PARTITION_OFFSET = 0;
    public static final int READ_MAX_BYTES_OFFSET = 4;
    public static final int READ_OFFSET_OFFSET = 8;
    public static final int READ_CORRELATION_OFFSET = 16;
    public static final int READ_LENGTH = 24;

    public static final int READ_RESULT_HW_OFFSET = 16;
    public static final int READ_RESULT_LOG_START_OFFSET = 24;
    public static final int READ_RESULT_EPOCH_OFFSET = 32;
    public static final int READ_RESULT_BATCHES_OFFSET = 40;

    /** Longest type-specific header a client puts before its records (the PRODUCE fields). */
    public static final int MAX_PREFIX_LENGTH = PRODUCE_RECORDS_OFFSET;

    private GatewayMessages()
    {
    }

    /**
     * @param clusterId the configured {@code cluster.id}.
     * @return the 32-bit id every message of the cluster carries.
     */
    public static int clusterHash(final String clusterId)
    {
        final CRC32 crc = new CRC32();
        crc.update(clusterId.getBytes(StandardCharsets.UTF_8));
        return (int)crc.getValue();
    }

    /**
     * @param address a unicast address of the client.
     * @param port    its port.
     * @param out     receives the HELLO payload ({@link #HELLO_LENGTH} bytes).
     */
    public static void encodeHello(final InetAddress address, final int port, final org.agrona.MutableDirectBuffer out)
    {
        final byte[] bytes = address.getAddress();
        out.setMemory(0, HELLO_LENGTH, (byte)0);
        out.putByte(HELLO_FAMILY_OFFSET, (byte)(bytes.length == 4 ? FAMILY_IPV4 : FAMILY_IPV6));
        out.putShort(HELLO_PORT_OFFSET, (short)port, ORDER);
        out.putBytes(HELLO_ADDRESS_OFFSET, bytes);
    }

    /**
     * The reply endpoint of a HELLO, from its binary address and port (no string from the client reaches Aeron's
     * channel parser): the host builds the reply channel to it with its own parameters.
     *
     * @return {@code <address>:<port>} ({@code [v6]:port} for IPv6), or null when the HELLO does not name a unicast
     *         address and a port in [1, 65535] (multicast, any-local and link-local are refused).
     */
    public static String replyEndpoint(final org.agrona.DirectBuffer buffer, final int offset, final int length)
    {
        if (length != HELLO_LENGTH || buffer.getByte(offset + 1) != 0)
        {
            return null;
        }
        final int family = buffer.getByte(offset + HELLO_FAMILY_OFFSET);
        final int port = buffer.getShort(offset + HELLO_PORT_OFFSET, ORDER) & 0xFFFF;
        if (port == 0 || (family != FAMILY_IPV4 && family != FAMILY_IPV6))
        {
            return null;
        }
        final byte[] bytes = new byte[family == FAMILY_IPV4 ? 4 : 16];
        buffer.getBytes(offset + HELLO_ADDRESS_OFFSET, bytes);
        for (int i = bytes.length; i < 16; i++)
        {
            if (buffer.getByte(offset + HELLO_ADDRESS_OFFSET + i) != 0)
            {
                return null;
            }
        }
        final InetAddress address;
        try
        {
            address = InetAddress.getByAddress(bytes); // no name lookup: from raw bytes
        }
        catch (final UnknownHostException ex)
        {
            return null;
        }
        if (address.isMulticastAddress() || address.isAnyLocalAddress() || address.isLinkLocalAddress())
        {
            return null;
        }
        final String host = address instanceof Inet6Address ? "[" + address.getHostAddress() + "]" :
            address instanceof Inet4Address ? address.getHostAddress() : null;
        return null == host ? null : host + ":" + port;
    }

    /**
     * Wire correlation id of a client request: the client's session in the top 16 bits, its own id below, so that
     * one host session per client serves every session of the client.
     */
    public static long wireCorrelation(final int session, final long correlationId)
    {
        return ((long)session << 48) | (correlationId & 0xFFFF_FFFF_FFFFL);
    }

    public static int sessionOf(final long wireCorrelation)
    {
        return (int)(wireCorrelation >>> 48);
    }

    public static long correlationOf(final long wireCorrelation)
    {
        return wireCorrelation & 0xFFFF_FFFF_FFFFL;
    }
}
