package io.tidemark.replication;

/**
 * Receives the outcome of produce requests of one producer session, on the leader host's agent thread: keep it
 * short and thread-safe (complete a future, hand off to a queue).
 */
@FunctionalInterface
public interface ProduceListener
{
    /**
     * @param partition     the partition written to.
     * @param correlationId the id given with the request.
     * @param baseOffset    offset of the first record when {@code error} is NONE; otherwise -1 (or, for
     *                      NOT_ENOUGH_REPLICAS_AFTER_APPEND and time-outs after the append, the offset at which the
     *                      records were appended, with an unknown outcome).
     * @param error         the outcome.
     */
    void onComplete(TopicPartition partition, long correlationId, long baseOffset, ReplicationError error);
}
