package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import org.agrona.ErrorHandler;
import org.agrona.collections.Int2ObjectHashMap;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Opens a host's new replicas on a thread of its own, for a host whose agent thread also serves the network (a host
 * process runs its media driver and gateway on that thread): opening a replica creates and forces its files (the
 * log's metadata, segment, index and checkpoints, five forces of a file or a directory), tens of milliseconds each on
 * a busy disk, so that a new topic of 16 partitions would hold the thread for a second or more. Meanwhile that host
 * would not heartbeat, would not hear or announce the controller, and would not answer fetches: a fault seen by the
 * cluster where there is none.
 * <p>
 * The agent thread asks for a replica ({@link #open}) and goes on; states for it that arrive meanwhile are kept (the
 * newest, {@link #newer}); each duty cycle it takes the replicas opened ({@link #collect}) and applies the newest
 * state to each. Until then the host does not know the partition, exactly as before its first state arrived
 * (produce and fetch requests for it are refused as for a partition it does not hold, and retried). Opens run one at a
 * time, in the order asked.
 * <p>
 * Thread-safety: {@link #open}, {@link #newer}, {@link #isOpening} and {@link #collect} on the agent thread only;
 * {@link #close} once the agents have stopped.
 */
final class ReplicaOpener
{
    /** How long a closing host waits for an open under way (a recovery of a large log may take that long). */
    private static final long CLOSE_WAIT_SECONDS = 60;

    /** An open done: its replica, or why it failed. */
    private record Outcome(int partitionId, Replica replica, Throwable failure)
    {
    }

    /** The agent thread's side of a finished open. */
    interface Handler
    {
        /**
         * @param replica the replica opened.
         * @param latest  the newest state the host received for it while it was opening.
         */
        void opened(Replica replica, PartitionState latest);

        /**
         * @param state   the newest state of the partition whose replica could not be opened.
         * @param failure why (a {@code StorageException} for the disk, or any other exception or error).
         */
        void failed(PartitionState state, Throwable failure);
    }

    private final ExecutorService executor;
    private final ErrorHandler errorHandler;
    private final ConcurrentLinkedQueue<Outcome> done = new ConcurrentLinkedQueue<>();
    private final Int2ObjectHashMap<PartitionState> opening = new Int2ObjectHashMap<>();
    private final Runnable wakeUp;
    private volatile boolean closing;

    /**
     * @param hostId       the host, in the thread's name.
     * @param errorHandler where a failure to hand back goes.
     * @param wakeUp       rung after each open is done, so that the agent thread collects it without waiting out
     *                     its idle wait; from the opener's thread.
     */
    ReplicaOpener(final int hostId, final ErrorHandler errorHandler, final Runnable wakeUp)
    {
        this.errorHandler = errorHandler;
        this.wakeUp = wakeUp;
        this.executor = Executors.newSingleThreadExecutor((task) ->
        {
            final Thread thread = new Thread(task, "tidemark-replica-opener-" + hostId);
            thread.setDaemon(true);
            return thread;
        });
    }

    /** @return whether a replica of {@code partitionId} is being opened. */
    boolean isOpening(final int partitionId)
    {
        return opening.containsKey(partitionId);
    }

    /**
     * Open a replica on the opener's thread.
     *
     * @param state the state that asked for it.
     * @param open  opens it (recovering its log, creating its files); runs on the opener's thread.
     */
    void open(final PartitionState state, final Supplier<Replica> open)
    {
        final int partitionId = state.partitionId();
        opening.put(partitionId, state);
        executor.execute(() ->
        {
            if (closing)
            {
                return; // the host stops: opens not started are dropped
            }
            try
            {
                done.add(new Outcome(partitionId, open.get(), null));
            }
            catch (final Throwable ex) // handed to the agent thread, which reports it or stops the host
            {
                done.add(new Outcome(partitionId, null, ex));
            }
            wakeUp.run();
        });
    }

    /** A state for a replica being opened: kept when newer than the one kept (applied once the replica is open). */
    void newer(final PartitionState state)
    {
        final PartitionState kept = opening.get(state.partitionId());
        if (null != kept && (state.leaderEpoch() > kept.leaderEpoch() ||
            (state.leaderEpoch() == kept.leaderEpoch() && state.version() > kept.version())))
        {
            opening.put(state.partitionId(), state);
        }
    }

    /**
     * Hand the opens done to the agent thread.
     *
     * @return how many.
     */
    int collect(final Handler handler)
    {
        int collected = 0;
        for (Outcome outcome = done.poll(); null != outcome; outcome = done.poll())
        {
            collected++;
            final PartitionState latest = opening.remove(outcome.partitionId());
            if (null == outcome.failure())
            {
                handler.opened(outcome.replica(), latest);
            }
            else
            {
                handler.failed(latest, outcome.failure());
            }
        }
        return collected;
    }

    /**
     * Stop: wait for the open under way, drop the ones not started, and close (or, for a kill, halt) the replicas
     * opened and not collected.
     *
     * @param halt leave the files as a killed process would.
     */
    void close(final boolean halt)
    {
        closing = true;
        executor.shutdown(); // not shutdownNow: an interrupt would close the channels of the open under way
        try
        {
            executor.awaitTermination(CLOSE_WAIT_SECONDS, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        for (Outcome outcome = done.poll(); null != outcome; outcome = done.poll())
        {
            if (null == outcome.replica())
            {
                continue;
            }
            try
            {
                if (halt)
                {
                    outcome.replica().halt();
                }
                else
                {
                    outcome.replica().close();
                }
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
            }
        }
        opening.clear();
    }
}
