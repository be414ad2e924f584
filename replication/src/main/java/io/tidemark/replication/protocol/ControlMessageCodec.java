package io.tidemark.replication.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Objects;

import static io.tidemark.replication.protocol.ControlMessageDescriptor.*;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The binary form of a {@link ControlMessage}, for carrying control-plane messages between processes (hosts and
 * the controller): {@link #encode} writes the layout {@link ControlMessageDescriptor} draws, {@link #decode} reads
 * it back ({@link ControlMessageDecoder}), rejecting what is not a well-formed message with a typed
 * {@link MalformedMessageException}. A message fills its {@code length} exactly: {@link #decode} rejects missing
 * and trailing bytes alike.
 * <p>
 * Stateless; thread-safe.
 */
public final class ControlMessageCodec
{
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

    /** The message class of each type code (the index); the records are final, so a class names one type. */
    private static final Class<?>[] TYPES = new Class<?>[CONTROLLER_ALIVE + 1];

    static
    {
        TYPES[REGISTER_HOST] = ControlMessage.RegisterHost.class;
        TYPES[HEARTBEAT] = ControlMessage.Heartbeat.class;
        TYPES[UNREGISTER_HOST] = ControlMessage.UnregisterHost.class;
        TYPES[ALTER_ISR] = ControlMessage.AlterIsr.class;
        TYPES[PARTITION_UPDATE] = ControlMessage.PartitionUpdate.class;
        TYPES[ALTER_ISR_RESPONSE] = ControlMessage.AlterIsrResponse.class;
        TYPES[REGISTERED] = ControlMessage.Registered.class;
        TYPES[SESSION_EXPIRED] = ControlMessage.SessionExpired.class;
        TYPES[CONTROLLER_ALIVE] = ControlMessage.ControllerAlive.class;
    }

    /** @return the type code of {@code message}. */
    static int typeOf(final ControlMessage message)
    {
        final Class<?> type = null == message ? null : message.getClass();
        for (int code = 1; code < TYPES.length; code++)
        {
            if (TYPES[code] == type)
            {
                return code;
            }
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
        if (message instanceof ControlMessage.AlterIsr alterIsr)
        {
            return alterIsr.leaderId();
        }
        return message instanceof ControlMessage.HostMessage host && isToController(message) ?
            host.hostId() : NO_DESTINATION_HOST;
    }

    /**
     * @return the host a controller-to-host message is for when the message names it ({@link
     * ControlMessage.Registered}, {@link ControlMessage.SessionExpired}, {@link ControlMessage.ControllerAlive}), else
     * {@link #NO_DESTINATION_HOST}: a {@link ControlMessage.PartitionUpdate} or {@link ControlMessage.AlterIsrResponse}
     * does not say which host it is for, so its sender addresses it, and host-to-controller messages go to the
     * controller.
     */
    public static int destinationHost(final ControlMessage message)
    {
        return message instanceof ControlMessage.HostMessage host && !isToController(message) ?
            host.hostId() : NO_DESTINATION_HOST;
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
        return ControlMessageDecoder.decode(buffer, offset, length);
    }
}
