package io.tidemark.store;

import org.agrona.DirectBuffer;

import static io.tidemark.store.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.BASE_SEQUENCE_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.CRC_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.CRC_START_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.RecordBatchDescriptor.LEADER_EPOCH_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.MAGIC;
import static io.tidemark.store.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.PRODUCER_ID_OFFSET;
import static io.tidemark.store.RecordBatchDescriptor.RECORD_COUNT_OFFSET;

/**
 * Flyweight over one record batch (layout in {@link RecordBatchDescriptor}): header fields, validation, and
 * iteration of its records in place. Wrap it over any buffer holding a batch: a segment mapping, a fetch
 * response, a byte array. Not thread-safe; valid while the wrapped bytes are.
 */
public final class RecordBatch
{
    /** Validation result: the batch is well formed and its CRC matches. */
    public static final int VALID = 0;
    /** Validation result: no batch here (length 0) or fewer bytes available than the batch needs. */
    public static final int INCOMPLETE = 1;
    /** Validation result: the length is shorter than a header or longer than allowed. */
    public static final int BAD_LENGTH = 2;
    /** Validation result: unknown format version. */
    public static final int BAD_MAGIC = 3;
    /** Validation result: record count is not positive. */
    public static final int BAD_RECORD_COUNT = 4;
    /** Validation result: the records do not parse to exactly the batch length. */
    public static final int BAD_RECORDS = 5;
    /** Validation result: the CRC does not match the content. */
    public static final int BAD_CRC = 6;
    /**
     * Result of a walk over a segment (never of {@link #validate}): the batch validates, but its base offset does
     * not continue the batch before it (a stale or misplaced batch).
     */
    public static final int BAD_OFFSET = 7;

    private final RecordView record = new RecordView();
    private DirectBuffer buffer;
    private int offset;

    /**
     * @param buffer the buffer holding the batch.
     * @param offset index of the batch's first byte.
     * @return this
     */
    public RecordBatch wrap(final DirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** @return the wrapped buffer. */
    public DirectBuffer buffer()
    {
        return buffer;
    }

    /** @return index of the batch in {@link #buffer()}. */
    public int offset()
    {
        return offset;
    }

    /** @return the batch length (plain read). */
    public int length()
    {
        return buffer.getInt(offset + LENGTH_OFFSET);
    }

    /** @return the length of the frame the batch occupies (length aligned to 8). */
    public int frameLength()
    {
        return RecordBatchDescriptor.frameLength(length());
    }

    /** @return the stored CRC32C. */
    public int crc()
    {
        return buffer.getInt(offset + CRC_OFFSET);
    }

    /** @return offset of the first record. */
    public long baseOffset()
    {
        return buffer.getLong(offset + BASE_OFFSET_OFFSET);
    }

    /** @return offset of the last record. */
    public long lastOffset()
    {
        return baseOffset() + recordCount() - 1;
    }

    /** @return offset after the last record. */
    public long nextOffset()
    {
        return baseOffset() + recordCount();
    }

    /** @return epoch of the leader that appended the batch, or -1. */
    public int leaderEpoch()
    {
        return buffer.getInt(offset + LEADER_EPOCH_OFFSET);
    }

    /** @return number of records. */
    public int recordCount()
    {
        return buffer.getInt(offset + RECORD_COUNT_OFFSET);
    }

    /** @return timestamp of the first record. */
    public long firstTimestamp()
    {
        return buffer.getLong(offset + FIRST_TIMESTAMP_OFFSET);
    }

    /** @return largest record timestamp. */
    public long maxTimestamp()
    {
        return buffer.getLong(offset + MAX_TIMESTAMP_OFFSET);
    }

    /** @return producer id, or -1. */
    public long producerId()
    {
        return buffer.getLong(offset + PRODUCER_ID_OFFSET);
    }

    /** @return producer epoch, or -1. */
    public short producerEpoch()
    {
        return buffer.getShort(offset + PRODUCER_EPOCH_OFFSET);
    }

    /** @return format version. */
    public byte magic()
    {
        return buffer.getByte(offset + MAGIC_OFFSET);
    }

    /** @return attribute bits (none defined yet; 0). */
    public byte attributes()
    {
        return buffer.getByte(offset + ATTRIBUTES_OFFSET);
    }

    /** @return sequence number of the first record for an idempotent producer, or -1. */
    public int baseSequence()
    {
        return buffer.getInt(offset + BASE_SEQUENCE_OFFSET);
    }

    /**
     * Deliver every record with an offset in {@code [fromOffset, toOffset)} to the handler.
     *
     * @return the number of records delivered.
     */
    public int forEachRecord(final RecordHandler handler, final long fromOffset, final long toOffset)
    {
        return forEachRecord(handler, fromOffset, toOffset, Integer.MAX_VALUE);
    }

    /**
     * Deliver, in order, at most {@code maxRecords} records with an offset in {@code [fromOffset, toOffset)}.
     *
     * @return the number of records delivered.
     */
    public int forEachRecord(
        final RecordHandler handler, final long fromOffset, final long toOffset, final int maxRecords)
    {
        final long base = baseOffset();
        final int count = recordCount();
        int at = offset + HEADER_LENGTH;
        int delivered = 0;
        for (int i = 0; i < count; i++)
        {
            final long recordOffset = base + i;
            if (recordOffset >= toOffset || delivered >= maxRecords)
            {
                break;
            }
            if (recordOffset >= fromOffset)
            {
                handler.onRecord(record.wrap(buffer, at, base));
                delivered++;
            }
            at += buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
        }
        return delivered;
    }

    /**
     * @param handler receives every record of the batch.
     * @return the number of records.
     */
    public int forEachRecord(final RecordHandler handler)
    {
        return forEachRecord(handler, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    /**
     * @return the first record with a timestamp at or above {@code timestamp}, as an offset, or -1.
     */
    long firstOffsetAtOrAfter(final long timestamp)
    {
        final long base = baseOffset();
        int at = offset + HEADER_LENGTH;
        for (int i = 0, count = recordCount(); i < count; i++)
        {
            if (buffer.getLong(at + RecordDescriptor.TIMESTAMP_OFFSET) >= timestamp)
            {
                return base + i;
            }
            at += buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
        }
        return -1;
    }

    /**
     * Check the batch at {@code offset} of {@code buffer}: length within bounds, known magic, positive record
     * count, records parsing to exactly the batch length, and (when {@code crc} is given) a matching CRC.
     *
     * @param buffer    holds the batch.
     * @param offset    index of the batch.
     * @param available bytes readable from {@code offset}.
     * @param maxLength largest acceptable batch length.
     * @param crc       CRC calculator, or null to skip the CRC check.
     * @return {@link #VALID} or the reason it is not.
     */
    public static int validate(
        final DirectBuffer buffer, final int offset, final int available, final int maxLength, final Crc32c crc)
    {
        if (available < HEADER_LENGTH)
        {
            return available >= 4 && buffer.getInt(offset + LENGTH_OFFSET) != 0 ? BAD_LENGTH : INCOMPLETE;
        }
        final int length = buffer.getInt(offset + LENGTH_OFFSET);
        if (length == 0)
        {
            return INCOMPLETE;
        }
        if (length < HEADER_LENGTH || length > maxLength)
        {
            return BAD_LENGTH;
        }
        if (length > available)
        {
            return INCOMPLETE;
        }
        if (buffer.getByte(offset + MAGIC_OFFSET) != MAGIC)
        {
            return BAD_MAGIC;
        }
        final int count = buffer.getInt(offset + RECORD_COUNT_OFFSET);
        if (count <= 0 || count > (length - HEADER_LENGTH) / RecordDescriptor.HEADER_LENGTH)
        {
            return BAD_RECORD_COUNT;
        }
        if (!recordsWellFormed(buffer, offset, length, count))
        {
            return BAD_RECORDS;
        }
        if (null != crc && crc.compute(buffer, offset + CRC_START_OFFSET, length - CRC_START_OFFSET) !=
            buffer.getInt(offset + CRC_OFFSET))
        {
            return BAD_CRC;
        }
        return VALID;
    }

    private static boolean recordsWellFormed(
        final DirectBuffer buffer, final int offset, final int length, final int count)
    {
        final int end = offset + length;
        int at = offset + HEADER_LENGTH;
        for (int i = 0; i < count; i++)
        {
            if (at + RecordDescriptor.HEADER_LENGTH > end)
            {
                return false;
            }
            final int recordLength = buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
            final int keyLength = buffer.getInt(at + RecordDescriptor.KEY_LENGTH_OFFSET);
            final int valueLength = buffer.getInt(at + RecordDescriptor.VALUE_LENGTH_OFFSET);
            final int headersLength = buffer.getInt(at + RecordDescriptor.HEADERS_LENGTH_OFFSET);
            if (recordLength < RecordDescriptor.HEADER_LENGTH || recordLength > end - at ||
                buffer.getInt(at + RecordDescriptor.OFFSET_DELTA_OFFSET) != i ||
                keyLength < RecordDescriptor.NULL_LENGTH || valueLength < RecordDescriptor.NULL_LENGTH ||
                headersLength < 0 ||
                (long)RecordDescriptor.HEADER_LENGTH + Math.max(keyLength, 0) + Math.max(valueLength, 0) +
                headersLength != recordLength)
            {
                return false;
            }
            if (headersLength > 0 && !HeadersDecoder.isWellFormed(
                buffer, at + recordLength - headersLength, headersLength))
            {
                return false;
            }
            at += recordLength;
        }
        return at == end;
    }

    /**
     * Tell a batch whose file was cut short from a batch whose length field is damaged, both of which claim more
     * bytes than {@code available}: a cut batch is a well-formed prefix whose records run past the end of the
     * bytes; with a damaged length, the records the header counts end inside them.
     *
     * @return whether the bytes at {@code offset} are the start of a batch cut at {@code offset + available}.
     */
    static boolean isCutShort(final DirectBuffer buffer, final int offset, final int available)
    {
        if (available < HEADER_LENGTH)
        {
            return true;
        }
        if (buffer.getByte(offset + MAGIC_OFFSET) != MAGIC)
        {
            return false;
        }
        final int count = buffer.getInt(offset + RECORD_COUNT_OFFSET);
        final int end = offset + available;
        int at = offset + HEADER_LENGTH;
        for (int i = 0; i < count; i++)
        {
            if (at + RecordDescriptor.HEADER_LENGTH > end)
            {
                return true;
            }
            final int recordLength = buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
            if (recordLength < RecordDescriptor.HEADER_LENGTH ||
                buffer.getInt(at + RecordDescriptor.OFFSET_DELTA_OFFSET) != i)
            {
                return false;
            }
            if (recordLength > end - at)
            {
                return true;
            }
            at += recordLength;
        }
        return false;
    }

    /**
     * @param status a result of {@link #validate}.
     * @return its description.
     */
    public static String describe(final int status)
    {
        switch (status)
        {
            case VALID: return "valid";
            case INCOMPLETE: return "incomplete (no batch, or cut short)";
            case BAD_LENGTH: return "length out of bounds";
            case BAD_MAGIC: return "unknown magic";
            case BAD_RECORD_COUNT: return "record count out of bounds";
            case BAD_RECORDS: return "records do not parse to the batch length";
            case BAD_CRC: return "CRC mismatch";
            case BAD_OFFSET: return "base offset does not continue the batch before it";
            default: return "unknown status " + status;
        }
    }

    @Override
    public String toString()
    {
        return "RecordBatch{baseOffset=" + baseOffset() + ", count=" + recordCount() + ", length=" + length() +
            ", epoch=" + leaderEpoch() + ", maxTimestamp=" + maxTimestamp() + '}';
    }
}
