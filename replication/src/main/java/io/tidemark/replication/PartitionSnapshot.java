package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.ControllerStore;

import java.util.List;

/**
 * The controller's metadata for clients and hosts: an immutable copy of every partition's stored state, replaced
 * after each change ({@link #publish}) and read lock-free from any thread.
 * <p>
 * Owns the two published arrays (volatile, replaced, never changed in place). {@link #publish} runs under the
 * {@link Controller}'s monitor, which serializes the writers; the readers take no lock.
 */
final class PartitionSnapshot
{
    private final ControllerStore store;
    private volatile PartitionState[] snapshot;
    private volatile PartitionState[] snapshotById;

    /** @param store whose content is published; published once now. */
    PartitionSnapshot(final ControllerStore store)
    {
        this.store = store;
        publish();
    }

    /** Publish the store's current content. */
    void publish()
    {
        final List<PartitionState> all = store.all();
        final PartitionState[] byId = new PartitionState[store.size()];
        for (final PartitionState state : all)
        {
            byId[state.partitionId()] = state;
        }
        snapshot = all.toArray(new PartitionState[0]);
        snapshotById = byId;
    }

    /** @return every published partition by ascending partition id (not to be changed). */
    PartitionState[] partitions()
    {
        return snapshot;
    }

    /** @return the published state of a partition, or null. */
    PartitionState partition(final int partitionId)
    {
        final PartitionState[] current = snapshotById;
        return partitionId >= 0 && partitionId < current.length ? current[partitionId] : null;
    }

    /** @return the digest of the published states of the partitions {@code hostId} replicates (what it should hold). */
    long digestOf(final int hostId)
    {
        long digest = 0;
        for (final PartitionState state : snapshot)
        {
            if (state.assigned(hostId))
            {
                digest += state.digest();
            }
        }
        return digest;
    }
}
