package io.tidemark.replication.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Objects;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The binary form of a {@link ControlMessage}, for carrying control-plane messages between processes (hosts and
 * the controller). All fields little-endian. Every message starts with the same 4-byte header; the flags' meaning
 * depends on the type, and a flag a type does not define must be zero:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    Version    |     Type      |             Flags             |  0
 *  +---------------+---------------+-------------------------------+
 *
 *  REGISTER_HOST (1), host -> controller; flag 0x1: possible data loss
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  HEARTBEAT (2), host -> controller
 *  |     Host Id     |   Incarnation (int64)   |   State Digest (int64)   |  4, 8, 16   length 24
 *
 *  UNREGISTER_HOST (3), host -> controller
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  ALTER_ISR (4), leader -> controller; flag 0x1: incarnations present (else Incarnation Count is 0)
 *  +---------------------------------------------------------------+
 *  |  Partition Id  |  Leader Id  |  Leader Epoch  | Expected Version |  4, 8, 12, 16
 *  +---------------------------------------------------------------+
 *  |        ISR Count (n)          |     Incarnation Count (m)     |  20, 24
 *  +---------------------------------------------------------------+
 *  |   ISR host ids: n x int32, then incarnations: m x int64     ... 28        length 28 + 4n + 8m
 *  +---------------------------------------------------------------+
 *
 *  PARTITION_UPDATE (5), controller -> host
 *  |  State Length (s)  |  State: s bytes of PartitionStateCodec ...  |  4, 8   length 8 + s
 *
 *  ALTER_ISR_RESPONSE (6), controller -> leader; flag 0x1: accepted, 0x2: current state present (else s is 0)
 *  |  Partition Id  |  State Length (s)  |  State: s bytes of PartitionStateCodec ... | 4, 8, 12  length 12 + s
 *
 *  REGISTERED (7), controller -> host
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  SESSION_EXPIRED (8), controller -> host
 *  |     Host Id     |  4                                                 length 8
 *
 *  CONTROLLER_ALIVE (9), controller -> host
 *  |     Host Id     |     Controller Epoch (int64)      |  4, 8          length 16
 * </pre>
 * A message fills its {@code length} exactly: {@link #decode} rejects missing and trailing bytes alike.
 * <p>
 * <b>Design note:</b> the partition state is length-prefixed although it is the last field, so that a truncated
 * message is told from a malformed state, and so that a later version can append fields after it. Counts are
 * checked against the message length before any array is allocated: a hostile count cannot make the decoder
 * allocate more than the message's own size.
 * <p>
 * Stateless; thread-safe.
 */
public final class ControlMessageCodec
{
    /** The format version this codec writes and the only one it reads. */
    static final int VERSION = 1;

    static final int REGISTER_HOST = 1;
    static final int HEARTBEAT = 2;
    static final int UNREGISTER_HOST = 3;
    static final int ALTER_ISR = 4;
    static final int PARTITION_UPDATE = 5;
    static final int ALTER_ISR_RESPONSE = 6;
    static final int REGISTERED = 7;
    static final int SESSION_EXPIRED = 8;
    static final int CONTROLLER_ALIVE = 9;

    static final int VERSION_OFFSET = 0;
    static final int TYPE_OFFSET = 1;
    static final int FLAGS_OFFSET = 2;
    static final int HEADER_LENGTH = 4;

    /** Offsets shared by the host messages (REGISTER_HOST, HEARTBEAT, UNREGISTER_HOST, REGISTERED, ...). */
    static final int HOST_ID_OFFSET = 4;
    static final int INCARNATION_OFFSET = 8;
    static final int STATE_DIGEST_OFFSET = 16;

    static final int PARTITION_ID_OFFSET = 4;
    static final int LEADER_ID_OFFSET = 8;
    static final int LEADER_EPOCH_OFFSET = 12;
    static final int EXPECTED_VERSION_OFFSET = 16;
    static final int ISR_COUNT_OFFSET = 20;
    static final int INCARNATION_COUNT_OFFSET = 24;
    static final int ALTER_ISR_FIXED_LENGTH = 28;

    static final int UPDATE_STATE_LENGTH_OFFSET = 4;
    static final int UPDATE_FIXED_LENGTH = 8;
    static final int RESPONSE_STATE_LENGTH_OFFSET = 8;
    static final int RESPONSE_FIXED_LENGTH = 12;

    static final int HOST_INCARNATION_LENGTH = 16;
    static final int HEARTBEAT_LENGTH = 24;
    static final int SESSION_EXPIRED_LENGTH = 8;

    static final int POSSIBLE_DATA_LOSS_FLAG = 0x1;
    static final int INCARNATIONS_PRESENT_FLAG = 0x1;
    static final int ACCEPTED_FLAG = 0x1;
    static final int CURRENT_PRESENT_FLAG = 0x2;

    /** {@link #destinationHost} of a message that does not name its destination host. */
    public static final int NO_DESTINATION_HOST = -1;

    private ControlMessageCodec()
    {
    }

    /**
     * A control message that could not be decoded. Input comes from the network: catch it, count it, drop the
     * message.
     */
    public static final class MalformedMessageException extends RuntimeException
    {
        private static final long serialVersionUID = 7_305_124_661_993_251_017L;

        /** What was wrong with the message. */
        public enum Reason
        {
            /** Shorter than its header, its type's fixed fields or its length fields say. */
            TRUNCATED,
            /** Longer than its fields say. */
            TRAILING_BYTES,
            /** A format version this codec does not read. */
            UNKNOWN_VERSION,
            /** A type code this codec does not know. */
            UNKNOWN_TYPE,
            /** A flag the message's type does not define. */
            UNKNOWN_FLAGS,
            /** A negative count or length, or a count that contradicts a flag. */
            BAD_LENGTH,
            /** The embedded partition state is not a well-formed {@link PartitionStateCodec} encoding. */
            BAD_PARTITION_STATE,
            /** Found by a caller rather than the codec, e.g. in a transport's framing around the message. */
            OTHER
        }

        private final Reason reason;

        /**
         * A message a caller found malformed before decoding it: {@link Reason#OTHER}.
         *
         * @param message detail.
         */
        public MalformedMessageException(final String message)
        {
            this(Reason.OTHER, message);
        }

        /**
         * @param reason  what was wrong.
         * @param message detail.
         */
        public MalformedMessageException(final Reason reason, final String message)
        {
            super(reason + ": " + message);
            this.reason = reason;
        }

        /**
         * @param reason  what was wrong.
         * @param message detail.
         * @param cause   the error that revealed it.
         */
        public MalformedMessageException(final Reason reason, final String message, final Throwable cause)
        {
            super(reason + ": " + message, cause);
            this.reason = reason;
        }

        /** @return what was wrong with the message. */
        public Reason reason()
        {
            return reason;
        }
    }

    /** @return the type code of {@code message}. */
    static int typeOf(final ControlMessage message)
    {
        if (message instanceof ControlMessage.RegisterHost)
        {
            return REGISTER_HOST;
        }
        if (message instanceof ControlMessage.Heartbeat)
        {
            return HEARTBEAT;
        }
        if (message instanceof ControlMessage.UnregisterHost)
        {
            return UNREGISTER_HOST;
        }
        if (message instanceof ControlMessage.AlterIsr)
        {
            return ALTER_ISR;
        }
        if (message instanceof ControlMessage.PartitionUpdate)
        {
            return PARTITION_UPDATE;
        }
        if (message instanceof ControlMessage.AlterIsrResponse)
        {
            return ALTER_ISR_RESPONSE;
        }
        if (message instanceof ControlMessage.Registered)
        {
            return REGISTERED;
        }
        if (message instanceof ControlMessage.SessionExpired)
        {
            return SESSION_EXPIRED;
        }
        if (message instanceof ControlMessage.ControllerAlive)
        {
            return CONTROLLER_ALIVE;
        }
        throw new IllegalArgumentException("unknown control message: " + message);
    }

    /** @return whether {@code message} goes from a host to the controller (else from the controller to a host). */
    public static boolean isToController(final ControlMessage message)
    {
        final int type = typeOf(message);
        return REGISTER_HOST == type || HEARTBEAT == type || UNREGISTER_HOST == type || ALTER_ISR == type;
    }

    /**
     * @return the host a host-to-controller message speaks for: the host registering, heartbeating or leaving, or the
     *         leader asking for an ISR change; {@link #NO_DESTINATION_HOST} for a controller-to-host message.
     */
    public static int senderHost(final ControlMessage message)
    {
        if (message instanceof ControlMessage.RegisterHost register)
        {
            return register.hostId();
        }
        if (message instanceof ControlMessage.Heartbeat heartbeat)
        {
            return heartbeat.hostId();
        }
        if (message instanceof ControlMessage.UnregisterHost unregister)
        {
            return unregister.hostId();
        }
        if (message instanceof ControlMessage.AlterIsr alterIsr)
        {
            return alterIsr.leaderId();
        }
        return NO_DESTINATION_HOST;
    }

    /**
     * @return the host a controller-to-host message is for when the message names it ({@link
     * ControlMessage.Registered}, {@link ControlMessage.SessionExpired}), else {@link #NO_DESTINATION_HOST}: a
     * {@link ControlMessage.PartitionUpdate} or {@link ControlMessage.AlterIsrResponse} does not say which host it
     * is for, so its sender addresses it, and host-to-controller messages go to the controller.
     */
    public static int destinationHost(final ControlMessage message)
    {
        if (message instanceof ControlMessage.Registered registered)
        {
            return registered.hostId();
        }
        if (message instanceof ControlMessage.SessionExpired expired)
        {
            return expired.hostId();
        }
        if (message instanceof ControlMessage.ControllerAlive alive)
        {
            return alive.hostId();
        }
        return NO_DESTINATION_HOST;
    }

    /** @return the bytes {@link #encode} writes for {@code message}. */
    public static int encodedLength(final ControlMessage message)
    {
        if (message instanceof ControlMessage.AlterIsr alterIsr)
        {
            return ALTER_ISR_FIXED_LENGTH + 4 * alterIsr.newIsr().length +
                (null == alterIsr.incarnations() ? 0 : 8 * alterIsr.incarnations().length);
        }
        if (message instanceof ControlMessage.PartitionUpdate update)
        {
            return UPDATE_FIXED_LENGTH + PartitionStateCodec.encodedLength(update.state());
        }
        if (message instanceof ControlMessage.AlterIsrResponse response)
        {
            return RESPONSE_FIXED_LENGTH +
                (null == response.current() ? 0 : PartitionStateCodec.encodedLength(response.current()));
        }
        if (message instanceof ControlMessage.Heartbeat)
        {
            return HEARTBEAT_LENGTH;
        }
        if (message instanceof ControlMessage.SessionExpired)
        {
            return SESSION_EXPIRED_LENGTH;
        }
        typeOf(message); // rejects what is not a control message
        return HOST_INCARNATION_LENGTH;
    }

    /**
     * Write {@code message} at {@code offset}. Nothing is written when it does not fit.
     *
     * @return the bytes written: {@link #encodedLength}.
     * @throws IndexOutOfBoundsException when {@code buffer} (not expandable) has fewer than
     *                                   {@link #encodedLength} bytes from {@code offset}.
     */
    public static int encode(final ControlMessage message, final MutableDirectBuffer buffer, final int offset)
    {
        final int type = typeOf(Objects.requireNonNull(message, "message"));
        final byte[] state = stateBytes(message);
        final int length = encodedLength(message);
        if (offset < 0 || offset > Integer.MAX_VALUE - length)
        {
            throw new IndexOutOfBoundsException("offset " + offset + ", length " + length);
        }
        buffer.checkLimit(offset + length);
        buffer.putByte(offset + VERSION_OFFSET, (byte)VERSION);
        buffer.putByte(offset + TYPE_OFFSET, (byte)type);
        buffer.putShort(offset + FLAGS_OFFSET, (short)flagsOf(message), LITTLE_ENDIAN);
        if (message instanceof ControlMessage.RegisterHost register)
        {
            putHost(buffer, offset, register.hostId(), register.incarnation());
        }
        else if (message instanceof ControlMessage.Heartbeat heartbeat)
        {
            putHost(buffer, offset, heartbeat.hostId(), heartbeat.incarnation());
            buffer.putLong(offset + STATE_DIGEST_OFFSET, heartbeat.stateDigest(), LITTLE_ENDIAN);
        }
        else if (message instanceof ControlMessage.UnregisterHost unregister)
        {
            putHost(buffer, offset, unregister.hostId(), unregister.incarnation());
        }
        else if (message instanceof ControlMessage.AlterIsr alterIsr)
        {
            putAlterIsr(alterIsr, buffer, offset);
        }
        else if (message instanceof ControlMessage.PartitionUpdate)
        {
            putState(buffer, offset + UPDATE_STATE_LENGTH_OFFSET, state);
        }
        else if (message instanceof ControlMessage.AlterIsrResponse response)
        {
            buffer.putInt(offset + PARTITION_ID_OFFSET, response.partitionId(), LITTLE_ENDIAN);
            putState(buffer, offset + RESPONSE_STATE_LENGTH_OFFSET, state);
        }
        else if (message instanceof ControlMessage.Registered registered)
        {
            putHost(buffer, offset, registered.hostId(), registered.incarnation());
        }
        else if (message instanceof ControlMessage.ControllerAlive alive)
        {
            putHost(buffer, offset, alive.hostId(), alive.controllerEpoch());
        }
        else
        {
            buffer.putInt(offset + HOST_ID_OFFSET, ((ControlMessage.SessionExpired)message).hostId(), LITTLE_ENDIAN);
        }
        return length;
    }

    private static int flagsOf(final ControlMessage message)
    {
        if (message instanceof ControlMessage.RegisterHost register)
        {
            return register.possibleDataLoss() ? POSSIBLE_DATA_LOSS_FLAG : 0;
        }
        if (message instanceof ControlMessage.AlterIsr alterIsr)
        {
            return null == alterIsr.incarnations() ? 0 : INCARNATIONS_PRESENT_FLAG;
        }
        if (message instanceof ControlMessage.AlterIsrResponse response)
        {
            return (response.accepted() ? ACCEPTED_FLAG : 0) | (null == response.current() ? 0 : CURRENT_PRESENT_FLAG);
        }
        return 0;
    }

    private static byte[] stateBytes(final ControlMessage message)
    {
        if (message instanceof ControlMessage.PartitionUpdate update)
        {
            return PartitionStateCodec.encode(Objects.requireNonNull(update.state(), "state"));
        }
        if (message instanceof ControlMessage.AlterIsrResponse response && null != response.current())
        {
            return PartitionStateCodec.encode(response.current());
        }
        return null;
    }

    private static void putHost(
        final MutableDirectBuffer buffer, final int offset, final int hostId, final long incarnation)
    {
        buffer.putInt(offset + HOST_ID_OFFSET, hostId, LITTLE_ENDIAN);
        buffer.putLong(offset + INCARNATION_OFFSET, incarnation, LITTLE_ENDIAN);
    }

    private static void putAlterIsr(final ControlMessage.AlterIsr alterIsr, final MutableDirectBuffer buffer,
        final int offset)
    {
        final int[] isr = alterIsr.newIsr();
        final long[] incarnations = alterIsr.incarnations();
        buffer.putInt(offset + PARTITION_ID_OFFSET, alterIsr.partitionId(), LITTLE_ENDIAN);
        buffer.putInt(offset + LEADER_ID_OFFSET, alterIsr.leaderId(), LITTLE_ENDIAN);
        buffer.putInt(offset + LEADER_EPOCH_OFFSET, alterIsr.leaderEpoch(), LITTLE_ENDIAN);
        buffer.putInt(offset + EXPECTED_VERSION_OFFSET, alterIsr.expectedVersion(), LITTLE_ENDIAN);
        buffer.putInt(offset + ISR_COUNT_OFFSET, isr.length, LITTLE_ENDIAN);
        buffer.putInt(offset + INCARNATION_COUNT_OFFSET, null == incarnations ? 0 : incarnations.length,
            LITTLE_ENDIAN);
        int position = offset + ALTER_ISR_FIXED_LENGTH;
        for (final int host : isr)
        {
            buffer.putInt(position, host, LITTLE_ENDIAN);
            position += 4;
        }
        if (null != incarnations)
        {
            for (final long incarnation : incarnations)
            {
                buffer.putLong(position, incarnation, LITTLE_ENDIAN);
                position += 8;
            }
        }
    }

    private static void putState(final MutableDirectBuffer buffer, final int lengthOffset, final byte[] state)
    {
        if (null == state)
        {
            buffer.putInt(lengthOffset, 0, LITTLE_ENDIAN);
        }
        else
        {
            buffer.putInt(lengthOffset, state.length, LITTLE_ENDIAN);
            buffer.putBytes(lengthOffset + 4, state);
        }
    }

    /**
     * Read the message of exactly {@code length} bytes at {@code offset}.
     *
     * @return the message.
     * @throws MalformedMessageException when the bytes are not a well-formed message of this version.
     * @throws IndexOutOfBoundsException when {@code offset} and {@code length} are not a region of {@code buffer}
     *                                   (a caller's mistake, not the sender's).
     */
    public static ControlMessage decode(final DirectBuffer buffer, final int offset, final int length)
    {
        buffer.boundsCheck(offset, length);
        if (length < 1)
        {
            throw malformed(MalformedMessageException.Reason.TRUNCATED, "empty message");
        }
        final int version = buffer.getByte(offset + VERSION_OFFSET) & 0xFF;
        if (VERSION != version)
        {
            throw malformed(MalformedMessageException.Reason.UNKNOWN_VERSION, "version " + version);
        }
        requireLength(length, HEADER_LENGTH, 0);
        final int type = buffer.getByte(offset + TYPE_OFFSET) & 0xFF;
        final int flags = buffer.getShort(offset + FLAGS_OFFSET, LITTLE_ENDIAN) & 0xFFFF;
        return switch (type)
        {
            case REGISTER_HOST, HEARTBEAT, UNREGISTER_HOST, REGISTERED, SESSION_EXPIRED, CONTROLLER_ALIVE ->
                decodeHostMessage(type, buffer, offset, length, flags);
            case ALTER_ISR -> decodeAlterIsr(buffer, offset, length, flags);
            case PARTITION_UPDATE -> decodePartitionUpdate(buffer, offset, length, flags);
            case ALTER_ISR_RESPONSE -> decodeAlterIsrResponse(buffer, offset, length, flags);
            default -> throw malformed(MalformedMessageException.Reason.UNKNOWN_TYPE, "type " + type);
        };
    }

    private static ControlMessage decodeHostMessage(
        final int type, final DirectBuffer buffer, final int offset, final int length, final int flags)
    {
        requireFlags(flags, REGISTER_HOST == type ? POSSIBLE_DATA_LOSS_FLAG : 0, type);
        requireExactLength(length, HEARTBEAT == type ? HEARTBEAT_LENGTH :
            SESSION_EXPIRED == type ? SESSION_EXPIRED_LENGTH : HOST_INCARNATION_LENGTH, type);
        final int hostId = buffer.getInt(offset + HOST_ID_OFFSET, LITTLE_ENDIAN);
        if (SESSION_EXPIRED == type)
        {
            return new ControlMessage.SessionExpired(hostId);
        }
        final long incarnation = buffer.getLong(offset + INCARNATION_OFFSET, LITTLE_ENDIAN);
        return switch (type)
        {
            case REGISTER_HOST ->
                new ControlMessage.RegisterHost(hostId, incarnation, 0 != (flags & POSSIBLE_DATA_LOSS_FLAG));
            case HEARTBEAT ->
                new ControlMessage.Heartbeat(hostId, incarnation, buffer.getLong(offset + STATE_DIGEST_OFFSET,
                LITTLE_ENDIAN));
            case UNREGISTER_HOST -> new ControlMessage.UnregisterHost(hostId, incarnation);
            case CONTROLLER_ALIVE -> new ControlMessage.ControllerAlive(hostId, incarnation);
            default -> new ControlMessage.Registered(hostId, incarnation);
        };
    }

    private static ControlMessage decodeAlterIsr(
        final DirectBuffer buffer, final int offset, final int length, final int flags)
    {
        requireFlags(flags, INCARNATIONS_PRESENT_FLAG, ALTER_ISR);
        requireLength(length, ALTER_ISR_FIXED_LENGTH, ALTER_ISR);
        final int isrCount = buffer.getInt(offset + ISR_COUNT_OFFSET, LITTLE_ENDIAN);
        final int incarnationCount = buffer.getInt(offset + INCARNATION_COUNT_OFFSET, LITTLE_ENDIAN);
        final boolean incarnationsPresent = 0 != (flags & INCARNATIONS_PRESENT_FLAG);
        if (isrCount < 0 || incarnationCount < 0 || (!incarnationsPresent && 0 != incarnationCount))
        {
            throw malformed(MalformedMessageException.Reason.BAD_LENGTH, "type " + ALTER_ISR + " counts " + isrCount + ", " +
                incarnationCount + (incarnationsPresent ? "" : " without incarnations"));
        }
        requireExactLength(length, ALTER_ISR_FIXED_LENGTH + 4L * isrCount + 8L * incarnationCount, ALTER_ISR);

        final int[] isr = new int[isrCount];
        int position = offset + ALTER_ISR_FIXED_LENGTH;
        for (int i = 0; i < isrCount; i++)
        {
            isr[i] = buffer.getInt(position, LITTLE_ENDIAN);
            position += 4;
        }
        long[] incarnations = null;
        if (incarnationsPresent)
        {
            incarnations = new long[incarnationCount];
            for (int i = 0; i < incarnationCount; i++)
            {
                incarnations[i] = buffer.getLong(position, LITTLE_ENDIAN);
                position += 8;
            }
        }
        return new ControlMessage.AlterIsr(
            buffer.getInt(offset + PARTITION_ID_OFFSET, LITTLE_ENDIAN),
            buffer.getInt(offset + LEADER_ID_OFFSET, LITTLE_ENDIAN),
            buffer.getInt(offset + LEADER_EPOCH_OFFSET, LITTLE_ENDIAN),
            buffer.getInt(offset + EXPECTED_VERSION_OFFSET, LITTLE_ENDIAN),
            isr,
            incarnations);
    }

    private static ControlMessage decodePartitionUpdate(
        final DirectBuffer buffer, final int offset, final int length, final int flags)
    {
        requireFlags(flags, 0, PARTITION_UPDATE);
        requireLength(length, UPDATE_FIXED_LENGTH, PARTITION_UPDATE);
        final int stateLength = buffer.getInt(offset + UPDATE_STATE_LENGTH_OFFSET, LITTLE_ENDIAN);
        requireStateLength(stateLength, length, UPDATE_FIXED_LENGTH, true, PARTITION_UPDATE);
        return new ControlMessage.PartitionUpdate(decodeState(buffer, offset + UPDATE_FIXED_LENGTH, stateLength));
    }

    private static ControlMessage decodeAlterIsrResponse(
        final DirectBuffer buffer, final int offset, final int length, final int flags)
    {
        requireFlags(flags, ACCEPTED_FLAG | CURRENT_PRESENT_FLAG, ALTER_ISR_RESPONSE);
        requireLength(length, RESPONSE_FIXED_LENGTH, ALTER_ISR_RESPONSE);
        final boolean currentPresent = 0 != (flags & CURRENT_PRESENT_FLAG);
        final int stateLength = buffer.getInt(offset + RESPONSE_STATE_LENGTH_OFFSET, LITTLE_ENDIAN);
        requireStateLength(stateLength, length, RESPONSE_FIXED_LENGTH, currentPresent, ALTER_ISR_RESPONSE);
        return new ControlMessage.AlterIsrResponse(
            buffer.getInt(offset + PARTITION_ID_OFFSET, LITTLE_ENDIAN),
            0 != (flags & ACCEPTED_FLAG),
            currentPresent ? decodeState(buffer, offset + RESPONSE_FIXED_LENGTH, stateLength) : null);
    }

    private static void requireStateLength(
        final int stateLength, final int length, final int fixedLength, final boolean present, final int type)
    {
        if (stateLength < 0 || (!present && 0 != stateLength))
        {
            throw malformed(MalformedMessageException.Reason.BAD_LENGTH, "type " + type + " state length " + stateLength +
                (present ? "" : " without a state"));
        }
        requireExactLength(length, (long)fixedLength + stateLength, type);
    }

    private static PartitionState decodeState(final DirectBuffer buffer, final int offset, final int stateLength)
    {
        final byte[] bytes = new byte[stateLength];
        buffer.getBytes(offset, bytes);
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        final PartitionState state;
        try
        {
            state = PartitionStateCodec.decode(in);
        }
        catch (final IllegalArgumentException | BufferUnderflowException ex)
        {
            throw new MalformedMessageException(
                MalformedMessageException.Reason.BAD_PARTITION_STATE, ex.getMessage(), ex);
        }
        if (in.hasRemaining())
        {
            throw malformed(MalformedMessageException.Reason.BAD_PARTITION_STATE,
                in.remaining() + " bytes after the partition state");
        }
        return state;
    }

    private static void requireFlags(final int flags, final int defined, final int type)
    {
        if (0 != (flags & ~defined))
        {
            throw malformed(MalformedMessageException.Reason.UNKNOWN_FLAGS,
                "type " + type + " flags 0x" + Integer.toHexString(flags));
        }
    }

    private static void requireLength(final int length, final int required, final int type)
    {
        if (length < required)
        {
            throw malformed(MalformedMessageException.Reason.TRUNCATED,
                "type " + type + " needs at least " + required + " bytes, message has " + length);
        }
    }

    private static void requireExactLength(final int length, final long expected, final int type)
    {
        if (length < expected)
        {
            throw malformed(MalformedMessageException.Reason.TRUNCATED,
                "type " + type + " needs " + expected + " bytes, message has " + length);
        }
        if (length > expected)
        {
            throw malformed(MalformedMessageException.Reason.TRAILING_BYTES,
                "type " + type + " needs " + expected + " bytes, message has " + length);
        }
    }

    private static MalformedMessageException malformed(
        final MalformedMessageException.Reason reason, final String message)
    {
        return new MalformedMessageException(reason, message);
    }
}
