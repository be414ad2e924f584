package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.ProduceMessages;
import io.tidemark.replication.spi.ControllerStore;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.function.BooleanSupplier;

/**
 * Replicated topics inside one JVM: a controller and M replica hosts (each a log directory with an id), connected
 * by an {@link InProcessTransport} and a {@link ControlChannel}, with the agents scheduled as the
 * {@link ReplicationContext.ThreadingMode} says. The partition-level API used by clients is here: produce a run of
 * records with an acks mode (non-blocking; the outcome arrives at the session's {@link ProduceListener}), read
 * committed records ({@link #openReader}), find a partition's leader. Host lifecycle for tests and operators:
 * stop cleanly, kill, restart.
 * <pre>{@code
 * ReplicationCluster cluster = ReplicationCluster.start(Path.of("data"), 3, new ReplicationContext());
 * cluster.createTopic("orders", 4, 3);
 * cluster.awaitLeaders("orders", 5_000);
 * int session = cluster.sessions().register((tp, id, offset, error) -> ...);
 * cluster.produce(session, new TopicPartition("orders", 0), 1L, Acks.ALL, 5_000, key, 0, 3, value, 0, 10);
 * }</pre>
 * Thread-safe.
 */
public final class ReplicationCluster implements AutoCloseable
{
    private final Path root;
    private final int hostCount;
    private final ReplicationContext ctx;
    private final Transport transport;
    private final ControlChannel channel;
    private volatile Controller controller;
    private ControllerStore controllerStore;
    private final AgentScheduler scheduler;
    private final ProducerSessions sessions = new ProducerSessions();
    private final ErrorHandler errorHandler;
    private final java.util.concurrent.atomic.AtomicReferenceArray<ReplicaHost> hosts;
    private final long[] incarnations;
    private final System.Logger logger = System.getLogger(ReplicationCluster.class.getName());

    private ReplicationCluster(final Path root, final int hostCount, final ReplicationContext ctx,
        final Transport customTransport)
    {
        this.root = root;
        this.hostCount = hostCount;
        this.ctx = ctx.conclude();
        this.errorHandler = null != ctx.errorHandler() ? ctx.errorHandler() :
            (t) -> logger.log(System.Logger.Level.ERROR, "replication agent error", t);
        this.transport = null != customTransport ? customTransport :
            new InProcessTransport(hostCount, ctx.transportRequestRingBytes(), ctx.transportResponseRingBytes());
        this.channel = new ControlChannel(hostCount);
        this.controllerStore = this.ctx.controllerStoreFactory().apply(root.resolve("controller"));
        this.controller = new Controller(controllerStore, this.ctx, channel);
        this.scheduler = new AgentScheduler(ctx.threadingMode(),
            ctx.logMaintenanceThread() ? ctx.logMaintenanceIdleStrategySupplier() : null, ctx.idleStrategySupplier(),
            errorHandler);
        this.hosts = new java.util.concurrent.atomic.AtomicReferenceArray<>(hostCount);
        this.incarnations = new long[hostCount];
        scheduler.start("controller", List.of(controller));
        for (int id = 0; id < hostCount; id++)
        {
            startHost(id);
        }
        final long needed = (long)this.ctx.replicaFetchMaxBytes() + Transport.FETCH_RESPONSE_OVERHEAD;
        if (transport.maxMessageLength() < needed)
        {
            close();
            throw new io.tidemark.store.ConfigException(ReplicationContext.REPLICA_FETCH_MAX_BYTES,
                this.ctx.replicaFetchMaxBytes() + " bytes per fetch need messages of " + needed + " bytes, but the " +
                "transport (" + transport.getClass().getSimpleName() + ") carries at most " +
                transport.maxMessageLength() + ": lower replica.fetch.max.bytes or give the transport longer terms");
        }
    }

    /**
     * Start a cluster of {@code hostCount} hosts under {@code root} ({@code root/host-<id>}, controller state in
     * {@code root/controller}); existing state is recovered.
     */
    public static ReplicationCluster start(final Path root, final int hostCount, final ReplicationContext ctx)
    {
        return new ReplicationCluster(root, hostCount, ctx, null);
    }

    /**
     * Start a cluster over a given transport: another process-level transport (Aeron, module {@code aeron}), or
     * for fault simulation a transport that delays, drops, duplicates and reorders messages. The cluster calls
     * {@link Transport#hostUp} and {@link Transport#hostDown} as its hosts start and stop; it does not close the
     * transport.
     */
    public static ReplicationCluster start(final Path root, final int hostCount, final ReplicationContext ctx,
        final Transport transport)
    {
        return new ReplicationCluster(root, hostCount, ctx, transport);
    }

    private synchronized void startHost(final int id)
    {
        final ReplicaHost host = new ReplicaHost(id, root.resolve("host-" + id), ++incarnations[id], hostCount, ctx,
            transport, channel, sessions, errorHandler);
        hosts.set(id, host);
        host.start();
        scheduler.start("host-" + id, host.agents(), host.housekeepingAgent());
    }

    /** @return the configuration. */
    public ReplicationContext context()
    {
        return ctx;
    }

    /** @return the controller. */
    public Controller controller()
    {
        return controller;
    }

    /**
     * @return the in-process transport, to cut links in tests.
     * @throws IllegalStateException when the cluster runs over another transport.
     */
    public InProcessTransport transport()
    {
        if (transport instanceof InProcessTransport inProcess)
        {
            return inProcess;
        }
        throw new IllegalStateException("the cluster runs over " + transport.getClass().getSimpleName());
    }

    /** @return the controller channel, to disconnect hosts in tests. */
    public ControlChannel controlChannel()
    {
        return channel;
    }

    /** @return producer session registry. */
    public ProducerSessions sessions()
    {
        return sessions;
    }

    /** @return number of host ids. */
    public int hostCount()
    {
        return hostCount;
    }

    /** @return the running host with this id, or null while it is down. */
    public ReplicaHost host(final int id)
    {
        return hosts.get(id);
    }

    /**
     * Create a topic with replicas spread over every host.
     *
     * @return the partitions' initial states.
     */
    public List<PartitionState> createTopic(final String topic, final int partitions, final int replicationFactor)
    {
        final int[] ids = new int[hostCount];
        Arrays.setAll(ids, (i) -> i);
        return controller.createTopic(topic, partitions, replicationFactor, ids);
    }

    /** @return the controller's latest state of a partition, or null for an unknown one. */
    public PartitionState state(final TopicPartition tp)
    {
        for (final PartitionState state : controller.partitions())
        {
            if (state.topicPartition().equals(tp))
            {
                return state;
            }
        }
        return null;
    }

    /** @return the partitions of a topic, by partition number. */
    public List<PartitionState> partitions(final String topic)
    {
        return Arrays.stream(controller.partitions()).filter((s) -> s.topicPartition().topic().equals(topic))
            .toList();
    }

    /** @return the host id of a partition's leader, or {@link PartitionState#NO_LEADER}. */
    public int leaderOf(final TopicPartition tp)
    {
        final PartitionState state = state(tp);
        return null == state ? PartitionState.NO_LEADER : state.leader();
    }

    /** @return the replica of {@code tp} on host {@code hostId}, or null. */
    Replica replica(final int hostId, final TopicPartition tp)
    {
        final ReplicaHost host = host(hostId);
        final PartitionState state = state(tp);
        return null == host || null == state ? null : host.replica(state.partitionId());
    }

    /** @return the replica acting as leader for {@code tp} (its host applied the leadership), or null. */
    Replica leaderReplica(final TopicPartition tp)
    {
        final PartitionState state = state(tp);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return null;
        }
        final Replica replica = replica(state.leader(), tp);
        return null != replica && null != replica.leaderState ? replica : null;
    }

    /**
     * Produce a run of records (encoded with {@link RecordEncoder}) to a partition's leader. Non-blocking: the
     * outcome arrives at the session's listener on the leader's agent thread (never for acks=0).
     *
     * @return NONE when queued; LEADER_NOT_AVAILABLE when the partition has no leader; BACK_PRESSURED when the
     *         leader's queue is full; INVALID_RECORDS when the request cannot fit the queue.
     */
    public ReplicationError produceRecords(final int session, final TopicPartition tp, final long correlationId,
        final int acks, final int timeoutMs, final DirectBuffer records, final int offset, final int length)
    {
        return produceRecords(session, tp, correlationId, acks, timeoutMs, -1, (short)-1, -1, records, offset,
            length);
    }

    /**
     * Produce a run of records as an idempotent producer: the leader appends it once however often it is retried
     * (a retry of one of the producer's last 5 batches is answered with the original offsets) and rejects a
     * sequence gap with OUT_OF_ORDER_SEQUENCE and an older producer epoch with INVALID_PRODUCER_EPOCH.
     *
     * @param producerId    from {@link #allocateProducerId()}.
     * @param producerEpoch the producer's epoch.
     * @param baseSequence  per-partition sequence number of the first record.
     * @return as {@link #produceRecords(int, TopicPartition, long, int, int, DirectBuffer, int, int)}.
     */
    public ReplicationError produceRecords(final int session, final TopicPartition tp, final long correlationId,
        final int acks, final int timeoutMs, final long producerId, final short producerEpoch, final int baseSequence,
        final DirectBuffer records, final int offset, final int length)
    {
        return ProduceMessages.enqueue(ringOf(tp, acks), session, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, offset, length);
    }

    /**
     * Produce a run of records to the partition of a known id, as
     * {@link #produceRecords(int, TopicPartition, long, int, int, long, short, int, DirectBuffer, int, int)} does to
     * a named one: the producer's path, which has the id from {@link #partitions(String)} and so looks nothing up
     * by name.
     *
     * @param partitionId {@link PartitionState#partitionId()} of the partition.
     * @return as {@link #produceRecords(int, TopicPartition, long, int, int, DirectBuffer, int, int)}.
     * @throws IllegalArgumentException for an id no partition has.
     */
    public ReplicationError produceRecords(final int session, final int partitionId, final long correlationId,
        final int acks, final int timeoutMs, final long producerId, final short producerEpoch, final int baseSequence,
        final DirectBuffer records, final int offset, final int length)
    {
        final PartitionState state = controller.partition(partitionId);
        if (null == state)
        {
            throw new IllegalArgumentException("unknown partition id " + partitionId);
        }
        return ProduceMessages.enqueue(ringOf(state, acks), session, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, offset, length);
    }

    /**
     * Produce one record, encoded straight into the leader's queue (no intermediate copy).
     *
     * @return as {@link #produceRecords}.
     */
    public ReplicationError produce(final int session, final TopicPartition tp, final long correlationId,
        final int acks, final int timeoutMs, final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        final RingBuffer ring = ringOf(tp, acks);
        if (null == ring)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        final int recordLength = RecordEncoder.encodedLength(null == key ? -1 : keyLength,
            null == value ? -1 : valueLength, 0);
        if (ProduceMessages.HEADER_LENGTH + recordLength > ring.maxMsgLength())
        {
            return ReplicationError.INVALID_RECORDS;
        }
        final int index = ring.tryClaim(ProduceMessages.PRODUCE_REQUEST, ProduceMessages.HEADER_LENGTH + recordLength);
        if (index <= 0)
        {
            return ReplicationError.BACK_PRESSURED;
        }
        final MutableDirectBuffer buffer = ring.buffer();
        encodeHeader(buffer, index, session, acks, timeoutMs, correlationId, recordLength);
        RecordEncoder.encode(buffer, index + ProduceMessages.HEADER_LENGTH, 0, -1, key, keyOffset, keyLength,
            value, valueOffset, valueLength, null, 0, 0);
        ring.commit(index);
        return ReplicationError.NONE;
    }

    private RingBuffer ringOf(final TopicPartition tp, final int acks)
    {
        final PartitionState state = state(tp);
        if (null == state)
        {
            throw new IllegalArgumentException("unknown partition " + tp);
        }
        return ringOf(state, acks);
    }

    /** @return the produce queue of the partition's leader, or null when it has none here. */
    private RingBuffer ringOf(final PartitionState state, final int acks)
    {
        Acks.validate(acks, state.assignedReplicas().length);
        if (state.leader() == PartitionState.NO_LEADER)
        {
            return null;
        }
        final ReplicaHost host = host(state.leader());
        final Replica replica = null == host ? null : host.replica(state.partitionId());
        return null == replica ? null : replica.produceRing;
    }

    private static void encodeHeader(final MutableDirectBuffer buffer, final int index, final int session,
        final int acks, final int timeoutMs, final long correlationId, final int recordsLength)
    {
        buffer.putInt(index + ProduceMessages.SESSION_OFFSET, session);
        buffer.putInt(index + ProduceMessages.ACKS_OFFSET, acks);
        buffer.putInt(index + ProduceMessages.TIMEOUT_OFFSET, timeoutMs);
        buffer.putInt(index + ProduceMessages.PRODUCER_EPOCH_OFFSET, -1);
        buffer.putLong(index + ProduceMessages.PRODUCER_ID_OFFSET, -1);
        buffer.putInt(index + ProduceMessages.BASE_SEQUENCE_OFFSET, -1);
        buffer.putInt(index + ProduceMessages.RECORDS_LENGTH_OFFSET, recordsLength);
        buffer.putLong(index + ProduceMessages.CORRELATION_ID_OFFSET, correlationId);
    }

    /** @return a new producer id, unique in this cluster across restarts (durably allocated by the controller). */
    public long allocateProducerId()
    {
        return controller.allocateProducerId();
    }

    /** @return a reader of a partition's committed records (from its current leader, up to the HW). */
    public PartitionReader openReader(final TopicPartition tp)
    {
        return new PartitionReader(this, tp);
    }

    /**
     * Wait until every partition of a topic has a leader that has taken up the role (threaded modes; in INVOKER
     * mode the agents are invoked while waiting).
     *
     * @return whether that happened within the timeout.
     */
    public boolean awaitLeaders(final String topic, final long timeoutMs)
    {
        return await(() -> partitions(topic).stream().allMatch((s) -> null != leaderReplica(s.topicPartition())),
            timeoutMs);
    }

    /**
     * Wait for a condition, invoking the agents while waiting in INVOKER mode.
     *
     * @return whether it held within the timeout (wall-clock).
     */
    public boolean await(final BooleanSupplier condition, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                return false;
            }
            if (ctx.threadingMode() == ReplicationContext.ThreadingMode.INVOKER)
            {
                invokeAgents();
            }
            else
            {
                Thread.onSpinWait();
            }
        }
        return true;
    }

    /**
     * Run one duty cycle of every agent (INVOKER mode): the controller, then each host's agents in id order.
     *
     * @return work done.
     */
    public int invokeAgents()
    {
        return scheduler.invoke();
    }

    /** @return every agent, individually, in a stable order (INVOKER mode): controller, then each host's. */
    java.util.List<org.agrona.concurrent.Agent> agents()
    {
        return scheduler.agents();
    }

    /**
     * Controller failover: stop the controller and start a new one over the same durable partition state. Hosts
     * keep their sessions (the new controller gives every known host one session timeout of grace).
     */
    public synchronized void restartController()
    {
        scheduler.stop("controller");
        controllerStore.close();
        controllerStore = ctx.controllerStoreFactory().apply(root.resolve("controller"));
        controller = new Controller(controllerStore, ctx, channel);
        scheduler.start("controller", List.of(controller));
    }

    /** Stop a host cleanly: its leaderships move away at once, its logs close cleanly. */
    public synchronized void stopHost(final int id)
    {
        final ReplicaHost host = hosts.get(id);
        if (null == host)
        {
            return;
        }
        channel.toController(id, new ControlMessage.UnregisterHost(id, host.incarnation()));
        scheduler.stop("host-" + id);
        host.close();
        hosts.set(id, null);
    }

    /**
     * Kill a host: its threads stop at once and its files stay as the OS would leave them after a kill -9; the
     * controller notices when its session times out.
     */
    public synchronized void killHost(final int id)
    {
        final ReplicaHost host = hosts.get(id);
        if (null == host)
        {
            return;
        }
        scheduler.stop("host-" + id);
        host.halt();
        hosts.set(id, null);
    }

    /** Start a stopped or killed host again: recovery, then it rejoins as a follower. */
    public synchronized void restartHost(final int id)
    {
        if (null != hosts.get(id))
        {
            throw new IllegalStateException("host " + id + " is running");
        }
        startHost(id);
    }

    @Override
    public synchronized void close()
    {
        scheduler.stop("controller");
        for (int id = 0; id < hostCount; id++)
        {
            final ReplicaHost host = hosts.get(id);
            if (null != host)
            {
                scheduler.stop("host-" + id);
                host.close();
                hosts.set(id, null);
            }
        }
        scheduler.close();
        controllerStore.close();
    }
}
