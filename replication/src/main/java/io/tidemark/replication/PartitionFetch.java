package io.tidemark.replication;

/**
 * The state machine of one partition in a {@link FollowerFetcher}. Every change of state goes through
 * {@link #transition}, which records why (the last reason is kept for diagnostics), except the steady-state
 * FETCH/AWAIT_FETCH loop, which must not allocate.
 * <pre>
 *   RECONCILE --send epoch request--> AWAIT_EPOCH --answer: truncated--> FETCH (or RECONCILE to ask again)
 *   FETCH --send fetch--> AWAIT_FETCH --records appended--> FETCH
 *   any AWAIT_* --no answer in time / refusal--> BACKOFF --delay over--> RECONCILE or FETCH
 *   a new leader epoch (restart) --> RECONCILE
 * </pre>
 * Owned by the fetcher; accessed under its lock.
 */
final class PartitionFetch
{
    /** States of the partition's fetch. */
    enum State
    {
        /** Ask the leader where our latest epoch ends, to truncate a divergent tail. */
        RECONCILE,
        /** Epoch request in flight. */
        AWAIT_EPOCH,
        /** Send the next fetch. */
        FETCH,
        /** Fetch in flight (possibly parked at the leader until data arrives). */
        AWAIT_FETCH,
        /** Waiting before retrying after an error. */
        BACKOFF
    }

    final Replica replica;
    int leaderEpoch;
    State state = State.RECONCILE;
    State afterBackoff = State.RECONCILE;
    long backoffUntilMs;
    long correlationId;
    long sentAtMs;
    long fetchOffset;
    String lastReason = "created";
    long lastTransitionMs;

    PartitionFetch(final Replica replica, final int leaderEpoch, final long nowMs)
    {
        this.replica = replica;
        this.leaderEpoch = leaderEpoch;
        this.lastTransitionMs = nowMs;
    }

    void restart(final int newLeaderEpoch, final long nowMs)
    {
        leaderEpoch = newLeaderEpoch;
        correlationId = 0;
        transition(State.RECONCILE, "new leader epoch " + newLeaderEpoch, nowMs);
    }

    void transition(final State next, final String reason, final long nowMs)
    {
        state = next;
        lastReason = reason;
        lastTransitionMs = nowMs;
    }

    void resumeIn(final State then, final long untilMs)
    {
        afterBackoff = then;
        backoffUntilMs = untilMs;
    }

    @Override
    public String toString()
    {
        return replica.topicPartition + "{" + state + ", epoch " + leaderEpoch + ", why: " + lastReason + "}";
    }
}
