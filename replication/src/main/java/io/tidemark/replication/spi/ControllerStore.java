package io.tidemark.replication.spi;

import io.tidemark.replication.protocol.PartitionState;

import java.util.List;

/**
 * Where a controller keeps what must survive it: every partition's state (AR, ISR, eligible and recovering
 * replicas, leader, leader epoch, version), changed only by compare-and-set on the version, and the producer ids
 * handed out. A controller that takes over (failover) opens the same store and continues from what the last one
 * committed. {@link FileControllerStore} keeps it in a directory (controllers of one JVM); a ZooKeeper store
 * (module {@code zookeeper}) keeps it in znodes for controllers on several machines.
 * <p>
 * Not thread-safe: the controller serializes access. Failures to reach the storage are unchecked exceptions; the
 * controller does not apply a change its store did not confirm.
 */
public interface ControllerStore extends AutoCloseable
{
    /**
     * Store a new partition at version 0.
     *
     * @param state its state; partition ids are dense, so its id is {@link #size()}.
     * @return the stored state.
     * @throws IllegalStateException when the id is not the next one, or another controller created it first.
     */
    PartitionState create(PartitionState state);

    /**
     * Replace a partition's state if its stored version is {@code expectedVersion}; {@code next} carries
     * {@code expectedVersion + 1}.
     *
     * @return the stored state, or null when the version did not match (nothing written).
     */
    PartitionState compareAndSet(int expectedVersion, PartitionState next);

    /**
     * Replace several partitions' states, each if its stored version is one less than the version it carries (as
     * {@link #compareAndSet} does; one entry per partition). A store may write them in atomic steps (the ZooKeeper
     * store: one transaction, one round trip and one disk sync, per up to 256 partitions): within a step either every
     * entry is stored, or none is and a version that did not match is read again. This default writes them one by
     * one.
     *
     * @param nexts the new states, at most one per partition.
     * @return for each entry, in order: the stored state, or null when it was not written.
     */
    default List<PartitionState> compareAndSetAll(final List<PartitionState> nexts)
    {
        final List<PartitionState> stored = new java.util.ArrayList<>(nexts.size());
        for (final PartitionState next : nexts)
        {
            stored.add(compareAndSet(next.version() - 1, next));
        }
        return stored;
    }

    /** @return the partition's state as last read or written by this store, or null when there is no such id (or its
     *         state is damaged). */
    PartitionState get(int partitionId);

    /** @return every partition's state that could be read, by ascending id. */
    List<PartitionState> all();

    /**
     * @return the controller epoch this store claimed when it opened (every controller taking over bumps it; writes
     *         of a store opened under an older one are fenced), or 0 for a store of one process, which has no rival.
     */
    default long controllerEpoch()
    {
        return 0;
    }

    /** @return the number of partitions: every id in {@code [0, size())} exists, damaged ones included. */
    int size();

    /**
     * @return the partitions whose stored state could not be read (malformed, inconsistent with its storage, naming
     *         hosts the cluster cannot have, or missing), by id, with why: they are quarantined, absent from
     *         {@link #get} and {@link #all}, and the controller serves the rest.
     */
    default java.util.Map<Integer, String> damaged()
    {
        return java.util.Map.of();
    }

    /**
     * Reserve {@code count} producer ids durably: no store over the same storage returns them again.
     *
     * @return the first id of the block.
     */
    long reserveProducerIds(int count);

    /** Release the store's resources (the storage keeps its content). */
    @Override
    void close();
}
