package io.tidemark.replication;

import java.util.ArrayList;
import java.util.List;

/**
 * A {@link ControllerStore} that answers reads from its own copy of every partition's state, kept by the
 * implementation in {@link #states} (index = partition id) as it loads and writes.
 */
public abstract class CachedControllerStore implements ControllerStore
{
    /** Every partition's state as last read or written, by id. */
    protected final List<PartitionState> states = new ArrayList<>();

    @Override
    public PartitionState get(final int partitionId)
    {
        return partitionId >= 0 && partitionId < states.size() ? states.get(partitionId) : null;
    }

    @Override
    public List<PartitionState> all()
    {
        return List.copyOf(states);
    }

    @Override
    public int size()
    {
        return states.size();
    }
}
