package io.tidemark.aeron;

import java.nio.ByteOrder;

/**
 * The frame around every message on Tidemark's Aeron streams (fetches, control messages, client requests and
 * answers): who sent it, to whom, in which order, and an authentication tag over all of it. All fields
 * little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    Version    |  Sender Kind  |             Flags             |  0
 *  +---------------+---------------+-------------------------------+
 *  |                   Cluster Id (hash of cluster.id)             |  4
 *  +---------------------------------------------------------------+
 *  |                         Message Type                          |  8
 *  +---------------------------------------------------------------+
 *  |       Receiver Id: the receiving host's id, or -1 (a client)    | 12
 *  +---------------------------------------------------------------+
 *  |                 Sender Id: host id or client id (int64)       | 16
 *  +---------------------------------------------------------------+
 *  |   Sender Epoch: the host's incarnation, or the client's session (int64) | 24
 *  +---------------------------------------------------------------+
 *  |  Receiver Epoch: the receiving host's incarnation, or the client id (int64) | 32
 *  +---------------------------------------------------------------+
 *  |                 Sequence, per sender and stream (int64)       | 40
 *  +---------------------------------------------------------------+
 *  |        Tag: HMAC-SHA256 truncated to 16 bytes                 | 48
 *  +---------------------------------------------------------------+
 *  |        Payload: the message of the type ...                   | 64
 *  +---------------------------------------------------------------+
 * </pre>
 * The tag is HMAC-SHA256, keyed with the cluster secret ({@link ClusterSecret}), over the Aeron stream id the frame is
 * sent on (4 bytes, little-endian, not carried: each side knows it), bytes 0 to 47 and the payload, truncated to its
 * first 16 bytes (128 bits, as RFC 2104 allows down to half the hash). Flag {@link #TAGGED} says a
 * tag is present; a process with a secret drops every frame without one, and an {@code insecure} process sends
 * none.
 * <p>
 * <b>Design note: replays.</b> A captured frame is useless elsewhere or later: the receiver checks the tag first,
 * (which binds the frame to its stream: replayed on another stream it fails), then that the sender epoch is the
 * sender's registered incarnation (so frames of an earlier life of a host are refused), that the receiver id and
 * epoch are its own id and incarnation (so frames meant for another host, or captured before it restarted, are
 * refused), and that the sequence number is new within a sliding window per sender and stream
 * ({@link ReplayWindow}). Clients have no
 * incarnation: a host gives each client it meets a random session, which every later request of that client must
 * carry, and forgets it when the client goes idle, so a replayed request of a client long gone names no session.
 * <p>
 * <b>Design note: cost.</b> 64 bytes per message and one HMAC over it; the fetch response's batches are
 * authenticated with it (their CRCs guard against damage, not forgery). The cost on the acks=all round trip is
 * measured in {@code perf-results/}.
 */
public final class FrameDescriptor
{
    /** The frame version this code writes and the only one it reads. */
    public static final int VERSION = 1;

    /** Sender kind: a replica host (sender id: its host id). */
    public static final int HOST = 1;
    /** Sender kind: a client (sender id: its random client id). */
    public static final int CLIENT = 2;

    /** Receiver id of a frame to a client. */
    public static final int CLIENT_RECEIVER = -1;

    /** Flag: the frame carries a tag. */
    public static final int TAGGED = 0x1;

    public static final int VERSION_OFFSET = 0;
    public static final int SENDER_KIND_OFFSET = 1;
    public static final int FLAGS_OFFSET = 2;
    public static final int CLUSTER_OFFSET = 4;
    public static final int TYPE_OFFSET = 8;
    public static final int RECEIVER_ID_OFFSET = 12;
    public static final int SENDER_ID_OFFSET = 16;
    public static final int SENDER_EPOCH_OFFSET = 24;
    public static final int RECEIVER_EPOCH_OFFSET = 32;
    public static final int SEQUENCE_OFFSET = 40;
    public static final int TAG_OFFSET = 48;
    /** Bytes of the tag kept from the HMAC. */
    public static final int TAG_LENGTH = 16;
    /** Bytes of the frame before the payload. */
    public static final int HEADER_LENGTH = 64;

    /** Byte order of every field. */
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private FrameDescriptor()
    {
    }
}
