package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;

import java.util.Arrays;

/**
 * A leader's replication state for one partition and one leader epoch: the followers' positions, the ISR as
 * committed by the controller plus the change in flight, the high watermark rule, and the produce requests
 * waiting for acknowledgement.
 * <p>
 * <b>High watermark.</b> {@code HW = min(LEO)} over the ISR, leader included, advanced monotonically. While an
 * expansion is in flight the new member already counts; while a shrink is in flight the old, larger ISR still
 * counts (the "maximal ISR"). The HW does not advance while the committed ISR is smaller than
 * {@code min.insync.replicas}.
 * <p>
 * Owned by the leader host's agent thread; {@link #highWatermark()} and {@link #isrSize()} are safe to read from
 * any thread.
 */
final class LeaderState
{
    final int epoch;
    final long epochStartOffset;
    final PendingAcks pendingAcks = new PendingAcks();
    private final int selfId;
    private final Log log;
    private final HighWatermark highWatermark;
    private final FollowerState[] followers;
    private final int minInsyncReplicas;
    private volatile int[] isr;
    private int isrVersion;
    private int[] pendingIsr;
    private int pendingBaseVersion;
    private long pendingSinceMs;
    long nextIsrCheckMs;

    LeaderState(final PartitionState state, final int selfId, final Log log, final HighWatermark highWatermark,
        final long epochStartOffset, final int minInsyncReplicas, final long nowMs)
    {
        this.epoch = state.leaderEpoch();
        this.epochStartOffset = epochStartOffset;
        this.selfId = selfId;
        this.log = log;
        this.highWatermark = highWatermark;
        this.minInsyncReplicas = minInsyncReplicas;
        this.isr = state.isr();
        this.isrVersion = state.version();
        this.followers = Arrays.stream(state.assignedReplicas()).filter((h) -> h != selfId)
            .mapToObj((h) -> new FollowerState(h, nowMs)).toArray(FollowerState[]::new);
    }

    FollowerState follower(final int hostId)
    {
        for (final FollowerState follower : followers)
        {
            if (follower.hostId == hostId)
            {
                return follower;
            }
        }
        return null;
    }

    FollowerState[] followers()
    {
        return followers;
    }

    /** @return the committed ISR's size (any thread). */
    int isrSize()
    {
        return isr.length;
    }

    int[] isr()
    {
        return isr;
    }

    int isrVersion()
    {
        return isrVersion;
    }

    boolean changePending()
    {
        return null != pendingIsr;
    }

    /** @return the high watermark (any thread). */
    long highWatermark()
    {
        return highWatermark.get();
    }

    private boolean inMaximalIsr(final int host)
    {
        return PartitionState.contains(isr, host) || (null != pendingIsr && PartitionState.contains(pendingIsr, host));
    }

    /**
     * Recompute the high watermark after a follower's position, the ISR or the leader's log changed.
     *
     * @return whether it advanced.
     */
    boolean maybeAdvanceHighWatermark()
    {
        if (isr.length < minInsyncReplicas)
        {
            return false;
        }
        long min = log.logEndOffset();
        for (final FollowerState follower : followers)
        {
            if (inMaximalIsr(follower.hostId))
            {
                final long leo = follower.logEndOffset;
                if (leo < 0)
                {
                    return false; // position not known yet in this epoch
                }
                min = Math.min(min, leo);
            }
        }
        return highWatermark.advanceTo(min);
    }

    /** @return ISR members (committed ISR, leader included) whose log end is at or past {@code offset}. */
    int isrMembersHolding(final long offset)
    {
        final int[] members = isr;
        int count = 0;
        for (final int host : members)
        {
            if (host == selfId)
            {
                count += log.logEndOffset() >= offset ? 1 : 0;
            }
            else
            {
                final FollowerState follower = follower(host);
                count += null != follower && follower.logEndOffset >= offset ? 1 : 0;
            }
        }
        return count;
    }

    /**
     * @param nowMs          the time.
     * @param lagMaxMs       {@code replica.lag.time.max.ms}.
     * @param lagMaxMessages {@code replica.lag.max.messages}, or 0 when that rule is off.
     * @return the ISR without the followers that are behind the leader's log end and have not been caught up for
     *         longer than {@code lagMaxMs}, and (with {@code lagMaxMessages > 0}) those whose log end, as the leader
     *         knows it from their last fetch in this epoch, is more than {@code lagMaxMessages} records behind the
     *         leader's; null when none is.
     */
    int[] shrinkCandidate(final long nowMs, final long lagMaxMs, final long lagMaxMessages)
    {
        if (null != pendingIsr)
        {
            return null;
        }
        final long leaderEnd = log.logEndOffset();
        int[] next = null;
        for (final FollowerState follower : followers)
        {
            final long followerEnd = follower.logEndOffset;
            if (PartitionState.contains(isr, follower.hostId) && followerEnd < leaderEnd &&
                (nowMs - follower.lastCaughtUpTimeMs > lagMaxMs ||
                (lagMaxMessages > 0 && followerEnd >= 0 && leaderEnd - followerEnd > lagMaxMessages)))
            {
                next = without(null == next ? isr : next, follower.hostId);
            }
        }
        return next;
    }

    /**
     * A follower may join the ISR once it holds the high watermark and the start of this leader's epoch (from its
     * current incarnation), and only if the time rule of {@link #shrinkCandidate} would not take it out again at once:
     * it is at the leader's log end, or was caught up within {@code lagMaxMs}. Without that second condition a
     * follower far behind joined as soon as it passed a high watermark that had stopped (the ISR below
     * {@code min.insync.replicas} holds the high watermark where it was), left at the next ISR check (it had not been
     * caught up for longer than the lag time), joined again at its next fetch, and so on every 100-200 ms: each
     * spell in the ISR let acks=all writes in and moved the log end it had to reach, so a follower that copied more
     * slowly than those spells' writes never caught up (session 6: after an acks=1 burst, acks=all gave 0 records/s).
     * Kafka's rule is the same in effect: its high watermark follows the leader's log end while the ISR is the
     * leader alone, so a follower that reaches it is caught up.
     *
     * @param follower the follower, after {@link FollowerState#onFetch} of its latest fetch.
     * @param nowMs    the time.
     * @param lagMaxMs {@code replica.lag.time.max.ms}.
     * @return the ISR plus {@code follower} when it may join; null otherwise.
     */
    int[] expandCandidate(final FollowerState follower, final long nowMs, final long lagMaxMs)
    {
        if (null != pendingIsr || PartitionState.contains(isr, follower.hostId))
        {
            return null;
        }
        final long leo = follower.logEndOffset;
        if (leo < 0 || leo < highWatermark.get() || leo < epochStartOffset)
        {
            return null;
        }
        if (leo < log.logEndOffset() && nowMs - follower.lastCaughtUpTimeMs > lagMaxMs)
        {
            return null; // would leave again at the next check: joins once caught up
        }
        final int[] next = Arrays.copyOf(isr, isr.length + 1);
        next[isr.length] = follower.hostId;
        return next;
    }

    void requestChange(final int[] next, final long nowMs)
    {
        pendingIsr = next;
        pendingBaseVersion = isrVersion;
        pendingSinceMs = nowMs;
    }

    /**
     * @return the change in flight when its answer is overdue, to be sent again (the controller may have applied
     *         it and lost the answer, or never received it); null otherwise. A pending change is never dropped
     *         without an answer: had the controller committed an expansion, the new member must keep counting for
     *         the high watermark.
     */
    int[] overdueChange(final long nowMs, final long timeoutMs)
    {
        if (null != pendingIsr && nowMs - pendingSinceMs > timeoutMs)
        {
            pendingSinceMs = nowMs;
            return pendingIsr;
        }
        return null;
    }

    int pendingBaseVersion()
    {
        return pendingBaseVersion;
    }

    /**
     * Apply a state from the controller for this epoch: a newer version replaces the ISR and ends a change in
     * flight.
     */
    void apply(final PartitionState state)
    {
        if (state.version() > isrVersion)
        {
            isr = state.isr();
            isrVersion = state.version();
        }
        if (null != pendingIsr && isrVersion > pendingBaseVersion)
        {
            pendingIsr = null;
        }
    }

    /** The controller refused the change in flight. */
    void changeRejected(final PartitionState current)
    {
        pendingIsr = null;
        if (null != current && current.leaderEpoch() == epoch)
        {
            apply(current);
        }
    }

    private static int[] without(final int[] hosts, final int host)
    {
        return Arrays.stream(hosts).filter((h) -> h != host).toArray();
    }

    void close()
    {
        for (final FollowerState follower : followers)
        {
            follower.close();
        }
    }
}
