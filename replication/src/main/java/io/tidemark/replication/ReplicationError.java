package io.tidemark.replication;

/**
 * Outcomes of produce and fetch requests, as codes carried in responses. Expected outcomes (not leader, not enough
 * replicas) are results the caller branches on, not exceptions.
 */
public enum ReplicationError
{
    /** Success. */
    NONE(false),
    /** This replica is not the partition's leader (or no longer is): retry on the current leader. Outcome of a
     * write that was waiting: unknown. */
    NOT_LEADER(true),
    /** The partition has no leader right now (no live in-sync replica, unclean election off). */
    LEADER_NOT_AVAILABLE(true),
    /** acks=all with |ISR| below min.insync.replicas, or acks=N with |ISR| below N: nothing was appended. */
    NOT_ENOUGH_REPLICAS(true),
    /** The ISR shrank below min.insync.replicas after the append: the record is in the leader's log and may still
     * commit; the outcome is unknown to the client. */
    NOT_ENOUGH_REPLICAS_AFTER_APPEND(true),
    /** The acknowledgement did not come within the request timeout: outcome unknown. */
    REQUEST_TIMED_OUT(true),
    /** The request's leader epoch is older than the replica's: the sender must refresh its metadata. */
    FENCED_LEADER_EPOCH(true),
    /** The request's leader epoch is newer than the replica knows yet: retry shortly. */
    UNKNOWN_LEADER_EPOCH(true),
    /** The fetch offset is outside the leader's log. */
    OFFSET_OUT_OF_RANGE(false),
    /** The requesting replica is not assigned to the partition. */
    NOT_ASSIGNED_REPLICA(false),
    /** The records are malformed or too large. */
    INVALID_RECORDS(false),
    /** The leader's log failed (disk full, offline). */
    STORAGE_ERROR(true),
    /** The producer's request queue to the leader is full: back-pressure, retry later. */
    BACK_PRESSURED(true),
    /** An idempotent batch whose sequence does not follow the producer's last one: an earlier batch is missing. */
    OUT_OF_ORDER_SEQUENCE(false),
    /** An idempotent producer with an older epoch than one the leader has seen: it was fenced by a newer
     * instance. */
    INVALID_PRODUCER_EPOCH(false);

    private final boolean retriable;

    ReplicationError(final boolean retriable)
    {
        this.retriable = retriable;
    }

    /** @return whether retrying the same request may succeed. */
    public boolean retriable()
    {
        return retriable;
    }

    private static final ReplicationError[] VALUES = values();

    static ReplicationError get(final int code)
    {
        return code >= 0 && code < VALUES.length ? VALUES[code] : STORAGE_ERROR;
    }
}
