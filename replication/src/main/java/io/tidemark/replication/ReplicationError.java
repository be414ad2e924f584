package io.tidemark.replication;

/**
 * Outcomes of produce and fetch requests, as codes carried in responses. Expected outcomes (not leader, not enough
 * replicas) are results the caller branches on, not exceptions.
 * <p>
 * Each outcome has a fixed {@link #code() wire code}: the number fetch responses, gateway results and completion
 * queues carry. Codes are never reused or renumbered (hosts and clients of different builds talk to each other); a
 * new outcome takes the next free code, and the declaration order is free to change.
 */
public enum ReplicationError
{
    /** Success. */
    NONE(0, false),
    /** This replica is not the partition's leader (or no longer is): retry on the current leader. Outcome of a
     * write that was waiting: unknown. */
    NOT_LEADER(1, true),
    /** The partition has no leader right now (no live in-sync replica, unclean election off). */
    LEADER_NOT_AVAILABLE(2, true),
    /** acks=all with |ISR| below min.insync.replicas, or acks=N with |ISR| below N: nothing was appended. */
    NOT_ENOUGH_REPLICAS(3, true),
    /** The ISR shrank below min.insync.replicas after the append: the record is in the leader's log and may still
     * commit; the outcome is unknown to the client. */
    NOT_ENOUGH_REPLICAS_AFTER_APPEND(4, true),
    /** The acknowledgement did not come within the request timeout: outcome unknown. */
    REQUEST_TIMED_OUT(5, true),
    /** The request's leader epoch is older than the replica's: the sender must refresh its metadata. */
    FENCED_LEADER_EPOCH(6, true),
    /** The request's leader epoch is newer than the replica knows yet: retry shortly. */
    UNKNOWN_LEADER_EPOCH(7, true),
    /** The fetch offset is outside the leader's log. */
    OFFSET_OUT_OF_RANGE(8, false),
    /** The requesting replica is not assigned to the partition. */
    NOT_ASSIGNED_REPLICA(9, false),
    /** The records are malformed or too large. */
    INVALID_RECORDS(10, false),
    /** The leader's log failed (disk full, offline). */
    STORAGE_ERROR(11, true),
    /** The producer's request queue to the leader is full: back-pressure, retry later. */
    BACK_PRESSURED(12, true),
    /** An idempotent batch whose sequence does not follow the producer's last one: an earlier batch is missing. */
    OUT_OF_ORDER_SEQUENCE(13, false),
    /** An idempotent producer with an older epoch than one the leader has seen: it was fenced by a newer
     * instance. */
    INVALID_PRODUCER_EPOCH(14, false);

    private static final ReplicationError[] BY_CODE = byCode();

    private final int code;
    private final boolean retriable;

    ReplicationError(final int code, final boolean retriable)
    {
        this.code = code;
        this.retriable = retriable;
    }

    /** @return the outcome's wire code, fixed for good. */
    public int code()
    {
        return code;
    }

    /** @return whether retrying the same request may succeed. */
    public boolean retriable()
    {
        return retriable;
    }

    /**
     * @param code a wire code, as read from a response (untrusted).
     * @return the outcome with that code, or null when no outcome has it (a newer peer, or a damaged or forged
     *         message): the caller decides what an unknown outcome means for its request.
     */
    public static ReplicationError fromCode(final int code)
    {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /**
     * @param code a wire code, as read from a response (untrusted).
     * @return the outcome with that code, or {@link #STORAGE_ERROR} when no outcome has it: the request failed in a
     *         way this build cannot name, so it is retried like a failed log.
     */
    public static ReplicationError fromCodeOrStorageError(final int code)
    {
        final ReplicationError error = fromCode(code);
        return null == error ? STORAGE_ERROR : error;
    }

    private static ReplicationError[] byCode()
    {
        int max = 0;
        for (final ReplicationError e : values())
        {
            max = Math.max(max, e.code);
        }
        final ReplicationError[] table = new ReplicationError[max + 1];
        for (final ReplicationError e : values())
        {
            if (null != table[e.code])
            {
                throw new IllegalStateException("wire code " + e.code + " given twice: " + table[e.code] + ", " + e);
            }
            table[e.code] = e;
        }
        return table;
    }
}
