package io.tidemark.replication.spi;

import io.tidemark.replication.protocol.PartitionState;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link ControllerStore} that answers reads from its own copy of every partition's state, kept by the
 * implementation in {@link #states} (index = partition id; null for a damaged one, named in {@link #damaged}) as it
 * loads and writes.
 */
public abstract class CachedControllerStore implements ControllerStore
{
    /** Every partition's state as last read or written, by id; null where the stored state is damaged. */
    protected final List<PartitionState> states = new ArrayList<>();
    /** Damaged partitions, by id, with why. */
    protected final java.util.Map<Integer, String> damaged = new java.util.TreeMap<>();

    @Override
    public PartitionState get(final int partitionId)
    {
        return partitionId >= 0 && partitionId < states.size() ? states.get(partitionId) : null;
    }

    @Override
    public List<PartitionState> all()
    {
        final List<PartitionState> all = new ArrayList<>(states.size());
        for (final PartitionState state : states)
        {
            if (null != state)
            {
                all.add(state);
            }
        }
        return java.util.Collections.unmodifiableList(all);
    }

    @Override
    public java.util.Map<Integer, String> damaged()
    {
        return java.util.Map.copyOf(damaged);
    }

    @Override
    public int size()
    {
        return states.size();
    }
}
