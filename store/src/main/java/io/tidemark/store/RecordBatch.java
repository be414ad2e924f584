package io.tidemark.store;

import io.tidemark.store.format.BatchValidator;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.DirectBuffer;

import static io.tidemark.store.format.RecordBatchDescriptor.ATTRIBUTES_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.BASE_SEQUENCE_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.CRC_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.RecordBatchDescriptor.LEADER_EPOCH_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.PRODUCER_ID_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.RECORD_COUNT_OFFSET;

/**
 * Flyweight over one record batch (layout in {@link RecordBatchDescriptor}): header fields, validation, and
 * iteration of its records in place. Wrap it over any buffer holding a batch: a segment mapping, a fetch
 * response, a byte array. Not thread-safe; valid while the wrapped bytes are.
 */
public final class RecordBatch
{
    /** Validation result: the batch is well formed and its CRC matches. */
    public static final int VALID = BatchValidator.VALID;
    /** Validation result: no batch here (length 0) or fewer bytes available than the batch needs. */
    public static final int INCOMPLETE = BatchValidator.INCOMPLETE;
    /** Validation result: the length is shorter than a header or longer than allowed. */
    public static final int BAD_LENGTH = BatchValidator.BAD_LENGTH;
    /** Validation result: unknown format version. */
    public static final int BAD_MAGIC = BatchValidator.BAD_MAGIC;
    /** Validation result: record count is not positive. */
    public static final int BAD_RECORD_COUNT = BatchValidator.BAD_RECORD_COUNT;
    /** Validation result: the records do not parse to exactly the batch length. */
    public static final int BAD_RECORDS = BatchValidator.BAD_RECORDS;
    /** Validation result: the CRC does not match the content. */
    public static final int BAD_CRC = BatchValidator.BAD_CRC;
    /**
     * Result of a walk over a segment (never of {@link #validate}): the batch validates, but its base offset does
     * not continue the batch before it (a stale or misplaced batch).
     */
    public static final int BAD_OFFSET = BatchValidator.BAD_OFFSET;

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
     * count, records parsing to exactly the batch length, and (when {@code crc} is given) a matching CRC. The rule
     * is the format's ({@link BatchValidator#validate}).
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
        return BatchValidator.validate(buffer, offset, available, maxLength, crc);
    }

    /**
     * @param status a result of {@link #validate}.
     * @return its description.
     */
    public static String describe(final int status)
    {
        return BatchValidator.describe(status);
    }

    @Override
    public String toString()
    {
        return "RecordBatch{baseOffset=" + baseOffset() + ", count=" + recordCount() + ", length=" + length() +
            ", epoch=" + leaderEpoch() + ", maxTimestamp=" + maxTimestamp() + '}';
    }
}
