package io.tidemark.store;

import org.agrona.DirectBuffer;

import java.util.concurrent.locks.ReentrantLock;

/**
 * Lets many threads append to one {@link Log} by taking a lock around each append. The caller gets the record's
 * offset synchronously. Simple and fair; under contention each append pays a lock hand-off, which the
 * {@link RingBufferAppender} avoids (the bench measures both).
 * <p>
 * Thread-safe. Nothing else may append to the log directly while this appender is in use.
 */
public final class LockingAppender
{
    private final Log log;
    private final ReentrantLock lock = new ReentrantLock();

    /**
     * @param log the log to append to.
     */
    public LockingAppender(final Log log)
    {
        this.log = log;
    }

    /**
     * Append one record.
     *
     * @return its offset.
     * @see Log#append(long, DirectBuffer, int, int, DirectBuffer, int, int)
     */
    public long append(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength)
    {
        lock.lock();
        try
        {
            return log.append(timestamp, key, keyOffset, keyLength, value, valueOffset, valueLength);
        }
        finally
        {
            lock.unlock();
        }
    }

    /**
     * Append one record without a key.
     *
     * @return its offset.
     */
    public long append(final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        return append(BatchClaim.NOW, null, 0, -1, value, valueOffset, valueLength);
    }
}
