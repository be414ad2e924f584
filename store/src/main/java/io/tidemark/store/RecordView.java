package io.tidemark.store;

import io.tidemark.store.format.HeadersDecoder;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;

import static io.tidemark.store.format.RecordDescriptor.HEADERS_LENGTH_OFFSET;
import static io.tidemark.store.format.RecordDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.RecordDescriptor.KEY_LENGTH_OFFSET;
import static io.tidemark.store.format.RecordDescriptor.LENGTH_OFFSET;
import static io.tidemark.store.format.RecordDescriptor.OFFSET_DELTA_OFFSET;
import static io.tidemark.store.format.RecordDescriptor.TIMESTAMP_OFFSET;
import static io.tidemark.store.format.RecordDescriptor.VALUE_LENGTH_OFFSET;

/**
 * Zero-copy view of one record in a mapped segment (layout in {@link RecordDescriptor}). Key, value and header
 * bytes are read in place from {@link #buffer()} at the offsets given.
 * <p>
 * A flyweight reused for every record: it is valid only during the callback that received it, and must not be
 * kept or passed to another thread. Copy what you need to keep.
 */
public final class RecordView
{
    private final HeadersDecoder headers = new HeadersDecoder();
    private DirectBuffer buffer;
    private int recordOffset;
    private long baseOffset;

    RecordView wrap(final DirectBuffer buffer, final int recordOffset, final long baseOffset)
    {
        this.buffer = buffer;
        this.recordOffset = recordOffset;
        this.baseOffset = baseOffset;
        return this;
    }

    /** @return the buffer holding the record (a segment mapping). */
    public DirectBuffer buffer()
    {
        return buffer;
    }

    /** @return the encoded length of the record. */
    public int encodedLength()
    {
        return buffer.getInt(recordOffset + LENGTH_OFFSET);
    }

    /** @return the record's offset in the log. */
    public long offset()
    {
        return baseOffset + buffer.getInt(recordOffset + OFFSET_DELTA_OFFSET);
    }

    /** @return the record's timestamp in epoch milliseconds. */
    public long timestamp()
    {
        return buffer.getLong(recordOffset + TIMESTAMP_OFFSET);
    }

    /** @return key length, or -1 for a null key. */
    public int keyLength()
    {
        return buffer.getInt(recordOffset + KEY_LENGTH_OFFSET);
    }

    /** @return index of the key bytes in {@link #buffer()}. */
    public int keyOffset()
    {
        return recordOffset + HEADER_LENGTH;
    }

    /** @return value length, or -1 for a null value. */
    public int valueLength()
    {
        return buffer.getInt(recordOffset + VALUE_LENGTH_OFFSET);
    }

    /** @return index of the value bytes in {@link #buffer()}. */
    public int valueOffset()
    {
        return keyOffset() + Math.max(keyLength(), 0);
    }

    /** @return length of the encoded headers (0 when none). */
    public int headersLength()
    {
        return buffer.getInt(recordOffset + HEADERS_LENGTH_OFFSET);
    }

    /** @return a decoder over this record's headers, positioned before the first. */
    public HeadersDecoder headers()
    {
        return headers.wrap(buffer, valueOffset() + Math.max(valueLength(), 0), headersLength());
    }

    /**
     * Copy the value into {@code dst}.
     *
     * @param dst destination, at least {@link #valueLength()} long.
     */
    public void getValue(final byte[] dst)
    {
        buffer.getBytes(valueOffset(), dst, 0, Math.max(valueLength(), 0));
    }

    /** @return the value as a new array, or null (allocates). */
    public byte[] valueBytes()
    {
        return copy(valueOffset(), valueLength());
    }

    /** @return the key as a new array, or null (allocates). */
    public byte[] keyBytes()
    {
        return copy(keyOffset(), keyLength());
    }

    /** @return the value as UTF-8 text, or null (allocates). */
    public String valueAsString()
    {
        final byte[] bytes = valueBytes();
        return null == bytes ? null : new String(bytes, StandardCharsets.UTF_8);
    }

    private byte[] copy(final int offset, final int length)
    {
        if (length < 0)
        {
            return null;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return bytes;
    }

    @Override
    public String toString()
    {
        return "RecordView{offset=" + offset() + ", timestamp=" + timestamp() + ", keyLength=" + keyLength() +
            ", valueLength=" + valueLength() + ", headersLength=" + headersLength() + '}';
    }
}
