package io.tidemark.replication.protocol;

import io.tidemark.replication.TopicPartition;
import io.tidemark.replication.protocol.ControlMessageCodec.MalformedMessageException;
import io.tidemark.replication.protocol.ControlMessageCodec.MalformedMessageException.Reason;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Round trips, layout and hostile input of the control-plane wire format. */
class ControlMessageCodecTest
{
    private static final PartitionState FULL_STATE = new PartitionState(17, new TopicPartition("orders.v2_eu-1", 3),
        new int[]{ 4, 1, 2, 3 }, new int[]{ 4 }, new int[]{ 1, 2 }, new int[]{ 3 }, PartitionState.NO_LEADER,
        Integer.MAX_VALUE, 123_456);
    private static final PartitionState LEADER_STATE = new PartitionState(0, new TopicPartition("t", 0),
        new int[]{ 0, 1, 2 }, new int[]{ 0, 1, 2 }, new int[0], new int[0], 0, 5, 9);
    private static final PartitionState LONG_TOPIC_STATE = new PartitionState(Integer.MAX_VALUE,
        new TopicPartition("x".repeat(200), Integer.MAX_VALUE), new int[]{ PartitionState.MAX_HOSTS - 1 },
        new int[]{ PartitionState.MAX_HOSTS - 1 }, new int[0], new int[0], PartitionState.MAX_HOSTS - 1,
        Integer.MAX_VALUE, Integer.MAX_VALUE);

    static List<ControlMessage> messages()
    {
        return List.of(
            new ControlMessage.RegisterHost(0, 0, false),
            new ControlMessage.RegisterHost(Integer.MAX_VALUE, Long.MAX_VALUE, true),
            new ControlMessage.RegisterHost(-1, Long.MIN_VALUE, true),
            new ControlMessage.Heartbeat(3, Long.MAX_VALUE - 1, 0x8000_0000_0000_0001L),
            new ControlMessage.Heartbeat(0, -1, 0),
            new ControlMessage.UnregisterHost(Integer.MIN_VALUE, Long.MAX_VALUE),
            new ControlMessage.AlterIsr(5, 1, 9, 42, new int[0]),
            new ControlMessage.AlterIsr(5, 1, 9, 42, new int[]{ 1, 2, 3 }),
            new ControlMessage.AlterIsr(5, 1, 9, 42, new int[]{ 1, 2, 3 }, new long[]{ Long.MAX_VALUE, -1, 0 }),
            new ControlMessage.AlterIsr(5, 1, 9, 42, new int[0], new long[0]),
            new ControlMessage.AlterIsr(Integer.MAX_VALUE, -1, Integer.MIN_VALUE, -7, new int[]{ 2, 0, 1 },
                new long[]{ Long.MAX_VALUE - 1, Long.MIN_VALUE }),
            new ControlMessage.PartitionUpdate(FULL_STATE),
            new ControlMessage.PartitionUpdate(LEADER_STATE),
            new ControlMessage.PartitionUpdate(LONG_TOPIC_STATE),
            new ControlMessage.AlterIsrResponse(17, true, FULL_STATE),
            new ControlMessage.AlterIsrResponse(0, false, LEADER_STATE),
            new ControlMessage.AlterIsrResponse(-3, false, null),
            new ControlMessage.AlterIsrResponse(4, true, null),
            new ControlMessage.Registered(2, Long.MAX_VALUE),
            new ControlMessage.Registered(0, Long.MIN_VALUE),
            new ControlMessage.SessionExpired(0),
            new ControlMessage.SessionExpired(Integer.MAX_VALUE),
            new ControlMessage.ControllerAlive(1, 7),
            new ControlMessage.ControllerAlive(Integer.MAX_VALUE, Long.MAX_VALUE));
    }

    @Test
    void samplesCoverEveryTypeAndEdge()
    {
        final boolean[] seen = new boolean[10];
        messages().forEach((m) -> seen[ControlMessageCodec.typeOf(m)] = true);
        for (int type = 1; type <= 9; type++)
        {
            assertTrue(seen[type], "no sample of type " + type);
        }
    }

    @ParameterizedTest
    @MethodSource("messages")
    void roundTripsAtOffsetZero(final ControlMessage message)
    {
        final byte[] bytes = encode(message);
        assertEquals(ControlMessageCodec.encodedLength(message), bytes.length);
        assertMessageEquals(message, ControlMessageCodec.decode(new UnsafeBuffer(bytes), 0, bytes.length));
    }

    @ParameterizedTest
    @MethodSource("messages")
    void roundTripsAtUnalignedOffsetWithoutTouchingNeighbours(final ControlMessage message)
    {
        final int offset = 13;
        final int length = ControlMessageCodec.encodedLength(message);
        final byte[] array = new byte[offset + length + 11];
        Arrays.fill(array, (byte)0x5A);
        final UnsafeBuffer buffer = new UnsafeBuffer(array);

        assertEquals(length, ControlMessageCodec.encode(message, buffer, offset));

        for (int i = 0; i < array.length; i++)
        {
            if (i < offset || i >= offset + length)
            {
                assertEquals((byte)0x5A, array[i], "byte " + i + " outside the message changed");
            }
        }
        assertArrayEquals(encode(message), Arrays.copyOfRange(array, offset, offset + length));
        assertMessageEquals(message, ControlMessageCodec.decode(buffer, offset, length));
    }

    @Test
    void encodesIntoAnExpandableBufferAndRefusesATooSmallOne()
    {
        final ControlMessage message = new ControlMessage.PartitionUpdate(FULL_STATE);
        final int length = ControlMessageCodec.encodedLength(message);
        final ExpandableArrayBuffer expandable = new ExpandableArrayBuffer(8);
        assertEquals(length, ControlMessageCodec.encode(message, expandable, 100));
        assertMessageEquals(message, ControlMessageCodec.decode(expandable, 100, length));

        final byte[] small = new byte[length - 1];
        assertThrows(IndexOutOfBoundsException.class,
            () -> ControlMessageCodec.encode(message, new UnsafeBuffer(small), 0));
        assertArrayEquals(new byte[length - 1], small, "nothing written when the message does not fit");
        assertThrows(IndexOutOfBoundsException.class,
            () -> ControlMessageCodec.encode(message, new UnsafeBuffer(new byte[2 * length]), -1));
    }

    @Test
    void headerAndFieldsAreLittleEndianAtTheDescribedOffsets()
    {
        final byte[] register = encode(new ControlMessage.RegisterHost(0x01020304, 0x1112131415161718L, true));
        assertArrayEquals(new byte[]{ 1, 1, 1, 0, 4, 3, 2, 1, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11 },
            register);

        final UnsafeBuffer alterIsr = new UnsafeBuffer(encode(
            new ControlMessage.AlterIsr(6, 1, 2, 3, new int[]{ 1, 4 }, new long[]{ 77 })));
        assertEquals(ControlMessageDescriptor.VERSION, alterIsr.getByte(0));
        assertEquals(ControlMessageDescriptor.ALTER_ISR, alterIsr.getByte(1));
        assertEquals(ControlMessageDescriptor.INCARNATIONS_PRESENT_FLAG, alterIsr.getShort(2, LITTLE_ENDIAN));
        assertEquals(6, alterIsr.getInt(4, LITTLE_ENDIAN));
        assertEquals(2, alterIsr.getInt(20, LITTLE_ENDIAN));
        assertEquals(1, alterIsr.getInt(24, LITTLE_ENDIAN));
        assertEquals(4, alterIsr.getInt(32, LITTLE_ENDIAN));
        assertEquals(77, alterIsr.getLong(36, LITTLE_ENDIAN));
        assertEquals(44, alterIsr.capacity());

        final byte[] update = encode(new ControlMessage.PartitionUpdate(LEADER_STATE));
        final byte[] state = PartitionStateCodec.encode(LEADER_STATE);
        assertEquals(state.length, new UnsafeBuffer(update).getInt(4, LITTLE_ENDIAN));
        assertArrayEquals(state, Arrays.copyOfRange(update, 8, update.length));
    }

    @Test
    void tellsDirectionAndDestination()
    {
        for (final ControlMessage message : messages())
        {
            final boolean toController = message instanceof ControlMessage.RegisterHost ||
                message instanceof ControlMessage.Heartbeat || message instanceof ControlMessage.UnregisterHost ||
                message instanceof ControlMessage.AlterIsr;
            assertEquals(toController, ControlMessageCodec.isToController(message), message.toString());
        }
        assertEquals(7, ControlMessageCodec.destinationHost(new ControlMessage.Registered(7, 1)));
        assertEquals(9, ControlMessageCodec.destinationHost(new ControlMessage.SessionExpired(9)));
        assertEquals(ControlMessageCodec.NO_DESTINATION_HOST,
            ControlMessageCodec.destinationHost(new ControlMessage.PartitionUpdate(FULL_STATE)));
        assertEquals(ControlMessageCodec.NO_DESTINATION_HOST,
            ControlMessageCodec.destinationHost(new ControlMessage.AlterIsrResponse(1, true, null)));
        assertEquals(ControlMessageCodec.NO_DESTINATION_HOST,
            ControlMessageCodec.destinationHost(new ControlMessage.Heartbeat(3, 1, 2)));
    }

    @ParameterizedTest
    @MethodSource("messages")
    void everyTruncationIsMalformed(final ControlMessage message)
    {
        final byte[] bytes = encode(message);
        for (int length = 0; length < bytes.length; length++)
        {
            // an exact-size copy: reading past the truncated length would be an IndexOutOfBoundsException
            final byte[] truncated = Arrays.copyOf(bytes, length);
            assertEquals(Reason.TRUNCATED, malformed(truncated).reason(), "length " + length);
        }
    }

    @ParameterizedTest
    @MethodSource("messages")
    void trailingBytesAreMalformed(final ControlMessage message)
    {
        assertEquals(Reason.TRAILING_BYTES, malformed(Arrays.copyOf(encode(message), encode(message).length + 1))
            .reason());
    }

    @ParameterizedTest
    @ValueSource(ints = { 0, 10, 127, 128, 255 })
    void unknownTypeIsMalformed(final int type)
    {
        final byte[] bytes = encode(new ControlMessage.SessionExpired(1));
        bytes[ControlMessageDescriptor.TYPE_OFFSET] = (byte)type;
        assertEquals(Reason.UNKNOWN_TYPE, malformed(bytes).reason());
    }

    @ParameterizedTest
    @ValueSource(ints = { 0, 2, 128, 255 })
    void unknownVersionIsMalformedWhateverFollows(final int version)
    {
        for (final ControlMessage message : messages())
        {
            final byte[] bytes = encode(message);
            bytes[ControlMessageDescriptor.VERSION_OFFSET] = (byte)version;
            assertEquals(Reason.UNKNOWN_VERSION, malformed(bytes).reason());
        }
        assertEquals(Reason.UNKNOWN_VERSION, malformed(new byte[]{ (byte)version }).reason());
    }

    @ParameterizedTest
    @MethodSource("messages")
    void undefinedFlagsAreMalformed(final ControlMessage message)
    {
        final byte[] bytes = encode(message);
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final short flags = buffer.getShort(ControlMessageDescriptor.FLAGS_OFFSET, LITTLE_ENDIAN);
        for (final int flag : new int[]{ 0x4, 0x80, 0x8000 })
        {
            buffer.putShort(ControlMessageDescriptor.FLAGS_OFFSET, (short)(flags | flag), LITTLE_ENDIAN);
            assertEquals(Reason.UNKNOWN_FLAGS, malformed(bytes).reason());
        }
    }

    @Test
    void hostileAlterIsrCountsAllocateNothingAndAreMalformed()
    {
        final byte[] valid = encode(new ControlMessage.AlterIsr(5, 1, 9, 42, new int[]{ 1, 2 }, new long[]{ 3, 4 }));
        assertEquals(Reason.TRUNCATED, withInt(valid, ControlMessageDescriptor.ISR_COUNT_OFFSET, Integer.MAX_VALUE));
        assertEquals(Reason.TRUNCATED, withInt(valid, ControlMessageDescriptor.INCARNATION_COUNT_OFFSET,
            Integer.MAX_VALUE));
        assertEquals(Reason.TRUNCATED, withInt(valid, ControlMessageDescriptor.ISR_COUNT_OFFSET, 3));
        assertEquals(Reason.TRAILING_BYTES, withInt(valid, ControlMessageDescriptor.ISR_COUNT_OFFSET, 1));
        assertEquals(Reason.BAD_LENGTH, withInt(valid, ControlMessageDescriptor.ISR_COUNT_OFFSET, -1));
        assertEquals(Reason.BAD_LENGTH, withInt(valid, ControlMessageDescriptor.ISR_COUNT_OFFSET, Integer.MIN_VALUE));
        assertEquals(Reason.BAD_LENGTH, withInt(valid, ControlMessageDescriptor.INCARNATION_COUNT_OFFSET, -2));

        final byte[] noIncarnations = encode(new ControlMessage.AlterIsr(5, 1, 9, 42, new int[]{ 1, 2, 3, 4 }));
        assertEquals(Reason.BAD_LENGTH, withInt(noIncarnations, ControlMessageDescriptor.INCARNATION_COUNT_OFFSET, 2));
    }

    @Test
    void hostileStateLengthsAreMalformed()
    {
        final byte[] update = encode(new ControlMessage.PartitionUpdate(FULL_STATE));
        final int updateLength = ControlMessageDescriptor.UPDATE_STATE_LENGTH_OFFSET;
        assertEquals(Reason.TRUNCATED, withInt(update, updateLength, Integer.MAX_VALUE));
        assertEquals(Reason.BAD_LENGTH, withInt(update, updateLength, -1));
        assertEquals(Reason.BAD_LENGTH, withInt(update, updateLength, Integer.MIN_VALUE));
        assertEquals(Reason.TRAILING_BYTES, withInt(update, updateLength, update.length - 9));

        final byte[] absent = encode(new ControlMessage.AlterIsrResponse(1, false, null));
        assertEquals(Reason.BAD_LENGTH, withInt(absent, ControlMessageDescriptor.RESPONSE_STATE_LENGTH_OFFSET, 4));
        final byte[] present = encode(new ControlMessage.AlterIsrResponse(1, true, LEADER_STATE));
        assertEquals(Reason.TRUNCATED,
            withInt(present, ControlMessageDescriptor.RESPONSE_STATE_LENGTH_OFFSET, Integer.MAX_VALUE - 100));
    }

    @Test
    void malformedEmbeddedStateIsMalformed()
    {
        final int state = ControlMessageDescriptor.UPDATE_FIXED_LENGTH;
        final byte[] update = encode(new ControlMessage.PartitionUpdate(FULL_STATE));
        assertEquals(Reason.BAD_PARTITION_STATE, withInt(update, state + 20, -1)); // AR count
        assertEquals(Reason.BAD_PARTITION_STATE, withInt(update, state + 28, Integer.MAX_VALUE)); // topic length
        assertEquals(Reason.BAD_PARTITION_STATE, withInt(update, state, -5)); // partition id
        assertEquals(Reason.BAD_PARTITION_STATE, withInt(update, state + 20, 3)); // a state shorter than stated

        final byte[] badTopic = update.clone();
        badTopic[state + PartitionStateCodec.FIXED_LENGTH] = '/';
        assertEquals(Reason.BAD_PARTITION_STATE, malformed(badTopic).reason());

        final byte[] empty = encode(new ControlMessage.PartitionUpdate(LEADER_STATE));
        assertEquals(Reason.BAD_PARTITION_STATE, malformed(withIntBytes(Arrays.copyOf(empty, 8),
            ControlMessageDescriptor.UPDATE_STATE_LENGTH_OFFSET, 0)).reason());
    }

    @Test
    void randomCorruptionIsMalformedOrDecodesToAMessageThatEncodesToTheSameBytes()
    {
        final List<ControlMessage> messages = messages();
        final Random random = new Random(42);
        int decoded = 0;
        int rejected = 0;
        for (int trial = 0; trial < 20_000; trial++)
        {
            final byte[] bytes;
            if (trial % 4 == 0)
            {
                bytes = new byte[random.nextInt(64)];
                random.nextBytes(bytes);
                if (bytes.length > 1)
                {
                    bytes[0] = (byte)ControlMessageDescriptor.VERSION;
                    bytes[1] = (byte)(1 + random.nextInt(8));
                }
            }
            else
            {
                bytes = encode(messages.get(random.nextInt(messages.size())));
                final int flips = 1 + random.nextInt(3);
                for (int i = 0; i < flips; i++)
                {
                    bytes[random.nextInt(bytes.length)] = (byte)random.nextInt(256);
                }
            }
            final ControlMessage message;
            try
            {
                message = ControlMessageCodec.decode(new UnsafeBuffer(bytes), 0, bytes.length);
            }
            catch (final MalformedMessageException ex)
            {
                rejected++;
                continue;
            }
            catch (final RuntimeException ex)
            {
                throw new AssertionError("trial " + trial + ": " + Arrays.toString(bytes), ex);
            }
            decoded++;
            assertArrayEquals(bytes, encode(message), "trial " + trial + ": the format has one encoding per message");
        }
        assertTrue(decoded > 1000, "decoded " + decoded);
        assertTrue(rejected > 1000, "rejected " + rejected);
    }

    @Test
    void decodingOutsideTheBufferIsTheCallersMistake()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(encode(new ControlMessage.SessionExpired(1)));
        assertThrows(IndexOutOfBoundsException.class, () -> ControlMessageCodec.decode(buffer, 4, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> ControlMessageCodec.decode(buffer, -1, 4));
    }

    @Test
    void aStateNamingHostsItCannotHaveIsRefused()
    {
        final TopicPartition tp = new TopicPartition("t", 0);
        final PartitionState[] impossible = {
            new PartitionState(1, tp, new int[0], new int[0], new int[0], new int[0], -1, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 64 }, new int[]{ 0 }, new int[0], new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, -2 }, new int[]{ 0 }, new int[0], new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0, 2 }, new int[0], new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0, 0 }, new int[0], new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 0 }, new int[]{ 0 }, new int[0], new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0 }, new int[0], new int[0], 7, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0 }, new int[]{ 5 }, new int[0], 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0 }, new int[0], new int[]{ 9 }, 0, 0, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0 }, new int[0], new int[0], 0, -1, 0),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[]{ 0 }, new int[0], new int[0], 0, 0, -1),
            new PartitionState(1, tp, new int[]{ 0, 1 }, new int[0], new int[0], new int[0], -1, 0, 0)};
        for (final PartitionState state : impossible)
        {
            final byte[] bytes = PartitionStateCodec.encode(state);
            assertThrows(IllegalArgumentException.class,
                () -> PartitionStateCodec.decode(java.nio.ByteBuffer.wrap(bytes)), state.toString());
            final byte[] update = encode(new ControlMessage.PartitionUpdate(state));
            assertEquals(MalformedMessageException.Reason.BAD_PARTITION_STATE, malformed(update).reason(),
                state.toString());
        }
    }

    private static byte[] encode(final ControlMessage message)
    {
        final byte[] bytes = new byte[ControlMessageCodec.encodedLength(message)];
        assertEquals(bytes.length, ControlMessageCodec.encode(message, new UnsafeBuffer(bytes), 0));
        return bytes;
    }

    private static MalformedMessageException malformed(final byte[] bytes)
    {
        try
        {
            final ControlMessage message = ControlMessageCodec.decode(new UnsafeBuffer(bytes), 0, bytes.length);
            return fail("decoded " + message + " from " + Arrays.toString(bytes));
        }
        catch (final MalformedMessageException ex)
        {
            return ex;
        }
    }

    private static Reason withInt(final byte[] valid, final int index, final int value)
    {
        return malformed(withIntBytes(valid.clone(), index, value)).reason();
    }

    private static byte[] withIntBytes(final byte[] bytes, final int index, final int value)
    {
        new UnsafeBuffer(bytes).putInt(index, value, LITTLE_ENDIAN);
        return bytes;
    }

    private static void assertMessageEquals(final ControlMessage expected, final ControlMessage actual)
    {
        assertEquals(expected.getClass(), actual.getClass());
        if (expected instanceof ControlMessage.AlterIsr e)
        {
            final ControlMessage.AlterIsr a = (ControlMessage.AlterIsr)actual;
            assertEquals(e.partitionId(), a.partitionId());
            assertEquals(e.leaderId(), a.leaderId());
            assertEquals(e.leaderEpoch(), a.leaderEpoch());
            assertEquals(e.expectedVersion(), a.expectedVersion());
            assertArrayEquals(e.newIsr(), a.newIsr());
            if (null == e.incarnations())
            {
                assertNull(a.incarnations());
            }
            else
            {
                assertArrayEquals(e.incarnations(), a.incarnations());
            }
            for (final int host : e.newIsr())
            {
                assertEquals(e.incarnationOf(host), a.incarnationOf(host));
            }
        }
        else
        {
            // the other records' components are primitives or PartitionState, whose equals compares its arrays
            assertEquals(expected, actual);
            if (expected instanceof ControlMessage.AlterIsrResponse e && null != e.current())
            {
                final PartitionState current = ((ControlMessage.AlterIsrResponse)actual).current();
                assertArrayEquals(e.current().recovering(), current.recovering());
                assertArrayEquals(e.current().eligible(), current.eligible());
            }
        }
    }
}
