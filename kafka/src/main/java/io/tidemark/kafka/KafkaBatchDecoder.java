package io.tidemark.kafka;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.utils.BufferSupplier;
import org.apache.kafka.common.utils.CloseableIterator;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

import static io.tidemark.kafka.KafkaBatchDescriptor.*;

/**
 * Turns the record batch of a produce request (Kafka's layout, {@link KafkaBatchDescriptor}) into a run of records
 * in Tidemark's layout ({@code RecordDescriptor}), ready to be queued to a partition's leader as one batch. Every
 * byte is from outside: lengths, counts and varints are bounds-checked, the CRC is verified, and the output is
 * bounded, so a malformed or hostile batch is an error code, never an exception or an unbounded allocation.
 * <p>
 * Uncompressed batches (what KafkaProducer sends by default) are decoded in place with no allocation per record;
 * compressed ones are decompressed through kafka-clients' own batch iterator.
 * <p>
 * One per thread; the output buffer is reused by the next {@link #decode}.
 */
final class KafkaBatchDecoder
{
    private final UnsafeBuffer in = new UnsafeBuffer(0, 0);
    private byte[] bytes = new byte[0];
    private int base;
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(64 * 1024);
    private final CRC32C crc = new CRC32C();
    private final BufferSupplier bufferSupplier = BufferSupplier.create();
    private int position;
    private int limit;
    private boolean malformed;
    private long producerId;
    private short producerEpoch;
    private int baseSequence;
    private int recordCount;
    private int encodedLength;
    private String reason;

    /**
     * Decode the records of one partition of a produce request: exactly one batch of magic 2.
     *
     * @param records   the partition's records bytes (position to limit).
     * @param maxLength the most bytes of encoded Tidemark records to produce.
     * @return NONE, or the Kafka error to answer with ({@link #reason()} says why).
     */
    Errors decode(final ByteBuffer records, final int maxLength)
    {
        recordCount = 0;
        encodedLength = 0;
        reason = null;
        final int length = records.remaining();
        if (length < RECORDS_OFFSET)
        {
            return fail(Errors.CORRUPT_MESSAGE, "a batch of " + length + " bytes is shorter than its header");
        }
        in.wrap(records, records.position(), length);
        if (records.hasArray())
        {
            bytes = records.array();
            base = records.arrayOffset() + records.position();
        }
        else
        {
            if (bytes.length < length)
            {
                bytes = new byte[length];
            }
            records.duplicate().get(bytes, 0, length);
            base = 0;
        }
        final int batchLength = in.getInt(LENGTH_OFFSET, ByteOrder.BIG_ENDIAN);
        if (batchLength < RECORDS_OFFSET - LOG_OVERHEAD || (long)batchLength + LOG_OVERHEAD > length)
        {
            return fail(Errors.CORRUPT_MESSAGE, "batch length " + batchLength + " does not fit " + length + " bytes");
        }
        if ((long)batchLength + LOG_OVERHEAD != length)
        {
            return fail(Errors.INVALID_RECORD, "a produce request carries exactly one record batch per partition");
        }
        if (in.getByte(MAGIC_OFFSET) != MAGIC)
        {
            return fail(Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT, "record batch magic " + in.getByte(MAGIC_OFFSET) +
                " (only magic 2 is accepted)");
        }
        final int storedCrc = in.getInt(CRC_OFFSET, ByteOrder.BIG_ENDIAN);
        crc.reset();
        final ByteBuffer covered = records.duplicate();
        covered.position(records.position() + ATTRIBUTES_OFFSET).limit(records.position() + length);
        crc.update(covered);
        if ((int)crc.getValue() != storedCrc)
        {
            return fail(Errors.CORRUPT_MESSAGE, "record batch CRC mismatch");
        }
        final short attributes = in.getShort(ATTRIBUTES_OFFSET, ByteOrder.BIG_ENDIAN);
        if ((attributes & (TRANSACTIONAL_MASK | CONTROL_MASK)) != 0)
        {
            return fail(Errors.INVALID_RECORD, "transactional and control batches are not supported");
        }
        final int count = in.getInt(RECORDS_COUNT_OFFSET, ByteOrder.BIG_ENDIAN);
        final int lastOffsetDelta = in.getInt(LAST_OFFSET_DELTA_OFFSET, ByteOrder.BIG_ENDIAN);
        if (count <= 0 || lastOffsetDelta != count - 1 || count > length)
        {
            return fail(Errors.INVALID_RECORD, "record count " + count + " with last offset delta " +
                lastOffsetDelta);
        }
        producerId = in.getLong(PRODUCER_ID_OFFSET, ByteOrder.BIG_ENDIAN);
        producerEpoch = in.getShort(PRODUCER_EPOCH_OFFSET, ByteOrder.BIG_ENDIAN);
        baseSequence = in.getInt(BASE_SEQUENCE_OFFSET, ByteOrder.BIG_ENDIAN);
        final boolean logAppendTime = (attributes & TIMESTAMP_TYPE_MASK) != 0;
        final long baseTimestamp = in.getLong(BASE_TIMESTAMP_OFFSET, ByteOrder.BIG_ENDIAN);
        final int compression = attributes & COMPRESSION_MASK;
        final Errors result = compression == 0 ?
            decodeUncompressed(count, baseTimestamp, logAppendTime, length, maxLength) :
            decodeCompressed(records, compression, count, logAppendTime, maxLength);
        if (result == Errors.NONE)
        {
            recordCount = count;
        }
        return result;
    }

    private Errors decodeUncompressed(final int count, final long baseTimestamp, final boolean logAppendTime,
        final int length, final int maxLength)
    {
        position = RECORDS_OFFSET;
        limit = length;
        malformed = false;
        // Tidemark's layout takes at most 28 bytes more per record and 4 more per header (each header takes at
        // least 2 input bytes) than Kafka's: size the output once, then copy with System.arraycopy
        out.checkLimit((int)Math.min(maxLength + 64L, 3L * length + 28L * count + 64));
        final byte[] dst = out.byteArray();
        int at = 0;
        for (int i = 0; i < count; i++)
        {
            final int recordLength = readVarint();
            if (malformed || recordLength < 0 || recordLength > limit - position)
            {
                return fail(Errors.CORRUPT_MESSAGE, "record " + i + " of length " + recordLength + " overruns the batch");
            }
            final int recordEnd = position + recordLength;
            final int savedLimit = limit;
            limit = recordEnd;
            position++; // attributes (unused)
            final long timestampDelta = readVarlong();
            final int offsetDelta = readVarint();
            final int keyLength = readVarint();
            final int keyOffset = position;
            if (malformed || keyLength < -1 || keyLength > limit - position)
            {
                return fail(Errors.CORRUPT_MESSAGE, "record " + i + ": bad key length " + keyLength);
            }
            position += Math.max(keyLength, 0);
            final int valueLength = readVarint();
            final int valueOffset = position;
            if (malformed || valueLength < -1 || valueLength > limit - position)
            {
                return fail(Errors.CORRUPT_MESSAGE, "record " + i + ": bad value length " + valueLength);
            }
            position += Math.max(valueLength, 0);
            final int headerCount = readVarint();
            if (malformed || headerCount < 0 || headerCount > limit - position)
            {
                return fail(Errors.CORRUPT_MESSAGE, "record " + i + ": bad header count " + headerCount);
            }
            if (offsetDelta != i)
            {
                return fail(Errors.INVALID_RECORD, "record " + i + " has offset delta " + offsetDelta);
            }
            final int recordStart = at;
            at += RecordDescriptor.HEADER_LENGTH;
            if (at > maxLength)
            {
                return tooLarge(maxLength);
            }
            final int headersStart = at + Math.max(keyLength, 0) + Math.max(valueLength, 0);
            int headersAt = headersStart;
            for (int h = 0; h < headerCount; h++)
            {
                final int headerKeyLength = readVarint();
                if (malformed || headerKeyLength < 0 || headerKeyLength > Short.MAX_VALUE || headerKeyLength > limit - position)
                {
                    return fail(Errors.CORRUPT_MESSAGE, "record " + i + ": bad header key length " + headerKeyLength);
                }
                final int headerKeyOffset = position;
                position += headerKeyLength;
                final int headerValueLength = readVarint();
                if (malformed || headerValueLength < -1 || headerValueLength > limit - position)
                {
                    return fail(Errors.CORRUPT_MESSAGE, "record " + i + ": bad header value length " +
                        headerValueLength);
                }
                final int headerSize = 2 + headerKeyLength + 4 + Math.max(headerValueLength, 0);
                if ((long)headersAt + headerSize > maxLength)
                {
                    return tooLarge(maxLength);
                }
                out.putShort(headersAt, (short)headerKeyLength);
                System.arraycopy(bytes, base + headerKeyOffset, dst, headersAt + 2, headerKeyLength);
                out.putInt(headersAt + 2 + headerKeyLength, headerValueLength);
                if (headerValueLength > 0)
                {
                    System.arraycopy(bytes, base + position, dst, headersAt + 6 + headerKeyLength, headerValueLength);
                }
                position += Math.max(headerValueLength, 0);
                headersAt += headerSize;
            }
            if (position != recordEnd)
            {
                return fail(Errors.CORRUPT_MESSAGE, "record " + i + " does not end where its length says");
            }
            limit = savedLimit;
            if (headersStart > maxLength)
            {
                return tooLarge(maxLength);
            }
            final long timestamp = logAppendTime || baseTimestamp < 0 ? RecordBatchDescriptor.NO_TIMESTAMP :
                baseTimestamp + timestampDelta;
            writeHeader(recordStart, i, timestamp, keyLength, valueLength, headersAt - headersStart);
            if (keyLength > 0)
            {
                System.arraycopy(bytes, base + keyOffset, dst, at, keyLength);
            }
            if (valueLength > 0)
            {
                System.arraycopy(bytes, base + valueOffset, dst, at + Math.max(keyLength, 0), valueLength);
            }
            at = headersAt;
        }
        if (position != length)
        {
            return fail(Errors.CORRUPT_MESSAGE, (length - position) + " bytes after the last record");
        }
        encodedLength = at;
        return Errors.NONE;
    }

    private Errors decodeCompressed(final ByteBuffer records, final int compression, final int count,
        final boolean logAppendTime, final int maxLength)
    {
        try
        {
            CompressionType.forId(compression);
        }
        catch (final IllegalArgumentException ex)
        {
            return fail(Errors.UNSUPPORTED_COMPRESSION_TYPE, "compression type " + compression);
        }
        final RecordBatch batch = MemoryRecords.readableRecords(records.duplicate()).batches().iterator().next();
        int at = 0;
        int index = 0;
        try (CloseableIterator<Record> it = batch.streamingIterator(bufferSupplier))
        {
            while (it.hasNext())
            {
                final Record record = it.next();
                if (index >= count || record.offset() - batch.baseOffset() != index)
                {
                    return fail(Errors.INVALID_RECORD, "record " + index + " has offset delta " +
                        (record.offset() - batch.baseOffset()));
                }
                final ByteBuffer key = record.key();
                final ByteBuffer value = record.value();
                final int keyLength = null == key ? -1 : key.remaining();
                final int valueLength = null == value ? -1 : value.remaining();
                final int recordStart = at;
                at += RecordDescriptor.HEADER_LENGTH;
                if ((long)at + Math.max(keyLength, 0) + Math.max(valueLength, 0) > maxLength)
                {
                    return tooLarge(maxLength);
                }
                if (keyLength > 0)
                {
                    out.putBytes(at, key, key.position(), keyLength);
                    at += keyLength;
                }
                if (valueLength > 0)
                {
                    out.putBytes(at, value, value.position(), valueLength);
                    at += valueLength;
                }
                final int headersStart = at;
                for (final Header header : record.headers())
                {
                    final byte[] headerKey = header.key().getBytes(StandardCharsets.UTF_8);
                    final byte[] headerValue = header.value();
                    if (headerKey.length > Short.MAX_VALUE)
                    {
                        return fail(Errors.INVALID_RECORD, "header key longer than " + Short.MAX_VALUE + " bytes");
                    }
                    final int headerSize = 6 + headerKey.length + (null == headerValue ? 0 : headerValue.length);
                    if ((long)at + headerSize > maxLength)
                    {
                        return tooLarge(maxLength);
                    }
                    out.putShort(at, (short)headerKey.length);
                    out.putBytes(at + 2, headerKey);
                    out.putInt(at + 2 + headerKey.length, null == headerValue ? -1 : headerValue.length);
                    if (null != headerValue)
                    {
                        out.putBytes(at + 6 + headerKey.length, headerValue);
                    }
                    at += headerSize;
                }
                final long timestamp = logAppendTime || record.timestamp() < 0 ? RecordBatchDescriptor.NO_TIMESTAMP :
                    record.timestamp();
                writeHeader(recordStart, index, timestamp, keyLength, valueLength, at - headersStart);
                index++;
            }
        }
        catch (final RuntimeException ex)
        {
            return fail(Errors.CORRUPT_MESSAGE, "cannot decompress the batch: " + ex.getMessage());
        }
        if (index != count)
        {
            return fail(Errors.INVALID_RECORD, "the batch says " + count + " records and holds " + index);
        }
        encodedLength = at;
        return Errors.NONE;
    }

    private void writeHeader(final int at, final int offsetDelta, final long timestamp, final int keyLength,
        final int valueLength, final int headersLength)
    {
        out.putInt(at + RecordDescriptor.LENGTH_OFFSET,
            RecordDescriptor.recordLength(keyLength, valueLength, headersLength));
        out.putInt(at + RecordDescriptor.OFFSET_DELTA_OFFSET, offsetDelta);
        out.putLong(at + RecordDescriptor.TIMESTAMP_OFFSET, timestamp);
        out.putInt(at + RecordDescriptor.KEY_LENGTH_OFFSET, keyLength);
        out.putInt(at + RecordDescriptor.VALUE_LENGTH_OFFSET, valueLength);
        out.putInt(at + RecordDescriptor.HEADERS_LENGTH_OFFSET, headersLength);
    }

    private Errors tooLarge(final int maxLength)
    {
        return fail(Errors.MESSAGE_TOO_LARGE, "the batch needs more than " + maxLength +
            " bytes in Tidemark's record layout (the largest produce request a partition queue takes)");
    }

    private Errors fail(final Errors error, final String why)
    {
        reason = why;
        return error;
    }

    /** Read a zig-zag varint; an overrun or an over-long encoding sets {@link #malformed} and returns 0. */
    private int readVarint()
    {
        int value = 0;
        for (int shift = 0; shift < 35; shift += 7)
        {
            if (position >= limit)
            {
                malformed = true;
                return 0;
            }
            final int b = bytes[base + position++];
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                return (value >>> 1) ^ -(value & 1);
            }
        }
        malformed = true;
        return 0;
    }

    private long readVarlong()
    {
        long value = 0;
        for (int shift = 0; shift < 70; shift += 7)
        {
            if (position >= limit)
            {
                malformed = true;
                return 0;
            }
            final long b = bytes[base + position++];
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                return (value >>> 1) ^ -(value & 1);
            }
        }
        malformed = true;
        return 0;
    }

    /** @return the decoded records, in Tidemark's layout, at index 0. */
    MutableDirectBuffer buffer()
    {
        return out;
    }

    /** @return the length of the decoded records. */
    int encodedLength()
    {
        return encodedLength;
    }

    int recordCount()
    {
        return recordCount;
    }

    long producerId()
    {
        return producerId;
    }

    short producerEpoch()
    {
        return producerEpoch;
    }

    int baseSequence()
    {
        return baseSequence;
    }

    /** @return why the last decode failed, or null. */
    String reason()
    {
        return reason;
    }

}
