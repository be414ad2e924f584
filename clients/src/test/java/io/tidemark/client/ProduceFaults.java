package io.tidemark.client;

import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;

/**
 * Fault injection between the producer and the partition leaders, through a {@link FaultInjectingConnection}: drop a
 * request before it reaches the leader's queue, or drop the leader's answer. Either way the producer sees no answer
 * and, after its local request deadline, resends. Called on the producer's agent thread (requests) and the leader's agent thread (answers).
 */
interface ProduceFaults
{
    /** No faults. */
    ProduceFaults NONE = new ProduceFaults()
    {
    };

    /**
     * @param tp            the partition.
     * @param correlationId the attempt's correlation id (one per attempt, increasing).
     * @param attempt       1 for the first attempt of a batch, 2 for its first resend...
     * @param sequence      the batch's base sequence, or -1 without idempotence.
     * @return whether to drop the request (the producer believes it queued).
     */
    default boolean dropRequest(final TopicPartition tp, final long correlationId, final int attempt,
        final int sequence)
    {
        return false;
    }

    /**
     * @return whether to drop the leader's answer to the attempt {@code correlationId}.
     */
    default boolean dropResponse(final TopicPartition tp, final long correlationId, final ReplicationError error)
    {
        return false;
    }
}
