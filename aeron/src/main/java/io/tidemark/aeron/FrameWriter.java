package io.tidemark.aeron;

import io.aeron.Publication;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.tidemark.aeron.FrameDescriptor.*;

/**
 * Sends frames ({@link FrameDescriptor}) on one publication: writes the header, numbers the frame, computes its tag
 * and offers header and payload in one Aeron message. Numbering and offering happen under one lock, so frames
 * leave in the order of their sequence numbers and the receiver's window sees them in order.
 * <p>
 * Thread-safe (senders serialize on the writer); allocates nothing per frame.
 */
public final class FrameWriter
{
    /** {@link #offer} result when the frame exceeds the publication's largest message. */
    public static final long TOO_LONG = -100;

    private final HmacSha256 mac;
    private final UnsafeBuffer header;
    private final byte[] tag = new byte[HmacSha256.LENGTH];
    private final int maxPrefixLength;
    private long sequence;
    private volatile long senderEpoch;

    /**
     * @param secret          keys the tags; {@link ClusterSecret#insecure()} sends untagged frames.
     * @param clusterHash     the cluster id every frame carries.
     * @param senderKind      {@link FrameDescriptor#HOST} or {@link FrameDescriptor#CLIENT}.
     * @param senderId        the host id or client id.
     * @param senderEpoch     the host's incarnation, or the client's session with the receiving host.
     * @param maxPrefixLength the longest prefix (type-specific fields before a payload) a caller passes.
     */
    public FrameWriter(final ClusterSecret secret, final int clusterHash, final int senderKind, final long senderId,
        final long senderEpoch, final int maxPrefixLength)
    {
        this.mac = secret.authenticates() ? secret.newMac() : null;
        this.maxPrefixLength = maxPrefixLength;
        this.header = new UnsafeBuffer(new byte[HEADER_LENGTH + maxPrefixLength]);
        this.senderEpoch = senderEpoch;
        header.putByte(VERSION_OFFSET, (byte)VERSION);
        header.putByte(SENDER_KIND_OFFSET, (byte)senderKind);
        header.putShort(FLAGS_OFFSET, (short)(null == mac ? 0 : TAGGED), ORDER);
        header.putInt(CLUSTER_OFFSET, clusterHash, ORDER);
        header.putLong(SENDER_ID_OFFSET, senderId, ORDER);
    }

    /** @param epoch the sender epoch of later frames (a client's new session with the host). */
    public void senderEpoch(final long epoch)
    {
        this.senderEpoch = epoch;
    }

    /** @return the sender epoch frames carry now. */
    public long senderEpoch()
    {
        return senderEpoch;
    }

    /**
     * Send a frame whose payload is {@code length} bytes of {@code payload}.
     *
     * @param receiverId    the receiving host's id, or {@link FrameDescriptor#CLIENT_RECEIVER}.
     * @param receiverEpoch the receiving host's incarnation, or the receiving client's id.
     * @return Aeron's offer result (positive: sent), or {@link #TOO_LONG}.
     */
    public long offer(final Publication publication, final int type, final int receiverId, final long receiverEpoch,
        final DirectBuffer payload, final int offset, final int length)
    {
        return offer(publication, type, receiverId, receiverEpoch, null, 0, 0, payload, offset, length);
    }

    /**
     * Send a frame whose payload is {@code prefixLength} bytes of {@code prefix} followed by {@code length} bytes of
     * {@code payload} (either may be empty; {@code prefix} may be null when its length is 0).
     *
     * @return Aeron's offer result (positive: sent), or {@link #TOO_LONG}.
     */
    public synchronized long offer(final Publication publication, final int type, final int receiverId,
        final long receiverEpoch, final DirectBuffer prefix, final int prefixOffset, final int prefixLength, final DirectBuffer payload,
        final int offset, final int length)
    {
        if (prefixLength > maxPrefixLength)
        {
            throw new IllegalArgumentException("prefix of " + prefixLength + " bytes, at most " + maxPrefixLength);
        }
        final int headLength = HEADER_LENGTH + prefixLength;
        if ((long)headLength + length > publication.maxMessageLength())
        {
            return TOO_LONG;
        }
        header.putInt(TYPE_OFFSET, type, ORDER);
        header.putInt(RECEIVER_ID_OFFSET, receiverId, ORDER);
        header.putLong(SENDER_EPOCH_OFFSET, senderEpoch, ORDER);
        header.putLong(RECEIVER_EPOCH_OFFSET, receiverEpoch, ORDER);
        header.putLong(SEQUENCE_OFFSET, ++sequence, ORDER);
        if (prefixLength > 0)
        {
            header.putBytes(HEADER_LENGTH, prefix, prefixOffset, prefixLength);
        }
        if (null != mac)
        {
            final int streamId = publication.streamId();
            mac.begin();
            mac.updateInt(streamId);
            mac.update(header.byteArray(), 0, TAG_OFFSET);
            mac.update(header.byteArray(), HEADER_LENGTH, prefixLength);
            if (length > 0)
            {
                mac.update(payload, offset, length);
            }
            mac.finish(tag, 0);
            header.putBytes(TAG_OFFSET, tag, 0, TAG_LENGTH);
        }
        return length > 0 ? publication.offer(header, 0, headLength, payload, offset, length) :
            publication.offer(header, 0, headLength);
    }
}
