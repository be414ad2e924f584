package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * A deterministic fault simulation of the real replication code: three replica hosts and a controller in one
 * thread (INVOKER threading, manual clock), driven by one seed that chooses which agent runs next, how messages
 * are delayed, dropped, duplicated and reordered ({@link SimTransport}), when the clock moves, what clients send,
 * and which faults strike: hard kills, clean stops, restarts, power loss of a stopped host (its unflushed tail is
 * cut and its boot id changes), network partitions between hosts, hosts cut off from the controller, controller
 * failover, slow hosts. {@link SimulationChecker} checks the invariants of the reference after every event and,
 * after healing and quiescence, against the log of every send and its outcome.
 * <p>
 * Faults inside a duty cycle (random seeds; the regression seeds replay their original schedules without them):
 * every durable step of a replica log and of the replication checkpoints ({@link FaultyFileSync}: forcing data, a
 * checkpoint's temporary file, its rename, the directory) may stop the host right there (a kill -9, or with a power
 * loss at the restart: only what was forced survives, and a rename whose directory was not forced may be undone) or
 * fail with an I/O error or a full disk; every write of the controller's store ({@link SimControllerStore}) may fail,
 * or stop the controller before or after it (a failover in the middle of handling a message). Rates are drawn per
 * seed from a generator of their own. A host that stopped itself (fail-stop) is killed and restarted later.
 * <p>
 * A failure names the seed and prints the trace of events up to the first violation; {@code replay(seed)}
 * re-runs it exactly.
 */
final class Simulation implements AutoCloseable
{
    static final int HOSTS = 3;
    static final int PARTITIONS = 2;
    static final String TOPIC = "sim";
    private static final int LOG_CHECKPOINT_MAGIC = 0x4B434D54; // store's log.checkpoint

    final long seed;
    final Random random;
    final CachedEpochClock clock = new CachedEpochClock();
    final SimTransport transport;
    final ReplicationCluster cluster;
    final Path root;
    final List<String> trace = new ArrayList<>();
    final boolean faults;
    final int minInsync;
    final String[] bootIds = new String[HOSTS];
    final TreeSet<Integer> down = new TreeSet<>();
    final TreeSet<Integer> cutFromController = new TreeSet<>();
    final TreeSet<Integer> slow = new TreeSet<>();
    final List<Send> sends = new ArrayList<>();
    private final List<Send> pendingSends = new ArrayList<>();
    final Map<Long, Send> byId = new HashMap<>();
    final SimulationChecker checker;
    final PartitionReader[] readers = new PartitionReader[PARTITIONS];
    final List<Throwable> agentErrors = new ArrayList<>();
    final FaultyFileSync.Renames renames = new FaultyFileSync.Renames();
    /** Faults inside duty cycles, from a generator of their own (see the class comment). */
    final boolean dutyCycleFaults;
    private final Random faultRandom;
    private final double crashRate;
    private final double ioErrorRate;
    private final double controllerCrashRate;
    private final double controllerErrorRate;
    /** {@code replica.lag.max.messages} of this seed (0: off), from a generator of its own. */
    final long lagMaxMessages;
    private final boolean[] powerLossOnRestart = new boolean[HOSTS];
    private boolean inDutyCycle;
    long crashPoints;
    long ioErrors;
    long controllerCrashes;
    long controllerErrors;
    long failStops;
    private final IdempotentProducer[] idempotent = new IdempotentProducer[PARTITIONS];
    private final ExpandableArrayBuffer encode = new ExpandableArrayBuffer(256);
    private final int session;
    private int unsyncedHost = -1;
    private long nextId = 1;
    long events;

    /** One send by the simulated client, with its outcome once known. */
    static final class Send
    {
        final long id;
        final int partition;
        final String value;
        final int acks;
        final long maxAckedOffsetBefore;
        final boolean idempotent;
        long sentAtMs;
        ReplicationError error;
        long offset = -1;

        Send(final long id, final int partition, final String value, final int acks, final long maxAckedBefore,
            final boolean idempotent)
        {
            this.id = id;
            this.partition = partition;
            this.value = value;
            this.acks = acks;
            this.maxAckedOffsetBefore = maxAckedBefore;
            this.idempotent = idempotent;
        }

        boolean acked()
        {
            return error == ReplicationError.NONE;
        }

        /** The client cannot tell whether it was appended. */
        boolean unknown()
        {
            return null == error || error == ReplicationError.NOT_LEADER ||
                error == ReplicationError.REQUEST_TIMED_OUT ||
                error == ReplicationError.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
        }
    }

    /** An idempotent producer on one partition: one batch in flight, retried with the same sequence. */
    private static final class IdempotentProducer
    {
        final long producerId;
        short epoch;
        int nextSequence;
        Send inFlight;
        int inFlightSequence;

        IdempotentProducer(final long producerId)
        {
            this.producerId = producerId;
        }
    }

    Simulation(final long seed, final boolean faults) throws IOException
    {
        this(seed, faults, false);
    }

    /**
     * @param staleDeliveries whether a restarted host may still receive messages sent to its previous incarnation,
     *                        as over Aeron (drawn from a generator of its own, so the rest of the schedule of a seed
     *                        does not change); off for the regression seeds, which replay the schedules that found
     *                        their bugs.
     */
    Simulation(final long seed, final boolean faults, final boolean staleDeliveries) throws IOException
    {
        this(seed, faults, staleDeliveries, staleDeliveries);
    }

    /**
     * @param dutyCycleFaults whether crash points, I/O errors and controller failures strike inside duty cycles (see
     *                        the class comment; drawn from a generator of their own).
     */
    Simulation(final long seed, final boolean faults, final boolean staleDeliveries, final boolean dutyCycleFaults)
        throws IOException
    {
        this.seed = seed;
        this.dutyCycleFaults = faults && dutyCycleFaults;
        this.faultRandom = new Random(seed ^ 0x14_14_14_14L);
        this.crashRate = this.dutyCycleFaults ? new double[]{ 0, 0.002, 0.01, 0.03 }[faultRandom.nextInt(4)] : 0;
        this.ioErrorRate = this.dutyCycleFaults ? new double[]{ 0, 0.002, 0.01 }[faultRandom.nextInt(3)] : 0;
        this.controllerCrashRate = this.dutyCycleFaults ? new double[]{ 0, 0.02, 0.1, 0.3 }[faultRandom.nextInt(4)] :
            0;
        this.controllerErrorRate = this.dutyCycleFaults ? new double[]{ 0, 0.02, 0.1 }[faultRandom.nextInt(3)] : 0;
        // The count rule of the ISR (issue 21) on some random seeds: 2 makes the ISR flap at every small backlog
        this.lagMaxMessages = this.dutyCycleFaults ? new long[]{ 0, 0, 2, 10 }[
            new Random(seed ^ 0x21_21_21_21L).nextInt(4)] : 0;
        this.random = new Random(seed);
        this.faults = faults;
        this.minInsync = 2;
        clock.update(1_000_000);
        final Path shm = Path.of("/dev/shm");
        root = Files.isDirectory(shm) && Files.isWritable(shm) ?
            Files.createTempDirectory(shm, "tidemark-sim-") : Files.createTempDirectory("tidemark-sim-");
        for (int h = 0; h < HOSTS; h++)
        {
            bootIds[h] = "boot-" + h + "-0";
        }
        transport = new SimTransport(HOSTS, random, staleDeliveries ? new Random(seed ^ 0x5DEECE66DL) : null, clock);
        transport.maxDelayMs = random.nextInt(4) * 5;
        transport.dropRate = faults ? random.nextInt(3) * 0.02 : 0;
        transport.duplicateRate = faults ? random.nextInt(3) * 0.02 : 0;
        final long flushMessages = new long[]{ 1, 10, Long.MAX_VALUE }[random.nextInt(3)];
        cluster = ReplicationCluster.start(root, HOSTS, new ReplicationContext()
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .epochClock(clock)
            .minInsyncReplicas(minInsync)
            .replicaLagTimeMaxMs(400)
            .replicaLagMaxMessages(lagMaxMessages)
            .hostSessionTimeoutMs(300)
            .hostHeartbeatIntervalMs(50)
            .replicaFetchWaitMaxMs(50)
            .requestTimeoutMs(2000)
            .errorHandler(this::onError)
            .bootIdSupplier((host) -> bootIds[host])
            .controllerStoreFactory((dir) -> new SimControllerStore(dir, this::controllerWrite))
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(16 * 1024)
                .maxMessageBytes(4096).segmentIndexBytes(4096).indexIntervalBytes(256).pretouchBytes(0)
                .flushIntervalMessages(flushMessages)
                .fileSync(new FaultyFileSync(FaultyFileSync.hostOf(dir), this::durableStep, renames))), transport);
        checker = new SimulationChecker(this);
        session = cluster.sessions().register(this::onOutcome);
        note("start seed=" + seed + " faults=" + faults + " delay<=" + transport.maxDelayMs + "ms drop=" +
            transport.dropRate + " dup=" + transport.duplicateRate + " flush.interval.messages=" +
            (flushMessages == Long.MAX_VALUE ? "none" : flushMessages) + (this.dutyCycleFaults ? " crash.rate=" +
            crashRate + " io.error.rate=" + ioErrorRate + " controller.crash.rate=" + controllerCrashRate +
            " controller.error.rate=" + controllerErrorRate : "") +
            (lagMaxMessages > 0 ? " replica.lag.max.messages=" + lagMaxMessages : ""));
        cluster.createTopic(TOPIC, PARTITIONS, HOSTS);
        for (int p = 0; p < PARTITIONS; p++)
        {
            readers[p] = cluster.openReader(tp(p));
            idempotent[p] = new IdempotentProducer(cluster.allocateProducerId());
        }
    }

    /** A durable step of a host's log: stop the host there, fail it, or let it happen (inside duty cycles only). */
    private FaultyFileSync.Fault durableStep(final int host, final FaultyFileSync.Step step, final Path path)
    {
        if (!inDutyCycle || (crashRate == 0 && ioErrorRate == 0))
        {
            return FaultyFileSync.Fault.NONE;
        }
        final double r = faultRandom.nextDouble();
        if (r < crashRate)
        {
            return FaultyFileSync.Fault.CRASH;
        }
        if (r < crashRate + ioErrorRate)
        {
            ioErrors++;
            note("injected " + (r < crashRate + ioErrorRate / 2 ? "EIO" : "ENOSPC") + " on host " + host + " at " +
                step + (null == path ? "" : " of " + path.getFileName()));
            return r < crashRate + ioErrorRate / 2 ? FaultyFileSync.Fault.IO_ERROR : FaultyFileSync.Fault.NO_SPACE;
        }
        return FaultyFileSync.Fault.NONE;
    }

    /** A write of the controller's store: fail it, stop the controller around it, or let it happen. */
    private SimControllerStore.Fault controllerWrite(final String write)
    {
        if (!inDutyCycle || (controllerCrashRate == 0 && controllerErrorRate == 0))
        {
            return SimControllerStore.Fault.NONE;
        }
        final double r = faultRandom.nextDouble();
        if (r < controllerCrashRate)
        {
            return r < controllerCrashRate / 2 ? SimControllerStore.Fault.CRASH_BEFORE :
                SimControllerStore.Fault.CRASH_AFTER;
        }
        if (r < controllerCrashRate + controllerErrorRate)
        {
            controllerErrors++;
            note("injected EIO at the controller's " + write);
            return SimControllerStore.Fault.IO_ERROR;
        }
        return SimControllerStore.Fault.NONE;
    }

    /** Errors reported by agents: those an injected fault explains are expected, any other is a failure. */
    void onError(final Throwable failure)
    {
        if (SimControllerStore.injected(failure))
        {
            note("reported: " + failure);
        }
        else
        {
            agentErrors.add(failure);
        }
    }

    /** Kill a host that stopped inside its duty cycle; half the time its machine lost power too. */
    private void crashed(final int host, final Throwable where)
    {
        crashPoints++;
        final boolean powerLoss = faultRandom.nextBoolean();
        note("host " + host + " killed inside its duty cycle: " + where.getMessage() + (powerLoss ?
            " (and its machine loses power)" : ""));
        cluster.killHost(host);
        down.add(host);
        powerLossOnRestart[host] |= powerLoss;
    }

    /** Kill the hosts that stopped themselves (fail-stop). */
    private void reapStoppedHosts()
    {
        for (int h = 0; h < HOSTS; h++)
        {
            final ReplicaHost host = cluster.host(h);
            if (null != host && null != host.failure())
            {
                failStops++;
                note("host " + h + " stopped itself: " + host.failure().getMessage());
                cluster.killHost(h);
                down.add(h);
            }
        }
    }

    /** Run every agent once (scripted runs, healing): a crash point cannot strike here, but a fail-stop can. */
    private void invokeAll()
    {
        cluster.invokeAgents();
        reapStoppedHosts();
    }

    static TopicPartition tp(final int partition)
    {
        return new TopicPartition(TOPIC, partition);
    }

    void note(final String event)
    {
        trace.add("t=" + clock.time() + " " + event);
    }

    /** Scripted scenarios: a fault-free network, no random delays. */
    void quietNetwork()
    {
        transport.maxDelayMs = 0;
        transport.dropRate = 0;
        transport.duplicateRate = 0;
    }

    /** Scripted scenarios: move the clock by {@code ms} in 5 ms steps, running every agent and the checks at each. */
    void runFor(final long ms)
    {
        for (long done = 0; done < ms; done += 5)
        {
            clock.advance(5);
            invokeAll();
            expireSends();
            events++;
            checker.checkAlways();
        }
    }

    /** Scripted scenarios: kill a host (kill -9: the page cache keeps its data). */
    void kill(final int host)
    {
        note("kill host " + host);
        cluster.killHost(host);
        down.add(host);
    }

    /** Scripted scenarios: cut the network between two hosts. */
    void isolate(final int a, final int b)
    {
        note("partition network between " + a + " and " + b);
        transport.isolate(a, b);
    }

    /** Scripted scenarios: send one record and return it. */
    Send send(final int partition, final int acks)
    {
        final long id = nextId++;
        final Send send = new Send(id, partition, "p" + partition + "-v" + id, acks, checker.maxAcked(partition),
            false);
        track(send);
        final UnsafeBuffer value = new UnsafeBuffer(send.value.getBytes(StandardCharsets.US_ASCII));
        final ReplicationError queued = cluster.produce(session, tp(partition), id, acks, 2000, null, 0, -1, value, 0,
            value.capacity());
        note("send " + send.value + " acks=" + Acks.describe(acks) + (queued == ReplicationError.NONE ? "" :
            " refused " + queued));
        if (queued != ReplicationError.NONE)
        {
            send.error = queued;
        }
        return send;
    }

    /** Scripted scenarios: the leader host of a partition (per the controller), or -1. */
    int leader(final int partition)
    {
        return cluster.leaderOf(tp(partition));
    }

    /** Scripted scenarios: heal, quiesce, and run the final checks. */
    void finish()
    {
        healAndQuiesce();
        checker.checkFinal();
    }

    /** Run {@code steps} random events, then heal, quiesce and run the final checks. */
    void run(final int steps)
    {
        try
        {
            for (int i = 0; i < steps; i++)
            {
                step();
            }
            healAndQuiesce();
            checker.checkFinal();
        }
        catch (final RuntimeException ex)
        {
            note("UNEXPECTED: " + ex);
            throw new AssertionError(ex + "\n" + report(), ex);
        }
    }

    void step()
    {
        final int r = random.nextInt(1000);
        if (r < 600)
        {
            runAgent();
        }
        else if (r < 750)
        {
            final int ms = 1 + random.nextInt(30);
            clock.advance(ms);
        }
        else if (r < 900)
        {
            produce(random.nextInt(PARTITIONS));
        }
        else if (r < 960)
        {
            consume(random.nextInt(PARTITIONS));
        }
        else if (faults)
        {
            fault();
        }
        events++;
        expireSends();
        checker.checkAlways();
    }

    private void runAgent()
    {
        final List<Agent> agents = cluster.agents();
        if (agents.isEmpty())
        {
            return;
        }
        final Agent agent = agents.get(random.nextInt(agents.size()));
        for (final int host : slow)
        {
            if (agent.roleName().endsWith("-" + host) || agent.roleName().contains("fetcher-" + host + "-"))
            {
                if (random.nextInt(4) != 0)
                {
                    return; // a slow host runs a quarter of the time
                }
            }
        }
        inDutyCycle = dutyCycleFaults;
        try
        {
            agent.doWork();
        }
        catch (final FaultyFileSync.Crash crash)
        {
            crashed(crash.host, crash);
        }
        catch (final SimControllerStore.Crash crash)
        {
            controllerCrashes++;
            note("controller failover in the middle of its duty cycle: " + crash.getMessage());
            cluster.restartController();
        }
        catch (final Exception ex)
        {
            onError(ex);
        }
        finally
        {
            inDutyCycle = false;
        }
        reapStoppedHosts();
    }

    /** The client gives up waiting (its own request timeout): the outcome stays unknown. */
    private void expireSends()
    {
        final long now = clock.time();
        for (final Send send : pendingSends)
        {
            if (null == send.error && now - send.sentAtMs > 3000)
            {
                send.error = ReplicationError.REQUEST_TIMED_OUT;
                note("client timeout " + send.value);
            }
        }
        pendingSends.removeIf((send) -> null != send.error);
    }

    private void track(final Send send)
    {
        send.sentAtMs = clock.time();
        sends.add(send);
        byId.put(send.id, send);
        pendingSends.add(send);
    }

    private void onOutcome(final TopicPartition tp, final long id, final long offset, final ReplicationError error)
    {
        final Send send = byId.get(id);
        if (null == send || null != send.error)
        {
            return;
        }
        checker.onAcknowledgement(send, offset, error);
        send.error = error;
        send.offset = offset;
        note("outcome " + send.value + " acks=" + Acks.describe(send.acks) + " -> " + error +
            (error == ReplicationError.NONE ? " @" + offset : ""));
    }

    void produce(final int partition)
    {
        final IdempotentProducer producer = idempotent[partition];
        if (random.nextInt(3) == 0)
        {
            produceIdempotent(partition, producer);
            return;
        }
        final int[] modes = { Acks.LEADER, Acks.replicas(2), Acks.ALL, Acks.ALL, Acks.ALL };
        final int acks = modes[random.nextInt(modes.length)];
        final long id = nextId++;
        final Send send = new Send(id, partition, "p" + partition + "-v" + id, acks, checker.maxAcked(partition),
            false);
        final UnsafeBuffer value = new UnsafeBuffer(send.value.getBytes(StandardCharsets.US_ASCII));
        track(send);
        final ReplicationError queued = cluster.produce(session, tp(partition), id, acks, 2000, null, 0, -1, value, 0,
            value.capacity());
        note("send " + send.value + " acks=" + Acks.describe(acks) + (queued == ReplicationError.NONE ? "" :
            " refused " + queued));
        if (queued != ReplicationError.NONE)
        {
            send.error = queued;
        }
    }

    private void produceIdempotent(final int partition, final IdempotentProducer producer)
    {
        final Send previous = producer.inFlight;
        if (null != previous && null == previous.error)
        {
            return; // one batch in flight per partition
        }
        final String value;
        final int sequence;
        if (null != previous && previous.unknown())
        {
            value = previous.value; // retry the same batch, same sequence
            sequence = producer.inFlightSequence;
        }
        else
        {
            if (null != previous && !previous.acked() && !previous.unknown())
            {
                if (previous.error == ReplicationError.OUT_OF_ORDER_SEQUENCE ||
                    previous.error == ReplicationError.INVALID_PRODUCER_EPOCH)
                {
                    producer.epoch++;
                    producer.nextSequence = 0;
                }
            }
            else if (null != previous)
            {
                producer.nextSequence = producer.inFlightSequence + 1;
            }
            value = "p" + partition + "-i" + producer.epoch + "-" + producer.nextSequence;
            sequence = producer.nextSequence;
        }
        final long id = nextId++;
        final Send send = new Send(id, partition, value, Acks.ALL, checker.maxAcked(partition), true);
        track(send);
        producer.inFlight = send;
        producer.inFlightSequence = sequence;
        final UnsafeBuffer bytes = new UnsafeBuffer(value.getBytes(StandardCharsets.US_ASCII));
        final int length = RecordEncoder.encode(encode, 0, 0, -1, null, 0, -1, bytes, 0, bytes.capacity(), null, 0,
            0);
        final ReplicationError queued = cluster.produceRecords(session, tp(partition), id, Acks.ALL, 2000,
            producer.producerId, producer.epoch, sequence, encode, 0, length);
        note("send idempotent " + value + " seq=" + sequence + (queued == ReplicationError.NONE ? "" :
            " refused " + queued));
        if (queued != ReplicationError.NONE)
        {
            send.error = queued == ReplicationError.LEADER_NOT_AVAILABLE || queued == ReplicationError.BACK_PRESSURED ?
                ReplicationError.NOT_LEADER : queued; // not sent: retry the same sequence later
        }
    }

    private void consume(final int partition)
    {
        final PartitionReader reader = readers[partition];
        final Replica leader = cluster.leaderReplica(tp(partition));
        final long limit = null == leader ? -1 : leader.highWatermark.get();
        reader.poll((r) -> checker.onConsumed(partition, r.offset(), r.valueAsString(), limit), 20);
    }

    private void fault()
    {
        final int kind = random.nextInt(12);
        final int host = random.nextInt(HOSTS);
        switch (kind)
        {
            case 0:
            case 1:
                if (!down.contains(host))
                {
                    note("kill host " + host);
                    cluster.killHost(host);
                    down.add(host);
                }
                break;
            case 2:
                if (!down.contains(host))
                {
                    note("stop host " + host + " cleanly");
                    cluster.stopHost(host);
                    down.add(host);
                }
                break;
            case 3:
            case 4:
                if (down.contains(host))
                {
                    restart(host, kind == 4);
                }
                break;
            case 5:
                final int other = (host + 1 + random.nextInt(HOSTS - 1)) % HOSTS;
                note("partition network between " + host + " and " + other);
                transport.isolate(host, other);
                break;
            case 6:
                note("heal network");
                transport.heal();
                break;
            case 7:
                if (cutFromController.add(host))
                {
                    note("cut host " + host + " off from the controller (heartbeats lost)");
                    cluster.controlChannel().disconnect(host);
                }
                break;
            case 8:
                if (cutFromController.remove(host))
                {
                    note("reconnect host " + host + " to the controller");
                    cluster.controlChannel().reconnect(host);
                }
                break;
            case 9:
                note("controller failover");
                cluster.restartController();
                break;
            case 10:
                if (slow.add(host))
                {
                    note("host " + host + " becomes slow");
                }
                else
                {
                    slow.remove(host);
                    note("host " + host + " is fast again");
                }
                break;
            default:
                clock.advance(100 + random.nextInt(400));
                break;
        }
    }

    /**
     * Restart a down host; with {@code powerLoss} (allowed while no other host is still re-syncing after one),
     * first cut each of its logs to a random point at or above its last flush and give it a new boot id.
     */
    void restart(final int host, final boolean powerLoss)
    {
        if ((powerLoss || powerLossOnRestart[host]) && (unsyncedHost == -1 || unsyncedHost == host))
        {
            bootIds[host] = "boot-" + host + "-" + clock.time();
            int undone = 0;
            try
            {
                undone = renames.powerLoss(root.resolve("host-" + host), faultRandom); // the disk first
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
            final long cut = loseUnflushedTails(host);
            unsyncedHost = host;
            note("power loss on host " + host + ": " + cut + " unflushed records lost, " + undone +
                " renames not yet durable undone");
        }
        powerLossOnRestart[host] = false;
        note("restart host " + host);
        cluster.restartHost(host);
        down.remove(host);
    }

    private long loseUnflushedTails(final int host)
    {
        long lost = 0;
        for (int p = 0; p < PARTITIONS; p++)
        {
            final Path dir = root.resolve("host-" + host).resolve(tp(p).logName());
            if (!Files.exists(dir.resolve("log.meta")))
            {
                continue;
            }
            final long flushed = flushedOffset(dir);
            final Log log = Log.open(new LogContext().logDir(dir).segmentBytes(16 * 1024).maxMessageBytes(4096)
                .segmentIndexBytes(4096).indexIntervalBytes(256).agentMode(LogContext.AgentMode.EXTERNAL));
            try
            {
                final long end = log.logEndOffset();
                if (end > flushed)
                {
                    final long keep = flushed + (long)(random.nextDouble() * (end - flushed + 1));
                    final long newEnd = log.truncateTo(Math.min(keep, end));
                    lost += end - newEnd;
                }
            }
            finally
            {
                log.halt(); // the machine lost power: no clean shutdown
            }
        }
        return lost;
    }

    private static long flushedOffset(final Path logDir)
    {
        try
        {
            final ByteBuffer in = ByteBuffer.allocate(CheckpointDescriptor.FIELDS_OFFSET + 20).order(ByteOrder.LITTLE_ENDIAN);
            if (CheckpointFile.read(logDir.resolve("log.checkpoint"), LOG_CHECKPOINT_MAGIC, in) ==
                CheckpointFile.Status.OK)
            {
                return in.getLong(CheckpointDescriptor.FIELDS_OFFSET);
            }
        }
        catch (final IOException ignore)
        {
            // no valid checkpoint: nothing is known flushed
        }
        return 0;
    }

    /** Called by the checker when every replica of the unsynced host is back in its ISR. */
    void resynced(final int host)
    {
        if (unsyncedHost == host)
        {
            unsyncedHost = -1;
        }
    }

    int unsyncedHost()
    {
        return unsyncedHost;
    }

    /** Heal every fault, restart every host, and run until all replicas agree and every ISR is full. */
    void healAndQuiesce()
    {
        note("heal: network, controller links, speed; restart every down host");
        transport.heal();
        transport.dropRate = 0;
        transport.duplicateRate = 0;
        for (final int host : new ArrayList<>(cutFromController))
        {
            cluster.controlChannel().reconnect(host);
        }
        cutFromController.clear();
        slow.clear();
        for (int i = 0; i < 4000 && !quiescent(); i++)
        {
            for (final int host : new ArrayList<>(down))
            {
                restart(host, false);
            }
            clock.advance(5);
            invokeAll();
            expireSends();
            retryIdempotent();
            checker.checkAlways();
        }
        if (!quiescent())
        {
            checker.fail("no quiescence after healing (liveness, invariant 19): " + describeState());
        }
        // liveness: acks=all writes succeed again (a client retries retriable errors, as it would)
        for (int p = 0; p < PARTITIONS; p++)
        {
            Send send = null;
            for (int attempt = 0; attempt < 20 && (null == send || !send.acked()); attempt++)
            {
                final long id = nextId++;
                send = new Send(id, p, "p" + p + "-final-" + attempt, Acks.ALL, checker.maxAcked(p), false);
                track(send);
                final UnsafeBuffer value = new UnsafeBuffer(send.value.getBytes(StandardCharsets.US_ASCII));
                final ReplicationError queued = cluster.produce(session, tp(p), id, Acks.ALL, 2000, null, 0, -1, value,
                    0, value.capacity());
                if (queued != ReplicationError.NONE)
                {
                    send.error = queued;
                }
                for (int i = 0; i < 400 && null == send.error; i++)
                {
                    clock.advance(5);
                    invokeAll();
                    checker.checkAlways();
                }
                if (!send.acked())
                {
                    note("final write " + send.value + " -> " + send.error + ", retrying");
                    clock.advance(50);
                    invokeAll();
                }
            }
            if (!send.acked())
            {
                checker.fail("after healing an acks=all write on partition " + p + " did not succeed: " + send.error);
            }
        }
        for (int i = 0; i < 200 && !quiescent(); i++)
        {
            clock.advance(5);
            invokeAll();
            checker.checkAlways();
        }
    }

    private void retryIdempotent()
    {
        for (int p = 0; p < PARTITIONS; p++)
        {
            final Send inFlight = idempotent[p].inFlight;
            if (null != inFlight && null != inFlight.error && inFlight.unknown())
            {
                produceIdempotent(p, idempotent[p]);
            }
        }
    }

    boolean quiescent()
    {
        for (int p = 0; p < PARTITIONS; p++)
        {
            final PartitionState state = cluster.state(tp(p));
            final Replica leader = cluster.leaderReplica(tp(p));
            if (null == leader || state.isr().length != HOSTS || leader.leaderState.changePending())
            {
                return false;
            }
            final long end = leader.log.logEndOffset();
            for (int h = 0; h < HOSTS; h++)
            {
                final Replica replica = cluster.replica(h, tp(p));
                if (null == replica || replica.log.logEndOffset() != end || replica.highWatermark.get() != end)
                {
                    return false;
                }
            }
            final Send inFlight = idempotent[p].inFlight;
            if (null != inFlight && (null == inFlight.error || inFlight.unknown()))
            {
                return false;
            }
        }
        return true;
    }

    String describeState()
    {
        final StringBuilder sb = new StringBuilder();
        for (int h = 0; h < HOSTS; h++)
        {
            sb.append("\nhost ").append(h).append(": running=").append(null != cluster.host(h))
                .append(" aliveForController=").append(cluster.controller().hostAlive(h))
                .append(null == cluster.host(h) ? "" : " incarnation=" + cluster.host(h).incarnation());
        }
        for (int p = 0; p < PARTITIONS; p++)
        {
            sb.append('\n').append(cluster.state(tp(p)));
            for (int h = 0; h < HOSTS; h++)
            {
                sb.append("\n  ").append(cluster.replica(h, tp(p)));
            }
        }
        return sb.toString();
    }

    /** @return the records of a replica's log in {@code [from, to)}, by offset (CORRUPT_BATCH: what was read). */
    static TreeMap<Long, String> read(final Replica replica, final long from, final long to)
    {
        final TreeMap<Long, String> records = new TreeMap<>();
        try (LogReader reader = replica.log.openReader())
        {
            reader.seek(from);
            while (reader.poll((r) -> records.put(r.offset(), r.valueAsString()), to, 1000) > 0)
            {
                // read on
            }
        }
        return records;
    }

    /** @return every record of a replica's log, by offset. */
    static TreeMap<Long, String> read(final Replica replica)
    {
        final TreeMap<Long, String> records = new TreeMap<>();
        try (LogReader reader = replica.log.openReader())
        {
            while (reader.poll((r) -> records.put(r.offset(), r.valueAsString()), Long.MAX_VALUE, 1000) > 0)
            {
                // read on
            }
        }
        return records;
    }

    /** @return the trace, for a failure report. */
    String report()
    {
        return "simulation seed=" + seed + " failed after " + events + " events. Replay: mvn -q test -pl " +
            "replication -am -Dtest=SimulationTest#replay -Dsim.seed=" + seed +
            " -Dsurefire.failIfNoSpecifiedTests=false\n  " + String.join("\n  ", trace);
    }

    @Override
    public void close()
    {
        for (final PartitionReader reader : readers)
        {
            if (null != reader)
            {
                reader.close();
            }
        }
        cluster.close();
        try (Stream<Path> files = Files.walk(root))
        {
            files.sorted(Comparator.reverseOrder()).forEach((p) -> p.toFile().delete());
        }
        catch (final IOException ignore)
        {
            // a temporary directory
        }
    }
}
