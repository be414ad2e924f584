package io.tidemark.kafka;

import io.tidemark.replication.ReplicationError;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Produce outcomes on their way from the leader host's agent thread to the listener's: a ring buffer of
 * (correlation id, base offset, error code) records, so that neither thread blocks the other. When the ring is full
 * an outcome is dropped and counted ({@link #lost()}): its client times out and retries.
 */
final class ProduceCompletions
{
    /** The outcome of one produce request queued by the listener. */
    @FunctionalInterface
    interface Handler
    {
        /**
         * @param correlationId the listener's token of the request.
         * @param baseOffset    the offset of its first record, or -1.
         * @param errorCode     {@link ReplicationError#code()}.
         */
        void onComplete(long correlationId, long baseOffset, int errorCode);
    }

    private static final int COMPLETION = 1;
    private static final int COMPLETION_LENGTH = 20;

    private final ManyToOneRingBuffer ring = new ManyToOneRingBuffer(new UnsafeBuffer(
        ByteBuffer.allocateDirect((1 << 20) + RingBufferDescriptor.TRAILER_LENGTH)));
    private final AtomicLong lost = new AtomicLong();
    private final Runnable wakeUp;
    private final MessageHandler reader;

    /**
     * @param handler takes each outcome, on the listener's thread.
     * @param wakeUp  wakes the listener's thread after an outcome is written (any thread).
     */
    ProduceCompletions(final Handler handler, final Runnable wakeUp)
    {
        this.wakeUp = wakeUp;
        this.reader = (type, buffer, index, length) ->
            handler.onComplete(buffer.getLong(index), buffer.getLong(index + 8), buffer.getInt(index + 16));
    }

    /** On the leader host's agent thread: pass an outcome on. */
    void offer(final long correlationId, final long baseOffset, final ReplicationError error)
    {
        final int index = ring.tryClaim(COMPLETION, COMPLETION_LENGTH);
        if (index <= 0)
        {
            lost.incrementAndGet();
            return;
        }
        final UnsafeBuffer buffer = (UnsafeBuffer)ring.buffer();
        buffer.putLong(index, correlationId);
        buffer.putLong(index + 8, baseOffset);
        buffer.putInt(index + 16, error.code());
        ring.commit(index);
        wakeUp.run();
    }

    /** On the listener's thread: hand up to {@code limit} outcomes to the handler. @return how many. */
    int drain(final int limit)
    {
        return ring.read(reader, limit);
    }

    /** @return whether no outcome waits. */
    boolean isEmpty()
    {
        return ring.size() == 0;
    }

    /** @return outcomes dropped because the ring was full. */
    long lost()
    {
        return lost.get();
    }
}
