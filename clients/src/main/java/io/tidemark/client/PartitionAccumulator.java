package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

import java.util.ArrayDeque;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The records of one partition (one lane: acked sends, or one-way sends) that the agent has not taken yet: the open
 * batch that sending threads append to, and the closed batches ready to go. A batch is closed when full; the agent
 * takes the open one when {@code linger.ms} has passed, a flush is in progress, or a synchronous sender waits on it.
 * <p>
 * Thread-safe: one lock, held for an append (an encode into the batch) or a hand-over; the agent checks two
 * volatile fields before taking the lock, so an idle partition costs it no lock.
 */
final class PartitionAccumulator
{
    final TopicPartition topicPartition;
    final int partitionId;
    final boolean oneWay;
    private final RecordAccumulator owner;
    private final ReentrantLock lock = new ReentrantLock();
    private final ArrayDeque<ProducerBatch> ready = new ArrayDeque<>();
    private ProducerBatch open;
    private volatile long openSinceMs = Long.MAX_VALUE;
    private volatile boolean openSendNow;
    private volatile int readyCount;
    /** Owned by the agent thread. */
    PartitionSender sender;

    PartitionAccumulator(final RecordAccumulator owner, final TopicPartition tp, final int partitionId,
        final boolean oneWay)
    {
        this.owner = owner;
        this.topicPartition = tp;
        this.partitionId = partitionId;
        this.oneWay = oneWay;
    }

    /**
     * Append a record (sending thread): to the open batch, or to a new one from the pool (which may block).
     *
     * @return whether a new batch had to be started (the sticky partitioner moves on).
     * @throws ProducerException CLOSED, BUFFER_EXHAUSTED, INTERRUPTED.
     */
    boolean append(final ProducerRecord record, final int encodedLength, final SendCallback callback,
        final boolean sendNow, final long nowMs, final Runnable blockingStep)
    {
        lock.lock();
        try
        {
            if (tryAppend(record, encodedLength, callback, sendNow))
            {
                return false;
            }
        }
        finally
        {
            lock.unlock();
        }
        final ProducerBatch batch = owner.pool().allocate(encodedLength, owner.maxBlockMs(), blockingStep);
        lock.lock();
        try
        {
            if (tryAppend(record, encodedLength, callback, sendNow))
            {
                owner.pool().release(batch); // another thread opened a batch meanwhile
                return false;
            }
            batch.serial = owner.nextSerial();
            batch.createdMs = nowMs;
            open = batch;
            openSinceMs = nowMs;
            if (!batch.tryAppend(record, encodedLength, callback))
            {
                throw new IllegalStateException("a new batch of " + batch.capacity() + " bytes cannot hold a record of " +
                    encodedLength);
            }
            markOpen(sendNow);
            return true;
        }
        catch (final RuntimeException ex)
        {
            if (open != batch)
            {
                owner.pool().release(batch);
            }
            throw ex;
        }
        finally
        {
            lock.unlock();
        }
    }

    private boolean tryAppend(final ProducerRecord record, final int encodedLength, final SendCallback callback,
        final boolean sendNow)
    {
        if (owner.isClosed())
        {
            throw ProducerException.of(ProducerErrorCode.CLOSED, "the producer is closed");
        }
        final ProducerBatch batch = open;
        if (null == batch)
        {
            return false;
        }
        if (batch.tryAppend(record, encodedLength, callback))
        {
            markOpen(sendNow);
            return true;
        }
        closeOpen();
        return false;
    }

    private void markOpen(final boolean sendNow)
    {
        final ProducerBatch batch = open;
        if (sendNow)
        {
            batch.sendNow = true;
            openSendNow = true;
        }
        if (batch.isFull())
        {
            closeOpen();
        }
    }

    private void closeOpen()
    {
        ready.add(open);
        open = null;
        openSinceMs = Long.MAX_VALUE;
        openSendNow = false;
        readyCount = ready.size();
    }

    /**
     * Hand batches to the agent (agent thread): every closed one, and the open one when it is due and the lane can
     * send it now. While the lane's requests in flight are at their limit the open batch stays open and keeps
     * filling, whatever {@code linger.ms} says (as Kafka's accumulator does): with {@code linger.ms=0} a lone record
     * goes at once, and under load records batch up behind the requests in flight instead of queueing as batches of
     * one.
     *
     * @param room whether the lane would send the open batch now (nothing queued, a request slot free).
     * @return batches handed over.
     */
    int drainTo(final ArrayDeque<ProducerBatch> destination, final long nowMs, final long lingerMs,
        final boolean flushing, final boolean room)
    {
        final long since = openSinceMs;
        final boolean openDue = room && since != Long.MAX_VALUE &&
            (flushing || openSendNow || nowMs - since >= lingerMs);
        if (readyCount == 0 && !openDue)
        {
            return 0;
        }
        lock.lock();
        try
        {
            if (room && null != open && (flushing || open.sendNow || nowMs - open.createdMs >= lingerMs))
            {
                closeOpen();
            }
            final int count = ready.size();
            for (ProducerBatch batch = ready.poll(); null != batch; batch = ready.poll())
            {
                destination.add(batch);
            }
            readyCount = 0;
            return count;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** @return the smallest serial of a batch not yet handed to the agent, or Long.MAX_VALUE (takes the lock). */
    long minSerial()
    {
        lock.lock();
        try
        {
            final ProducerBatch first = ready.peek();
            if (null != first)
            {
                return first.serial;
            }
            return null == open ? Long.MAX_VALUE : open.serial;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Wait for an append in progress to finish (close: afterwards no append can start). */
    void barrier()
    {
        lock.lock();
        lock.unlock();
    }

    /**
     * Take every batch (closing, agent stopped).
     */
    void takeAll(final ArrayDeque<ProducerBatch> destination)
    {
        lock.lock();
        try
        {
            if (null != open)
            {
                closeOpen();
            }
            for (ProducerBatch batch = ready.poll(); null != batch; batch = ready.poll())
            {
                destination.add(batch);
            }
            readyCount = 0;
        }
        finally
        {
            lock.unlock();
        }
    }
}
