package io.tidemark.client;

import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Hands produce outcomes from the leader hosts' agent threads (where {@link ProduceListener} is called) to the
 * producer's agent: each outcome is claimed and written in place in an Agrona {@link ManyToOneRingBuffer}
 * ({@link CompletionDescriptor}), so the leader's thread does a few stores and no allocation. Should the ring be
 * full, the outcome is dropped and counted; the producer then treats that attempt as lost at its local deadline and
 * resends it (idempotence makes that safe).
 * <p>
 * Thread-safe for any number of writers; one reader (the producer's agent).
 */
final class CompletionQueue implements ProduceListener
{
    /** Receives outcomes on the producer's agent thread. */
    @FunctionalInterface
    interface Handler
    {
        void onOutcome(long correlationId, long baseOffset, ReplicationError error);
    }


    private final ManyToOneRingBuffer ring;
    private final AtomicLong dropped = new AtomicLong();
    private final MessageHandler reader = this::onMessage;
    private Handler handler;

    CompletionQueue(final int capacity)
    {
        ring = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(capacity + RingBufferDescriptor.TRAILER_LENGTH)));
    }

    @Override
    public void onComplete(final TopicPartition partition, final long correlationId, final long baseOffset,
        final ReplicationError error)
    {
        final int index = ring.tryClaim(CompletionDescriptor.MSG_TYPE_ID, CompletionDescriptor.LENGTH);
        if (index <= 0)
        {
            dropped.incrementAndGet();
            return;
        }
        final MutableDirectBuffer buffer = ring.buffer();
        buffer.putLong(index + CompletionDescriptor.CORRELATION_ID_OFFSET, correlationId);
        buffer.putLong(index + CompletionDescriptor.BASE_OFFSET_OFFSET, baseOffset);
        buffer.putInt(index + CompletionDescriptor.ERROR_OFFSET, error.code());
        ring.commit(index);
    }

    /**
     * Deliver queued outcomes (producer agent thread).
     *
     * @return outcomes delivered.
     */
    int drain(final Handler handler, final int limit)
    {
        this.handler = handler;
        return ring.read(reader, limit);
    }

    private void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final int code = buffer.getInt(index + CompletionDescriptor.ERROR_OFFSET);
        handler.onOutcome(buffer.getLong(index + CompletionDescriptor.CORRELATION_ID_OFFSET),
            buffer.getLong(index + CompletionDescriptor.BASE_OFFSET_OFFSET),
            ReplicationError.fromCodeOrStorageError(code));
    }

    /** @return outcomes dropped because the ring was full. */
    long dropped()
    {
        return dropped.get();
    }
}
