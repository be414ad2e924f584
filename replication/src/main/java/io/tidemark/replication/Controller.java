package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.ControlMessageCodec;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.ControllerStore;
import io.tidemark.replication.spi.HostLiveness;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The controller of one JVM's replica hosts: stores partition state durably with compare-and-set versioning
 * ({@link ControllerStore}), tracks host liveness by heartbeat sessions, elects leaders from the ISR (first
 * live member in AR order; an out-of-sync replica only with {@code unclean.leader.election.enable}), applies ISR
 * changes requested by leaders (fenced by leader epoch and version), and tells hosts every change.
 * <p>
 * An Agrona {@link Agent}: {@link #doWork()} drains requests and expires sessions. Admin calls
 * ({@link #createTopic}) and the duty cycle are serialized by the object's monitor (control plane only).
 * Metadata for clients is published as an immutable snapshot ({@link #partitions()}), read lock-free.
 */
public final class Controller implements Agent
{
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ControlChannel channel;
    private final ControllerStore store;
    private final Map<Integer, Session> sessions = new HashMap<>();
    /** Replaced, never changed in place; volatile for {@link #announce}, which runs on another thread. */
    private volatile Session[] sessionArray = new Session[0];
    private final long controllerEpoch;
    private final Consumer<ControlMessage> handler = this::onMessage;
    private final System.Logger logger = System.getLogger(Controller.class.getName());
    private final RateLimitedLog remoteLog = new RateLimitedLog(logger);
    private volatile PartitionState[] snapshot;
    private volatile PartitionState[] snapshotById;
    private long uncleanElections;
    private long isrShrinks;
    private long isrExpansions;
    private long nextProducerId = -1;
    private long producerIdLimit = -1;
    private long lastDutyCycleMs;
    /** A store write failed or missed while deciding something: every partition is checked again. */
    private boolean reconcilePending;
    /** Heartbeats of the drain under way that only renewed a session (an idle controller's thread parks deeper). */
    private int routineHeartbeats;

    /** A host's session: alive while heartbeats arrive within the timeout. */
    private static final class Session
    {
        final int hostId;
        /** A grace session for a host no controller has seen register yet (a new topic names it). */
        boolean neverRegistered;
        long incarnation;
        long lastHeartbeatMs;
        boolean alive;

        Session(final int hostId)
        {
            this.hostId = hostId;
        }
    }

    private Session newSession(final int hostId)
    {
        final Session session = new Session(hostId);
        sessions.put(hostId, session);
        sessionArray = sessions.values().toArray(new Session[0]);
        return session;
    }

    /**
     * @param dir     where partition state is stored ({@link FileControllerStore}); existing state is loaded
     *                (controller failover).
     * @param ctx     replication configuration.
     * @param channel queues to and from the hosts.
     */
    public Controller(final Path dir, final ReplicationContext ctx, final ControlChannel channel)
    {
        this(new FileControllerStore(dir), ctx, channel);
    }

    /**
     * @param store   where partition state is stored; its content is loaded (controller failover). The
     *                controller does not close it.
     * @param ctx     replication configuration.
     * @param channel queues to and from the hosts.
     */
    public Controller(final ControllerStore store, final ReplicationContext ctx, final ControlChannel channel)
    {
        this.ctx = ctx.conclude();
        this.clock = ctx.epochClock();
        this.channel = channel;
        this.store = store;
        this.controllerEpoch = store.controllerEpoch();
        for (final PartitionState state : store.all())
        {
            expectHosts(state.assignedReplicas(), false);
        }
        publish();
    }

    /** Hosts named in partition state get one session timeout of grace to (re-)appear before they count as dead. */
    private void expectHosts(final int[] hosts, final boolean firstSeen)
    {
        final long now = clock.time();
        for (final int host : hosts)
        {
            if (!sessions.containsKey(host))
            {
                final Session session = newSession(host);
                session.lastHeartbeatMs = now;
                session.alive = true;
                session.incarnation = -1;
                session.neverRegistered = firstSeen;
            }
        }
    }

    /**
     * Tell every host this controller has a session for that the controller of {@link #controllerEpoch()} is alive
     * ({@link ControlMessage.ControllerAlive}); the host process calls it every heartbeat interval. Thread-safe and
     * not serialized with {@link #doWork}: a duty cycle held up in a ZooKeeper write must not make the hosts depose a
     * controller that is slow but alive (the caller decides how long a stuck duty cycle may go on announcing).
     */
    public void announce()
    {
        for (final Session session : sessionArray)
        {
            channel.toHost(session.hostId, new ControlMessage.ControllerAlive(session.hostId, controllerEpoch));
        }
    }

    /** @return the controller epoch of the store this controller was opened over (0 for a store without one). */
    public long controllerEpoch()
    {
        return controllerEpoch;
    }

    /**
     * Shorten the grace of a host a majority of the cluster could not hear as the previous controller: its session
     * expires {@code graceMs} from now unless it heartbeats (a host that is alive and reaches this controller keeps
     * its leaderships; a dead one loses them in {@code graceMs}, not a whole session).
     */
    public synchronized void shortenGrace(final int hostId, final long graceMs)
    {
        final Session session = sessions.get(hostId);
        if (null != session && session.alive && session.incarnation == -1)
        {
            session.lastHeartbeatMs = Math.min(session.lastHeartbeatMs,
                clock.time() - ctx.hostSessionTimeoutMs() + Math.max(0, graceMs));
        }
    }

    private void publish()
    {
        final List<PartitionState> all = store.all();
        final PartitionState[] byId = new PartitionState[store.size()];
        for (final PartitionState state : all)
        {
            byId[state.partitionId()] = state;
        }
        snapshot = all.toArray(new PartitionState[0]);
        snapshotById = byId;
    }

    /**
     * @return the latest state of every partition the controller serves, by ascending partition id (an immutable
     *         snapshot; a partition whose stored state is damaged is left out: see {@link ControllerStore#damaged()}).
     */
    public PartitionState[] partitions()
    {
        return snapshot;
    }

    /** @return the latest state of a partition, or null. */
    public PartitionState partition(final int partitionId)
    {
        final PartitionState[] current = snapshotById;
        return partitionId >= 0 && partitionId < current.length ? current[partitionId] : null;
    }

    /**
     * @return a producer id never handed out before by a controller over this store. Ids are reserved durably in
     *         blocks of 1000, so a restart skips at most the rest of a block.
     */
    public synchronized long allocateProducerId()
    {
        if (nextProducerId < 0 || nextProducerId >= producerIdLimit)
        {
            final long first = store.reserveProducerIds(PRODUCER_ID_BLOCK);
            nextProducerId = Math.max(nextProducerId, first);
            producerIdLimit = first + PRODUCER_ID_BLOCK;
        }
        return nextProducerId++;
    }

    private static final int PRODUCER_ID_BLOCK = 1000;

    /**
     * @return ISR shrinks this controller committed at a leader's request (a follower behind by time, or by count
     *         with {@code replica.lag.max.messages}); removals of dead hosts are not counted. Kafka's
     *         {@code IsrShrinksPerSec}, as a count since this controller started.
     */
    public synchronized long isrShrinks()
    {
        return isrShrinks;
    }

    /** @return ISR expansions this controller committed at a leader's request (a follower that caught up). */
    public synchronized long isrExpansions()
    {
        return isrExpansions;
    }

    /** @return unclean elections performed (each may have lost committed data). */
    public synchronized long uncleanElections()
    {
        return uncleanElections;
    }

    /**
     * Create a topic: each partition gets {@code replicationFactor} replicas on distinct hosts, spread round robin
     * over {@code hosts}, the first as leader, all in the ISR.
     *
     * @return the new partitions' states.
     */
    public synchronized List<PartitionState> createTopic(
        final String topic, final int partitions, final int replicationFactor, final int[] hosts)
    {
        if (partitions < 1 || replicationFactor < 1 || replicationFactor > hosts.length)
        {
            throw new IllegalArgumentException("need 1 <= replication factor (" + replicationFactor + ") <= hosts (" +
                hosts.length + ") and at least one partition (" + partitions + ")");
        }
        checkBounds(partitions, replicationFactor, hosts);
        for (final PartitionState existing : store.all())
        {
            if (existing.topicPartition().topic().equals(topic))
            {
                throw new IllegalArgumentException("topic exists: " + topic);
            }
        }
        expectHosts(hosts, true);
        return createPartitions(topic, store.size(), 0, partitions, replicationFactor, hosts);
    }

    /**
     * Finish a topic whose creation a controller change cut short: its partitions 0 to k-1 exist with dense ids
     * from its first, and the next ids are still free (no other partition was created since); partitions k to
     * {@code partitions - 1} are created as {@link #createTopic} would have.
     *
     * @return the partitions created now (empty when the topic was whole).
     * @throws IllegalArgumentException when no partition of the topic exists, its partitions are not a prefix with
     *                                  dense ids (one is damaged, or missing in the middle), or the ids that follow
     *                                  were taken by other partitions.
     */
    public synchronized List<PartitionState> completeTopic(
        final String topic, final int partitions, final int replicationFactor, final int[] hosts)
    {
        final List<PartitionState> existing = new ArrayList<>();
        for (final PartitionState state : store.all())
        {
            if (state.topicPartition().topic().equals(topic))
            {
                existing.add(state);
            }
        }
        if (existing.isEmpty())
        {
            throw new IllegalArgumentException("no partition of topic " + topic + " exists");
        }
        if (existing.size() >= partitions)
        {
            return List.of();
        }
        existing.sort(java.util.Comparator.comparingInt((PartitionState s) -> s.topicPartition().partition()));
        final int first = existing.get(0).partitionId();
        for (int p = 0; p < existing.size(); p++)
        {
            final PartitionState state = existing.get(p);
            if (state.topicPartition().partition() != p || state.partitionId() != first + p)
            {
                throw new IllegalArgumentException("topic " + topic + " cannot be completed: its partitions are not " +
                    "0.." + (existing.size() - 1) + " with ids from " + first + " (" + state + ")");
            }
        }
        if (store.size() != first + existing.size())
        {
            throw new IllegalArgumentException("topic " + topic + " cannot be completed: the ids after its " +
                existing.size() + " partition(s) are taken (" + store.size() + " partitions exist)");
        }
        if (replicationFactor < 1 || replicationFactor > hosts.length)
        {
            throw new IllegalArgumentException("need 1 <= replication factor (" + replicationFactor + ") <= hosts (" +
                hosts.length + ")");
        }
        checkBounds(partitions - existing.size(), replicationFactor, hosts);
        expectHosts(hosts, true);
        return createPartitions(topic, first, existing.size(), partitions, replicationFactor, hosts);
    }

    private List<PartitionState> createPartitions(final String topic, final int first, final int from,
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
            final int[] isr = liveMembers(ar);
            final boolean leaderAlive = isr.length > 0;
            final PartitionState state = store.create(new PartitionState(first + p, new TopicPartition(topic, p), ar,
                leaderAlive ? isr : new int[]{ ar[0] }, new int[0], new int[0],
                leaderAlive ? isr[0] : PartitionState.NO_LEADER, 0, 0));
            created.add(state);
            broadcast(state);
        }
        publish();
        return created;
    }

    /**
     * The bounds a topic must respect, checked before anything is created: at most {@code topic.partitions.max}
     * partitions, host ids of the cluster without repeats, and no host above {@code host.replicas.max} replicas
     * once the new ones (assigned round robin, as {@link #createTopic} does) are added to those it holds.
     */
    private void checkBounds(final int partitions, final int replicationFactor, final int[] hosts)
    {
        if (partitions > ctx.topicPartitionsMax())
        {
            throw new IllegalArgumentException(partitions + " partitions is more than " +
                ReplicationContext.TOPIC_PARTITIONS_MAX + "=" + ctx.topicPartitionsMax());
        }
        final int[] replicas = new int[channel.maxHosts()];
        for (final int host : hosts)
        {
            if (host < 0 || host >= replicas.length || replicas[host]++ > 0)
            {
                throw new IllegalArgumentException("hosts must be distinct ids in [0, " + replicas.length + "): " +
                    Arrays.toString(hosts));
            }
        }
        Arrays.fill(replicas, 0);
        for (final PartitionState state : store.all())
        {
            for (final int host : state.assignedReplicas())
            {
                if (host >= 0 && host < replicas.length)
                {
                    replicas[host]++;
                }
            }
        }
        final int first = store.size();
        for (int p = 0; p < partitions; p++)
        {
            for (int r = 0; r < replicationFactor; r++)
            {
                final int host = hosts[(first + p + r) % hosts.length];
                if (++replicas[host] > ctx.hostReplicasMax())
                {
                    throw new IllegalArgumentException("host " + host + " would hold more than " +
                        ReplicationContext.HOST_REPLICAS_MAX + "=" + ctx.hostReplicasMax() + " replicas");
                }
            }
        }
    }

    @Override
    public synchronized int doWork()
    {
        final long now = clock.time();
        final long stalled = now - lastDutyCycleMs - ctx.hostSessionTimeoutMs() / 2;
        if (lastDutyCycleMs > 0 && stalled > 0)
        {
            // The controller itself did not run for more than half a session (GC, a busy shared thread, an fsync):
            // heartbeats could not be heard, so that silence is not the hosts' fault. Sessions are extended by it.
            for (final Session session : sessionArray)
            {
                session.lastHeartbeatMs += stalled;
            }
        }
        lastDutyCycleMs = now;
        int work = 0;
        try
        {
            if (reconcilePending)
            {
                reconcilePending = false;
                work += reconcile();
            }
            routineHeartbeats = 0;
            work += channel.drainController(handler) - routineHeartbeats; // a heartbeat that changes nothing is no work
            for (final Session session : sessionArray)
            {
                if (session.alive && now - session.lastHeartbeatMs > ctx.hostSessionTimeoutMs())
                {
                    logger.log(System.Logger.Level.INFO, "host " + session.hostId + " session expired");
                    hostDied(session.hostId);
                    work++;
                }
                else if (session.alive && ctx.hostLiveness().isDown(session.hostId))
                {
                    logger.log(System.Logger.Level.INFO, "host " + session.hostId +
                        " reported down by its liveness source");
                    hostDied(session.hostId);
                    work++;
                }
            }
        }
        catch (final RuntimeException ex)
        {
            // A store write failed half-way through a decision (a host's death, an election): what it left undone
            // is decided again from the stored state, not forgotten. The scheduler reports the failure.
            reconcilePending = true;
            throw ex;
        }
        return work;
    }

    /**
     * Bring every partition in line with the hosts' liveness, as the events that were cut short would have: a dead
     * or missing leader is replaced (when a replica is eligible), dead members leave an ISR of more than one.
     *
     * @return partitions changed.
     */
    private int reconcile()
    {
        int changed = 0;
        for (final PartitionState state : store.all())
        {
            if (state.leader() == PartitionState.NO_LEADER || !isAlive(state.leader()))
            {
                changed += elect(state) != state ? 1 : 0;
                continue;
            }
            final int[] live = Arrays.stream(state.isr()).filter(this::isAlive).toArray();
            if (live.length != state.isr().length && state.isr().length > 1)
            {
                final PartitionState next = store.compareAndSet(state.version(),
                    withIsr(state, live, state.leader(), state.leaderEpoch()));
                if (null == next)
                {
                    reconcilePending = true;
                    continue;
                }
                broadcast(next);
                changed++;
            }
        }
        publish();
        return changed;
    }

    private void onMessage(final ControlMessage message)
    {
        final int sender = ControlMessageCodec.senderHost(message);
        if (sender < 0 || sender >= channel.maxHosts())
        {
            remoteLog.log(System.Logger.Level.WARNING, "controller host-out-of-range", "controller ignored a " +
                message.getClass().getSimpleName() + " naming host " + sender + ", outside [0, " +
                channel.maxHosts() + ")");
            return;
        }
        if (!inRegisteredIncarnation(message))
        {
            return;
        }
        if (message instanceof ControlMessage.Heartbeat heartbeat)
        {
            final Session session = sessions.get(heartbeat.hostId());
            // a session of unknown incarnation (a new controller's grace) is adopted by a heartbeat: only a host that
            // completed a registration heartbeats
            if (null != session && session.alive &&
                (session.incarnation == heartbeat.incarnation() || session.incarnation == -1))
            {
                final boolean adopted = session.incarnation == -1;
                session.incarnation = heartbeat.incarnation();
                session.lastHeartbeatMs = clock.time();
                if (adopted)
                {
                    electWhereLeaderless(heartbeat.hostId());
                }
                if (heartbeat.stateDigest() != digestOf(heartbeat.hostId()))
                {
                    resendStates(heartbeat.hostId());
                }
                else if (!adopted)
                {
                    routineHeartbeats++;
                }
            }
            else
            {
                channel.toHost(heartbeat.hostId(), new ControlMessage.SessionExpired(heartbeat.hostId()));
            }
        }
        else if (message instanceof ControlMessage.RegisterHost register)
        {
            register(register.hostId(), register.incarnation(), register.possibleDataLoss());
        }
        else if (message instanceof ControlMessage.UnregisterHost unregister)
        {
            final Session session = sessions.get(unregister.hostId());
            if (null != session && session.incarnation == unregister.incarnation() && session.alive)
            {
                hostDied(unregister.hostId());
            }
        }
        else if (message instanceof ControlMessage.AlterIsr alter)
        {
            alterIsr(alter);
        }
    }

    /**
     * @return whether a host's message carries the incarnation the host registered with, when the liveness source
     *         tracks incarnations ({@link HostLiveness#registeredIncarnation}): a registration, heartbeat or
     *         departure in another incarnation (delayed from an earlier life, or forged) is ignored, so an incarnation
     *         is never taken from a message.
     */
    private boolean inRegisteredIncarnation(final ControlMessage message)
    {
        final long claimed;
        final int hostId;
        if (message instanceof ControlMessage.RegisterHost register)
        {
            hostId = register.hostId();
            claimed = register.incarnation();
        }
        else if (message instanceof ControlMessage.Heartbeat heartbeat)
        {
            hostId = heartbeat.hostId();
            claimed = heartbeat.incarnation();
        }
        else if (message instanceof ControlMessage.UnregisterHost unregister)
        {
            hostId = unregister.hostId();
            claimed = unregister.incarnation();
        }
        else
        {
            return true;
        }
        final long registered = ctx.hostLiveness().registeredIncarnation(hostId);
        if (registered == HostLiveness.ANY_INCARNATION || registered == claimed)
        {
            return true;
        }
        remoteLog.log(System.Logger.Level.INFO, "controller unregistered-incarnation", "controller ignored a " +
            message.getClass().getSimpleName() + " of host " + hostId + " in incarnation " + claimed +
            " (registered: " + registered + ")");
        return false;
    }

    private void register(final int hostId, final long incarnation, final boolean possibleDataLoss)
    {
        Session session = sessions.get(hostId);
        if (null == session)
        {
            session = newSession(hostId);
        }
        else if (session.alive && session.incarnation != incarnation && !session.neverRegistered)
        {
            // A restart is a failure followed by a registration. An unknown incarnation (a new controller's grace
            // session) counts as a restart too: a running host re-registers only after its session expired.
            hostDied(hostId);
        }
        if (possibleDataLoss)
        {
            // Durable before the host hears Registered (then it forgets its own power-loss marker): a failed or
            // fenced write, or a controller that dies here, leaves the host unregistered, and it asks again.
            fenceRecovering(hostId);
        }
        session.incarnation = incarnation;
        session.neverRegistered = false;
        session.lastHeartbeatMs = clock.time();
        session.alive = true;
        channel.toHost(hostId, new ControlMessage.Registered(hostId, incarnation)); // before the states it may apply
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
        publish();
    }

    /**
     * Mark {@code hostId} as recovering from a possible power loss in every partition it replicates: not eligible to
     * lead until it has re-joined an ISR through a leader.
     *
     * @throws IllegalStateException when the state keeps changing under this controller (another controller).
     */
    private void fenceRecovering(final int hostId)
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
                    java.util.stream.IntStream.concat(Arrays.stream(state.recovering()),
                        java.util.stream.IntStream.of(hostId)).toArray(), without(state.eligible(), hostId)));
                if (null != next)
                {
                    broadcast(next);
                }
                state = null == next ? store.get(state.partitionId()) : next;
            }
        }
        publish();
    }

    /**
     * A host this controller learned of by its heartbeat (a grace session adopted after a failover) may be what a
     * leaderless partition waited for: no registration will come to trigger the election.
     */
    private void electWhereLeaderless(final int hostId)
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
            publish();
        }
    }

    private void hostDied(final int hostId)
    {
        final Session session = sessions.get(hostId);
        session.alive = false;
        for (final PartitionState state : store.all())
        {
            if (!state.assigned(hostId))
            {
                continue;
            }
            if (state.leader() == hostId)
            {
                elect(state);
            }
            else if (state.inIsr(hostId) && state.isr().length > 1)
            {
                final PartitionState next = store.compareAndSet(state.version(),
                    withIsr(state, without(state.isr(), hostId), state.leader(), state.leaderEpoch()));
                if (null == next)
                {
                    reconcilePending = true; // the state moved under this controller: decided again from it
                    continue;
                }
                broadcast(next);
            }
        }
        publish();
    }

    /**
     * Elect a leader for a partition whose leader is gone: the first live ISR member in AR order; failing that,
     * with unclean election enabled, the first live assigned replica; failing that, no leader (the last ISR
     * member stays in the ISR so that it can lead again when it returns).
     */
    private PartitionState elect(final PartitionState state)
    {
        final int[] liveIsr = eligibleInOrder(state, state.isr());
        final int[] liveElr = eligibleInOrder(state, state.eligible());
        PartitionState next;
        if (liveIsr.length > 0)
        {
            next = withIsr(state, liveIsr, liveIsr[0], state.leaderEpoch() + 1);
        }
        else if (liveElr.length > 0)
        {
            // KIP-966: no live ISR member, but this replica left the ISR while the HW could not move: it holds every
            // committed record, so electing it is clean
            logger.log(System.Logger.Level.INFO, "electing host " + liveElr[0] + " from the eligible replicas of " +
                state.topicPartition());
            next = withIsr(state, new int[]{ liveElr[0] }, liveElr[0], state.leaderEpoch() + 1);
        }
        else if (ctx.uncleanLeaderElectionEnable() && liveMembers(state.assignedReplicas()).length > 0)
        {
            final int leader = liveMembers(state.assignedReplicas())[0];
            uncleanElections++;
            logger.log(System.Logger.Level.WARNING, "unclean election of host " + leader + " for " +
                state.topicPartition() + ": committed records may be lost");
            next = state.with(new int[]{ leader }, new int[0], leader, state.leaderEpoch() + 1);
        }
        else
        {
            final int[] lastIsr = state.isr().length > 1 && state.leader() >= 0 ?
                new int[]{ state.leader() } : state.isr();
            if (state.leader() == PartitionState.NO_LEADER && Arrays.equals(lastIsr, state.isr()))
            {
                return state;
            }
            next = withIsr(state, lastIsr, PartitionState.NO_LEADER, state.leaderEpoch() + 1);
        }
        final PartitionState stored = store.compareAndSet(state.version(), next);
        if (null == stored)
        {
            reconcilePending = true; // the state moved under this controller: decided again from it
            return state;
        }
        broadcast(stored);
        return stored;
    }

    /** Live members of {@code candidates}, in AR order, that are not fenced after a power loss. */
    private int[] eligibleInOrder(final PartitionState state, final int[] candidates)
    {
        return Arrays.stream(liveInOrder(state.assignedReplicas(), candidates))
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
            eligible = java.util.stream.IntStream.concat(Arrays.stream(state.eligible()), Arrays.stream(removed))
                .filter((h) -> !PartitionState.contains(newIsr, h)).distinct().toArray();
        }
        return state.with(newIsr, eligible, leader, epoch);
    }

    private void alterIsr(final ControlMessage.AlterIsr request)
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
            valid &= state.assigned(host) && (state.inIsr(host) || isAliveIn(host, request.incarnationOf(host)));
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
            current = store.compareAndSet(state.version(), next);
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
                publish();
            }
        }
        channel.toHost(request.leaderId(), new ControlMessage.AlterIsrResponse(request.partitionId(), valid, current));
    }

    private long digestOf(final int hostId)
    {
        long digest = 0;
        for (final PartitionState state : snapshot)
        {
            if (state.assigned(hostId))
            {
                digest += state.digest();
            }
        }
        return digest;
    }

    private void resendStates(final int hostId)
    {
        for (final PartitionState state : store.all())
        {
            if (state.assigned(hostId))
            {
                channel.toHost(hostId, new ControlMessage.PartitionUpdate(state));
            }
        }
    }

    private void broadcast(final PartitionState state)
    {
        for (final int host : state.assignedReplicas())
        {
            channel.toHost(host, new ControlMessage.PartitionUpdate(state));
        }
    }

    private boolean isAlive(final int host)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive;
    }

    /**
     * @return whether {@code host} is alive in the incarnation a leader counted ({@code -1}: not stated, any live
     *         one). A host whose incarnation this controller does not know yet (grace after a failover) does not
     *         qualify: the leader asks again once the host's heartbeats have told.
     */
    private boolean isAliveIn(final int host, final long incarnation)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive && (incarnation < 0 || session.incarnation == incarnation);
    }

    /**
     * @return whether {@code host} restarted after a possible power loss and has not yet re-joined the ISR of every
     *         partition it replicates (diagnostics, simulation).
     */
    synchronized boolean unsynced(final int host)
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

    /**
     * @return whether a store write failed or missed half-way through a decision and the controller will decide
     *         again from the stored state at its next duty cycle (diagnostics, simulation).
     */
    synchronized boolean reconcilePending()
    {
        return reconcilePending;
    }

    /** @return whether the controller considers {@code host} alive. */
    public synchronized boolean hostAlive(final int host)
    {
        return isAlive(host);
    }

    /**
     * @return whether {@code host} has registered with this controller, or been heard from by heartbeat, and is
     *         alive: not merely given a grace session because partition state or a new topic names it.
     */
    public synchronized boolean hostRegistered(final int host)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive && !session.neverRegistered && session.incarnation >= 0;
    }

    private int[] liveMembers(final int[] hosts)
    {
        return Arrays.stream(hosts).filter(this::isAlive).toArray();
    }

    private int[] liveInOrder(final int[] ar, final int[] isr)
    {
        return Arrays.stream(ar).filter((h) -> PartitionState.contains(isr, h) && isAlive(h)).toArray();
    }

    private static int[] without(final int[] hosts, final int host)
    {
        return Arrays.stream(hosts).filter((h) -> h != host).toArray();
    }

    @Override
    public String roleName()
    {
        return "tidemark-controller";
    }
}
