package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

import java.util.concurrent.locks.LockSupport;

/**
 * The callback behind a synchronous send: the sending thread waits on it, the agent completes it and unparks the
 * thread. One per sending thread, reused (a waiter abandoned by an interrupted send is replaced, never reused).
 * Thread-safe: written by the agent before the volatile {@code done}, read by the waiter after it.
 */
final class SyncWaiter implements SendCallback
{
    private Thread thread;
    private long offset;
    private ProducerException error;
    private volatile boolean done;

    SyncWaiter reset()
    {
        thread = Thread.currentThread();
        offset = -1;
        error = null;
        done = false;
        return this;
    }

    @Override
    public void onCompletion(final TopicPartition partition, final long offset, final ProducerException error)
    {
        this.offset = offset;
        this.error = error;
        done = true;
        LockSupport.unpark(thread);
    }

    boolean isDone()
    {
        return done;
    }

    long offset()
    {
        return offset;
    }

    ProducerException error()
    {
        return error;
    }
}
