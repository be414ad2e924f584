package io.tidemark.store;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * The log's one-writer rule, enforced: every writer call (an append from {@link Log#tryClaim} to the claim's commit
 * or abort, {@link Log#appendRaw}, a roll, a truncation) takes this guard with a compare-and-set before it reads or
 * writes any writer state, and releases it when done. A second thread arriving meanwhile gets an
 * {@link IllegalStateException} at once, before any byte is written: two threads appending without a lock in front
 * (documented misuse) are detected every time instead of being handed the same offset.
 * <p>
 * <b>Design note.</b> A CAS rather than binding the log to one thread: the writer may move between threads (a
 * {@link LockingAppender}, an agent rescheduled by the application) as long as one thread writes at a time, and
 * the CAS/release pair is also what makes such a hand-over safe (the next writer sees the previous one's state).
 * Uncontended, it costs one locked instruction per append on a cache line the writer already owns.
 * <p>
 * Thread-safe.
 */
final class WriterGuard
{
    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(WriterGuard.class, "state", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private static final int FREE = 0;
    private static final int HELD = 1;

    @SuppressWarnings("unused") // accessed through STATE
    private volatile int state;
    /**
     * The thread holding the guard: a plain field, written by the holder after its CAS. The holder reads its own
     * writes; other threads may read a stale value, which only ever goes into a message (a volatile write here would
     * cost a fence per append).
     */
    private Thread owner;

    /**
     * Take the guard for a writer call.
     *
     * @param claimOpen whether the log's claim is open (only for the message: a claim left open by this thread is
     *                  the common mistake).
     * @throws IllegalStateException when another writer call (or an open claim) holds it.
     */
    void acquire(final boolean claimOpen)
    {
        if (!STATE.compareAndSet(this, FREE, HELD))
        {
            throw busy(claimOpen);
        }
        owner = Thread.currentThread();
    }

    private IllegalStateException busy(final boolean claimOpen)
    {
        final Thread holder = owner;
        if (holder == Thread.currentThread() && claimOpen)
        {
            return new IllegalStateException("the previous claim is still open: commit or abort it first");
        }
        return new IllegalStateException("another writer call is in progress on this log" +
            (null == holder ? "" : " (thread " + holder.getName() + ")") + ": a log has one writer thread at a " +
            "time; to append from many threads put a LockingAppender or RingBufferAppender in front of it");
    }

    /** Release the guard; only its holder calls this, once per acquisition. */
    void release()
    {
        owner = null;
        STATE.setRelease(this, FREE);
    }

    /**
     * Take the guard for closing the log, waiting for a writer call in progress to end.
     *
     * @param timeoutMs how long to wait.
     * @return true when taken (release it), false when it is still held: by the calling thread (an open claim),
     *         or by another thread that did not finish in time.
     */
    boolean acquireForClose(final long timeoutMs)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!STATE.compareAndSet(this, FREE, HELD))
        {
            if (owner == Thread.currentThread() || System.nanoTime() - deadline >= 0)
            {
                return false;
            }
            Thread.onSpinWait();
            Thread.yield();
        }
        owner = Thread.currentThread();
        return true;
    }

    /** @return whether the calling thread holds the guard. */
    boolean heldByCurrentThread()
    {
        return owner == Thread.currentThread();
    }
}
