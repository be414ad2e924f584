package io.tidemark.replication;

import io.tidemark.replication.spi.ControllerStore;

/**
 * Hands out producer ids never handed out before by a controller over one store: ids are reserved durably in
 * blocks of {@value #BLOCK}, so a restart skips at most the rest of a block.
 * <p>
 * Owns the current block. Not thread-safe: {@link #next} runs under the {@link Controller}'s monitor, which also
 * serializes the store's other writers.
 */
final class ProducerIdBlock
{
    static final int BLOCK = 1000;

    private final ControllerStore store;
    private long nextProducerId = -1;
    private long producerIdLimit = -1;

    /** @param store where blocks are reserved. */
    ProducerIdBlock(final ControllerStore store)
    {
        this.store = store;
    }

    /** @return the next producer id, reserving a new block first when the current one is used up. */
    long next()
    {
        if (nextProducerId < 0 || nextProducerId >= producerIdLimit)
        {
            final long first = store.reserveProducerIds(BLOCK);
            nextProducerId = Math.max(nextProducerId, first);
            producerIdLimit = first + BLOCK;
        }
        return nextProducerId++;
    }
}
