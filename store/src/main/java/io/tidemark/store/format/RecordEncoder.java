package io.tidemark.store.format;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Encodes records in the {@link RecordDescriptor} layout into any buffer, outside a log: a producer builds a
 * run of records this way and the log's writer copies it into a batch in one go
 * ({@link io.tidemark.store.BatchClaim#addRecords}). Stateless; thread-safe.
 */
public final class RecordEncoder
{
    private RecordEncoder()
    {
    }

    /**
     * @param keyLength     key length, or -1 for null.
     * @param valueLength   value length, or -1 for null.
     * @param headersLength encoded headers length.
     * @return the bytes {@link #encode} writes.
     */
    public static int encodedLength(final int keyLength, final int valueLength, final int headersLength)
    {
        return RecordDescriptor.recordLength(keyLength, valueLength, headersLength);
    }

    /**
     * Encode one record.
     *
     * @param buffer        destination.
     * @param offset        index in {@code buffer}.
     * @param offsetDelta   position of the record in its run (0, 1, 2, ...).
     * @param timestamp     epoch millis, or {@link io.tidemark.store.BatchClaim#NOW} to let the log stamp it.
     * @param key           key, or null.
     * @param keyOffset     index of the key.
     * @param keyLength     key length (ignored when null).
     * @param value         value, or null.
     * @param valueOffset   index of the value.
     * @param valueLength   value length (ignored when null).
     * @param headers       encoded headers ({@link HeadersEncoder}), or null.
     * @param headersOffset index of the headers.
     * @param headersLength length of the headers.
     * @return the encoded length.
     */
    public static int encode(
        final MutableDirectBuffer buffer,
        final int offset,
        final int offsetDelta,
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength,
        final DirectBuffer headers,
        final int headersOffset,
        final int headersLength)
    {
        final int kl = null == key ? -1 : keyLength;
        final int vl = null == value ? -1 : valueLength;
        final int hl = null == headers ? 0 : headersLength;
        final int length = RecordDescriptor.recordLength(kl, vl, hl);
        buffer.putInt(offset + RecordDescriptor.LENGTH_OFFSET, length);
        buffer.putInt(offset + RecordDescriptor.OFFSET_DELTA_OFFSET, offsetDelta);
        buffer.putLong(offset + RecordDescriptor.TIMESTAMP_OFFSET, timestamp);
        buffer.putInt(offset + RecordDescriptor.KEY_LENGTH_OFFSET, kl);
        buffer.putInt(offset + RecordDescriptor.VALUE_LENGTH_OFFSET, vl);
        buffer.putInt(offset + RecordDescriptor.HEADERS_LENGTH_OFFSET, hl);
        int at = offset + RecordDescriptor.HEADER_LENGTH;
        if (kl > 0)
        {
            buffer.putBytes(at, key, keyOffset, kl);
            at += kl;
        }
        if (vl > 0)
        {
            buffer.putBytes(at, value, valueOffset, vl);
            at += vl;
        }
        if (hl > 0)
        {
            buffer.putBytes(at, headers, headersOffset, hl);
        }
        return length;
    }

    /**
     * Count the records of a run and check their structure.
     *
     * @return the number of records, or -1 when the run is malformed (a length out of bounds, inconsistent field
     *         lengths, malformed headers, or a run that does not end exactly at {@code offset + length}).
     */
    public static int countRecords(final DirectBuffer buffer, final int offset, final int length)
    {
        final int end = offset + length;
        int at = offset;
        int count = 0;
        while (at < end)
        {
            if (end - at < RecordDescriptor.HEADER_LENGTH)
            {
                return -1;
            }
            final int recordLength = buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
            final int keyLength = buffer.getInt(at + RecordDescriptor.KEY_LENGTH_OFFSET);
            final int valueLength = buffer.getInt(at + RecordDescriptor.VALUE_LENGTH_OFFSET);
            final int headersLength = buffer.getInt(at + RecordDescriptor.HEADERS_LENGTH_OFFSET);
            if (recordLength < RecordDescriptor.HEADER_LENGTH || recordLength > end - at ||
                keyLength < RecordDescriptor.NULL_LENGTH || valueLength < RecordDescriptor.NULL_LENGTH ||
                headersLength < 0 ||
                (long)RecordDescriptor.HEADER_LENGTH + Math.max(keyLength, 0) + Math.max(valueLength, 0) +
                headersLength != recordLength ||
                (headersLength > 0 &&
                !HeadersDecoder.isWellFormed(buffer, at + recordLength - headersLength, headersLength)))
            {
                return -1;
            }
            at += recordLength;
            count++;
        }
        return count;
    }
}
