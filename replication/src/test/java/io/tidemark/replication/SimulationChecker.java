package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;

import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The invariants of the replication reference, checked by {@link Simulation}: after every event the cheap ones
 * (4-7, 10-12, "no truncation below the HW"), 17 on every replica (each batch carries the epoch of the cache entry
 * covering it) and StrongIsr (every ISR or eligible member that is not recovering holds the leader's log below the
 * leader's HW), both incrementally over what changed since the last event; every 25 events the committed prefix of
 * every replica (5); and after healing and quiescence the ones that need the whole history (1-3, 8, 9, 13-16, 18,
 * 19) against the client's log of sends and outcomes. A violation throws {@link AssertionError} with the seed and
 * trace.
 */
final class SimulationChecker
{
    private final Simulation sim;
    private final Map<Integer, TreeMap<Long, String>> committed = new HashMap<>();
    private final Map<Replica, Long> lastHighWatermark = new IdentityHashMap<>();
    private final Map<Replica, Integer> lastReplicaEpoch = new IdentityHashMap<>();
    private final Map<String, Long> leaderHighWatermarkByEpoch = new HashMap<>();
    private final Map<String, Integer> epochOwner = new HashMap<>();
    private final int[] lastEpoch = new int[Simulation.PARTITIONS];
    private final int[] lastLeader = new int[Simulation.PARTITIONS];
    private final long[] maxExposed = new long[Simulation.PARTITIONS];
    private final long[] maxLeaderHighWatermark = new long[Simulation.PARTITIONS];
    private final long[] maxAckedOffset = new long[Simulation.PARTITIONS];
    private final boolean[] epochChanged = new boolean[Simulation.PARTITIONS];
    private final PartitionState[] lastState = new PartitionState[Simulation.PARTITIONS];
    /** Invariant 17: per replica, the offset below which its batches were checked, and the cache they were against. */
    private final Map<Replica, Long> epochsCheckedTo = new IdentityHashMap<>();
    private final Map<Replica, List<long[]>> epochsCheckedWith = new IdentityHashMap<>();
    /** StrongIsr: per replica, the offset below which its records were found equal to the leader's. */
    private final Map<Replica, Long> strongIsrCheckedTo = new IdentityHashMap<>();
    private boolean unsyncedSeen;
    /** Rule 22: the incarnations that reported a possible data loss and were seen fenced (recovering). */
    private final Set<Long> fencedIncarnations = new HashSet<>();
    long checks;
    long acked;

    SimulationChecker(final Simulation sim)
    {
        this.sim = sim;
        for (int p = 0; p < Simulation.PARTITIONS; p++)
        {
            committed.put(p, new TreeMap<>());
            lastEpoch[p] = -1;
            lastLeader[p] = -2;
            maxAckedOffset[p] = -1;
        }
    }

    void fail(final String violation)
    {
        sim.note("VIOLATION: " + violation);
        throw new AssertionError(violation + "\n" + sim.report());
    }

    long maxAcked(final int partition)
    {
        return maxAckedOffset[partition];
    }

    /** Invariants 13/14: an acknowledgement only when its condition holds. */
    void onAcknowledgement(final Simulation.Send send, final long offset, final ReplicationError error)
    {
        if (error != ReplicationError.NONE)
        {
            return;
        }
        acked++;
        if (send.acks == Acks.ALL)
        {
            // only acks=all acknowledgements promise the record survives (acks=1/N ones may be lost in failover)
            maxAckedOffset[send.partition] = Math.max(maxAckedOffset[send.partition], offset);
        }
        boolean held = false;
        for (int h = 0; h < Simulation.HOSTS; h++)
        {
            final Replica replica = sim.cluster.replica(h, Simulation.tp(send.partition));
            final LeaderState leader = null == replica ? null : replica.leaderState;
            if (null == leader)
            {
                continue;
            }
            if (send.acks == Acks.ALL)
            {
                held |= leader.highWatermark() > offset;
            }
            else if (send.acks == Acks.LEADER)
            {
                held |= replica.log.logEndOffset() > offset;
            }
            else
            {
                held |= leader.isrMembersHolding(offset + 1) >= Math.min(send.acks, leader.isrSize());
            }
        }
        if (!held)
        {
            fail("invariant 14: " + send.value + " acknowledged (acks=" + Acks.describe(send.acks) + ", offset " +
                offset + ") without its condition holding on any leader");
        }
    }

    /** Invariant 4: a consumer never reads at or above the serving replica's HW; a committed offset never changes. */
    void onConsumed(final int partition, final long offset, final String value, final long highWatermark)
    {
        if (offset >= highWatermark)
        {
            fail("invariant 4: read offset " + offset + " of partition " + partition + " at or above the HW " +
                highWatermark);
        }
        remember(partition, offset, value, "a consumer");
    }

    private void remember(final int partition, final long offset, final String value, final String source)
    {
        final String previous = committed.get(partition).putIfAbsent(offset, value);
        if (null != previous && !previous.equals(value))
        {
            fail("invariant 5: committed offset " + offset + " of partition " + partition + " was " + previous +
                " and is now " + value + " (seen by " + source + ")");
        }
    }

    /** After every event. */
    void checkAlways()
    {
        checks++;
        for (int p = 0; p < Simulation.PARTITIONS; p++)
        {
            checkState(p);
            checkReplicas(p);
            checkStrongIsr(p);
        }
        checkFenced();
        if (checks % 25 == 0)
        {
            checkCommittedPrefixes();
        }
        if (!sim.agentErrors.isEmpty())
        {
            fail("an agent failed: " + sim.agentErrors.get(0));
        }
    }

    /** Invariants 10, 11, 12 on the controller's state. */
    private void checkState(final int p)
    {
        final PartitionState state = sim.cluster.state(Simulation.tp(p));
        if (!state.equals(lastState[p]))
        {
            sim.note("state " + state);
            lastState[p] = state;
        }
        if (state.isr().length == 0)
        {
            fail("invariant 12: empty ISR " + state);
        }
        for (final int host : state.isr())
        {
            if (!state.assigned(host))
            {
                fail("invariant 12: ISR outside AR " + state);
            }
        }
        if (state.leader() != PartitionState.NO_LEADER && !state.inIsr(state.leader()))
        {
            fail("invariant 11: leader outside the ISR with unclean election off " + state);
        }
        if (state.leader() != PartitionState.NO_LEADER && !sim.cluster.controller().hostAlive(state.leader()) &&
            !sim.cluster.controller().reconcilePending())
        {
            // (a store write that failed half-way through the host's death is decided again at the next duty cycle)
            fail("invariant 11: a dead host leads " + state);
        }
        if (state.leaderEpoch() < lastEpoch[p] ||
            (state.leaderEpoch() == lastEpoch[p] && state.leader() != lastLeader[p] && lastLeader[p] != -2))
        {
            fail("invariant 10: epoch went back or two leaders in one epoch: " + state + " after epoch " +
                lastEpoch[p] + " led by " + lastLeader[p]);
        }
        epochChanged[p] = state.leaderEpoch() != lastEpoch[p];
        lastEpoch[p] = state.leaderEpoch();
        lastLeader[p] = state.leader();
    }

    /** Invariants 5 (no truncation below the HW), 6, 7, 10 (one appender per epoch), 17 (cheap part). */
    private void checkReplicas(final int p)
    {
        for (int h = 0; h < Simulation.HOSTS; h++)
        {
            final Replica replica = sim.cluster.replica(h, Simulation.tp(p));
            final LeaderState leader = null == replica ? null : replica.leaderState;
            if (null != leader && !replica.log.isClosed())
            {
                maxLeaderHighWatermark[p] = Math.max(maxLeaderHighWatermark[p], leader.highWatermark());
            }
        }
        for (int h = 0; h < Simulation.HOSTS; h++)
        {
            final Replica replica = sim.cluster.replica(h, Simulation.tp(p));
            if (null == replica || replica.log.isClosed())
            {
                continue;
            }
            final long hw = replica.highWatermark.get();
            final long end = replica.log.logEndOffset();
            if (hw > end)
            {
                fail("invariant 6: HW " + hw + " above LEO " + end + " on " + replica);
            }
            final Long previousHw = lastHighWatermark.get(replica);
            if (null != previousHw && end < previousHw)
            {
                fail("invariant 5: " + replica + " truncated to " + end + " below its HW " + previousHw);
            }
            lastHighWatermark.put(replica, hw);
            final Integer seenEpoch = lastReplicaEpoch.put(replica, replica.leaderEpoch);
            final boolean replicaEpochChanged = null == seenEpoch || seenEpoch != replica.leaderEpoch;
            final LeaderState leader = replica.leaderState;
            if (null != leader)
            {
                final String key = p + "/" + leader.epoch;
                final Integer owner = epochOwner.putIfAbsent(key, h);
                if (null != owner && owner != h)
                {
                    fail("invariant 10: hosts " + owner + " and " + h + " both led partition " + p + " in epoch " +
                        leader.epoch);
                }
                final Long previous = leaderHighWatermarkByEpoch.put(key, hw);
                if (null != previous && hw < previous)
                {
                    fail("invariant 7: leader HW went back within epoch " + leader.epoch + ": " + previous + " -> " + hw);
                }
                maxLeaderHighWatermark[p] = Math.max(maxLeaderHighWatermark[p], hw);
                final PartitionState current = sim.cluster.state(Simulation.tp(p));
                final boolean servesClients = current.leader() == h && current.leaderEpoch() == leader.epoch;
                if (servesClients && hw >= leader.epochStartOffset)
                {
                    if (hw < maxExposed[p])
                    {
                        fail("invariant 7: the latest offset exposed to clients went back from " + maxExposed[p] +
                            " to " + hw + " on " + replica);
                    }
                    maxExposed[p] = hw;
                }
            }
            else if (hw > maxLeaderHighWatermark[p])
            {
                if (epochChanged[p] || replicaEpochChanged || replica.leaderEpoch != lastEpoch[p])
                {
                    // Within one duty cycle a host may become leader of an epoch, advance its HW, and hand over:
                    // that leader HW was never observed between events; the follower's carries it.
                    maxLeaderHighWatermark[p] = hw;
                }
                else
                {
                    fail("invariant 6: follower HW " + hw + " above every leader HW " + maxLeaderHighWatermark[p] +
                        " on " + replica);
                }
            }
            final List<long[]> entries = replica.epochCache.entries();
            for (int i = 1; i < entries.size(); i++)
            {
                if (entries.get(i)[0] <= entries.get(i - 1)[0] || entries.get(i)[1] <= entries.get(i - 1)[1])
                {
                    fail("invariant 17: epoch cache not strictly increasing on " + replica + ": " + replica.epochCache);
                }
            }
            checkBatchEpochs(replica, entries);
        }
        if (sim.unsyncedHost() >= 0 && !sim.down.contains(sim.unsyncedHost()))
        {
            if (sim.cluster.controller().unsynced(sim.unsyncedHost()))
            {
                unsyncedSeen = true; // the controller knows of the power loss
            }
            else if (unsyncedSeen)
            {
                unsyncedSeen = false;
                sim.resynced(sim.unsyncedHost()); // re-joined every ISR through a leader
            }
        }
    }

    /**
     * Invariant 17 after every event: every batch of the replica carries the epoch of the cache entry covering it.
     * Only batches not checked yet against the same cache are read.
     */
    private void checkBatchEpochs(final Replica replica, final List<long[]> entries)
    {
        final long end = replica.log.logEndOffset();
        final List<long[]> checkedWith = epochsCheckedWith.get(replica);
        Long from = epochsCheckedTo.get(replica);
        if (null == from || null == checkedWith || !sameEntries(checkedWith, entries) || from > end)
        {
            from = replica.log.logStartOffset();
        }
        if (from >= end)
        {
            epochsCheckedTo.put(replica, end);
            epochsCheckedWith.put(replica, entries);
            return;
        }
        final long[] checked = { from };
        try (io.tidemark.store.LogReader reader = replica.log.openReader())
        {
            reader.seek(Math.max(from, replica.log.logStartOffset()));
            while (reader.pollBatches((b) ->
            {
                final int covering = replica.epochCache.epochForOffset(b.baseOffset());
                if (covering != b.leaderEpoch())
                {
                    fail("invariant 17: on " + replica + " the batch at " + b.baseOffset() + " has epoch " +
                        b.leaderEpoch() + " but the entry covering it is of epoch " + covering + ": " +
                        replica.epochCache);
                }
                checked[0] = b.nextOffset();
            }, Long.MAX_VALUE, 1 << 20) > 0)
            {
                // scan on
            }
        }
        catch (final io.tidemark.store.StorageException ex)
        {
            if (ex.code() != io.tidemark.store.StorageErrorCode.CORRUPT_BATCH)
            {
                throw ex;
            }
        }
        epochsCheckedTo.put(replica, checked[0]);
        epochsCheckedWith.put(replica, entries);
    }

    /**
     * StrongIsr (Kafka's TLA+ model) after every event: every ISR or eligible member that is not recovering from a
     * power loss holds the leader's log below the leader's high watermark. A member whose host has not yet completed
     * its registration (a restart the controller has not processed) is not judged yet; one that is down is judged
     * when it returns. Only records not compared yet are read.
     */
    private void checkStrongIsr(final int p)
    {
        final TopicPartition tp = Simulation.tp(p);
        final PartitionState state = sim.cluster.state(tp);
        final Replica leader = sim.cluster.leaderReplica(tp);
        if (null == leader || leader.log.isClosed() || leader.leaderState.epoch != state.leaderEpoch())
        {
            return;
        }
        final long hw = leader.leaderState.highWatermark();
        for (int h = 0; h < Simulation.HOSTS; h++)
        {
            if (h == state.leader() || PartitionState.contains(state.recovering(), h) ||
                !(state.inIsr(h) || PartitionState.contains(state.eligible(), h)))
            {
                continue;
            }
            final ReplicaHost host = sim.cluster.host(h);
            final Replica member = null == host || !host.isRegistered() ? null : host.replica(state.partitionId());
            if (null == member || member.log.isClosed())
            {
                continue;
            }
            final long end = member.log.logEndOffset();
            if (end < hw)
            {
                fail("StrongIsr: " + (state.inIsr(h) ? "ISR" : "eligible") + " member " + member + " ends at " + end +
                    ", below the leader's HW " + hw + " (" + leader + ", " + state + ")");
            }
            final long from = Math.max(strongIsrCheckedTo.getOrDefault(member, 0L),
                Math.max(member.log.logStartOffset(), leader.log.logStartOffset()));
            if (from < hw)
            {
                final TreeMap<Long, String> mine = Simulation.read(member, from, hw);
                final TreeMap<Long, String> theirs = Simulation.read(leader, from, hw);
                if (!mine.equals(theirs))
                {
                    fail("StrongIsr: " + (state.inIsr(h) ? "ISR" : "eligible") + " member " + member + " differs " +
                        "from the leader " + leader + " below its HW " + hw + ": " + mine + " vs " + theirs);
                }
                strongIsrCheckedTo.put(member, hw);
            }
        }
    }

    /**
     * Rule 22 (last replica standing) after every event: a host that reported a possible data loss (a power loss, a
     * log that lost flushed records) is fenced, recovering in the controller's durable state, by the time it knows
     * it is registered, until it has re-joined the ISR. Otherwise a controller failover forgets the fence and the host
     * may lead with a log that lacks acknowledged records.
     */
    private void checkFenced()
    {
        for (int h = 0; h < Simulation.HOSTS; h++)
        {
            final ReplicaHost host = sim.cluster.host(h);
            if (null == host || !host.startedWithPossibleDataLoss())
            {
                continue;
            }
            final long incarnation = host.incarnation() * Simulation.HOSTS + h;
            boolean rejoinedEverywhere = true;
            for (int p = 0; p < Simulation.PARTITIONS; p++)
            {
                final PartitionState state = sim.cluster.state(Simulation.tp(p));
                if (PartitionState.contains(state.recovering(), h))
                {
                    fencedIncarnations.add(incarnation);
                }
                rejoinedEverywhere &= state.inIsr(h);
            }
            if (host.isRegistered() && !fencedIncarnations.contains(incarnation) && !rejoinedEverywhere)
            {
                fail("rule 22: host " + h + " reported a possible data loss and is registered, but the controller " +
                    "does not fence it (recovering) in " + java.util.Arrays.toString(sim.cluster.controller()
                    .partitions()));
            }
        }
    }

    /** Invariant 5: below its HW, every replica holds exactly the committed records. */
    private void checkCommittedPrefixes()
    {
        for (int p = 0; p < Simulation.PARTITIONS; p++)
        {
            for (int h = 0; h < Simulation.HOSTS; h++)
            {
                final Replica replica = sim.cluster.replica(h, Simulation.tp(p));
                if (null == replica || replica.log.isClosed())
                {
                    continue;
                }
                final long hw = replica.highWatermark.get();
                final TreeMap<Long, String> records = Simulation.read(replica);
                for (final Map.Entry<Long, String> e : records.headMap(hw).entrySet())
                {
                    remember(p, e.getKey(), e.getValue(), "host " + h);
                }
            }
        }
    }

    /** After healing and quiescence. */
    void checkFinal()
    {
        checkCommittedPrefixes();
        for (int p = 0; p < Simulation.PARTITIONS; p++)
        {
            final TopicPartition tp = Simulation.tp(p);
            final Replica leader = sim.cluster.leaderReplica(tp);
            final TreeMap<Long, String> log = Simulation.read(leader);
            // 8, 15: identical logs and epoch caches everywhere
            for (int h = 0; h < Simulation.HOSTS; h++)
            {
                final Replica replica = sim.cluster.replica(h, tp);
                if (!Simulation.read(replica).equals(log))
                {
                    fail("invariants 8/15: host " + h + " differs from the leader on partition " + p);
                }
                if (!sameEntries(replica.epochCache.entries(), leader.epochCache.entries()))
                {
                    fail("invariant 15: epoch caches differ: " + replica.epochCache + " vs " + leader.epochCache);
                }
            }
            // 17: every batch carries the epoch of the cache entry covering it
            try (io.tidemark.store.LogReader reader = leader.log.openReader())
            {
                while (reader.pollBatches((b) ->
                {
                    if (leader.epochCache.epochForOffset(b.baseOffset()) != b.leaderEpoch())
                    {
                        fail("invariant 17: batch at " + b.baseOffset() + " has epoch " + b.leaderEpoch() +
                            " but the cache says " + leader.epochCache);
                    }
                }, Long.MAX_VALUE, 1 << 20) > 0)
                {
                    // scan on
                }
            }
            checkSends(p, log);
        }
    }

    private static boolean sameEntries(final List<long[]> a, final List<long[]> b)
    {
        if (a.size() != b.size())
        {
            return false;
        }
        for (int i = 0; i < a.size(); i++)
        {
            if (a.get(i)[0] != b.get(i)[0] || a.get(i)[1] != b.get(i)[1])
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Invariants 1, 2, 3, 9, 18 against the client's log of sends. For 3, "acked before it was sent" means
     * acknowledged with acks=all: records acknowledged with acks=1 or acks=N may be lost in a failover, and the
     * offsets they had may then be reused.
     */
    private void checkSends(final int p, final TreeMap<Long, String> log)
    {
        final Map<String, Long> offsetOf = new HashMap<>();
        for (final Map.Entry<Long, String> e : log.entrySet())
        {
            if (null != offsetOf.put(e.getValue(), e.getKey()))
            {
                fail("invariant 2/18: " + e.getValue() + " appears twice in partition " + p);
            }
        }
        final Set<String> sent = new HashSet<>();
        String lastIdempotent = null;
        long lastIdempotentOffset = -1;
        for (final Simulation.Send send : sim.sends)
        {
            if (send.partition != p)
            {
                continue;
            }
            sent.add(send.value);
            final Long at = offsetOf.get(send.value);
            if (send.acked())
            {
                if (null == at || at != send.offset)
                {
                    if (send.acks == Acks.ALL)
                    {
                        fail("invariant 1/9: acks=all record " + send.value + " acknowledged at " + send.offset +
                            " is " + (null == at ? "missing" : "at " + at));
                    }
                }
            }
            else if (send.unknown() && null != at && at <= send.maxAckedOffsetBefore && !send.idempotent)
            {
                fail("invariant 3: " + send.value + " with unknown outcome appears at " + at + ", not above " +
                    send.maxAckedOffsetBefore + ", the last offset acknowledged before it was sent");
            }
            else if (!send.unknown() && !send.acked() && null != at && !send.idempotent)
            {
                fail("invariant 13/2: " + send.value + " was refused (" + send.error + ") yet appended at " + at);
            }
            if (send.idempotent && null != at)
            {
                if (at < lastIdempotentOffset && !send.value.equals(lastIdempotent))
                {
                    fail("invariant 18: idempotent " + send.value + " at " + at + " before " + lastIdempotent +
                        " at " + lastIdempotentOffset + ": reordered");
                }
                if (at > lastIdempotentOffset)
                {
                    lastIdempotent = send.value;
                    lastIdempotentOffset = at;
                }
            }
        }
        for (final String value : log.values())
        {
            if (!sent.contains(value))
            {
                fail("invariant 2: phantom record " + value + " in partition " + p);
            }
        }
    }
}
