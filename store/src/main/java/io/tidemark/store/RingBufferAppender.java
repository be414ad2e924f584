package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.collections.LongArrayList;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;

/**
 * Lets many threads append to one {@link Log} without a lock: producers copy records into an Agrona
 * {@link ManyToOneRingBuffer} ({@link #offer}); this agent, run by one thread, drains the ring into the log,
 * packing consecutive records into one batch, and reports each record's offset (or failure) to an
 * {@link AppendListener} by the correlation id the producer gave.
 * <p>
 * Ring message layout (message type 1):
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                        Correlation Id                         |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                 Timestamp (or BatchClaim.NOW)                 |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                    Key Length (-1 for null)                   | 16
 *  +---------------------------------------------------------------+
 *  |                   Value Length (-1 for null)                  | 20
 *  +---------------------------------------------------------------+
 *  |                       Key, then Value bytes                  ... 24
 *  +---------------------------------------------------------------+
 * </pre>
 * {@link #offer} is thread-safe and lock-free; {@link #doWork()} must run on one thread at a time, which becomes
 * the log's writer thread.
 */
public final class RingBufferAppender implements Agent
{
    /** Receives the outcome of every offered record, on the draining thread. */
    public interface AppendListener
    {
        /**
         * @param correlationId the id given to {@link #offer}.
         * @param offset        the record's offset in the log.
         */
        void onAppended(long correlationId, long offset);

        /**
         * @param correlationId the id given to {@link #offer}.
         * @param error         why the record was not appended.
         */
        void onFailed(long correlationId, StorageException error);
    }

    static final int MESSAGE_TYPE = 1;
    static final int CORRELATION_ID_OFFSET = 0;
    static final int TIMESTAMP_OFFSET = 8;
    static final int KEY_LENGTH_OFFSET = 16;
    static final int VALUE_LENGTH_OFFSET = 20;
    static final int HEADER_LENGTH = 24;

    private final Log log;
    private final RingBuffer ringBuffer;
    private final AppendListener listener;
    private final int batchBytes;
    private final int drainLimit;
    private final LongArrayList pending = new LongArrayList();
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private final MessageHandler drainHandler = this::onMessage;
    private BatchClaim claim;

    /**
     * @param log          the log to append to; nothing else may append to it.
     * @param ringCapacity ring capacity in bytes, a power of two.
     * @param batchBytes   largest batch the drainer packs records into (at most {@code max.message.bytes}).
     * @param listener     receives each record's outcome, or null.
     */
    public RingBufferAppender(
        final Log log, final int ringCapacity, final int batchBytes, final AppendListener listener)
    {
        if (batchBytes > log.context().maxMessageBytes())
        {
            throw new IllegalArgumentException("batchBytes " + batchBytes + " exceeds " +
                LogContext.MAX_MESSAGE_BYTES + "=" + log.context().maxMessageBytes());
        }
        this.log = log;
        this.ringBuffer = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(ringCapacity + RingBufferDescriptor.TRAILER_LENGTH)));
        this.batchBytes = batchBytes;
        this.listener = listener;
        this.drainLimit = Math.max(1, ringCapacity / 64);
    }

    /**
     * Queue a record for appending.
     *
     * @param correlationId reported back to the listener with the record's offset.
     * @param timestamp     epoch millis, or {@link BatchClaim#NOW}.
     * @param key           key bytes, or null.
     * @param keyOffset     index of the key.
     * @param keyLength     key length (ignored when null).
     * @param value         value bytes, or null.
     * @param valueOffset   index of the value.
     * @param valueLength   value length (ignored when null).
     * @return false when the ring is full (back-pressure: retry later).
     */
    public boolean offer(
        final long correlationId,
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength)
    {
        final int kl = null == key ? -1 : keyLength;
        final int vl = null == value ? -1 : valueLength;
        final int length = HEADER_LENGTH + Math.max(kl, 0) + Math.max(vl, 0);
        if (HeaderSizes.batchLength(kl, vl) > batchBytes)
        {
            throw new IllegalArgumentException("record does not fit in a batch of " + batchBytes + " bytes");
        }
        final int index = ringBuffer.tryClaim(MESSAGE_TYPE, length);
        if (index <= 0)
        {
            return false;
        }
        final MutableDirectBuffer buffer = ringBuffer.buffer();
        buffer.putLong(index + CORRELATION_ID_OFFSET, correlationId);
        buffer.putLong(index + TIMESTAMP_OFFSET, timestamp);
        buffer.putInt(index + KEY_LENGTH_OFFSET, kl);
        buffer.putInt(index + VALUE_LENGTH_OFFSET, vl);
        if (kl > 0)
        {
            buffer.putBytes(index + HEADER_LENGTH, key, keyOffset, kl);
        }
        if (vl > 0)
        {
            buffer.putBytes(index + HEADER_LENGTH + Math.max(kl, 0), value, valueOffset, vl);
        }
        ringBuffer.commit(index);
        return true;
    }

    /**
     * Queue a record without a key.
     *
     * @return false when the ring is full.
     */
    public boolean offer(final long correlationId, final DirectBuffer value, final int valueOffset,
        final int valueLength)
    {
        return offer(correlationId, BatchClaim.NOW, null, 0, -1, value, valueOffset, valueLength);
    }

    @Override
    public int doWork()
    {
        int drained = ringBuffer.read(drainHandler, drainLimit);
        if (drained == 0 && ringBuffer.size() > 0)
        {
            drained = ringBuffer.read(drainHandler, drainLimit); // the first read only skipped the ring's end padding
        }
        commitPending();
        return drained;
    }

    /** @return whether every offered record has been drained into the log (or failed). */
    public boolean isEmpty()
    {
        return ringBuffer.size() == 0 && null == claim;
    }

    private void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final long correlationId = buffer.getLong(index + CORRELATION_ID_OFFSET);
        final int keyLength = buffer.getInt(index + KEY_LENGTH_OFFSET);
        final int valueLength = buffer.getInt(index + VALUE_LENGTH_OFFSET);
        final int recordLength = RecordDescriptor.recordLength(keyLength, valueLength, 0);
        try
        {
            if (null != claim && claim.remaining() < recordLength)
            {
                commitPending();
            }
            if (null == claim)
            {
                claim = log.tryClaim(batchBytes);
            }
            view.wrap(buffer, index, length);
            claim.addRecord(buffer.getLong(index + TIMESTAMP_OFFSET),
                keyLength < 0 ? null : view, HEADER_LENGTH, keyLength,
                valueLength < 0 ? null : view, HEADER_LENGTH + Math.max(keyLength, 0), valueLength);
            pending.addLong(correlationId);
        }
        catch (final StorageException ex)
        {
            failPending(ex);
            if (null != listener)
            {
                listener.onFailed(correlationId, ex);
            }
        }
    }

    private void commitPending()
    {
        if (null == claim)
        {
            return;
        }
        final BatchClaim open = claim;
        claim = null;
        try
        {
            final long base = open.commit();
            if (null != listener)
            {
                for (int i = 0, n = pending.size(); i < n; i++)
                {
                    listener.onAppended(pending.getLong(i), base + i);
                }
            }
            pending.clear();
        }
        catch (final StorageException ex)
        {
            failPending(ex);
        }
    }

    private void failPending(final StorageException ex)
    {
        if (null != claim)
        {
            claim.abort();
            claim = null;
        }
        if (null != listener)
        {
            for (int i = 0, n = pending.size(); i < n; i++)
            {
                listener.onFailed(pending.getLong(i), ex);
            }
        }
        pending.clear();
    }

    @Override
    public String roleName()
    {
        return "tidemark-ring-appender-" + log.directory().getFileName();
    }

    /** Sizes used to check a record fits a batch. */
    static final class HeaderSizes
    {
        private HeaderSizes()
        {
        }

        static int batchLength(final int keyLength, final int valueLength)
        {
            return RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.recordLength(keyLength, valueLength, 0);
        }
    }
}
