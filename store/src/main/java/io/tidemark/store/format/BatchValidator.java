package io.tidemark.store.format;

import org.agrona.DirectBuffer;

import static io.tidemark.store.format.RecordBatchDescriptor.CRC_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.CRC_START_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.RecordBatchDescriptor.LENGTH_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.MAGIC;
import static io.tidemark.store.format.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.tidemark.store.format.RecordBatchDescriptor.RECORD_COUNT_OFFSET;

/**
 * Whether bytes hold a well-formed record batch ({@link RecordBatchDescriptor}, {@link RecordDescriptor}): the
 * structural rule every reader of the format applies, the log's writer (for raw appends), its readers, recovery and
 * the batch scanner. Exposed to applications as {@code RecordBatch.validate} and {@code RecordBatch.describe}.
 * <p>
 * Internal: public only so that the store's packages share it; not part of the API. Stateless; thread-safe.
 */
public final class BatchValidator
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

    private BatchValidator()
    {
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
        return validate(buffer, offset, available, maxLength, crc, true);
    }

    /**
     * As {@link #validate(DirectBuffer, int, int, int, Crc32c)}, parsing the records only when {@code checkRecords}:
     * without, the frame alone is checked (length, magic, record count, and the CRC when given), for bytes whose
     * records were validated already (a recovery's second pass over what its first pass validated).
     *
     * @param checkRecords whether the records must parse to exactly the batch length.
     * @return {@link #VALID} or the reason it is not.
     */
    public static int validate(
        final DirectBuffer buffer,
        final int offset,
        final int available,
        final int maxLength,
        final Crc32c crc,
        final boolean checkRecords)
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
        if (checkRecords && !recordsWellFormed(buffer, offset, length, count))
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
    public static boolean isCutShort(final DirectBuffer buffer, final int offset, final int available)
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
}
