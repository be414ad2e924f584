package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.ControllerStore;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;

/**
 * Every change the controller makes to stored partition state: elections, ISR changes at a leader's request or
 * after a host's death, power-loss fences, new partitions. Each change is a compare-and-set on the
 * {@link ControllerStore}; the changes one event decides (a host's death, a reconcile) are stored together
 * ({@link ControllerStore#compareAndSetAll}). A change that was stored is told to the partition's replicas and published
 * ({@link PartitionSnapshot}). A write that misses (the state moved under this controller) or fails half-way leaves
 * {@link #reconcilePending()} set, and {@link #reconcile} decides again from the stored state.
 * <p>
 * Owns the pending-reconcile flag and the counters of ISR changes and unclean elections. Not thread-safe: every
 * method runs under the {@link Controller}'s monitor, which serializes its duty cycle and its admin calls.
 */
final class PartitionStateChanges
{
    private final ReplicationContext ctx;
    private final ControllerStore store;
    private final ControlChannel channel;
    private final HostSessions sessions;
    private final PartitionSnapshot snapshot;
    /** Logs under the controller's name. */
    private final System.Logger logger = System.getLogger(Controller.class.getName());
    private long uncleanElections;
    private long isrShrinks;
    private long isrExpansions;
    /** A store write failed or missed while deciding something: every partition is checked again. */
    private boolean reconcilePending;

    /** Why an election is stored (the log's word). */
    private static final String ELECTION = "election";
    /** Why an unclean election is stored (the log's word; counted in {@link #uncleanElections}). */
    private static final String UNCLEAN_ELECTION = "unclean election";

    /**
     * A change decided and not yet stored.
     *
     * @param from the stored state it was decided from.
     * @param to   the next state (version {@code from}'s + 1).
     * @param why  the log's word for it.
     */
    private record Change(PartitionState from, PartitionState to, String why)
    {
    }

    /**
     * @param ctx      replication configuration (concluded).
     * @param store    the partition state; changed only by compare-and-set.
     * @param channel  where changes are told to the hosts.
     * @param sessions which hosts are alive.
     * @param snapshot republished after changes.
     */
    PartitionStateChanges(final ReplicationContext ctx, final ControllerStore store, final ControlChannel channel,
        final HostSessions sessions, final PartitionSnapshot snapshot)
    {
        this.ctx = ctx;
        this.store = store;
        this.channel = channel;
        this.sessions = sessions;
        this.snapshot = snapshot;
    }

    long isrShrinks()
    {
        return isrShrinks;
    }

    long isrExpansions()
    {
        return isrExpansions;
    }

    long uncleanElections()
    {
        return uncleanElections;
    }

    /**
     * @return whether a store write failed or missed half-way through a decision and the controller will decide
     *         again from the stored state at its next duty cycle.
     */
    boolean reconcilePending()
    {
        return reconcilePending;
    }

    /** A decision failed half-way (a store write threw): what it left undone is decided again, not forgotten. */
    void reconcileLater()
    {
        reconcilePending = true;
    }

    /** @return partitions changed when a reconcile was pending (it is no longer), else 0. */
    int reconcileIfPending()
    {
        if (!reconcilePending)
        {
            return 0;
        }
        reconcilePending = false;
        return reconcile();
    }

    /**
     * Create partitions {@code from} to {@code partitions - 1} of a topic with ids from {@code first + from}: the
     * replicas of each spread round robin over {@code hosts}, the first live one as leader, the live ones in the ISR.
     *
     * @return the new partitions' states.
     */
    List<PartitionState> createPartitions(final String topic, final int first, final int from,
        final int partitions, final int replicationFactor, final int[] hosts)
    {
        final List<PartitionState> created = new ArrayList<>();
        for (int p = from; p < partitions; p++)
        {
            final int[] ar = new int[replicationFactor];
            for (int r = 0; r < replicationFactor; r++)
            {
                ar[r] = hosts[(first + p + r) % hosts.length];
            }
            final int[] isr = sessions.liveMembers(ar);
            final boolean leaderAlive = isr.length > 0;
            final PartitionState state = store.create(new PartitionState(first + p, new TopicPartition(topic, p), ar,
                leaderAlive ? isr : new int[]{ ar[0] }, new int[0], new int[0],
                leaderAlive ? isr[0] : PartitionState.NO_LEADER, 0, 0));
            created.add(state);
            broadcast(state);
        }
        snapshot.publish();
        return created;
    }

    /**
     * Bring every partition in line with the hosts' liveness, as the events that were cut short would have: a dead
     * or missing leader is replaced (when a replica is eligible), dead members leave an ISR of more than one.
     *
     * @return partitions changed.
     */
    private int reconcile()
    {
        final List<Change> decided = new ArrayList<>();
        for (final PartitionState state : store.all())
        {
            if (state.leader() == PartitionState.NO_LEADER || !sessions.isAlive(state.leader()))
            {
                final Change election = election(state);
                if (null != election)
                {
                    decided.add(election);
                }
                continue;
            }
            final int[] live = Arrays.stream(state.isr()).filter(sessions::isAlive).toArray();
            if (live.length != state.isr().length && state.isr().length > 1)
            {
                decided.add(new Change(state, withIsr(state, live, state.leader(), state.leaderEpoch()),
                    "dead members leave"));
            }
        }
        int changed = 0;
        for (final PartitionState stored : commitAll(decided))
        {
            changed += null == stored ? 0 : 1;
        }
        snapshot.publish();
        return changed;
    }

    /**
     * A host registered: each partition it replicates that has no leader gets an election, and the host is told
     * the state of each.
     */
    void hostRegistered(final int hostId)
    {
        for (final PartitionState state : store.all())
        {
            if (!state.assigned(hostId))
            {
                continue;
            }
            PartitionState current = state;
            if (current.leader() == PartitionState.NO_LEADER)
            {
                current = elect(current);
            }
            channel.toHost(hostId, new ControlMessage.PartitionUpdate(current));
        }
        snapshot.publish();
    }

    /**
     * Mark {@code hostId} as recovering from a possible power loss in every partition it replicates: not eligible to
     * lead until it has re-joined an ISR through a leader.
     *
     * @throws IllegalStateException when the state keeps changing under this controller (another controller).
     */
    void fenceRecovering(final int hostId)
    {
        for (final PartitionState stored : store.all())
        {
            PartitionState state = stored;
            for (int attempt = 0; state.assigned(hostId) && !PartitionState.contains(state.recovering(), hostId);
                attempt++)
            {
                if (attempt == 3)
                {
                    throw new IllegalStateException("cannot mark host " + hostId + " as recovering in " +
                        state.topicPartition() + ": its state keeps changing (another controller?)");
                }
                logger.log(System.Logger.Level.WARNING, "host " + hostId + " restarted after a possible power " +
                    "loss: not eligible to lead " + state.topicPartition() + " until it re-joins the ISR");
                final PartitionState next = store.compareAndSet(state.version(), state.withRecovering(
                    IntStream.concat(Arrays.stream(state.recovering()), IntStream.of(hostId)).toArray(),
                    without(state.eligible(), hostId)));
                if (null != next)
                {
                    broadcast(next);
                }
                state = null == next ? store.get(state.partitionId()) : next;
            }
        }
        snapshot.publish();
    }

    /**
     * A host this controller learned of by its heartbeat (a grace session adopted after a failover) may be what a
     * leaderless partition waited for: no registration will come to trigger the election.
     */
    void electWhereLeaderless(final int hostId)
    {
        boolean changed = false;
        for (final PartitionState state : store.all())
        {
            if (state.assigned(hostId) && state.leader() == PartitionState.NO_LEADER)
            {
                changed |= elect(state) != state;
            }
        }
        if (changed)
        {
            snapshot.publish();
        }
    }

    /**
     * A host's session ended (its caller marked it dead): the partitions it led get a new leader, and it leaves the
     * ISRs of more than one it was in.
     */
    void hostDied(final int hostId)
    {
        final List<Change> decided = new ArrayList<>();
        for (final PartitionState state : store.all())
        {
            if (!state.assigned(hostId))
            {
                continue;
            }
            if (state.leader() == hostId)
            {
                final Change election = election(state);
                if (null != election)
                {
                    decided.add(election);
                }
            }
            else if (state.inIsr(hostId) && state.isr().length > 1)
            {
                decided.add(new Change(state,
                    withIsr(state, without(state.isr(), hostId), state.leader(), state.leaderEpoch()),
                    "host " + hostId + " died"));
            }
        }
        commitAll(decided);
        snapshot.publish();
    }

    /**
     * Elect a leader for a partition whose leader is gone (see {@link #election}) and store it on its own.
     *
     * @return the stored state, or {@code state} when nothing changed or the write missed.
     */
    private PartitionState elect(final PartitionState state)
    {
        final Change election = election(state);
        if (null == election)
        {
            return state;
        }
        final PartitionState stored = commitAll(List.of(election)).get(0);
        return null == stored ? state : stored;
    }

    /**
     * Decide the election of a partition whose leader is gone: the first live ISR member in AR order; failing that,
     * with unclean election enabled, the first live assigned replica; failing that, no leader (the last ISR
     * member stays in the ISR so that it can lead again when it returns).
     *
     * @return the change, not yet stored; null when the state already says what the election would.
     */
    private Change election(final PartitionState state)
    {
        final int[] liveIsr = eligibleInOrder(state, state.isr());
        final int[] liveElr = eligibleInOrder(state, state.eligible());
        if (liveIsr.length > 0)
        {
            return new Change(state, withIsr(state, liveIsr, liveIsr[0], state.leaderEpoch() + 1), ELECTION);
        }
        if (liveElr.length > 0)
        {
            // KIP-966: no live ISR member, but this replica left the ISR while the HW could not move: it holds every
            // committed record, so electing it is clean
            logger.log(System.Logger.Level.INFO, "electing host " + liveElr[0] + " from the eligible replicas of " +
                state.topicPartition());
            return new Change(state, withIsr(state, new int[]{ liveElr[0] }, liveElr[0], state.leaderEpoch() + 1),
                ELECTION);
        }
        if (ctx.uncleanLeaderElectionEnable() && sessions.liveMembers(state.assignedReplicas()).length > 0)
        {
            final int leader = sessions.liveMembers(state.assignedReplicas())[0];
            logger.log(System.Logger.Level.WARNING, "unclean election of host " + leader + " for " +
                state.topicPartition() + ": committed records may be lost");
            return new Change(state, state.with(new int[]{ leader }, new int[0], leader, state.leaderEpoch() + 1),
                UNCLEAN_ELECTION);
        }
        final int[] lastIsr = state.isr().length > 1 && state.leader() >= 0 ?
            new int[]{ state.leader() } : state.isr();
        if (state.leader() == PartitionState.NO_LEADER && Arrays.equals(lastIsr, state.isr()))
        {
            return null;
        }
        return new Change(state, withIsr(state, lastIsr, PartitionState.NO_LEADER, state.leaderEpoch() + 1),
            ELECTION);
    }

    /**
     * Store the decided changes together ({@link ControllerStore#compareAndSetAll}: the ZooKeeper store writes them
     * in one transaction, where one write each took a round trip and a disk sync each, 20 to 80 ms on a loaded
     * machine, one after the other); tell each stored one to the partition's replicas, then say each that moves a
     * leader or an ISR in the log. A change not stored (the state moved under this controller) is decided again from the
     * stored state ({@link #reconcilePending}).
     *
     * @return for each change, in order: the stored state, or null.
     */
    private List<PartitionState> commitAll(final List<Change> decided)
    {
        if (decided.isEmpty())
        {
            return List.of();
        }
        final List<PartitionState> nexts = new ArrayList<>(decided.size());
        for (final Change change : decided)
        {
            nexts.add(change.to());
        }
        final List<PartitionState> stored = store.compareAndSetAll(nexts);
        for (int i = 0; i < decided.size(); i++)
        {
            final PartitionState written = stored.get(i);
            if (null == written)
            {
                reconcilePending = true;
                continue;
            }
            broadcast(written); // every replica told before any log line: a line took 15-35 ms on a loaded machine
        }
        for (int i = 0; i < decided.size(); i++)
        {
            final Change change = decided.get(i);
            final PartitionState written = stored.get(i);
            if (null != written)
            {
                if (UNCLEAN_ELECTION.equals(change.why()))
                {
                    uncleanElections++;
                }
                logChange(change.from(), written, change.why());
            }
        }
        return stored;
    }

    /** Live members of {@code candidates}, in AR order, that are not fenced after a power loss. */
    private int[] eligibleInOrder(final PartitionState state, final int[] candidates)
    {
        return Arrays.stream(sessions.liveInOrder(state.assignedReplicas(), candidates))
            .filter((h) -> !PartitionState.contains(state.recovering(), h)).toArray();
    }

    /**
     * The next state with a new ISR: members that leave while the ISR is (or becomes) smaller than
     * {@code min.insync.replicas} join the eligible replicas (they hold every committed record, since the high
     * watermark cannot move then); an ISR back at {@code min.insync.replicas} clears them.
     */
    private PartitionState withIsr(final PartitionState state, final int[] newIsr, final int leader, final int epoch)
    {
        int[] eligible = new int[0];
        if (newIsr.length < ctx.minInsyncReplicas())
        {
            final int[] removed = Arrays.stream(state.isr()).filter((h) -> !PartitionState.contains(newIsr, h))
                .toArray();
            eligible = IntStream.concat(Arrays.stream(state.eligible()), Arrays.stream(removed))
                .filter((h) -> !PartitionState.contains(newIsr, h)).distinct().toArray();
        }
        return state.with(newIsr, eligible, leader, epoch);
    }

    /**
     * Store {@code next} in place of {@code state} by compare-and-set; when it is stored and moves the leader or
     * the ISR, say so in the log (one line per change, as an operator reading why a partition moved needs).
     *
     * @return the stored state, or null when the state moved under this controller.
     */
    private PartitionState commit(final PartitionState state, final PartitionState next, final String why)
    {
        final PartitionState stored = store.compareAndSet(state.version(), next);
        if (null != stored)
        {
            logChange(state, stored, why);
        }
        return stored;
    }

    /** Say a stored change in the log when it moves the leader or the ISR. */
    private void logChange(final PartitionState state, final PartitionState stored, final String why)
    {
        if (stored.leader() != state.leader() || !Arrays.equals(stored.isr(), state.isr()))
        {
            logger.log(System.Logger.Level.INFO, () -> stored.topicPartition() + ": leader " + state.leader() +
                " -> " + stored.leader() + " (epoch " + stored.leaderEpoch() + "), ISR " +
                Arrays.toString(state.isr()) + " -> " + Arrays.toString(stored.isr()) + " (" + why + ")");
        }
    }

    /**
     * A leader asks for a new ISR: granted when it names the partition's current leader, leader epoch and version,
     * and every member is assigned and either in the ISR or alive in the incarnation the leader counted. The
     * leader hears the outcome and the current state.
     */
    void alterIsr(final ControlMessage.AlterIsr request)
    {
        final PartitionState state = store.get(request.partitionId());
        if (null == state)
        {
            return;
        }
        boolean valid = state.leader() == request.leaderId() && state.leaderEpoch() == request.leaderEpoch() &&
            state.version() == request.expectedVersion() && PartitionState.contains(request.newIsr(), state.leader());
        for (final int host : request.newIsr())
        {
            valid &= state.assigned(host) &&
                (state.inIsr(host) || sessions.isAliveIn(host, request.incarnationOf(host)));
        }
        PartitionState current = state;
        if (valid)
        {
            PartitionState next = withIsr(state, request.newIsr().clone(), state.leader(), state.leaderEpoch());
            final int[] stillRecovering = Arrays.stream(state.recovering())
                .filter((h) -> !PartitionState.contains(request.newIsr(), h) || state.inIsr(h)).toArray();
            if (stillRecovering.length != state.recovering().length)
            {
                // a recovering replica added to the ISR by a leader has caught up: complete again
                next = new PartitionState(next.partitionId(), next.topicPartition(), next.assignedReplicas(),
                    next.isr(), next.eligible(), stillRecovering, next.leader(), next.leaderEpoch(), next.version());
            }
            current = commit(state, next, "asked by leader " + request.leaderId());
            if (null == current)
            {
                valid = false; // the state moved under this controller: the leader asks again from the current one
                current = store.get(state.partitionId());
            }
            else
            {
                if (current.isr().length < state.isr().length)
                {
                    isrShrinks++;
                }
                else if (current.isr().length > state.isr().length)
                {
                    isrExpansions++;
                }
                broadcast(current);
                snapshot.publish();
            }
        }
        channel.toHost(request.leaderId(), new ControlMessage.AlterIsrResponse(request.partitionId(), valid, current));
    }

    /** Tell {@code hostId} the stored state of every partition it replicates (its digest did not match). */
    void resendStates(final int hostId)
    {
        for (final PartitionState state : store.all())
        {
            if (state.assigned(hostId))
            {
                channel.toHost(hostId, new ControlMessage.PartitionUpdate(state));
            }
        }
    }

    /**
     * @return whether {@code host} restarted after a possible power loss and has not yet re-joined the ISR of every
     *         partition it replicates.
     */
    boolean unsynced(final int host)
    {
        for (final PartitionState state : store.all())
        {
            if (PartitionState.contains(state.recovering(), host))
            {
                return true;
            }
        }
        return false;
    }

    private void broadcast(final PartitionState state)
    {
        for (final int host : state.assignedReplicas())
        {
            channel.toHost(host, new ControlMessage.PartitionUpdate(state));
        }
    }

    private static int[] without(final int[] hosts, final int host)
    {
        return Arrays.stream(hosts).filter((h) -> h != host).toArray();
    }
}
