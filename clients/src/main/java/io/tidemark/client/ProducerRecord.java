package io.tidemark.client;

import io.tidemark.store.BatchClaim;
import io.tidemark.store.format.HeadersEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/**
 * A record to send: topic, optional partition, key, value, encoded headers ({@code HeadersEncoder}) and timestamp.
 * Mutable and reusable: a send copies its bytes before it returns, so one instance can be refilled for the next
 * record with no allocation. Key and value are referenced as {@code (buffer, offset, length)}; a null buffer is a
 * null key or value.
 * <p>
 * Not thread-safe: one instance per sending thread.
 */
public final class ProducerRecord
{
    /** {@link #partition()} value meaning "let the partitioner choose". */
    public static final int ANY_PARTITION = -1;

    private final UnsafeBuffer keyWrapper = new UnsafeBuffer(0, 0);
    private final UnsafeBuffer valueWrapper = new UnsafeBuffer(0, 0);
    private String topic;
    private int partition = ANY_PARTITION;
    private long timestamp = BatchClaim.NOW;
    private DirectBuffer key;
    private int keyOffset;
    private int keyLength;
    private DirectBuffer value;
    private int valueOffset;
    private int valueLength;
    private DirectBuffer headers;
    private int headersOffset;
    private int headersLength;

    /** Reset every field but the topic (null key and value, any partition, timestamp stamped by the log). @return this */
    public ProducerRecord clear()
    {
        partition = ANY_PARTITION;
        timestamp = BatchClaim.NOW;
        key = null;
        value = null;
        headers = null;
        keyLength = 0;
        valueLength = 0;
        headersLength = 0;
        return this;
    }

    /** @param topic the topic. @return this */
    public ProducerRecord topic(final String topic)
    {
        this.topic = topic;
        return this;
    }

    /** @return the topic. */
    public String topic()
    {
        return topic;
    }

    /** @param partition an explicit partition, or {@link #ANY_PARTITION}. @return this */
    public ProducerRecord partition(final int partition)
    {
        this.partition = partition;
        return this;
    }

    /** @return the explicit partition, or {@link #ANY_PARTITION}. */
    public int partition()
    {
        return partition;
    }

    /** @param timestamp epoch millis, or {@link BatchClaim#NOW} to let the leader's log stamp it. @return this */
    public ProducerRecord timestamp(final long timestamp)
    {
        this.timestamp = timestamp;
        return this;
    }

    /** @return the timestamp, or {@link BatchClaim#NOW}. */
    public long timestamp()
    {
        return timestamp;
    }

    /** @param buffer key bytes, or null. @param offset index. @param length length. @return this */
    public ProducerRecord key(final DirectBuffer buffer, final int offset, final int length)
    {
        key = buffer;
        keyOffset = offset;
        keyLength = length;
        return this;
    }

    /** @param bytes the key, or null (wrapped, not copied). @return this */
    public ProducerRecord key(final byte[] bytes)
    {
        if (null == bytes)
        {
            return key(null, 0, 0);
        }
        keyWrapper.wrap(bytes);
        return key(keyWrapper, 0, bytes.length);
    }

    /** @param text the key as UTF-8 (allocates), or null. @return this */
    public ProducerRecord key(final String text)
    {
        return key(null == text ? null : text.getBytes(StandardCharsets.UTF_8));
    }

    /** @param buffer value bytes, or null. @param offset index. @param length length. @return this */
    public ProducerRecord value(final DirectBuffer buffer, final int offset, final int length)
    {
        value = buffer;
        valueOffset = offset;
        valueLength = length;
        return this;
    }

    /** @param bytes the value, or null (wrapped, not copied). @return this */
    public ProducerRecord value(final byte[] bytes)
    {
        if (null == bytes)
        {
            return value(null, 0, 0);
        }
        valueWrapper.wrap(bytes);
        return value(valueWrapper, 0, bytes.length);
    }

    /** @param text the value as UTF-8 (allocates), or null. @return this */
    public ProducerRecord value(final String text)
    {
        return value(null == text ? null : text.getBytes(StandardCharsets.UTF_8));
    }

    /** @param buffer headers encoded by {@code HeadersEncoder}, or null. @param offset index. @param length length.
     * @return this */
    public ProducerRecord headers(final DirectBuffer buffer, final int offset, final int length)
    {
        headers = buffer;
        headersOffset = offset;
        headersLength = length;
        return this;
    }

    DirectBuffer keyBuffer()
    {
        return key;
    }

    int keyOffset()
    {
        return keyOffset;
    }

    /** @return the key length, or -1 for a null key. */
    int keyLength()
    {
        return null == key ? -1 : keyLength;
    }

    DirectBuffer valueBuffer()
    {
        return value;
    }

    int valueOffset()
    {
        return valueOffset;
    }

    /** @return the value length, or -1 for a null value. */
    int valueLength()
    {
        return null == value ? -1 : valueLength;
    }

    DirectBuffer headersBuffer()
    {
        return headers;
    }

    int headersOffset()
    {
        return headersOffset;
    }

    int headersLength()
    {
        return null == headers ? 0 : headersLength;
    }
}
