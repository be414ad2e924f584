package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

/**
 * Receives the outcome of one asynchronous send, on the producer's agent thread (or on the thread closing the
 * producer): keep it short, and never block in it on the producer (a synchronous send or {@code flush()} from a
 * callback is refused).
 */
@FunctionalInterface
public interface SendCallback
{
    /**
     * @param partition the partition the record went to.
     * @param offset    the record's offset; -1 for acks=0 (never answered) and on error.
     * @param error     null on success.
     */
    void onCompletion(TopicPartition partition, long offset, ProducerException error);
}
