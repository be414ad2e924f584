package io.tidemark.client;

import org.agrona.concurrent.EpochClock;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The producer's memory: {@code buffer.memory} bytes for batches not yet acknowledged. Batches of
 * {@code batch.size} bytes are pooled and reused; a larger record gets a batch of its exact size, allocated and
 * dropped. When memory is short a sender waits (back-pressure) up to {@code max.block.ms}, then gets
 * {@link ProducerErrorCode#BUFFER_EXHAUSTED}.
 * <p>
 * Thread-safe: one lock; the agent thread releases batches, sending threads allocate them.
 */
final class BufferPool
{
    private final long totalMemory;
    private final int batchSize;
    private final EpochClock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition memoryFreed = lock.newCondition();
    private final ArrayDeque<ProducerBatch> free = new ArrayDeque<>();
    private long available;
    private boolean closed;

    BufferPool(final long totalMemory, final int batchSize, final EpochClock clock)
    {
        this.totalMemory = totalMemory;
        this.batchSize = batchSize;
        this.clock = clock;
        this.available = totalMemory;
    }

    /** @return bytes not handed out (free pooled batches included). */
    long availableMemory()
    {
        lock.lock();
        try
        {
            return available;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** @return the whole budget. */
    long totalMemory()
    {
        return totalMemory;
    }

    /**
     * Get an empty batch able to hold {@code size} bytes.
     *
     * @param size        encoded bytes of the record that needs it.
     * @param maxBlockMs  longest wait for memory.
     * @param invokerStep INVOKER mode: run while waiting (the caller drives the agent that frees memory); null to
     *                    wait on the lock's condition; {@link #NO_WAIT} to fail at once.
     * @throws ProducerException BUFFER_EXHAUSTED, CLOSED, INTERRUPTED.
     */
    ProducerBatch allocate(final int size, final long maxBlockMs, final Runnable invokerStep)
    {
        final int capacity = Math.max(size, batchSize);
        final long deadline = clock.time() + maxBlockMs;
        while (true)
        {
            lock.lock();
            try
            {
                final ProducerBatch batch = tryAllocate(capacity);
                if (null != batch)
                {
                    return batch;
                }
                final long remaining = deadline - clock.time();
                if (remaining <= 0 || NO_WAIT == invokerStep)
                {
                    throw ProducerException.of(ProducerErrorCode.BUFFER_EXHAUSTED, "no " + capacity +
                        " bytes of buffer.memory=" + totalMemory + " freed within max.block.ms=" + maxBlockMs);
                }
                if (null == invokerStep)
                {
                    memoryFreed.await(Math.min(remaining, 10), TimeUnit.MILLISECONDS);
                    continue;
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw ProducerException.of(ProducerErrorCode.INTERRUPTED, "interrupted waiting for buffer memory");
            }
            finally
            {
                lock.unlock();
            }
            invokerStep.run();
        }
    }

    /** Marker for {@link #allocate}: never wait (the agent thread itself must not block on memory). */
    static final Runnable NO_WAIT = () -> { };

    private ProducerBatch tryAllocate(final int capacity)
    {
        if (closed)
        {
            throw ProducerException.of(ProducerErrorCode.CLOSED, "the producer is closed");
        }
        if (capacity == batchSize && !free.isEmpty())
        {
            available -= batchSize;
            return free.poll();
        }
        long unpooled = available - (long)free.size() * batchSize;
        while (unpooled < capacity && !free.isEmpty())
        {
            free.poll(); // give a pooled buffer back to the heap to make room for a different size
            unpooled += batchSize;
        }
        if (unpooled < capacity)
        {
            return null;
        }
        available -= capacity;
        return new ProducerBatch(capacity, capacity == batchSize);
    }

    /** Return a completed batch's memory. */
    void release(final ProducerBatch batch)
    {
        batch.reset();
        lock.lock();
        try
        {
            available += batch.capacity();
            if (batch.pooled && !closed)
            {
                free.add(batch);
            }
            memoryFreed.signalAll();
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Fail every waiting and future allocation with CLOSED. */
    void close()
    {
        lock.lock();
        try
        {
            closed = true;
            free.clear();
            memoryFreed.signalAll();
        }
        finally
        {
            lock.unlock();
        }
    }
}
