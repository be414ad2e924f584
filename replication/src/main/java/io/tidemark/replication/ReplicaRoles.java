package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import org.agrona.concurrent.EpochClock;

/**
 * The roles of a replica host's replicas: a replica becomes the leader of its partition (a {@link LeaderState} over
 * its log, its epoch assigned at the log's end), a follower fetching from the leader's host, or neither while its
 * partition has no leader; a replica that stops leading fails the produce requests that wait for acks with
 * {@link ReplicationError#NOT_LEADER} (their outcome is unknown).
 * <p>
 * Owns the host's {@link FollowerFetcher}s, one per other host of the cluster (the agents that replicate from it),
 * and which replicas each fetches. Not thread-safe: role changes run on the host agent's thread.
 */
final class ReplicaRoles
{
    private final int hostId;
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ProducerSessions sessions;
    /** Indexed by the leader's host id; null at this host's own. */
    private final FollowerFetcher[] fetchers;

    /**
     * @param sessions told of the produce requests that fail when a replica stops leading.
     * @param fetchers one per host of the cluster, null at this host's own.
     */
    ReplicaRoles(final int hostId, final ReplicationContext ctx, final EpochClock clock,
        final ProducerSessions sessions, final FollowerFetcher[] fetchers)
    {
        this.hostId = hostId;
        this.ctx = ctx;
        this.clock = clock;
        this.sessions = sessions;
        this.fetchers = fetchers;
    }

    /** @return the fetchers, one per host of the cluster, null at this host's own (not to be changed). */
    FollowerFetcher[] fetchers()
    {
        return fetchers;
    }

    /** @return the fetcher replicating from {@code leaderHost}. */
    FollowerFetcher fetcher(final int leaderHost)
    {
        return fetchers[leaderHost];
    }

    /** @return how many hosts the cluster has (host ids are below it). */
    int clusterSize()
    {
        return fetchers.length;
    }

    /** @return whether every one of {@code hosts} is a host id of the cluster. */
    boolean withinCluster(final int[] hosts)
    {
        for (final int host : hosts)
        {
            if (host < 0 || host >= fetchers.length)
            {
                return false;
            }
        }
        return true;
    }

    /** The replica leads its partition in {@code state}'s epoch: it stops fetching and starts leading afresh. */
    void becomeLeader(final Replica replica, final PartitionState state)
    {
        stopFetching(replica);
        resign(replica);
        final long now = clock.time();
        final long logEnd = replica.log.logEndOffset();
        replica.epochCache.assign(state.leaderEpoch(), logEnd);
        final LeaderState leader = new LeaderState(state, hostId, replica.log, replica.highWatermark, logEnd,
            ctx.minInsyncReplicas(), now);
        leader.nextIsrCheckMs = now + Math.max(1, ctx.replicaLagTimeMaxMs() / 2);
        replica.leaderEpoch = state.leaderEpoch();
        replica.leaderState = leader;
        leader.maybeAdvanceHighWatermark();
    }

    /** The replica follows {@code state}'s leader: it fetches from that host, or stops fetching while there is none. */
    void becomeFollower(final Replica replica, final PartitionState state)
    {
        resign(replica);
        if (state.leader() == PartitionState.NO_LEADER)
        {
            stopFetching(replica);
        }
        else if (replica.fetchingFrom != state.leader())
        {
            stopFetching(replica);
            fetchers[state.leader()].add(replica, state.leaderEpoch());
            replica.fetchingFrom = state.leader();
        }
        else if (state.leaderEpoch() != replica.leaderEpoch)
        {
            fetchers[state.leader()].add(replica, state.leaderEpoch());
        }
    }

    /** The replica stops leading, if it led. */
    void resign(final Replica replica)
    {
        final LeaderState leader = replica.leaderState;
        if (null != leader)
        {
            replica.leaderState = null;
            leader.pendingAcks.failAll(replica.topicPartition, sessions, ReplicationError.NOT_LEADER);
            leader.close();
        }
    }

    private void stopFetching(final Replica replica)
    {
        if (replica.fetchingFrom != PartitionState.NO_LEADER)
        {
            fetchers[replica.fetchingFrom].remove(replica);
            replica.fetchingFrom = PartitionState.NO_LEADER;
        }
    }
}
