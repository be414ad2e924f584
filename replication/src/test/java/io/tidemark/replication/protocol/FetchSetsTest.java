package io.tidemark.replication.protocol;

import io.tidemark.replication.ReplicationError;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Layout and hostile input of the fetch sets: every malformed set is refused whole, with its fault. */
class FetchSetsTest
{
    private static final int BASE = 3; // an odd offset, as a set may sit anywhere in a transport's frame

    private static UnsafeBuffer requestSet(final int count)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[BASE + FetchSets.ENTRIES_OFFSET +
            count * FetchMessages.FetchRequest.LENGTH + 64]);
        FetchSets.putHeader(buffer, BASE, count);
        final FetchMessages.FetchRequest request = new FetchMessages.FetchRequest();
        for (int i = 0; i < count; i++)
        {
            request.wrap(buffer, BASE + FetchSets.ENTRIES_OFFSET + i * FetchMessages.FetchRequest.LENGTH)
                .encode(i, 2, 7, 1 << 20, 5, 100L * i, 1000 + i);
        }
        return buffer;
    }

    private static int requestSetLength(final int count)
    {
        return FetchSets.ENTRIES_OFFSET + count * FetchMessages.FetchRequest.LENGTH;
    }

    /** A response set whose entries carry 0, 1, ... records bytes: every padding length occurs. */
    private static UnsafeBuffer responseSet(final int count, final int[] length)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[BASE + 64 * 1024]);
        final FetchMessages.FetchResponse response = new FetchMessages.FetchResponse();
        int at = FetchSets.ENTRIES_OFFSET;
        for (int i = 0; i < count; i++)
        {
            response.wrap(buffer, BASE + at).encode(i, ReplicationError.NONE, 7, i, 1000 + i, 40, 0, 50);
            for (int b = 0; b < i; b++)
            {
                buffer.putByte(response.recordsOffset() + b, (byte)(i + b));
            }
            assertEquals(0, FetchSets.responseEntryLength(i) % 8);
            at += FetchSets.responseEntryLength(i);
        }
        FetchSets.putHeader(buffer, BASE, count);
        length[0] = at;
        return buffer;
    }

    @Test
    void requestSetsOfEveryCountAreAcceptedAndReadBack()
    {
        for (final int count : new int[]{ 1, 2, 16, FetchSets.MAX_ENTRIES })
        {
            final UnsafeBuffer buffer = requestSet(count);
            assertNull(FetchSets.checkRequests(buffer, BASE, requestSetLength(count)));
            assertEquals(count, FetchSets.count(buffer, BASE));
            final FetchMessages.FetchRequest request = new FetchMessages.FetchRequest().wrap(buffer,
                BASE + FetchSets.ENTRIES_OFFSET + (count - 1) * FetchMessages.FetchRequest.LENGTH);
            assertEquals(count - 1, request.partitionId());
            assertEquals(2, request.replicaId());
            assertEquals(100L * (count - 1), request.fetchOffset());
            assertEquals(1000 + count - 1, request.correlationId());
        }
    }

    @Test
    void malformedRequestSetsAreRefusedWithTheirFault()
    {
        final UnsafeBuffer buffer = requestSet(3);
        final int length = requestSetLength(3);
        assertEquals(FetchSets.Fault.TRUNCATED, FetchSets.checkRequests(buffer, BASE, 7));
        for (int cut = FetchSets.ENTRIES_OFFSET; cut < length; cut += 13)
        {
            assertEquals(FetchSets.Fault.TRUNCATED, FetchSets.checkRequests(buffer, BASE, cut));
        }
        assertEquals(FetchSets.Fault.TRAILING_BYTES, FetchSets.checkRequests(buffer, BASE, length + 1));
        assertEquals(FetchSets.Fault.TRAILING_BYTES,
            FetchSets.checkRequests(buffer, BASE, length + FetchMessages.FetchRequest.LENGTH));

        FetchSets.putHeader(buffer, BASE, 0);
        assertEquals(FetchSets.Fault.BAD_COUNT, FetchSets.checkRequests(buffer, BASE, length));
        FetchSets.putHeader(buffer, BASE, FetchSets.MAX_ENTRIES + 1);
        assertEquals(FetchSets.Fault.BAD_COUNT, FetchSets.checkRequests(buffer, BASE, length));
        buffer.putShort(BASE + FetchSets.COUNT_OFFSET, (short)0xFFFF); // read unsigned: 65535, not -1
        assertEquals(FetchSets.Fault.BAD_COUNT, FetchSets.checkRequests(buffer, BASE, length));
        FetchSets.putHeader(buffer, BASE, 3);
        buffer.putByte(BASE + FetchSets.VERSION_OFFSET, (byte)2);
        assertEquals(FetchSets.Fault.UNKNOWN_VERSION, FetchSets.checkRequests(buffer, BASE, length));
    }

    @Test
    void responseSetsArePaddedAndWalkedEntryByEntry()
    {
        final int[] length = new int[1];
        final UnsafeBuffer buffer = responseSet(11, length);
        assertNull(FetchSets.checkResponses(buffer, BASE, length[0]));
        final FetchMessages.FetchResponse response = new FetchMessages.FetchResponse();
        int at = BASE + FetchSets.ENTRIES_OFFSET;
        for (int i = 0; i < FetchSets.count(buffer, BASE); i++)
        {
            response.wrap(buffer, at);
            assertEquals(i, response.partitionId());
            assertEquals(i, response.recordsLength());
            assertEquals(1000 + i, response.correlationId());
            assertEquals(ReplicationError.NONE, response.error());
            for (int b = 0; b < i; b++)
            {
                assertEquals((byte)(i + b), buffer.getByte(response.recordsOffset() + b));
            }
            at += FetchSets.responseEntryLength(buffer, at);
        }
        assertEquals(BASE + length[0], at);
    }

    @Test
    void malformedResponseSetsAreRefusedWithTheirFault()
    {
        final int[] length = new int[1];
        final UnsafeBuffer buffer = responseSet(4, length);
        for (int cut = 0; cut < length[0]; cut++)
        {
            final FetchSets.Fault fault = FetchSets.checkResponses(buffer, BASE, cut);
            assertEquals(true, fault == FetchSets.Fault.TRUNCATED || fault == FetchSets.Fault.BAD_LENGTH,
                "cut at " + cut + ": " + fault);
        }
        assertEquals(FetchSets.Fault.TRAILING_BYTES, FetchSets.checkResponses(buffer, BASE, length[0] + 8));

        final int secondRecordsLength = BASE + FetchSets.ENTRIES_OFFSET + FetchSets.responseEntryLength(0) + 12;
        buffer.putInt(secondRecordsLength, -1);
        assertEquals(FetchSets.Fault.BAD_LENGTH, FetchSets.checkResponses(buffer, BASE, length[0]));
        buffer.putInt(secondRecordsLength, Integer.MAX_VALUE); // no overflow past the message's end
        assertEquals(FetchSets.Fault.BAD_LENGTH, FetchSets.checkResponses(buffer, BASE, length[0]));
        buffer.putInt(secondRecordsLength, length[0]);
        assertEquals(FetchSets.Fault.BAD_LENGTH, FetchSets.checkResponses(buffer, BASE, length[0]));
        buffer.putInt(secondRecordsLength, 1);

        FetchSets.putHeader(buffer, BASE, 5); // states one entry more than it holds
        assertEquals(FetchSets.Fault.TRUNCATED, FetchSets.checkResponses(buffer, BASE, length[0]));
        FetchSets.putHeader(buffer, BASE, 3); // one fewer: the last entry is left over
        assertEquals(FetchSets.Fault.TRAILING_BYTES, FetchSets.checkResponses(buffer, BASE, length[0]));
        FetchSets.putHeader(buffer, BASE, 0);
        assertEquals(FetchSets.Fault.BAD_COUNT, FetchSets.checkResponses(buffer, BASE, length[0]));
    }

    @Test
    void randomBytesNeverPassAsAnEntryOutOfBounds()
    {
        final Random random = new Random(42);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final byte[] bytes = new byte[512];
        for (int round = 0; round < 20_000; round++)
        {
            random.nextBytes(bytes);
            buffer.putBytes(0, bytes);
            if (random.nextBoolean())
            {
                FetchSets.putHeader(buffer, 0, 1 + random.nextInt(4));
            }
            final int length = random.nextInt(bytes.length + 1);
            if (null == FetchSets.checkResponses(buffer, 0, length))
            {
                int at = FetchSets.ENTRIES_OFFSET;
                for (int i = 0; i < FetchSets.count(buffer, 0); i++)
                {
                    final int records = buffer.getInt(at + 12);
                    assertEquals(true, records >= 0 && at + FetchMessages.FetchResponse.HEADER_LENGTH + records <=
                        length);
                    at += FetchSets.responseEntryLength(buffer, at);
                }
                assertEquals(length, at);
            }
            if (null == FetchSets.checkRequests(buffer, 0, length))
            {
                assertEquals(requestSetLength(FetchSets.count(buffer, 0)), length);
            }
        }
    }
}
