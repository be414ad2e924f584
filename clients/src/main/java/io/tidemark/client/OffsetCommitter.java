package io.tidemark.client;

import io.tidemark.replication.TopicPartition;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Writes a consumer's commits to its group's {@link OffsetStore}: synchronously on the consumer's thread, or, once
 * {@code commitAsync} has been used, on one background thread that every later commit goes through too, so commits
 * are stored in the order they were made. An offset equal to what this consumer last stored is not written again.
 * Async outcomes are queued and their callbacks run on the consumer's thread ({@link #runCallbacks()}).
 * <p>
 * Used by the consumer's thread; the background thread only writes files and queues outcomes.
 */
final class OffsetCommitter implements AutoCloseable
{
    private final OffsetStore store;
    private final Map<TopicPartition, OffsetStore.Committed> stored = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> outcomes = new ConcurrentLinkedQueue<>();
    private ExecutorService background;

    OffsetCommitter(final OffsetStore store)
    {
        this.store = store;
    }

    /**
     * Store offsets durably before returning.
     *
     * @throws StorageException IO_ERROR when a file cannot be written (earlier partitions may be stored).
     */
    void commitSync(final Map<TopicPartition, OffsetStore.Committed> offsets)
    {
        if (null == background)
        {
            write(offsets);
            return;
        }
        final Future<?> done = background.submit(() -> write(offsets));
        boolean interrupted = false;
        while (true)
        {
            try
            {
                done.get();
                break;
            }
            catch (final InterruptedException ex)
            {
                interrupted = true; // the write is under way: finish it so commit order holds
            }
            catch (final ExecutionException ex)
            {
                throw ex.getCause() instanceof RuntimeException runtime ? runtime :
                    new StorageException(StorageErrorCode.IO_ERROR, "commit failed", ex.getCause());
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }

    /** Store offsets on the background thread; the callback runs at a later {@link #runCallbacks()}. */
    void commitAsync(final Map<TopicPartition, OffsetStore.Committed> offsets, final Map<TopicPartition, Long> view,
        final CommitCallback callback)
    {
        if (null == background)
        {
            background = Executors.newSingleThreadExecutor((r) ->
            {
                final Thread thread = new Thread(r, "tidemark-consumer-commit");
                thread.setDaemon(true);
                return thread;
            });
        }
        background.execute(() ->
        {
            Exception error = null;
            try
            {
                write(offsets);
            }
            catch (final RuntimeException ex)
            {
                error = ex;
            }
            final Exception outcome = error;
            if (null != callback)
            {
                outcomes.add(() -> callback.onComplete(view, outcome));
            }
        });
    }

    private void write(final Map<TopicPartition, OffsetStore.Committed> offsets)
    {
        for (final Map.Entry<TopicPartition, OffsetStore.Committed> e : offsets.entrySet())
        {
            final OffsetStore.Committed committed = e.getValue();
            if (committed.equals(stored.get(e.getKey())))
            {
                continue;
            }
            try
            {
                store.write(e.getKey(), committed.offset(), committed.leaderEpoch());
            }
            catch (final IOException ex)
            {
                throw new StorageException(StorageErrorCode.IO_ERROR, "cannot store the committed offset of " +
                    e.getKey() + " in " + store.directory(), ex);
            }
            stored.put(e.getKey(), committed);
        }
    }

    /** @return the group's committed offset of {@code tp} as stored now (by any consumer of the group), or null. */
    OffsetStore.Committed committed(final TopicPartition tp)
    {
        try
        {
            return store.read(tp);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read the committed offset of " + tp, ex);
        }
    }

    /** Run the callbacks of finished async commits (consumer thread). */
    void runCallbacks()
    {
        for (Runnable outcome = outcomes.poll(); null != outcome; outcome = outcomes.poll())
        {
            outcome.run();
        }
    }

    /** Finish pending async commits, run their callbacks, stop the background thread. */
    @Override
    public void close()
    {
        if (null != background)
        {
            background.shutdown();
            try
            {
                while (!background.awaitTermination(1, TimeUnit.SECONDS))
                {
                    Thread.onSpinWait();
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        runCallbacks();
    }
}
