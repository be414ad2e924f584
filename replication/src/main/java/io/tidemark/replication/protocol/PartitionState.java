package io.tidemark.replication.protocol;

import io.tidemark.replication.TopicPartition;

import java.util.Arrays;

/**
 * A partition's replication metadata as the controller stores it: assigned replicas (AR, in preference order),
 * in-sync replicas (ISR), leader, leader epoch, and a version bumped by every change (the compare-and-set token).
 * Immutable: arrays are never modified after construction.
 *
 * @param partitionId      cluster-wide dense id, used in protocol messages.
 * @param topicPartition   topic and partition number.
 * @param assignedReplicas AR: host ids, in preference order.
 * @param isr              ISR: host ids, a subset of AR; never empty.
 * @param eligible         ELR (KIP-966): replicas outside the ISR that still hold every committed record, because
 *                         they left the ISR while it was below {@code min.insync.replicas} (so the high watermark
 *                         could not move); electable when no live ISR member is. Cleared when the ISR reaches
 *                         {@code min.insync.replicas} again.
 * @param recovering       replicas that may have lost acknowledged records (their host restarted after a power
 *                         loss) and have not re-joined the ISR through a leader since: never elected as if complete
 *                         (KIP-966 "last replica standing"). Durable, so a controller failover does not forget it.
 * @param leader           leader host id, or {@link #NO_LEADER}.
 * @param leaderEpoch      bumped on every leader change.
 * @param version          bumped on every change.
 */
public record PartitionState(
    int partitionId,
    TopicPartition topicPartition,
    int[] assignedReplicas,
    int[] isr,
    int[] eligible,
    int[] recovering,
    int leader,
    int leaderEpoch,
    int version)
{
    /** Leader value when the partition has no leader. */
    public static final int NO_LEADER = -1;
    /** Host ids of every cluster are in {@code [0, MAX_HOSTS)}. */
    public static final int MAX_HOSTS = 64;

    /** @return whether {@code host} is in the ISR. */
    public boolean inIsr(final int host)
    {
        return contains(isr, host);
    }

    /** @return whether {@code host} is an assigned replica. */
    public boolean assigned(final int host)
    {
        return contains(assignedReplicas, host);
    }

    public static boolean contains(final int[] hosts, final int host)
    {
        for (final int h : hosts)
        {
            if (h == host)
            {
                return true;
            }
        }
        return false;
    }

    /** @return this state's contribution to a host's state digest (summed over its partitions). */
    public long digest()
    {
        long h = partitionId * 0x9E3779B97F4A7C15L ^ leaderEpoch * 0xC2B2AE3D27D4EB4FL ^ version * 0x165667B19E3779F9L;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        return h ^ (h >>> 33);
    }

    public PartitionState with(
        final int[] newIsr, final int[] newEligible, final int newLeader, final int newLeaderEpoch)
    {
        return new PartitionState(partitionId, topicPartition, assignedReplicas, newIsr, newEligible, recovering,
            newLeader, newLeaderEpoch, version + 1);
    }

    public PartitionState withRecovering(final int[] newRecovering, final int[] newEligible)
    {
        return new PartitionState(partitionId, topicPartition, assignedReplicas, isr, newEligible, newRecovering,
            leader, leaderEpoch, version + 1);
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof PartitionState s && s.partitionId == partitionId && s.leader == leader &&
            s.leaderEpoch == leaderEpoch && s.version == version && s.topicPartition.equals(topicPartition) &&
            Arrays.equals(s.assignedReplicas, assignedReplicas) && Arrays.equals(s.isr, isr) &&
            Arrays.equals(s.eligible, eligible) && Arrays.equals(s.recovering, recovering);
    }

    @Override
    public int hashCode()
    {
        return partitionId * 31 + version;
    }

    @Override
    public String toString()
    {
        return topicPartition + "{id=" + partitionId + ", ar=" + Arrays.toString(assignedReplicas) + ", isr=" +
            Arrays.toString(isr) + (eligible.length == 0 ? "" : ", elr=" + Arrays.toString(eligible)) +
            (recovering.length == 0 ? "" : ", recovering=" + Arrays.toString(recovering)) +
            ", leader=" + leader + ", epoch=" + leaderEpoch + ", version=" + version + '}';
    }
}
