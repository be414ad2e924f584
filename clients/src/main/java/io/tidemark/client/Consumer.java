package io.tidemark.client;

import io.tidemark.replication.ReplicaHost;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.ConfigException;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.RecordView;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * Reads the committed records of assigned partitions: each poll delivers records from the current positions up to
 * each partition's high watermark (never beyond), as zero-copy {@link RecordView}s over the leader's log, following
 * leadership changes. Positions come from the group's committed offsets ({@code group.id}), else
 * {@code auto.offset.reset}; they can be moved to an offset, the beginning, the end, or a timestamp (time index).
 * When nothing is new, {@link #poll(ConsumerRecordHandler, long)} waits with the configured idle strategy.
 * <p>
 * <b>Committed offsets</b> are stored durably, one checkpoint file per group and partition under
 * {@code offsets.dir} ({@link CommittedOffsetDescriptor}): {@link #commitSync()} returns once they are on disk; a
 * new consumer of the group resumes from them, across consumer restarts, leader changes and cluster restarts.
 * <p>
 * <b>Truncation</b> after an unclean election (a position above the new leader's log end, or past the point where
 * its log diverged from what was read, detected by leader epochs as in KIP-320) is never skipped silently: the
 * position is reset per {@code auto.offset.reset}, or, with {@code none}, poll throws
 * {@link OffsetOutOfRangeException}.
 * <p>
 * Not thread-safe: one consumer belongs to one thread (commit callbacks run on it too).
 */
public final class Consumer implements AutoCloseable
{
    private final ReplicationCluster cluster;
    private final ConsumerContext ctx;
    private final OffsetCommitter committer;
    private final OffsetStore store;
    private final IdleStrategy idleStrategy;
    private final boolean invokeCluster;
    private final Forwarder forwarder = new Forwarder();
    private final Map<TopicPartition, AssignedPartition> assigned = new LinkedHashMap<>();
    private AssignedPartition[] order = new AssignedPartition[0];
    private int next;
    private boolean closed;

    /** Hands each record to the user's handler with its partition (one reusable instance: no allocation). */
    private static final class Forwarder implements RecordHandler
    {
        TopicPartition partition;
        ConsumerRecordHandler handler;

        @Override
        public void onRecord(final RecordView record)
        {
            handler.onRecord(partition, record);
        }
    }

    /**
     * @param cluster the cluster whose topics it reads.
     * @param ctx     configuration, concluded here.
     * @throws ConfigException for an invalid configuration, naming the key.
     */
    public Consumer(final ReplicationCluster cluster, final ConsumerContext ctx)
    {
        this.cluster = cluster;
        this.ctx = ctx.conclude();
        this.idleStrategy = ctx.idleStrategySupplier().get();
        this.invokeCluster = cluster.context().threadingMode() == ReplicationContext.ThreadingMode.INVOKER;
        if (null == ctx.groupId())
        {
            this.store = null;
            this.committer = null;
        }
        else
        {
            this.store = new OffsetStore(null != ctx.offsetsDir() ? ctx.offsetsDir() : defaultOffsetsDir(cluster),
                ctx.groupId());
            this.committer = new OffsetCommitter(store);
        }
    }

    /**
     * @param cluster a cluster in this process.
     * @return {@code consumer-offsets} in the directory holding the cluster's host directories: where consumer groups
     *         keep their committed offsets unless {@code offsets.dir} says otherwise.
     */
    public static Path defaultOffsetsDir(final ReplicationCluster cluster)
    {
        for (int id = 0; id < cluster.hostCount(); id++)
        {
            final ReplicaHost host = cluster.host(id);
            if (null != host)
            {
                return host.directory().toAbsolutePath().getParent().resolve("consumer-offsets");
            }
        }
        throw new ConfigException(ConsumerContext.OFFSETS_DIR, "no default while no host of the cluster is running");
    }

    /** @return the configuration. */
    public ConsumerContext context()
    {
        return ctx;
    }

    /**
     * Read exactly these partitions from now on. A partition kept from the previous assignment keeps its position;
     * a new one starts from the group's committed offset, or per {@code auto.offset.reset}.
     */
    public void assign(final Collection<TopicPartition> partitions)
    {
        checkOpen();
        final Set<TopicPartition> wanted = new LinkedHashSet<>(partitions);
        assigned.entrySet().removeIf((e) ->
        {
            if (!wanted.contains(e.getKey()))
            {
                e.getValue().close();
                return true;
            }
            return false;
        });
        for (final TopicPartition tp : wanted)
        {
            if (null == cluster.state(tp))
            {
                throw new IllegalArgumentException("unknown partition " + tp);
            }
            assigned.computeIfAbsent(tp, (key) ->
                new AssignedPartition(cluster.openReader(key), key, store, ctx.autoOffsetReset()));
        }
        order = assigned.values().toArray(new AssignedPartition[0]);
        next = 0;
    }

    /** @return the assigned partitions. */
    public Set<TopicPartition> assignment()
    {
        return Collections.unmodifiableSet(assigned.keySet());
    }

    /**
     * Deliver up to {@code max.poll.records} committed records, without waiting, taking the partitions in turn.
     *
     * @return records delivered.
     * @throws OffsetOutOfRangeException when a position is unusable and {@code auto.offset.reset=none}.
     */
    public int poll(final ConsumerRecordHandler handler)
    {
        checkOpen();
        if (null != committer)
        {
            committer.runCallbacks();
        }
        final int max = ctx.maxPollRecords();
        int delivered = 0;
        forwarder.handler = handler;
        for (int i = 0; i < order.length && delivered < max; i++)
        {
            final AssignedPartition partition = order[next];
            next = (next + 1) % order.length;
            forwarder.partition = partition.tp;
            delivered += partition.poll(forwarder, max - delivered);
        }
        return delivered;
    }

    /**
     * Deliver committed records, waiting up to {@code timeoutMs} (wall-clock) for some, idling with the configured
     * strategy between attempts (in a cluster of {@code INVOKER} threading, invoking its agents instead).
     *
     * @return records delivered; 0 when the time ran out.
     */
    public int poll(final ConsumerRecordHandler handler, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + Math.min(Math.max(0, timeoutMs), Long.MAX_VALUE / 4_000_000L) *
            1_000_000L;
        idleStrategy.reset();
        while (true)
        {
            final int delivered = poll(handler);
            if (delivered > 0 || System.nanoTime() - deadline >= 0)
            {
                return delivered;
            }
            if (invokeCluster)
            {
                cluster.invokeAgents();
            }
            else
            {
                idleStrategy.idle();
            }
        }
    }

    private AssignedPartition partition(final TopicPartition tp)
    {
        checkOpen();
        final AssignedPartition partition = assigned.get(tp);
        if (null == partition)
        {
            throw new IllegalStateException(tp + " is not assigned");
        }
        return partition;
    }

    /** Move to an offset: the next poll reads from it (validated against the leader then). */
    public void seek(final TopicPartition tp, final long offset)
    {
        partition(tp).seek(offset);
    }

    /** Move to the log start offset (resolved lazily, at the next poll or {@link #position}, as Kafka does). */
    public void seekToBeginning(final Collection<TopicPartition> partitions)
    {
        partitions.forEach((tp) -> partition(tp).reset(AssignedPartition.Pending.EARLIEST));
    }

    /**
     * Move to the high watermark: only records committed from then on (resolved lazily, at the next poll or
     * {@link #position}, as Kafka does).
     */
    public void seekToEnd(final Collection<TopicPartition> partitions)
    {
        partitions.forEach((tp) -> partition(tp).reset(AssignedPartition.Pending.LATEST));
    }

    /**
     * Move to the first committed record whose timestamp is at or above {@code timestamp}, found by the leader's
     * time index; to the high watermark when none is that recent (resolved lazily, at the next poll or
     * {@link #position}).
     */
    public void seekToTimestamp(final TopicPartition tp, final long timestamp)
    {
        partition(tp).seekToTimestamp(timestamp);
    }

    /**
     * @return the next offset to read, resolving it if needed; -1 while it cannot be (no leader yet).
     * @throws OffsetOutOfRangeException without a committed offset and {@code auto.offset.reset=none}.
     */
    public long position(final TopicPartition tp)
    {
        return partition(tp).position();
    }

    /** @return the partition's high watermark (the end of what can be read), or -1 without a leader. */
    public long highWatermark(final TopicPartition tp)
    {
        return partition(tp).highWatermark();
    }

    /**
     * Store the current position of every assigned partition (that has one) as the group's committed offset;
     * returns once they are durable.
     *
     * @throws IllegalStateException without a {@code group.id}.
     */
    public void commitSync()
    {
        groupCommitter().commitSync(currentPositions(null));
        committer.runCallbacks();
    }

    /**
     * Store explicit offsets (the next offset to read, as positions are) as the group's committed offsets.
     *
     * @throws IllegalStateException without a {@code group.id}.
     */
    public void commitSync(final Map<TopicPartition, Long> offsets)
    {
        groupCommitter().commitSync(explicit(offsets));
        committer.runCallbacks();
    }

    /**
     * Store the current positions in the background; {@code callback} (may be null) runs on this thread at a later
     * poll, commit or close. Commits are stored in the order they are made.
     */
    public void commitAsync(final CommitCallback callback)
    {
        final Map<TopicPartition, Long> view = new HashMap<>();
        final Map<TopicPartition, OffsetStore.Committed> offsets = currentPositions(view);
        groupCommitter().commitAsync(offsets, Collections.unmodifiableMap(view), callback);
    }

    /** @return the group's committed offset of a partition (whichever consumer of the group stored it), or -1. */
    public long committed(final TopicPartition tp)
    {
        final OffsetStore.Committed committed = groupCommitter().committed(tp);
        return null == committed ? -1 : committed.offset();
    }

    private OffsetCommitter groupCommitter()
    {
        checkOpen();
        if (null == committer)
        {
            throw new IllegalStateException("committed offsets need a " + ConsumerContext.GROUP_ID);
        }
        return committer;
    }

    private Map<TopicPartition, OffsetStore.Committed> currentPositions(final Map<TopicPartition, Long> view)
    {
        final Map<TopicPartition, OffsetStore.Committed> offsets = new LinkedHashMap<>();
        for (final AssignedPartition partition : order)
        {
            if (partition.hasPosition())
            {
                final long position = partition.position();
                offsets.put(partition.tp, new OffsetStore.Committed(position, partition.lastEpoch()));
                if (null != view)
                {
                    view.put(partition.tp, position);
                }
            }
        }
        return offsets;
    }

    private Map<TopicPartition, OffsetStore.Committed> explicit(final Map<TopicPartition, Long> requested)
    {
        final Map<TopicPartition, OffsetStore.Committed> offsets = new LinkedHashMap<>();
        for (final Map.Entry<TopicPartition, Long> e : requested.entrySet())
        {
            final AssignedPartition partition = assigned.get(e.getKey());
            final long offset = e.getValue();
            final boolean atPosition = null != partition && partition.hasPosition() && partition.position() == offset;
            offsets.put(e.getKey(), new OffsetStore.Committed(offset, atPosition ? partition.lastEpoch() : -1));
        }
        return offsets;
    }

    private void checkOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("the consumer is closed");
        }
    }

    /** Finish pending async commits (their callbacks run here), close the readers. Does not commit. Idempotent. */
    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != committer)
        {
            committer.close();
        }
        for (final AssignedPartition partition : order)
        {
            partition.close();
        }
        assigned.clear();
        order = new AssignedPartition[0];
    }
}
