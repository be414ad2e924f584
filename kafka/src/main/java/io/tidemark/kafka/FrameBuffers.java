package io.tidemark.kafka;

import java.nio.ByteBuffer;

/**
 * The request frame buffers of one {@link KafkaListener}, reused instead of allocated per request. A produce request
 * of a saturating producer is a batch per partition (16 KiB each by default), so a fresh buffer per frame was most of
 * the listener's allocation (a JFR of a host at 10k records/s: {@code HeapByteBuffer.<init>} the hottest frame of
 * the listener thread, 120 MB allocated in 10 s), and the garbage collections it caused paused the listener.
 * <p>
 * A frame buffer is free again once {@link KafkaApis#handle} returns: every request is parsed there, and what the
 * handlers keep (Kafka's generated message classes copy strings and byte arrays) never points into the frame,
 * except a produce request's records, which {@link ProduceRequests} copies into the leader's queue or into a retry
 * before it returns. Buffers are sized in powers of two, so one serves the sizes near it; the pool keeps at most
 * {@link #MAX_POOLED} buffers of at most {@link #MAX_POOLED_CAPACITY} bytes each and {@link #MAX_POOLED_BYTES} in
 * all, so idle connections never pin memory and a rare large request is allocated and dropped as before. The listener's budget
 * ({@code kafka.queued.max.request.bytes}) counts frame lengths; the memory it bounds is at most twice that (the
 * rounding) plus the pool.
 * <p>
 * Owned by the listener's agent thread.
 */
final class FrameBuffers
{
    /** Buffers kept for reuse, at most. */
    static final int MAX_POOLED = 32;
    /** Largest buffer kept for reuse (1 MiB: a produce request of 64 partitions' 16 KiB batches). */
    static final int MAX_POOLED_CAPACITY = 1 << 20;
    /** Most bytes the pool holds. */
    static final long MAX_POOLED_BYTES = 8L << 20;
    private static final int MIN_CAPACITY = 1 << 10;

    private final ByteBuffer[] pooled = new ByteBuffer[MAX_POOLED];
    private int count;
    private long pooledBytes;

    /**
     * @param length the frame's length.
     * @return a heap buffer at position 0 with {@code length} bytes of room (its limit), reused when one fits.
     */
    ByteBuffer take(final int length)
    {
        int best = -1;
        for (int i = 0; i < count; i++)
        {
            final int capacity = pooled[i].capacity();
            if (capacity >= length && (best < 0 || capacity < pooled[best].capacity()))
            {
                best = i;
            }
        }
        if (best >= 0)
        {
            final ByteBuffer buffer = pooled[best];
            pooled[best] = pooled[--count];
            pooled[count] = null;
            pooledBytes -= buffer.capacity();
            return buffer.clear().limit(length);
        }
        final int capacity = length > MAX_POOLED_CAPACITY ? length :
            Math.max(MIN_CAPACITY, Integer.highestOneBit(Math.max(1, length - 1)) << 1);
        return ByteBuffer.allocate(capacity).limit(length);
    }

    /**
     * Take a buffer back once nothing refers to it.
     *
     * @param buffer a buffer from {@link #take}.
     */
    void give(final ByteBuffer buffer)
    {
        final int capacity = buffer.capacity();
        if (capacity <= MAX_POOLED_CAPACITY && count < MAX_POOLED && pooledBytes + capacity <= MAX_POOLED_BYTES)
        {
            pooled[count++] = buffer;
            pooledBytes += capacity;
        }
    }

    /** @return buffers held for reuse (tests). */
    int pooled()
    {
        return count;
    }
}
