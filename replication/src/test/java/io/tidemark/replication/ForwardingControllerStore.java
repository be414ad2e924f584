package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.ControllerStore;

import java.util.List;
import java.util.Map;

/**
 * A controller store that forwards every call to another: the base of the tests' fault-injecting stores, which
 * override only the writes they disturb.
 */
abstract class ForwardingControllerStore implements ControllerStore
{
    /** Where every call not overridden goes. */
    protected final ControllerStore delegate;

    ForwardingControllerStore(final ControllerStore delegate)
    {
        this.delegate = delegate;
    }

    @Override
    public PartitionState create(final PartitionState state)
    {
        return delegate.create(state);
    }

    @Override
    public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
    {
        return delegate.compareAndSet(expectedVersion, next);
    }

    @Override
    public PartitionState get(final int partitionId)
    {
        return delegate.get(partitionId);
    }

    @Override
    public List<PartitionState> all()
    {
        return delegate.all();
    }

    @Override
    public long controllerEpoch()
    {
        return delegate.controllerEpoch();
    }

    @Override
    public int size()
    {
        return delegate.size();
    }

    @Override
    public Map<Integer, String> damaged()
    {
        return delegate.damaged();
    }

    @Override
    public long reserveProducerIds(final int count)
    {
        return delegate.reserveProducerIds(count);
    }

    @Override
    public void close()
    {
        delegate.close();
    }
}
