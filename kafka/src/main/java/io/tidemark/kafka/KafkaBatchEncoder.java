package io.tidemark.kafka;

import io.tidemark.store.format.HeadersEncoder;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.format.RecordDescriptor;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;

import java.nio.ByteOrder;
import java.util.zip.CRC32C;

import static io.tidemark.kafka.KafkaBatchDescriptor.*;

/**
 * Writes Tidemark batches (as read from a leader's log) as Kafka record batches of magic 2
 * ({@link KafkaBatchDescriptor}) for fetch responses: same base offset, leader epoch, producer id, epoch and base
 * sequence, record timestamps as create time, keys, values and headers byte for byte, uncompressed, with the
 * CRC32C a consumer checks. Appends batch after batch to one growing heap buffer; no allocation per record.
 * <p>
 * One per thread.
 */
final class KafkaBatchEncoder
{
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(256 * 1024);
    private final CRC32C crc = new CRC32C();
    private int length;

    /** Start a new run of batches at index 0. */
    void reset()
    {
        length = 0;
    }

    /** @return the bytes written since {@link #reset()}. */
    int length()
    {
        return length;
    }

    /** @return the buffer holding the written batches from index 0 (its byte array backs it). */
    ExpandableArrayBuffer buffer()
    {
        return out;
    }

    /**
     * Append one Tidemark batch as a Kafka batch.
     *
     * @return the bytes written.
     */
    int append(final RecordBatch batch)
    {
        final DirectBuffer src = batch.buffer();
        final int start = length;
        // a Kafka record is never longer than its Tidemark record plus 10 bytes of varints beyond the fixed fields
        out.checkLimit(start + RECORDS_OFFSET + batch.length() + 16 * batch.recordCount());
        final byte[] array = out.byteArray();
        final int count = batch.recordCount();
        final long baseTimestamp = batch.firstTimestamp();
        int at = start + RECORDS_OFFSET;
        int record = batch.offset() + io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;
        for (int i = 0; i < count; i++)
        {
            final int keyLength = src.getInt(record + RecordDescriptor.KEY_LENGTH_OFFSET);
            final int valueLength = src.getInt(record + RecordDescriptor.VALUE_LENGTH_OFFSET);
            final int headersLength = src.getInt(record + RecordDescriptor.HEADERS_LENGTH_OFFSET);
            final long timestampDelta = src.getLong(record + RecordDescriptor.TIMESTAMP_OFFSET) - baseTimestamp;
            final int keyAt = record + RecordDescriptor.HEADER_LENGTH;
            final int valueAt = keyAt + Math.max(keyLength, 0);
            final int headersAt = valueAt + Math.max(valueLength, 0);
            final int headersEnd = headersAt + headersLength;
            int headerCount = 0;
            int headersSize = 0;
            for (int h = headersAt; h < headersEnd; )
            {
                final int headerKeyLength = src.getShort(h);
                final int headerValueLength = src.getInt(h + HeadersEncoder.KEY_LENGTH_SIZE + headerKeyLength);
                headersSize += varintSize(headerKeyLength) + headerKeyLength + varintSize(headerValueLength) +
                    Math.max(headerValueLength, 0);
                headerCount++;
                h += HeadersEncoder.KEY_LENGTH_SIZE + headerKeyLength + HeadersEncoder.VALUE_LENGTH_SIZE +
                    Math.max(headerValueLength, 0);
            }
            final int bodySize = 1 + varlongSize(timestampDelta) + varintSize(i) + varintSize(keyLength) +
                Math.max(keyLength, 0) + varintSize(valueLength) + Math.max(valueLength, 0) + varintSize(headerCount) +
                headersSize;
            at = putVarint(array, at, bodySize);
            array[at++] = 0;
            at = putVarlong(array, at, timestampDelta);
            at = putVarint(array, at, i);
            at = putVarint(array, at, keyLength);
            if (keyLength > 0)
            {
                src.getBytes(keyAt, array, at, keyLength);
                at += keyLength;
            }
            at = putVarint(array, at, valueLength);
            if (valueLength > 0)
            {
                src.getBytes(valueAt, array, at, valueLength);
                at += valueLength;
            }
            at = putVarint(array, at, headerCount);
            for (int h = headersAt; h < headersEnd; )
            {
                final int headerKeyLength = src.getShort(h);
                final int headerValueAt = h + HeadersEncoder.KEY_LENGTH_SIZE + headerKeyLength;
                final int headerValueLength = src.getInt(headerValueAt);
                at = putVarint(array, at, headerKeyLength);
                src.getBytes(h + HeadersEncoder.KEY_LENGTH_SIZE, array, at, headerKeyLength);
                at += headerKeyLength;
                at = putVarint(array, at, headerValueLength);
                if (headerValueLength > 0)
                {
                    src.getBytes(headerValueAt + HeadersEncoder.VALUE_LENGTH_SIZE, array, at, headerValueLength);
                    at += headerValueLength;
                }
                h = headerValueAt + HeadersEncoder.VALUE_LENGTH_SIZE + Math.max(headerValueLength, 0);
            }
            record += src.getInt(record + RecordDescriptor.LENGTH_OFFSET);
        }
        out.putLong(start + BASE_OFFSET_OFFSET, batch.baseOffset(), ByteOrder.BIG_ENDIAN);
        out.putInt(start + LENGTH_OFFSET, at - start - LOG_OVERHEAD, ByteOrder.BIG_ENDIAN);
        out.putInt(start + PARTITION_LEADER_EPOCH_OFFSET, batch.leaderEpoch(), ByteOrder.BIG_ENDIAN);
        out.putByte(start + MAGIC_OFFSET, MAGIC);
        out.putShort(start + ATTRIBUTES_OFFSET, (short)0, ByteOrder.BIG_ENDIAN);
        out.putInt(start + LAST_OFFSET_DELTA_OFFSET, count - 1, ByteOrder.BIG_ENDIAN);
        out.putLong(start + BASE_TIMESTAMP_OFFSET, baseTimestamp, ByteOrder.BIG_ENDIAN);
        out.putLong(start + MAX_TIMESTAMP_OFFSET, batch.maxTimestamp(), ByteOrder.BIG_ENDIAN);
        out.putLong(start + PRODUCER_ID_OFFSET, batch.producerId(), ByteOrder.BIG_ENDIAN);
        out.putShort(start + PRODUCER_EPOCH_OFFSET, batch.producerEpoch(), ByteOrder.BIG_ENDIAN);
        out.putInt(start + BASE_SEQUENCE_OFFSET, batch.baseSequence(), ByteOrder.BIG_ENDIAN);
        out.putInt(start + RECORDS_COUNT_OFFSET, count, ByteOrder.BIG_ENDIAN);
        crc.reset();
        crc.update(out.byteArray(), start + ATTRIBUTES_OFFSET, at - start - ATTRIBUTES_OFFSET);
        out.putInt(start + CRC_OFFSET, (int)crc.getValue(), ByteOrder.BIG_ENDIAN);
        length = at;
        return at - start;
    }

    private static int putVarint(final byte[] array, final int at, final int value)
    {
        int v = (value << 1) ^ (value >> 31);
        int i = at;
        while ((v & 0xFFFFFF80) != 0)
        {
            array[i++] = (byte)((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        array[i++] = (byte)v;
        return i;
    }

    private static int putVarlong(final byte[] array, final int at, final long value)
    {
        long v = (value << 1) ^ (value >> 63);
        int i = at;
        while ((v & 0xFFFFFFFFFFFFFF80L) != 0)
        {
            array[i++] = (byte)((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        array[i++] = (byte)v;
        return i;
    }

    static int varintSize(final int value)
    {
        int v = (value << 1) ^ (value >> 31);
        int bytes = 1;
        while ((v & 0xFFFFFF80) != 0)
        {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }

    static int varlongSize(final long value)
    {
        long v = (value << 1) ^ (value >> 63);
        int bytes = 1;
        while ((v & 0xFFFFFFFFFFFFFF80L) != 0)
        {
            bytes++;
            v >>>= 7;
        }
        return bytes;
    }
}
