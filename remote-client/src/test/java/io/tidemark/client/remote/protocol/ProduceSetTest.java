package io.tidemark.client.remote.protocol;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * PRODUCE_SET as written and as checked: a well-formed set reads back entry by entry, laid out as PRODUCE payloads;
 * every way a set can be damaged or forged (truncated, a count out of range or unlike its entries, a negative or
 * overlong entry, trailing bytes, an unknown version) is refused whole with its typed fault.
 */
class ProduceSetTest
{
    private final UnsafeBuffer records = new UnsafeBuffer(new byte[64]);

    /** @return the length of a set with entries of these record lengths (records filled with their index). */
    private int write(final UnsafeBuffer set, final int... recordLengths)
    {
        int at = ProduceSet.ENTRIES_OFFSET;
        for (int i = 0; i < recordLengths.length; i++)
        {
            records.setMemory(0, records.capacity(), (byte)i);
            at += ProduceSet.putEntry(set, at, 10 + i, -1, 30_000, (short)i, 7_000 + i, 100 * i,
                GatewayMessages.wireCorrelation(3, 40 + i), records, 0, recordLengths[i]);
        }
        ProduceSet.putHeader(set, 0, recordLengths.length);
        return at;
    }

    @Test
    void aWellFormedSetReadsBackEachEntryAsAProducePayload()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[1024]);
        final int length = write(set, 5, 0, 64);
        assertNull(ProduceSet.check(set, 0, length));
        assertEquals(3, ProduceSet.count(set, 0));
        int at = ProduceSet.ENTRIES_OFFSET;
        final int[] lengths = { 5, 0, 64 };
        for (int i = 0; i < 3; i++)
        {
            assertEquals(ProduceSet.ENTRY_HEADER_LENGTH + lengths[i], ProduceSet.entryLength(set, at));
            assertEquals(10 + i, set.getInt(at + GatewayMessages.PRODUCE_PARTITION_OFFSET, GatewayMessages.ORDER));
            assertEquals(-1, set.getInt(at + GatewayMessages.PRODUCE_ACKS_OFFSET, GatewayMessages.ORDER));
            assertEquals(30_000, set.getInt(at + GatewayMessages.PRODUCE_TIMEOUT_OFFSET, GatewayMessages.ORDER));
            assertEquals(i, set.getShort(at + GatewayMessages.PRODUCE_EPOCH_OFFSET, GatewayMessages.ORDER));
            assertEquals(7_000 + i, set.getLong(at + GatewayMessages.PRODUCE_PRODUCER_ID_OFFSET,
                GatewayMessages.ORDER));
            assertEquals(100 * i, set.getInt(at + GatewayMessages.PRODUCE_SEQUENCE_OFFSET, GatewayMessages.ORDER));
            final long wire = set.getLong(at + GatewayMessages.PRODUCE_CORRELATION_OFFSET, GatewayMessages.ORDER);
            assertEquals(3, GatewayMessages.sessionOf(wire));
            assertEquals(40 + i, GatewayMessages.correlationOf(wire));
            for (int b = 0; b < lengths[i]; b++)
            {
                assertEquals(i, set.getByte(at + GatewayMessages.PRODUCE_RECORDS_OFFSET + b));
            }
            at += ProduceSet.entryLength(set, at);
        }
        assertEquals(length, at);
    }

    @Test
    void aSetAtAnOffsetIsCheckedWithinItsOwnBounds()
    {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[1024]);
        final UnsafeBuffer set = new UnsafeBuffer(frame, 100, 900);
        final int length = write(set, 3, 4);
        assertNull(ProduceSet.check(frame, 100, length));
        assertEquals(ProduceSet.Fault.TRUNCATED, ProduceSet.check(frame, 100, length - 1 - 4 - 40 + 39));
    }

    @Test
    void aTruncatedSetIsRefused()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[1024]);
        final int length = write(set, 5, 6);
        for (int cut = 0; cut < ProduceSet.ENTRIES_OFFSET; cut++)
        {
            assertEquals(ProduceSet.Fault.TRUNCATED, ProduceSet.check(set, 0, cut), "header cut at " + cut);
        }
        final int second = ProduceSet.ENTRIES_OFFSET + ProduceSet.ENTRY_HEADER_LENGTH + 5;
        assertEquals(ProduceSet.Fault.BAD_COUNT, ProduceSet.check(set, 0, second), "the second entry missing");
        assertEquals(ProduceSet.Fault.TRUNCATED, ProduceSet.check(set, 0, second + 1), "its header cut");
        assertEquals(ProduceSet.Fault.TRUNCATED, ProduceSet.check(set, 0, second + ProduceSet.ENTRY_HEADER_LENGTH - 1));
        assertEquals(ProduceSet.Fault.BAD_LENGTH, ProduceSet.check(set, 0, length - 1), "its records cut");
        assertEquals(ProduceSet.Fault.TRUNCATED, ProduceSet.check(set, 0, 9), "the first entry's header cut");
        assertEquals(ProduceSet.Fault.BAD_LENGTH, ProduceSet.check(set, 0, ProduceSet.ENTRIES_OFFSET +
            ProduceSet.ENTRY_HEADER_LENGTH + 2), "the first entry's records cut");
    }

    @Test
    void aCountOutOfRangeOrUnlikeTheEntriesIsRefused()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[1024]);
        final int length = write(set, 5, 6);
        for (final int forged : new int[]{ 0, 3, ProduceSet.MAX_ENTRIES, ProduceSet.MAX_ENTRIES + 1, 0xFFFF })
        {
            set.putShort(ProduceSet.COUNT_OFFSET, (short)forged, GatewayMessages.ORDER);
            assertEquals(ProduceSet.Fault.BAD_COUNT, ProduceSet.check(set, 0, length), "count " + forged);
        }
        set.putShort(ProduceSet.COUNT_OFFSET, (short)1, GatewayMessages.ORDER);
        assertEquals(ProduceSet.Fault.TRAILING_BYTES, ProduceSet.check(set, 0, length), "fewer stated than sent");
        set.putShort(ProduceSet.COUNT_OFFSET, (short)2, GatewayMessages.ORDER);
        assertNull(ProduceSet.check(set, 0, length));
        assertEquals(ProduceSet.Fault.TRAILING_BYTES, ProduceSet.check(set, 0, length + 1), "a byte after the last");
    }

    @Test
    void aNegativeOrOverlongEntryLengthIsRefused()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[1024]);
        final int length = write(set, 5, 6);
        final int lengthAt = ProduceSet.ENTRIES_OFFSET + ProduceSet.ENTRY_RECORDS_LENGTH_OFFSET;
        for (final int forged : new int[]{ -1, Integer.MIN_VALUE, Integer.MAX_VALUE, length, 1_000_000 })
        {
            set.putInt(lengthAt, forged, GatewayMessages.ORDER);
            assertEquals(ProduceSet.Fault.BAD_LENGTH, ProduceSet.check(set, 0, length), "length " + forged);
        }
        set.putInt(lengthAt, 4, GatewayMessages.ORDER); // shorter: the next entry's header is read from its records
        final ProduceSet.Fault shorter = ProduceSet.check(set, 0, length);
        assertEquals(true, null != shorter, "a shorter first entry misaligns the second");
    }

    @Test
    void anUnknownVersionIsRefused()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[1024]);
        final int length = write(set, 5);
        for (final int version : new int[]{ 0, 2, 0xFF })
        {
            set.putByte(ProduceSet.VERSION_OFFSET, (byte)version);
            assertEquals(ProduceSet.Fault.UNKNOWN_VERSION, ProduceSet.check(set, 0, length), "version " + version);
        }
    }

    @Test
    void aSetOfTheMostEntriesIsWellFormedAndTheWriterRefusesMore()
    {
        final UnsafeBuffer set = new UnsafeBuffer(new byte[ProduceSet.ENTRIES_OFFSET +
            ProduceSet.MAX_ENTRIES * ProduceSet.ENTRY_HEADER_LENGTH]);
        final int[] lengths = new int[ProduceSet.MAX_ENTRIES];
        final int length = write(set, lengths);
        assertEquals(set.capacity(), length);
        assertNull(ProduceSet.check(set, 0, length));
        assertThrows(IllegalArgumentException.class, () -> ProduceSet.putHeader(set, 0, ProduceSet.MAX_ENTRIES + 1));
        assertThrows(IllegalArgumentException.class, () -> ProduceSet.putHeader(set, 0, 0));
    }

    @Test
    void randomBytesNeverPassUnlessTheyAreAWellFormedSet()
    {
        final java.util.Random random = new java.util.Random(15);
        final byte[] bytes = new byte[512];
        final UnsafeBuffer set = new UnsafeBuffer(bytes);
        for (int i = 0; i < 100_000; i++)
        {
            random.nextBytes(bytes);
            if (random.nextBoolean())
            {
                bytes[ProduceSet.VERSION_OFFSET] = (byte)ProduceSet.VERSION;
                set.putShort(ProduceSet.COUNT_OFFSET, (short)(1 + random.nextInt(3)), GatewayMessages.ORDER);
            }
            final int length = random.nextInt(bytes.length + 1);
            final ProduceSet.Fault fault = ProduceSet.check(set, 0, length);
            if (null == fault)
            {
                int at = ProduceSet.ENTRIES_OFFSET;
                for (int e = 0; e < ProduceSet.count(set, 0); e++)
                {
                    at += ProduceSet.entryLength(set, at);
                }
                assertEquals(length, at, "a set that passes is walked to its end exactly");
            }
        }
    }
}
