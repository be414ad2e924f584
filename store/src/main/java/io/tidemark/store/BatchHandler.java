package io.tidemark.store;

/**
 * Receives whole record batches read from a log, e.g. to ship them as raw bytes to a follower. The
 * {@link RecordBatch} flyweight wraps the mapped segment and is valid only during the call.
 */
@FunctionalInterface
public interface BatchHandler
{
    /**
     * @param batch the batch; its bytes are {@code batch.buffer()} at {@code batch.offset()} for
     *              {@code batch.frameLength()} bytes. Valid only during this call.
     */
    void onBatch(RecordBatch batch);
}
