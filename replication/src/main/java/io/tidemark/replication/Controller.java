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
import java.util.Comparator;
import java.util.List;
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
 * <p>
 * A façade over the parts that own the controller's state: {@link HostSessions} (who is alive, in which
 * incarnation), {@link PartitionStateChanges} (every stored change: elections, ISR changes, fences, new partitions),
 * {@link PartitionSnapshot} (the published metadata) and {@link ProducerIdBlock}. The façade owns the duty cycle
 * (its timing, the messages from hosts) and the monitor that serializes all of them; the parts take no lock.
 */
public final class Controller implements Agent
{
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ControlChannel channel;
    private final ControllerStore store;
    private final long controllerEpoch;
    private final HostSessions sessions = new HostSessions();
    private final PartitionSnapshot snapshot;
    private final PartitionStateChanges changes;
    private final ProducerIdBlock producerIds;
    private final Consumer<ControlMessage> handler = this::onMessage;
    private final System.Logger logger = System.getLogger(Controller.class.getName());
    private final RateLimitedLog remoteLog = new RateLimitedLog(logger);
    private long lastDutyCycleMs;
    /** Heartbeats of the drain under way that only renewed a session (an idle controller's thread parks deeper). */
    private int routineHeartbeats;

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
            sessions.expect(state.assignedReplicas(), false, clock.time());
        }
        this.snapshot = new PartitionSnapshot(store);
        this.changes = new PartitionStateChanges(this.ctx, store, channel, sessions, snapshot);
        this.producerIds = new ProducerIdBlock(store);
    }

    /**
     * Tell every host this controller has a session for that the controller of {@link #controllerEpoch()} is alive
     * ({@link ControlMessage.ControllerAlive}); the host process calls it every heartbeat interval. Thread-safe and
     * not serialized with {@link #doWork}: a duty cycle held up in a ZooKeeper write must not make the hosts depose a
     * controller that is slow but alive (the caller decides how long a stuck duty cycle may go on announcing).
     */
    public void announce()
    {
        sessions.announce(channel, controllerEpoch);
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
        sessions.shortenGrace(hostId, clock.time() + Math.max(0, graceMs), ctx.hostSessionTimeoutMs());
    }

    /**
     * @return the latest state of every partition the controller serves, by ascending partition id (an immutable
     *         snapshot; a partition whose stored state is damaged is left out: see {@link ControllerStore#damaged()}).
     */
    public PartitionState[] partitions()
    {
        return snapshot.partitions();
    }

    /** @return the latest state of a partition, or null. */
    public PartitionState partition(final int partitionId)
    {
        return snapshot.partition(partitionId);
    }

    /**
     * @return a producer id never handed out before by a controller over this store. Ids are reserved durably in
     *         blocks of 1000, so a restart skips at most the rest of a block.
     */
    public synchronized long allocateProducerId()
    {
        return producerIds.next();
    }

    /**
     * @return ISR shrinks this controller committed at a leader's request (a follower behind by time, or by count
     *         with {@code replica.lag.max.messages}); removals of dead hosts are not counted. Kafka's
     *         {@code IsrShrinksPerSec}, as a count since this controller started.
     */
    public synchronized long isrShrinks()
    {
        return changes.isrShrinks();
    }

    /** @return ISR expansions this controller committed at a leader's request (a follower that caught up). */
    public synchronized long isrExpansions()
    {
        return changes.isrExpansions();
    }

    /** @return unclean elections performed (each may have lost committed data). */
    public synchronized long uncleanElections()
    {
        return changes.uncleanElections();
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
        sessions.expect(hosts, true, clock.time());
        return changes.createPartitions(topic, store.size(), 0, partitions, replicationFactor, hosts);
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
        existing.sort(Comparator.comparingInt((PartitionState s) -> s.topicPartition().partition()));
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
        sessions.expect(hosts, true, clock.time());
        return changes.createPartitions(topic, first, existing.size(), partitions, replicationFactor, hosts);
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
            sessions.extend(stalled);
        }
        lastDutyCycleMs = now;
        int work = 0;
        try
        {
            work += changes.reconcileIfPending();
            routineHeartbeats = 0;
            work += channel.drainController(handler) - routineHeartbeats; // a heartbeat that changes nothing is no work
            for (final HostSessions.Session session : sessions.all())
            {
                if (session.expired(now, ctx.hostSessionTimeoutMs()))
                {
                    logger.log(System.Logger.Level.INFO, "host " + session.hostId() + " session expired");
                    hostDied(session.hostId());
                    work++;
                }
                else if (session.alive() && ctx.hostLiveness().isDown(session.hostId()))
                {
                    logger.log(System.Logger.Level.INFO, "host " + session.hostId() +
                        " reported down by its liveness source");
                    hostDied(session.hostId());
                    work++;
                }
            }
        }
        catch (final RuntimeException ex)
        {
            // A store write failed half-way through a decision (a host's death, an election): what it left undone
            // is decided again from the stored state, not forgotten. The scheduler reports the failure.
            changes.reconcileLater();
            throw ex;
        }
        return work;
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
            final int hostId = heartbeat.hostId();
            final int outcome = sessions.heartbeat(hostId, heartbeat.incarnation(), clock.time());
            if (HostSessions.HEARTBEAT_REJECTED == outcome)
            {
                channel.toHost(hostId, new ControlMessage.SessionExpired(hostId));
                return;
            }
            final boolean adopted = HostSessions.HEARTBEAT_ADOPTED == outcome;
            if (adopted)
            {
                changes.electWhereLeaderless(hostId);
            }
            if (heartbeat.stateDigest() != snapshot.digestOf(hostId))
            {
                changes.resendStates(hostId);
            }
            else if (!adopted)
            {
                routineHeartbeats++;
            }
        }
        else if (message instanceof ControlMessage.RegisterHost register)
        {
            register(register.hostId(), register.incarnation(), register.possibleDataLoss());
        }
        else if (message instanceof ControlMessage.UnregisterHost unregister)
        {
            if (sessions.aliveAs(unregister.hostId(), unregister.incarnation()))
            {
                hostDied(unregister.hostId());
            }
        }
        else if (message instanceof ControlMessage.AlterIsr alter)
        {
            changes.alterIsr(alter);
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
        if (sessions.registering(hostId, incarnation))
        {
            // A restart is a failure followed by a registration. An unknown incarnation (a new controller's grace
            // session) counts as a restart too: a running host re-registers only after its session expired.
            hostDied(hostId);
        }
        if (possibleDataLoss)
        {
            // Durable before the host hears Registered (then it forgets its own power-loss marker): a failed or
            // fenced write, or a controller that dies here, leaves the host unregistered, and it asks again.
            changes.fenceRecovering(hostId);
        }
        sessions.registered(hostId, incarnation, clock.time());
        logger.log(System.Logger.Level.INFO, "host " + hostId + " registered (incarnation " + incarnation + ")");
        channel.toHost(hostId, new ControlMessage.Registered(hostId, incarnation)); // before the states it may apply
        changes.hostRegistered(hostId);
    }

    private void hostDied(final int hostId)
    {
        sessions.died(hostId);
        changes.hostDied(hostId);
    }

    /**
     * @return whether {@code host} restarted after a possible power loss and has not yet re-joined the ISR of every
     *         partition it replicates (diagnostics, simulation).
     */
    synchronized boolean unsynced(final int host)
    {
        return changes.unsynced(host);
    }

    /**
     * @return whether a store write failed or missed half-way through a decision and the controller will decide
     *         again from the stored state at its next duty cycle (diagnostics, simulation).
     */
    synchronized boolean reconcilePending()
    {
        return changes.reconcilePending();
    }

    /** @return whether the controller considers {@code host} alive. */
    public synchronized boolean hostAlive(final int host)
    {
        return sessions.isAlive(host);
    }

    /**
     * @return whether {@code host} has registered with this controller, or been heard from by heartbeat, and is
     *         alive: not merely given a grace session because partition state or a new topic names it.
     */
    public synchronized boolean hostRegistered(final int host)
    {
        return sessions.isRegistered(host);
    }

    @Override
    public String roleName()
    {
        return "tidemark-controller";
    }
}
