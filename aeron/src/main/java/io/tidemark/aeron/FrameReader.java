package io.tidemark.aeron;

import org.agrona.DirectBuffer;

import static io.tidemark.aeron.FrameDescriptor.*;

/**
 * Checks a received frame ({@link FrameDescriptor}) before anything of it is used: its length, version and flags,
 * then its tag (a frame without one is refused when this process has a secret), then its cluster id. The caller
 * goes on to check who sent it (sender kind, id and epoch), that it is addressed to this receiver, and its sequence
 * ({@link ReplayWindow}). After a successful {@link #verify} the accessors read the frame's fields.
 * <p>
 * Not thread-safe: one per receiving subscription, used by its poller.
 */
public final class FrameReader
{
    private final HmacSha256 mac;
    private final int clusterHash;
    private final byte[] tag = new byte[HmacSha256.LENGTH];
    private DirectBuffer buffer;
    private int offset;
    private int length;

    /**
     * @param secret      checks the tags; {@link ClusterSecret#insecure()} accepts frames with or without one.
     * @param clusterHash the cluster id frames must carry.
     */
    public FrameReader(final ClusterSecret secret, final int clusterHash)
    {
        this.mac = secret.authenticates() ? secret.newMac() : null;
        this.clusterHash = clusterHash;
    }

    /**
     * @param streamId the Aeron stream the frame arrived on (part of what the tag covers).
     * @return null when the frame is well formed, authentic (or this process is insecure) and of this cluster;
     *         otherwise why it must be dropped.
     */
    public EdgeCounters.Reason verify(final DirectBuffer buffer, final int offset, final int length,
        final int streamId)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        if (length < HEADER_LENGTH || (buffer.getByte(offset + VERSION_OFFSET) & 0xFF) != VERSION)
        {
            return EdgeCounters.Reason.MALFORMED;
        }
        final int flags = buffer.getShort(offset + FLAGS_OFFSET, ORDER) & 0xFFFF;
        if ((flags & ~TAGGED) != 0)
        {
            return EdgeCounters.Reason.MALFORMED;
        }
        final boolean foreign = buffer.getInt(offset + CLUSTER_OFFSET, ORDER) != clusterHash;
        if (null != mac)
        {
            if ((flags & TAGGED) == 0)
            {
                return foreign ? EdgeCounters.Reason.FOREIGN_CLUSTER : EdgeCounters.Reason.UNAUTHENTICATED;
            }
            mac.begin();
            mac.updateInt(streamId);
            mac.update(buffer, offset, TAG_OFFSET);
            mac.update(buffer, offset + HEADER_LENGTH, length - HEADER_LENGTH);
            mac.finish(tag, 0);
            int difference = 0;
            for (int i = 0; i < TAG_LENGTH; i++)
            {
                difference |= tag[i] ^ buffer.getByte(offset + TAG_OFFSET + i); // constant time
            }
            if (difference != 0)
            {
                return foreign ? EdgeCounters.Reason.FOREIGN_CLUSTER : EdgeCounters.Reason.BAD_TAG;
            }
        }
        return foreign ? EdgeCounters.Reason.FOREIGN_CLUSTER : null;
    }

    /** @return {@link FrameDescriptor#HOST} or {@link FrameDescriptor#CLIENT} (or another value: unknown). */
    public int senderKind()
    {
        return buffer.getByte(offset + SENDER_KIND_OFFSET) & 0xFF;
    }

    /** @return the message type. */
    public int type()
    {
        return buffer.getInt(offset + TYPE_OFFSET, ORDER);
    }

    /** @return the sender's host id or client id. */
    public long senderId()
    {
        return buffer.getLong(offset + SENDER_ID_OFFSET, ORDER);
    }

    /** @return the sender's incarnation or session. */
    public long senderEpoch()
    {
        return buffer.getLong(offset + SENDER_EPOCH_OFFSET, ORDER);
    }

    /** @return the host id the frame is addressed to, or {@link FrameDescriptor#CLIENT_RECEIVER}. */
    public int receiverId()
    {
        return buffer.getInt(offset + RECEIVER_ID_OFFSET, ORDER);
    }

    /** @return the receiver's incarnation or client id the frame is addressed to. */
    public long receiverEpoch()
    {
        return buffer.getLong(offset + RECEIVER_EPOCH_OFFSET, ORDER);
    }

    /** @return the sequence number. */
    public long sequence()
    {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }

    /** @return where the payload starts in the buffer. */
    public int payloadOffset()
    {
        return offset + HEADER_LENGTH;
    }

    /** @return the payload's length. */
    public int payloadLength()
    {
        return length - HEADER_LENGTH;
    }
}
