package io.tidemark.replication.protocol;

import io.tidemark.replication.protocol.ControlMessageCodec.MalformedMessageException;
import org.agrona.DirectBuffer;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

import static io.tidemark.replication.protocol.ControlMessageDescriptor.*;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * Reads a {@link ControlMessage} from the bytes of {@link ControlMessageDescriptor}'s layout, trusting none of them:
 * the version, type, flags and every count and length are checked against the message's own length before anything
 * is read or allocated, and each failure is a {@link MalformedMessageException} with its reason.
 * <p>
 * Stateless; thread-safe.
 */
final class ControlMessageDecoder
{
    private ControlMessageDecoder()
    {
    }

    /**
     * Read the message of exactly {@code length} bytes at {@code offset}.
     *
     * @return the message.
     * @throws MalformedMessageException when the bytes are not a well-formed message of this version.
     * @throws IndexOutOfBoundsException when {@code offset} and {@code length} are not a region of {@code buffer}
     *                                   (a caller's mistake, not the sender's).
     */
    static ControlMessage decode(final DirectBuffer buffer, final int offset, final int length)
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
            throw malformed(MalformedMessageException.Reason.BAD_LENGTH, "type " + ALTER_ISR + " counts " + isrCount +
                ", " + incarnationCount + (incarnationsPresent ? "" : " without incarnations"));
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
            throw malformed(MalformedMessageException.Reason.BAD_LENGTH, "type " + type + " state length " +
                stateLength + (present ? "" : " without a state"));
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
