package io.tidemark.client.remote.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static io.tidemark.client.remote.protocol.GatewayMessages.ORDER;

/**
 * The PRODUCE_SET message: the produce requests one client sends one host in one duty cycle of its producer, for
 * any number of partitions, in one frame. One frame costs the client one publication offer and authentication tag,
 * and the host one frame check and replay-window step, whatever the number of partitions; each entry is then
 * handled as its own PRODUCE, answered by its own PRODUCE_RESULT, and kept apart from every other entry (its
 * partition's leader queue, its producer's sequence check).
 * <pre>
 *  PRODUCE_SET   version:1 pad:1 count:2 pad:4 entry...                  (entries at 8)
 *  entry         partitionId:4 acks:4 timeoutMs:4 producerEpoch:2 pad:2 producerId:8 baseSequence:4
 *                recordsLength:4 correlationId:8 records...              (a PRODUCE payload; records at 40)
 * </pre>
 * An entry is laid out as a PRODUCE payload whose padding at 28 holds the length of its records, so a set of one
 * is sent as a plain PRODUCE. The host checks the whole message ({@link #check}) before it handles any entry: a
 * message with an unknown version, a count out of [1, {@link #MAX_ENTRIES}], an entry that does not fit or whose
 * length is negative, or bytes after its last entry is refused whole, with the {@link Fault} it breaks, so no entry
 * of a damaged or forged message is appended. The check reads each entry's header once and allocates nothing.
 */
public final class ProduceSet
{
    public static final int VERSION = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int COUNT_OFFSET = 2;
    public static final int ENTRIES_OFFSET = 8;

    /** Where an entry's records length is (the PRODUCE payload's padding there). */
    public static final int ENTRY_RECORDS_LENGTH_OFFSET = 28;
    /** Bytes of an entry before its records. */
    public static final int ENTRY_HEADER_LENGTH = GatewayMessages.PRODUCE_RECORDS_OFFSET;

    /** Entries one message may carry at most: bounds the host's work per frame (a client sends one per partition). */
    public static final int MAX_ENTRIES = 1_024;

    /** Why a PRODUCE_SET is refused. */
    public enum Fault
    {
        /** Shorter than its header, or than an entry's header. */
        TRUNCATED,
        /** A version this host does not speak. */
        UNKNOWN_VERSION,
        /** A count of entries out of [1, {@link #MAX_ENTRIES}], or more or fewer entries than it states. */
        BAD_COUNT,
        /** An entry whose records length is negative or runs past the message. */
        BAD_LENGTH,
        /** Bytes after the last entry the count states. */
        TRAILING_BYTES
    }

    private ProduceSet()
    {
    }

    /**
     * Check a PRODUCE_SET payload whole, before any of it is used.
     *
     * @return null when every entry is in bounds and the entries fill the payload exactly; else the fault.
     */
    public static Fault check(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < ENTRIES_OFFSET)
        {
            return Fault.TRUNCATED;
        }
        if ((buffer.getByte(offset + VERSION_OFFSET) & 0xFF) != VERSION)
        {
            return Fault.UNKNOWN_VERSION;
        }
        final int count = count(buffer, offset);
        if (count < 1 || count > MAX_ENTRIES)
        {
            return Fault.BAD_COUNT;
        }
        final long end = (long)offset + length;
        long at = offset + ENTRIES_OFFSET;
        for (int i = 0; i < count; i++)
        {
            if (at == end)
            {
                return Fault.BAD_COUNT; // fewer entries than stated
            }
            if (at + ENTRY_HEADER_LENGTH > end)
            {
                return Fault.TRUNCATED;
            }
            final int recordsLength = buffer.getInt((int)at + ENTRY_RECORDS_LENGTH_OFFSET, ORDER);
            if (recordsLength < 0 || at + ENTRY_HEADER_LENGTH + recordsLength > end)
            {
                return Fault.BAD_LENGTH;
            }
            at += ENTRY_HEADER_LENGTH + recordsLength;
        }
        return at == end ? null : Fault.TRAILING_BYTES;
    }

    /** @return the count of entries a PRODUCE_SET states (check it first). */
    public static int count(final DirectBuffer buffer, final int offset)
    {
        return buffer.getShort(offset + COUNT_OFFSET, ORDER) & 0xFFFF;
    }

    /** @return the length of the entry at {@code entryOffset}, header and records (of a checked message). */
    public static int entryLength(final DirectBuffer buffer, final int entryOffset)
    {
        return ENTRY_HEADER_LENGTH + buffer.getInt(entryOffset + ENTRY_RECORDS_LENGTH_OFFSET, ORDER);
    }

    /** Write a PRODUCE_SET's header: its version and count. */
    public static void putHeader(final MutableDirectBuffer buffer, final int offset, final int count)
    {
        if (count < 1 || count > MAX_ENTRIES)
        {
            throw new IllegalArgumentException("count " + count + " outside [1, " + MAX_ENTRIES + "]");
        }
        buffer.putByte(offset + VERSION_OFFSET, (byte)VERSION);
        buffer.putByte(offset + 1, (byte)0);
        buffer.putShort(offset + COUNT_OFFSET, (short)count, ORDER);
        buffer.putInt(offset + 4, 0, ORDER);
    }

    /**
     * Write an entry (a PRODUCE payload with the records' length in its padding) at {@code entryOffset}.
     *
     * @return the entry's length.
     */
    public static int putEntry(final MutableDirectBuffer buffer, final int entryOffset, final int partitionId,
        final int acks, final int timeoutMs, final short producerEpoch, final long producerId,
        final int baseSequence, final long wireCorrelation, final DirectBuffer records, final int recordsOffset,
        final int recordsLength)
    {
        buffer.putInt(entryOffset + GatewayMessages.PRODUCE_PARTITION_OFFSET, partitionId, ORDER);
        buffer.putInt(entryOffset + GatewayMessages.PRODUCE_ACKS_OFFSET, acks, ORDER);
        buffer.putInt(entryOffset + GatewayMessages.PRODUCE_TIMEOUT_OFFSET, timeoutMs, ORDER);
        buffer.putShort(entryOffset + GatewayMessages.PRODUCE_EPOCH_OFFSET, producerEpoch, ORDER);
        buffer.putShort(entryOffset + GatewayMessages.PRODUCE_EPOCH_OFFSET + 2, (short)0, ORDER);
        buffer.putLong(entryOffset + GatewayMessages.PRODUCE_PRODUCER_ID_OFFSET, producerId, ORDER);
        buffer.putInt(entryOffset + GatewayMessages.PRODUCE_SEQUENCE_OFFSET, baseSequence, ORDER);
        buffer.putInt(entryOffset + ENTRY_RECORDS_LENGTH_OFFSET, recordsLength, ORDER);
        buffer.putLong(entryOffset + GatewayMessages.PRODUCE_CORRELATION_OFFSET, wireCorrelation, ORDER);
        buffer.putBytes(entryOffset + ENTRY_HEADER_LENGTH, records, recordsOffset, recordsLength);
        return ENTRY_HEADER_LENGTH + recordsLength;
    }
}
