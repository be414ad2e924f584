package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.StorageException;
import io.tidemark.store.file.CountersFile;
import org.agrona.ErrorHandler;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A replica host: a directory of replica logs with an id, serving as leader or follower for each partition
 * assigned to it. Its agents are the {@link ReplicaHostAgent} and one {@link FollowerFetcher} per other host;
 * the cluster schedules them ({@link ReplicationContext.ThreadingMode}).
 * <p>
 * Lifecycle: {@link #start()} registers with the controller, which answers with the host's partitions; a host is
 * then stopped cleanly ({@link #close()}: leadership moves away first, logs close cleanly) or killed
 * ({@link #halt()}: its threads are already stopped by the cluster, its files stay as the OS would leave them).
 * A restart is a new {@code ReplicaHost} over the same directory with a new incarnation: recovery, then it
 * rejoins as a follower.
 * <p>
 * Role changes and the fetch/produce paths run on the host agent's thread; {@link #replica} is safe from any
 * thread.
 * <p>
 * A façade over parts that own their state: {@link HostRegistration} (the registration with the controller and the
 * power-loss marker), {@link HostLogs} (the logs opened at start and the pretouch budget) and {@link ReplicaRoles}
 * (the fetchers and each replica's role). The host keeps the replica table, the counters file and its lifecycle.
 */
public final class ReplicaHost
{
    private final int hostId;
    private final Path dir;
    private final long incarnation;
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final Transport transport;
    private final ControlChannel channel;
    private final ErrorHandler errorHandler;
    private final Int2ObjectHashMap<Replica> replicasById = new Int2ObjectHashMap<>();
    private volatile Replica[] replicas = new Replica[0];
    private final ReplicaRoles roles;
    private final FetchServer fetchServer;
    private final ProduceHandler produceHandler;
    private final ReplicaHostAgent agent;
    private final CountersFile counters;
    private final LeaderPartitions leaderPartitions = new LeaderPartitions(this);
    private final FailStop failStop;
    private final HostRegistration registration;
    private final HostLogs logs;
    private boolean stopAnnounced;
    /** The thread that ran the last duty cycle, for {@link #wakeUp()}. */
    private volatile Thread dutyThread;
    /** Whether the last duty cycle found no work, so its thread may be parked in its idle strategy. */
    private volatile boolean mayBeParked;
    /** Opens new replicas off the agent thread where that thread also serves the network; null: opened inline. */
    private final ReplicaOpener opener;
    private final ReplicaOpener.Handler onOpened = new ReplicaOpener.Handler()
    {
        public void opened(final Replica replica, final PartitionState latest)
        {
            add(replica);
            apply(latest);
        }

        public void failed(final PartitionState state, final Throwable failure)
        {
            if (failure instanceof RuntimeException runtime) // a StorageException among them: the agent decides
            {
                throw runtime;
            }
            if (failure instanceof Error error)
            {
                throw error;
            }
            throw new IllegalStateException("cannot open the replica of " + state.topicPartition(), failure);
        }
    };
    private final RateLimitedLog remoteLog = new RateLimitedLog(System.getLogger(ReplicaHost.class.getName()));

    ReplicaHost(final int hostId, final Path dir, final long incarnation, final int maxHosts,
        final ReplicationContext ctx, final Transport transport, final ControlChannel channel,
        final ProducerSessions sessions, final ErrorHandler errorHandler)
    {
        this.hostId = hostId;
        this.dir = dir;
        this.incarnation = incarnation;
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.transport = transport;
        this.channel = channel;
        this.errorHandler = errorHandler;
        try
        {
            Files.createDirectories(dir);
            this.counters = CountersFile.create(dir.resolve("counters.dat"), countersCapacity(ctx, maxHosts),
                clock.time());
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot prepare host directory " + dir, ex);
        }
        this.registration = new HostRegistration(hostId, incarnation, dir, ctx, errorHandler);
        this.logs = new HostLogs(hostId, dir, ctx, counters.manager(), errorHandler);
        this.failStop = new FailStop(hostId, errorHandler);
        final FollowerFetcher[] fetchers = new FollowerFetcher[maxHosts];
        for (int other = 0; other < maxHosts; other++)
        {
            if (other != hostId)
            {
                fetchers[other] = new FollowerFetcher(hostId, other, incarnation, transport, ctx, errorHandler,
                    failStop);
            }
        }
        this.fetchServer = new FetchServer(hostId, transport, ctx, replicasById, this::requestIsrChange);
        this.produceHandler = new ProduceHandler(ctx, sessions);
        this.roles = new ReplicaRoles(hostId, ctx, clock, sessions, fetchers);
        this.agent = new ReplicaHostAgent(this, ctx, errorHandler);
        channel.onQueuedForHost(hostId, this::wakeUp);
        // a host process: the agent thread runs the media driver and the gateway too (see ReplicaOpener)
        this.opener = ctx.logMaintenanceThread() && ctx.threadingMode() == ReplicationContext.ThreadingMode.INVOKER ?
            new ReplicaOpener(hostId, errorHandler, this::wakeUp) : null;
    }

    /** @return this host's id. */
    public int hostId()
    {
        return hostId;
    }

    /** @return this host's incarnation (changes with every restart). */
    public long incarnation()
    {
        return incarnation;
    }

    /** @return the host's directory. */
    public Path directory()
    {
        return dir;
    }

    /**
     * On the duty thread, at the end of each cycle: note the thread and whether it found work, for
     * {@link #wakeUp()}. Writes the volatile fields only when they change.
     */
    void onDutyCycle(final boolean worked)
    {
        final Thread current = Thread.currentThread();
        if (dutyThread != current)
        {
            dutyThread = current;
        }
        if (mayBeParked == worked)
        {
            mayBeParked = !worked;
        }
    }

    /**
     * From any thread, after queuing produce requests, a control message for this host or an opened replica: unpark
     * the duty thread when its last cycle found no work, so that the work does not wait out its idle strategy's park (up to 1 ms, or {@code QuietIdleStrategy}'s deeper
     * park once the host was quiet; a host's wait for a datagram ends by {@link ReplicationContext#dutyWakeUp}). A
     * hint: a cycle that began before the request was queued and ends idle parks
     * anyway, and the request waits for the park as it would without the hint.
     */
    void wakeUp()
    {
        final Thread thread = dutyThread;
        if (mayBeParked && null != thread)
        {
            LockSupport.unpark(thread);
            ctx.dutyWakeUp().run();
        }
    }

    /** @return the partitions this host leads, for servers in front of it (thread-safe). */
    public LeaderPartitions leaderPartitions()
    {
        return leaderPartitions;
    }

    /**
     * @return why this host stopped itself (fail-stop: a durable write of its replication state failed, or a log
     *         went offline), or null while it runs. A stopped host does nothing more; restart it (kill, then start a
     *         new incarnation), and recovery rebuilds its state from the disk.
     */
    public StorageException failure()
    {
        return failStop.failure();
    }

    FailStop failStop()
    {
        return failStop;
    }

    /**
     * Once, on the host agent's thread after a fail-stop: leaderships are given up (waiting produce requests fail
     * with NOT_LEADER: their outcome is unknown) and the controller hears that the host is gone, so that it elects
     * elsewhere at once rather than after a session timeout.
     */
    void announceStop()
    {
        if (stopAnnounced)
        {
            return;
        }
        stopAnnounced = true;
        for (final Replica replica : replicas)
        {
            roles.resign(replica);
        }
        channel.toController(hostId, new ControlMessage.UnregisterHost(hostId, incarnation));
        transport.hostDown(hostId);
    }

    /**
     * @return the agent that runs this host's replica logs' background agents on the log-maintenance thread
     *         ({@link ReplicationContext#logMaintenanceThread()}), or null when the host agent runs them.
     */
    Agent housekeepingAgent()
    {
        if (!ctx.logMaintenanceThread())
        {
            return null;
        }
        return new Agent()
        {
            public int doWork()
            {
                int work = 0;
                final long now = ctx.epochClock().time();
                for (final Replica replica : replicas)
                {
                    try
                    {
                        work += replica.housekeeping(now, ctx.highWatermarkCheckpointIntervalMs(), errorHandler);
                    }
                    catch (final Exception ex)
                    {
                        errorHandler.onError(ex);
                    }
                }
                return work;
            }

            public String roleName()
            {
                return "tidemark-logs-host-" + hostId;
            }
        };
    }

    /** @return the host's agents, to schedule: the host agent first, then the fetchers. */
    List<Agent> agents()
    {
        final List<Agent> agents = new ArrayList<>();
        agents.add(agent);
        for (final FollowerFetcher fetcher : roles.fetchers())
        {
            if (null != fetcher)
            {
                agents.add(fetcher);
            }
        }
        return agents;
    }

    /**
     * Record this boot, then open (recover) every replica log of this host before it registers: a log whose recovery
     * found that flushed records are gone (a disk that lost blocks it had acknowledged) has lost records it may have
     * acknowledged, as after a power loss, and the controller must hear it with the registration (it fences the
     * host's replicas until they re-join an ISR). The logs are kept open for the replicas the controller's states
     * then name.
     */
    void start()
    {
        registration.recordBoot();
        try
        {
            if (logs.openAll())
            {
                registration.flushedDataLost();
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open the replica logs of host " + hostId, ex);
        }
        transport.hostUp(hostId);
        channel.clearHost(hostId);
    }

    /**
     * @return the message the host sends every heartbeat interval: its registration until the controller
     *         acknowledged it (a restart must be seen as one, and its power-loss flag must arrive), heartbeats after.
     */
    ControlMessage livenessMessage()
    {
        return registration.livenessMessage(stateDigest());
    }

    void onRegistered(final long registeredIncarnation)
    {
        registration.onRegistered(registeredIncarnation);
    }

    boolean isRegistered()
    {
        return registration.isRegistered();
    }

    /** @return whether this incarnation reported a possible data loss when it registered (diagnostics, simulation). */
    boolean startedWithPossibleDataLoss()
    {
        return registration.startedWithPossibleDataLoss();
    }

    void onSessionExpired()
    {
        registration.onSessionExpired();
    }

    ControlChannel channel()
    {
        return channel;
    }

    FetchServer fetchServer()
    {
        return fetchServer;
    }

    ProduceHandler produceHandler()
    {
        return produceHandler;
    }

    Replica[] replicas()
    {
        return replicas;
    }

    /** @return the replica of a partition on this host, or null. Any thread. */
    Replica replica(final int partitionId)
    {
        for (final Replica replica : replicas)
        {
            if (replica.partitionId == partitionId)
            {
                return replica;
            }
        }
        return null;
    }

    /** @return a digest of the partition states this host has applied (see {@link ControlMessage.Heartbeat}). */
    long stateDigest()
    {
        long digest = 0;
        for (final Replica replica : replicas)
        {
            final PartitionState state = replica.state;
            if (null != state)
            {
                digest += state.digest();
            }
        }
        return digest;
    }

    /**
     * Counters a host may need: per replica its log's four, its own four and two per assigned replica (at most the
     * cluster's hosts), for {@code host.replicas.max} replicas, and room for the host process's own (the messages
     * dropped at its edge).
     */
    static int countersCapacity(final ReplicationContext ctx, final int maxHosts)
    {
        return ctx.hostReplicasMax() * (8 + 2 * maxHosts) + 256;
    }

    /** Keep the state just applied beside the replica's log: the host's view, for repairing a damaged stored copy. */
    private void keepView(final Replica replica, final PartitionState state)
    {
        try
        {
            PartitionStateFile.write(replica.log.directory(), state);
        }
        catch (final IOException ex)
        {
            remoteLog.log(System.Logger.Level.WARNING, "host view", "host " + hostId + " cannot keep its view of " +
                state.topicPartition() + " (" + PartitionStateFile.NAME + "): " + ex);
        }
    }

    /** @return the manager of the host's counters file (not thread-safe: allocate before the agents run). */
    org.agrona.concurrent.status.CountersManager countersManager()
    {
        return counters.manager();
    }

    /** @return fetch and epoch requests dropped unanswered (see {@link FetchServer#droppedRequests()}). */
    long droppedRequests()
    {
        return fetchServer.droppedRequests();
    }

    /** @return the fetcher replicating from {@code leaderHost} (diagnostics and tests). */
    FollowerFetcher fetcher(final int leaderHost)
    {
        return roles.fetcher(leaderHost);
    }

    void requestIsrChange(final Replica replica, final LeaderState leader, final int[] newIsr)
    {
        leader.requestChange(newIsr, clock.time());
        channel.toController(hostId, new ControlMessage.AlterIsr(replica.partitionId, hostId, leader.epoch,
            leader.isrVersion(), newIsr, incarnationsOf(leader, newIsr)));
    }

    void resendIsrChange(final Replica replica, final LeaderState leader, final int[] newIsr)
    {
        channel.toController(hostId, new ControlMessage.AlterIsr(replica.partitionId, hostId, leader.epoch,
            leader.pendingBaseVersion(), newIsr, incarnationsOf(leader, newIsr)));
    }

    /** @return the incarnation whose fetches the leader counted, for each member of {@code isr} (-1: unknown). */
    private long[] incarnationsOf(final LeaderState leader, final int[] isr)
    {
        final long[] incarnations = new long[isr.length];
        for (int i = 0; i < isr.length; i++)
        {
            final FollowerState follower = isr[i] == hostId ? null : leader.follower(isr[i]);
            incarnations[i] = isr[i] == hostId ? incarnation : null == follower ? -1 : follower.incarnation;
        }
        return incarnations;
    }

    void onAlterIsrResponse(final ControlMessage.AlterIsrResponse response)
    {
        final Replica replica = replicasById.get(response.partitionId());
        if (null == replica)
        {
            return;
        }
        final LeaderState leader = replica.leaderState;
        if (null != leader && !response.accepted())
        {
            leader.changeRejected(response.current());
        }
        if (null != response.current())
        {
            apply(response.current());
        }
    }

    /** Apply a partition state from the controller: open the replica if new, change role if needed. */
    void apply(final PartitionState state)
    {
        if (!state.assigned(hostId))
        {
            return;
        }
        if (!roles.withinCluster(state.assignedReplicas()) || state.leader() >= roles.clusterSize())
        {
            // host ids this cluster does not have (the codec bounds them by the largest cluster only)
            remoteLog.log(System.Logger.Level.WARNING, "host state-out-of-range", "host " + hostId + " ignored a " +
                "partition state naming hosts outside [0, " + roles.clusterSize() + "): " + state);
            return;
        }
        Replica replica = replicasById.get(state.partitionId());
        if (null == replica)
        {
            if (replicas.length >= ctx.hostReplicasMax())
            {
                remoteLog.log(System.Logger.Level.ERROR, "host replicas-max", "host " + hostId + " holds " +
                    replicas.length + " replicas, " + ReplicationContext.HOST_REPLICAS_MAX + "=" +
                    ctx.hostReplicasMax() + ": not opening " + state.topicPartition());
                return;
            }
            if (null != opener)
            {
                if (opener.isOpening(state.partitionId()))
                {
                    opener.newer(state);
                }
                else
                {
                    final io.tidemark.store.Log opened = logs.takeOpenedAtStart(state);
                    opener.open(state, () -> logs.openReplica(state, opened)); // one open at a time: the budget holds
                }
                return; // applied once open (collectOpened)
            }
            replica = logs.openReplica(state, logs.takeOpenedAtStart(state));
            add(replica);
        }
        final PartitionState known = replica.state;
        if (null != known && (state.leaderEpoch() < known.leaderEpoch() ||
            (state.leaderEpoch() == known.leaderEpoch() && state.version() <= known.version())))
        {
            return;
        }
        replica.state = state;
        keepView(replica, state);
        if (state.leader() == hostId)
        {
            final LeaderState leader = replica.leaderState;
            if (null == leader || leader.epoch != state.leaderEpoch())
            {
                roles.becomeLeader(replica, state);
            }
            else
            {
                leader.apply(state);
                leader.maybeAdvanceHighWatermark();
            }
        }
        else
        {
            roles.becomeFollower(replica, state);
        }
        replica.leaderEpoch = state.leaderEpoch();
        replica.leaderId = state.leader();
    }

    private void add(final Replica replica)
    {
        replicasById.put(replica.partitionId, replica);
        final Replica[] next = Arrays.copyOf(replicas, replicas.length + 1);
        next[replicas.length] = replica;
        replicas = next;
    }

    /**
     * Take the replicas the {@link ReplicaOpener} opened and apply to each the newest state received for it (agent
     * thread).
     *
     * @return how many.
     * @throws StorageException (or another exception) when an open failed: as an open on the agent thread would.
     */
    int collectOpened()
    {
        return null == opener ? 0 : opener.collect(onOpened);
    }

    /**
     * Clean stop (agents already stopped): checkpoint and close every replica, then the counters. A host that
     * stopped itself (fail-stop) writes nothing more: it halts instead.
     */
    void close()
    {
        if (failStop.stopped())
        {
            halt();
            return;
        }
        for (final Replica replica : replicas)
        {
            try
            {
                replica.close();
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
            }
        }
        if (null != opener)
        {
            opener.close(false);
        }
        logs.close();
        counters.close();
        transport.hostDown(hostId);
    }

    /** Kill (agents already stopped): leave the files as a killed process would. */
    void halt()
    {
        transport.hostDown(hostId);
        for (final Replica replica : replicas)
        {
            replica.halt();
        }
        if (null != opener)
        {
            opener.close(true);
        }
        logs.halt();
        counters.close();
    }

    @Override
    public String toString()
    {
        return "ReplicaHost{" + hostId + ", incarnation=" + incarnation + ", replicas=" + Arrays.toString(replicas) +
            '}';
    }
}
