package io.tidemark.store.format;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Encodes record headers into a caller's buffer, to be passed to {@link io.tidemark.store.BatchClaim#addRecord}.
 * <pre>
 *   repeated for each header:
 *  +-------------------------------+
 *  |     Key Length (int16, >= 0)  |  then Key bytes (UTF-8)
 *  +-------------------------------+-------------------------------+
 *  |               Value Length (int32, -1 for null)               |  then Value bytes
 *  +---------------------------------------------------------------+
 * </pre>
 * A flyweight: {@link #wrap(MutableDirectBuffer, int)} then {@code add} headers; {@link #length()} is the encoded
 * length. Not thread-safe.
 */
public final class HeadersEncoder
{
    /** Length of the key length field. */
    public static final int KEY_LENGTH_SIZE = 2;
    /** Length of the value length field. */
    public static final int VALUE_LENGTH_SIZE = 4;

    private MutableDirectBuffer buffer;
    private int offset;
    private int limit;

    /**
     * @param buffer where to encode.
     * @param offset index at which the headers start.
     * @return this
     */
    public HeadersEncoder wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.limit = offset;
        return this;
    }

    /**
     * Add a header.
     *
     * @param key         header key (UTF-8 encoded, at most 32767 bytes).
     * @param value       header value bytes, or null.
     * @param valueOffset index of the value in {@code value}.
     * @param valueLength length of the value.
     * @return this
     */
    public HeadersEncoder add(final String key, final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        final byte[] keyBytes = key.getBytes(StandardCharsets.UTF_8);
        if (keyBytes.length > Short.MAX_VALUE)
        {
            throw new IllegalArgumentException("header key longer than " + Short.MAX_VALUE + " bytes");
        }
        buffer.putShort(limit, (short)keyBytes.length);
        buffer.putBytes(limit + KEY_LENGTH_SIZE, keyBytes);
        limit += KEY_LENGTH_SIZE + keyBytes.length;
        if (null == value)
        {
            buffer.putInt(limit, RecordDescriptor.NULL_LENGTH);
            limit += VALUE_LENGTH_SIZE;
        }
        else
        {
            buffer.putInt(limit, valueLength);
            buffer.putBytes(limit + VALUE_LENGTH_SIZE, value, valueOffset, valueLength);
            limit += VALUE_LENGTH_SIZE + valueLength;
        }
        return this;
    }

    /**
     * Add a header with a byte array value.
     *
     * @param key   header key.
     * @param value header value, or null.
     * @return this
     */
    public HeadersEncoder add(final String key, final byte[] value)
    {
        return add(key, null == value ? null : new org.agrona.concurrent.UnsafeBuffer(value), 0,
            null == value ? 0 : value.length);
    }

    /** @return the encoded length so far. */
    public int length()
    {
        return limit - offset;
    }

    /** @return index of the first header byte. */
    public int offset()
    {
        return offset;
    }

    /** @return the buffer encoded into. */
    public MutableDirectBuffer buffer()
    {
        return buffer;
    }
}
