package io.tidemark.store.format;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;

/**
 * Iterates the headers of a record in place (layout in {@link HeadersEncoder}). A flyweight obtained from
 * {@link io.tidemark.store.RecordView#headers()}; valid only during the callback that received the record. Not thread-safe.
 */
public final class HeadersDecoder
{
    private DirectBuffer buffer;
    private int limit;
    private int next;
    private int keyOffset;
    private int keyLength;
    private int valueOffset;
    private int valueLength;

    public HeadersDecoder wrap(final DirectBuffer buffer, final int offset, final int length)
    {
        this.buffer = buffer;
        this.next = offset;
        this.limit = offset + length;
        return this;
    }

    /**
     * Advance to the next header.
     *
     * @return false when there are no more headers.
     */
    public boolean next()
    {
        if (next >= limit)
        {
            return false;
        }
        keyLength = buffer.getShort(next);
        keyOffset = next + HeadersEncoder.KEY_LENGTH_SIZE;
        final int valueLengthAt = keyOffset + keyLength;
        valueLength = buffer.getInt(valueLengthAt);
        valueOffset = valueLengthAt + HeadersEncoder.VALUE_LENGTH_SIZE;
        next = valueOffset + Math.max(valueLength, 0);
        return true;
    }

    /** @return the buffer holding the header bytes. */
    public DirectBuffer buffer()
    {
        return buffer;
    }

    /** @return index of the current header's key. */
    public int keyOffset()
    {
        return keyOffset;
    }

    /** @return length of the current header's key. */
    public int keyLength()
    {
        return keyLength;
    }

    /** @return the current header's key as a String (allocates). */
    public String key()
    {
        return buffer.getStringWithoutLengthUtf8(keyOffset, keyLength);
    }

    /** @return index of the current header's value. */
    public int valueOffset()
    {
        return valueOffset;
    }

    /** @return length of the current header's value, or -1 when null. */
    public int valueLength()
    {
        return valueLength;
    }

    /** @return the current header's value as UTF-8 text, or null (allocates). */
    public String valueAsString()
    {
        if (valueLength < 0)
        {
            return null;
        }
        final byte[] bytes = new byte[valueLength];
        buffer.getBytes(valueOffset, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * Check that a headers region parses exactly to its length.
     *
     * @return true when well formed.
     */
    public static boolean isWellFormed(final DirectBuffer buffer, final int offset, final int length)
    {
        int at = offset;
        final int end = offset + length;
        while (at < end)
        {
            if (at + HeadersEncoder.KEY_LENGTH_SIZE > end)
            {
                return false;
            }
            final int keyLength = buffer.getShort(at);
            if (keyLength < 0)
            {
                return false;
            }
            at += HeadersEncoder.KEY_LENGTH_SIZE + keyLength;
            if (at + HeadersEncoder.VALUE_LENGTH_SIZE > end)
            {
                return false;
            }
            final int valueLength = buffer.getInt(at);
            if (valueLength < RecordDescriptor.NULL_LENGTH)
            {
                return false;
            }
            at += HeadersEncoder.VALUE_LENGTH_SIZE + Math.max(valueLength, 0);
        }
        return at == end;
    }
}
