package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.format.RecordEncoder;

import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;

import java.nio.file.Path;

/**
 * One replica host running in this process, for clusters whose hosts are separate processes (module {@code host}
 * runs one per process over Aeron and ZooKeeper). The host's agents are scheduled here as the context's
 * {@link ReplicationContext.ThreadingMode} says; its controller is wherever the {@link ControlChannel} leads.
 * <p>
 * The incarnation must grow with every start of the host id, across processes and machines (a process gets it from
 * a durable counter): the protocol tells a restarted host from its previous life by it.
 * <p>
 * Thread-safe.
 */
public final class ReplicaNode implements AutoCloseable
{
    private final ReplicaHost host;
    private final ControlChannel channel;
    private final AgentScheduler scheduler;
    private final String group;
    private boolean stopped;

    private ReplicaNode(final int hostId, final Path dir, final long incarnation, final int maxHosts,
        final ReplicationContext ctx, final Transport transport, final ControlChannel channel,
        final ProducerSessions sessions, final ErrorHandler errorHandler,
        final java.util.function.Consumer<org.agrona.concurrent.status.CountersManager> beforeStart)
    {
        final ReplicationContext concluded = ctx.conclude();
        this.channel = channel;
        this.host = new ReplicaHost(hostId, dir, incarnation, maxHosts, concluded, transport, channel, sessions,
            errorHandler);
        this.scheduler = new AgentScheduler(concluded.threadingMode(),
            concluded.logMaintenanceThread() ? concluded.logMaintenanceIdleStrategySupplier() : null,
            concluded.idleStrategySupplier(), errorHandler);
        this.group = "host-" + hostId;
        beforeStart.accept(host.countersManager());
        host.start();
        scheduler.start(group, host.agents(), host.housekeepingAgent());
    }

    /**
     * Recover the host's directory and start its agents: it registers with the controller, which answers with its
     * partitions.
     *
     * @param hostId       the host's id in {@code [0, maxHosts)}.
     * @param dir          the host's directory (replica logs, counters).
     * @param incarnation  this start's incarnation, larger than every earlier one of this host id.
     * @param maxHosts     host ids of the cluster are in {@code [0, maxHosts)}.
     * @param ctx          replication configuration.
     * @param transport    carries fetches between hosts.
     * @param channel      carries control messages to and from the controller.
     * @param sessions     producer sessions whose listeners hear the outcomes of produce requests led here.
     * @param errorHandler agent errors.
     * @return the running host.
     */
    public static ReplicaNode start(final int hostId, final Path dir, final long incarnation, final int maxHosts,
        final ReplicationContext ctx, final Transport transport, final ControlChannel channel,
        final ProducerSessions sessions, final ErrorHandler errorHandler)
    {
        return start(hostId, dir, incarnation, maxHosts, ctx, transport, channel, sessions, errorHandler,
            (counters) -> { });
    }

    /**
     * As {@link #start(int, Path, long, int, ReplicationContext, Transport, ControlChannel, ProducerSessions,
     * ErrorHandler)}, letting the caller allocate counters of its own in the host's counters file (read by
     * {@code tidemark stat}) before the host's agents start (the counters manager is not thread-safe; the agents
     * allocate the replicas' counters).
     *
     * @param beforeStart called once with the host's counters manager, before any agent runs.
     * @return the running host.
     */
    public static ReplicaNode start(final int hostId, final Path dir, final long incarnation, final int maxHosts,
        final ReplicationContext ctx, final Transport transport, final ControlChannel channel,
        final ProducerSessions sessions, final ErrorHandler errorHandler,
        final java.util.function.Consumer<org.agrona.concurrent.status.CountersManager> beforeStart)
    {
        if (hostId < 0 || hostId >= maxHosts)
        {
            throw new IllegalArgumentException("host id " + hostId + " outside [0, " + maxHosts + ")");
        }
        return new ReplicaNode(hostId, dir, incarnation, maxHosts, ctx, transport, channel, sessions, errorHandler,
            beforeStart);
    }

    /** @return the host's id. */
    public int hostId()
    {
        return host.hostId();
    }

    /** @return this start's incarnation. */
    public long incarnation()
    {
        return host.incarnation();
    }

    /** @return the host's directory. */
    public Path directory()
    {
        return host.directory();
    }

    /** @return the partitions this host leads, for servers in front of it (thread-safe). */
    public LeaderPartitions leaderPartitions()
    {
        return host.leaderPartitions();
    }

    /**
     * @return why this host stopped itself (fail-stop: a durable write of its replication state failed, or a log
     *         went offline; it was also handed to the error handler), or null while it runs. A stopped host does
     *         nothing more: {@link #halt()} it and start a new incarnation (a process exits and is restarted).
     */
    public io.tidemark.store.StorageException failure()
    {
        return host.failure();
    }

    /**
     * @param partitionId a partition id.
     * @return whether this host leads the partition and has taken up the role.
     */
    public boolean isLeading(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null != replica && null != replica.leaderState;
    }

    /**
     * @param tp a topic partition.
     * @return its partition id, when this host has a replica of it; -1 otherwise. Allocation-free.
     */
    public int partitionIdOf(final TopicPartition tp)
    {
        for (final Replica replica : host.replicas())
        {
            if (replica.topicPartition.equals(tp))
            {
                return replica.partitionId;
            }
        }
        return -1;
    }

    /**
     * @param partitionId a partition id.
     * @return the partition state this host last applied, or null when it has no replica of it.
     */
    public PartitionState appliedState(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? null : replica.state;
    }

    /**
     * @param partitionId a partition id.
     * @return the log end offset of this host's replica, or -1 when it has none.
     */
    public long logEndOffset(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? -1 : replica.log.logEndOffset();
    }

    /**
     * @param partitionId a partition id.
     * @return the log start offset of this host's replica, or -1 when it has none.
     */
    public long logStartOffset(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? -1 : replica.log.logStartOffset();
    }

    /**
     * Produce a run of records (encoded with {@code RecordEncoder}) to a partition this host leads. Non-blocking:
     * the outcome arrives at the session's listener on the host agent's thread (never for acks=0).
     *
     * @return NONE when queued; NOT_LEADER when this host does not lead the partition; BACK_PRESSURED when the
     *         leader's queue is full; INVALID_RECORDS when the request cannot fit the queue or acks is out of range.
     */
    public ReplicationError produceRecords(final int session, final int partitionId, final long correlationId,
        final int acks, final int timeoutMs, final long producerId, final short producerEpoch,
        final int baseSequence, final DirectBuffer records, final int offset, final int length)
    {
        return host.leaderPartitions().produce(session, partitionId, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, offset, length);
    }

    /**
     * Open a reader on the log of a partition this host leads; read it only below {@link #highWatermark} (the
     * committed records). A reader whose leadership has moved fails with {@code CLOSED} once the log closes.
     *
     * @return a reader, or null when this host does not lead the partition.
     */
    public io.tidemark.store.LogReader openLeaderReader(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica || null == replica.leaderState ? null : replica.log.openReader();
    }

    /**
     * @return the high watermark of a partition this host leads; -1 when it does not lead it, and -1 while, newly
     *         elected, its high watermark is still below the start of its epoch (it starts behind the old leader's;
     *         offsets shown to clients never go back).
     */
    public long highWatermark(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        final LeaderState leader = null == replica ? null : replica.leaderState;
        return null == leader ? -1 : PartitionReader.exposedHighWatermark(leader);
    }

    /** @return the leader epoch this host's replica of the partition follows or leads, or -1. */
    public int leaderEpoch(final int partitionId)
    {
        final Replica replica = host.replica(partitionId);
        return null == replica ? -1 : replica.leaderEpoch;
    }

    /**
     * Run one duty cycle of the host's agents, when the context's threading mode is
     * {@link ReplicationContext.ThreadingMode#INVOKER}: the process schedules them itself (module {@code host} runs
     * them on one thread with its gateway and, where it can, its media driver).
     *
     * @return work done (0: idle).
     * @throws IllegalStateException in any other threading mode.
     */
    public int invokeAgents()
    {
        return scheduler.invoke();
    }

    /**
     * @return fetch and epoch requests this host dropped unanswered: malformed, naming a replica other than their
     *         sender, or from an incarnation the follower's host did not register with. Read from the host agent's
     *         thread without synchronization: a diagnostic figure.
     */
    public long droppedFetchRequests()
    {
        return host.droppedRequests();
    }

    /** Stop cleanly: the controller hears first, so leadership moves away at once; logs close cleanly. */
    @Override
    public synchronized void close()
    {
        if (stopped)
        {
            return;
        }
        stopped = true;
        channel.toController(host.hostId(), new ControlMessage.UnregisterHost(host.hostId(), host.incarnation()));
        scheduler.stop(group);
        scheduler.close();
        host.close();
    }

    /** Stop as a kill would: agents stop, files stay as the OS has them (tests of recovery in one process). */
    public synchronized void halt()
    {
        if (stopped)
        {
            return;
        }
        stopped = true;
        scheduler.stop(group);
        scheduler.close();
        host.halt();
    }
}
