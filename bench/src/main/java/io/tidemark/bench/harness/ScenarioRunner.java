package io.tidemark.bench.harness;

import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.LogContext;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.HdrHistogram.Histogram;
import io.tidemark.bench.report.MachineState;
import org.HdrHistogram.Recorder;
import org.agrona.BufferUtil;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Runs one scenario once: starts a {@link ReplicationCluster} in a fresh temporary directory (one host per
 * replica), creates the topic, produces with the scenario's load through {@link ReplicationCluster#produce} (one
 * record per request) or {@link ReplicationCluster#produceRecords} (a run of records encoded with
 * {@link RecordEncoder}), measures after a warm-up, then drains, verifies and deletes everything.
 * <p>
 * <b>Measures.</b> Records/s: records acknowledged inside the measurement window (acks=0: records appended to the
 * leaders' logs, from their log end offsets). Latency: send-to-acknowledge, recorded in nanoseconds into an
 * HdrHistogram {@link Recorder} by the produce listener, for requests sent inside the window. Closed loop: from
 * the moment the request was queued. Open loop: from the moment it was <em>due</em> by the fixed schedule, so that a
 * stall delays the requests behind it and they count it (coordinated omission corrected).
 * <p>
 * <b>Verification.</b> Every acknowledged record must be in its partition's log at the offset its acknowledgement
 * gave, with the content its producer wrote (each value starts with the request's correlation id and the record's
 * index in the request): the logs are read back through {@link ReplicationCluster#openReader} once every replica
 * has caught up. Without failures, the logs must also hold exactly the records queued (nothing lost or doubled).
 * A run that fails verification is reported as failed: a bench that loses data is no bench ({@link LogReadBack}).
 * <p>
 * Over 500 lines on purpose: the producer threads, the completion listener and the main thread of a run share one
 * set of counters and flags ({@code Run}), on the measured path; split apart they would reach them through an
 * extra object per send.
 */
public final class ScenarioRunner
{
    /** The topic every scenario writes. */
    public static final String TOPIC = "bench";
    /** Producer thread index bits of a correlation id start here. */
    static final int SEQUENCE_BITS = 40;
    static final long SEQUENCE_MASK = (1L << SEQUENCE_BITS) - 1;
    /** Send times kept per producer thread (requests outstanding at most). */
    static final int TIMES_RING = 1 << 20;
    private static final int TIMES_MASK = TIMES_RING - 1;
    private static final int REQUEST_TIMEOUT_MS = 30_000;
    private static final int PAD = 16; // longs between two producer threads' counters (no false sharing)
    private static final long STARTUP_NANOS = 20_000_000L;
    private static final long QUIESCE_TIMEOUT_MS = 60_000;
    private static final long DRAIN_STALL_NANOS = 3_000_000_000L;
    private static final long SETTLE_TIMEOUT_NANOS = 120_000_000_000L;

    private final Path workRoot;
    private final long segmentBytes;
    private long dirtyBytesMax = LogContext.DEFAULT_DIRTY_BYTES_MAX;
    private java.util.function.UnaryOperator<ReplicationContext> tuning = java.util.function.UnaryOperator.identity();
    private final Consumer<String> phase;

    /**
     * @param workRoot     where each run's temporary directory is created.
     * @param segmentBytes {@code segment.bytes} of every replica log.
     * @param phase        told the phase of the run ("warm-up", "measure", "verify", ...), for progress.
     */
    public ScenarioRunner(final Path workRoot, final long segmentBytes, final Consumer<String> phase)
    {
        this.workRoot = workRoot;
        this.segmentBytes = segmentBytes;
        this.phase = phase;
    }

    /** @param bytes {@code dirty.bytes.max} of every replica log. @return this */
    public ScenarioRunner dirtyBytesMax(final long bytes)
    {
        dirtyBytesMax = bytes;
        return this;
    }

    /**
     * @param tuning applied to every run's replication context after the scenario's settings (tests use it for
     *               heartbeat sessions and lag limits that hold on a busy machine). @return this
     */
    ScenarioRunner tuning(final java.util.function.UnaryOperator<ReplicationContext> tuning)
    {
        this.tuning = tuning;
        return this;
    }

    /**
     * Run a scenario once.
     *
     * @param scenario     what to run.
     * @param warmupNanos  warm-up before the measurement window.
     * @param measureNanos measurement window.
     * @return the measures.
     */
    public RunResult run(final Scenario scenario, final long warmupNanos, final long measureNanos) throws IOException
    {
        return run(scenario, warmupNanos, measureNanos, -1);
    }

    /**
     * Run a scenario once, optionally killing partition 0's leader host during the measurement window
     * ({@link ReplicationCluster#killHost}: its threads stop at once, as after a kill -9).
     *
     * @param scenario       what to run.
     * @param warmupNanos    warm-up before the measurement window.
     * @param measureNanos   measurement window.
     * @param killAfterNanos when to kill the leader, from the window's start; negative for never.
     * @return the measures.
     */
    public RunResult run(final Scenario scenario, final long warmupNanos, final long measureNanos,
        final long killAfterNanos) throws IOException
    {
        Files.createDirectories(workRoot);
        final Path dir = Files.createTempDirectory(workRoot, "tidemark-bench-");
        try
        {
            return new Run(scenario, dir, warmupNanos, measureNanos, killAfterNanos).execute();
        }
        finally
        {
            TempDirs.deleteRecursively(dir);
        }
    }

    /** One run: the state shared by the producer threads, the produce listener and the main thread. */
    private final class Run implements ProduceListener
    {
        private final Scenario s;
        private final Path dir;
        private final long warmupNanos;
        private final long measureNanos;
        private final long killAfterNanos;
        private final long[][] times;
        private final AtomicLongArray completed;
        private final long[] sent;
        private final long[] queued;
        private final AckLog[] acks;
        private final Recorder latency = new Recorder(3);
        private final LongAdder windowAcked = new LongAdder();
        private final LongAdder ackedRecords = new LongAdder();
        private final AtomicLongArray errors = new AtomicLongArray(ReplicationError.values().length);
        private final LongAdder agentErrors = new LongAdder();
        private final AtomicReference<Throwable> firstAgentError = new AtomicReference<>();
        private final AtomicReference<Throwable> producerFailure = new AtomicReference<>();
        private volatile long windowStart = Long.MAX_VALUE;
        private volatile long windowEnd = Long.MAX_VALUE;
        private volatile long startAt;
        private volatile boolean stop;
        private volatile long killNanos;
        private volatile long lastAckBeforeKill;
        private volatile long firstAckAfterKill;
        private final LongAdder ackedAfterKill = new LongAdder();
        private ReplicationCluster cluster;
        private int session;
        private TopicPartition[] tps;

        Run(final Scenario s, final Path dir, final long warmupNanos, final long measureNanos,
            final long killAfterNanos)
        {
            this.s = s;
            this.dir = dir;
            this.warmupNanos = warmupNanos;
            this.measureNanos = measureNanos;
            this.killAfterNanos = killAfterNanos;
            final int threads = s.producerThreads() + 1; // the last slot sends the settling requests
            this.times = new long[threads][TIMES_RING];
            this.completed = new AtomicLongArray(threads * PAD);
            this.sent = new long[threads];
            this.queued = new long[threads];
            this.acks = new AckLog[s.partitions()];
            for (int p = 0; p < acks.length; p++)
            {
                acks[p] = new AckLog();
            }
        }

        RunResult execute()
        {
            final ReplicationContext ctx = new ReplicationContext()
                .minInsyncReplicas(s.minInsync())
                .requestTimeoutMs(REQUEST_TIMEOUT_MS)
                .threadingMode(s.threading())
                .errorHandler(this::onAgentError)
                .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(segmentBytes)
                    .dirtyBytesMax(dirtyBytesMax)
                    .flushIntervalMessages(s.flush()));
            if (s.busySpin())
            {
                ctx.idleStrategySupplier(BusySpinIdleStrategy::new);
            }
            tuning.apply(ctx);
            phase.accept("start cluster");
            try (ReplicationCluster c = ReplicationCluster.start(dir, s.replicas(), ctx))
            {
                cluster = c;
                cluster.createTopic(TOPIC, s.partitions(), s.replicas());
                if (!cluster.awaitLeaders(TOPIC, QUIESCE_TIMEOUT_MS))
                {
                    throw new IllegalStateException("no leaders after " + QUIESCE_TIMEOUT_MS + " ms: " +
                        cluster.partitions(TOPIC));
                }
                tps = new TopicPartition[s.partitions()];
                for (int p = 0; p < tps.length; p++)
                {
                    tps[p] = new TopicPartition(TOPIC, p);
                }
                session = cluster.sessions().register(this);
                final RunResult result = measureAndVerify();
                phase.accept("stop");
                // The data is deleted next: halt the hosts (as a kill -9 would) instead of a clean close, which
                // would first force gigabytes of page cache to disk.
                for (int host = 0; host < s.replicas(); host++)
                {
                    cluster.killHost(host);
                }
                return result;
            }
        }

        private RunResult measureAndVerify()
        {
            final PartitionReader[] leoReaders = new PartitionReader[tps.length];
            for (int p = 0; p < tps.length; p++)
            {
                leoReaders[p] = cluster.openReader(tps[p]);
            }
            phase.accept("settle");
            settle();
            final int epochsBefore = sumLeaderEpochs();
            startAt = System.nanoTime() + STARTUP_NANOS;
            windowStart = startAt + warmupNanos;
            windowEnd = windowStart + measureNanos;
            final List<Thread> producers = new ArrayList<>();
            for (int t = 0; t < s.producerThreads(); t++)
            {
                final int thread = t;
                final Thread producer = new Thread(() -> produceLoop(thread, partitionsOf(thread)),
                    "bench-producer-" + t);
                producer.setDaemon(true);
                producers.add(producer);
                producer.start();
            }
            phase.accept("warm-up");
            parkUntil(windowStart);
            final MachineState machineBefore = MachineState.now();
            final long cpuStart = processCpuNanos();
            final long leoStart = sumLogEnd(leoReaders);
            phase.accept("measure");
            int killedHost = -1;
            if (killAfterNanos >= 0)
            {
                parkUntil(windowStart + killAfterNanos);
                killedHost = cluster.leaderOf(tps[0]);
                phase.accept("kill leader host " + killedHost);
                cluster.killHost(killedHost);
                killNanos = System.nanoTime();
                phase.accept("measure after kill");
            }
            parkUntil(windowEnd);
            final long leoEnd = sumLogEnd(leoReaders);
            final long cpuEnd = processCpuNanos();
            final double cpusUsed = cpuStart < 0 || cpuEnd < 0 ? Double.NaN :
                (cpuEnd - cpuStart) / (double)(System.nanoTime() - windowStart);
            final double load = loadAverage();
            final MachineState machineAfter = MachineState.now();
            stop = true;
            for (final Thread producer : producers)
            {
                joinQuietly(producer);
            }
            phase.accept("drain");
            final long unanswered = drain();
            final Histogram histogram = latency.getIntervalHistogram();
            final int elections = sumLeaderEpochs() - epochsBefore;
            phase.accept("verify");
            final long queuedTotal = sum(queued);
            final LogReadBack verification = LogReadBack.check(cluster, tps, acks, queuedTotal,
                killedHost < 0 && sumErrors() == 0);
            for (final PartitionReader reader : leoReaders)
            {
                reader.close();
            }

            final double seconds = measureNanos / 1e9;
            final double appendedPerSecond = (leoEnd - leoStart) / seconds;
            final double recordsPerSecond = s.acknowledged() ? windowAcked.sum() / seconds : appendedPerSecond;
            final Map<String, Long> errorCounts = new LinkedHashMap<>();
            for (final ReplicationError error : ReplicationError.values())
            {
                final long n = errors.get(error.ordinal());
                if (n > 0)
                {
                    errorCounts.put(error.name(), n);
                }
            }
            String problem = verification.problem;
            if (null == problem && null != producerFailure.get())
            {
                problem = "producer failed: " + producerFailure.get();
            }
            if (null == problem && killedHost < 0 && unanswered > 0)
            {
                problem = unanswered + " produce requests were never answered";
            }
            if (null == problem && killedHost < 0 && agentErrors.sum() > 0)
            {
                problem = agentErrors.sum() + " replication agent errors, the first: " + firstAgentError.get();
            }
            RunResult.Failover failover = null;
            if (killedHost >= 0)
            {
                final long kill = killNanos;
                final long first = firstAckAfterKill;
                failover = new RunResult.Failover(killedHost, cluster.leaderOf(tps[0]),
                    first == 0 ? -1 : first - kill, Math.max(0, kill - lastAckBeforeKill), ackedAfterKill.sum(),
                    unanswered);
                if (first == 0 && null == problem)
                {
                    problem = "no acknowledgement after the leader was killed";
                }
            }
            return new RunResult(s, measureNanos, recordsPerSecond, appendedPerSecond,
                recordsPerSecond * s.messageSize() / 1e6, histogram, queuedTotal, ackedRecords.sum(), errorCounts,
                unanswered, verification.verified, verification.recordsInLogs, null == problem, problem, failover,
                cpusUsed, load, elections, machineBefore, machineAfter);
        }

        private int[] partitionsOf(final int thread)
        {
            final List<Integer> mine = new ArrayList<>();
            for (int p = thread; p < s.partitions(); p += s.producerThreads())
            {
                mine.add(p);
            }
            return mine.stream().mapToInt(Integer::intValue).toArray();
        }

        /**
         * Before the clock starts: one request to every partition, acks=all, and wait for every answer. A new
         * cluster's logs reserve and pre-fault their first pages and the followers start fetching; with many
         * partitions that takes a while on the one agent thread, and it is set-up, not throughput.
         */
        private void settle()
        {
            final int slot = s.producerThreads();
            final int[] all = new int[s.partitions()];
            for (int p = 0; p < all.length; p++)
            {
                all[p] = p;
            }
            final Producer settler = new Producer(slot, all);
            final long deadline = System.nanoTime() + SETTLE_TIMEOUT_NANOS;
            final long base = (long)slot << SEQUENCE_BITS;
            for (int p = 0; p < all.length; p++)
            {
                final long correlationId = base | p;
                times[slot][p] = System.nanoTime();
                ReplicationError outcome;
                while ((outcome = settler.send(p, correlationId, io.tidemark.replication.Acks.ALL)) !=
                    ReplicationError.NONE)
                {
                    if (System.nanoTime() > deadline || (outcome != ReplicationError.BACK_PRESSURED &&
                        outcome != ReplicationError.LEADER_NOT_AVAILABLE))
                    {
                        throw new IllegalStateException("settling: produce to " + tps[p] + " refused: " + outcome);
                    }
                    Thread.onSpinWait();
                }
                sent[slot]++;
                queued[slot] += s.batchRecords();
            }
            while (completed.get(slot * PAD) < all.length)
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("settling: " + completed.get(slot * PAD) + " of " + all.length +
                        " partitions answered");
                }
                LockSupport.parkNanos(100_000);
            }
            if (sumErrors() > 0)
            {
                throw new IllegalStateException("settling: produce errors " + errors);
            }
        }

        private void produceLoop(final int thread, final int[] partitions)
        {
            try
            {
                new Producer(thread, partitions).run();
            }
            catch (final Throwable t)
            {
                producerFailure.compareAndSet(null, t);
            }
        }

        /** One producer thread: its partitions, its encoded request, its pacing. */
        private final class Producer
        {
            private final int thread;
            private final int[] partitions;
            private final long[] sendTimes;
            private final UnsafeBuffer value;
            private final UnsafeBuffer run;
            private final int runLength;
            private final int[] valueAt;

            Producer(final int thread, final int[] partitions)
            {
                this.thread = thread;
                this.partitions = partitions;
                this.sendTimes = times[thread];
                this.value = filled(s.messageSize());
                final int recordLength = RecordEncoder.encodedLength(-1, s.messageSize(), 0);
                this.runLength = recordLength * s.batchRecords();
                this.run = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
                    org.agrona.BitUtil.align(Math.max(runLength, 64), 64), 64));
                this.valueAt = new int[s.batchRecords()];
                int at = 0;
                for (int i = 0; i < s.batchRecords(); i++)
                {
                    RecordEncoder.encode(run, at, i, BatchClaim.NOW, null, 0, 0, value, 0, s.messageSize(), null, 0,
                        0);
                    valueAt[i] = at + RecordDescriptor.HEADER_LENGTH;
                    at += recordLength;
                }
            }

            void run()
            {
                final boolean acked = s.acknowledged();
                final long base = (long)thread << SEQUENCE_BITS;
                final boolean open = s.load() == Scenario.Load.OPEN;
                final boolean parks = s.producerParks();
                final long period = open ?
                    Math.max(1, Math.round(1e9 * s.batchRecords() * s.producerThreads() / s.rate())) : 0;
                long due = startAt + (open ? period * thread / s.producerThreads() : 0);
                long seq = 0;
                int next = 0;
                // A full window: spin, then yield, then park briefly, so that a waiting producer does not take
                // CPU from the agents when the machine has fewer free cores than spinning threads.
                final BackoffIdleStrategy windowIdle = new BackoffIdleStrategy(100, 10, 1_000, 50_000);
                parkUntil(startAt);
                while (!stop)
                {
                    if (acked && sent[thread] - completed.get(thread * PAD) >=
                        (open ? TIMES_RING : s.maxInFlight()))
                    {
                        windowIdle.idle();
                        continue;
                    }
                    windowIdle.reset();
                    if (open)
                    {
                        for (long now = System.nanoTime(); now < due; now = System.nanoTime())
                        {
                            if (stop)
                            {
                                return;
                            }
                            if (parks)
                            {
                                LockSupport.parkNanos(due - now);
                            }
                            else
                            {
                                Thread.onSpinWait();
                            }
                        }
                    }
                    final long correlationId = base | seq;
                    final int p = partitions[next];
                    sendTimes[(int)(seq & TIMES_MASK)] = open ? due : System.nanoTime();
                    final ReplicationError outcome = send(p, correlationId, s.acks());
                    if (outcome == ReplicationError.NONE)
                    {
                        seq++;
                        sent[thread]++;
                        queued[thread] += s.batchRecords();
                        due += period;
                    }
                    else if (outcome != ReplicationError.BACK_PRESSURED &&
                        outcome != ReplicationError.LEADER_NOT_AVAILABLE)
                    {
                        throw new IllegalStateException("produce to " + tps[p] + " refused: " + outcome);
                    }
                    else
                    {
                        Thread.onSpinWait(); // retried (open loop: still measured from the due time)
                        if (!open)
                        {
                            next = (next + 1) % partitions.length; // a full queue: try the next partition
                            continue;
                        }
                        continue;
                    }
                    next = (next + 1) % partitions.length;
                }
            }

            ReplicationError send(final int p, final long correlationId, final int acks)
            {
                if (s.batchRecords() == 1)
                {
                    value.putLong(0, correlationId);
                    value.putInt(8, 0);
                    return cluster.produce(session, tps[p], correlationId, acks, REQUEST_TIMEOUT_MS, null, 0, -1,
                        value, 0, s.messageSize());
                }
                for (int i = 0; i < valueAt.length; i++)
                {
                    run.putLong(valueAt[i], correlationId);
                    run.putInt(valueAt[i] + 8, i);
                }
                return cluster.produceRecords(session, tps[p], correlationId, acks, REQUEST_TIMEOUT_MS, run, 0,
                    runLength);
            }
        }

        @Override
        public void onComplete(final TopicPartition partition, final long correlationId, final long baseOffset,
            final ReplicationError error)
        {
            final long now = System.nanoTime();
            final int thread = (int)(correlationId >>> SEQUENCE_BITS);
            final long seq = correlationId & SEQUENCE_MASK;
            if (error == ReplicationError.NONE)
            {
                final int count = s.batchRecords();
                acks[partition.partition()].add(baseOffset, correlationId, count);
                ackedRecords.add(count);
                final long sentAt = times[thread][(int)(seq & TIMES_MASK)];
                if (sentAt >= windowStart && sentAt < windowEnd)
                {
                    latency.recordValue(Math.max(0, now - sentAt));
                }
                if (now >= windowStart && now < windowEnd)
                {
                    windowAcked.add(count);
                }
                if (killAfterNanos >= 0)
                {
                    final long kill = killNanos;
                    if (kill != 0 && now > kill)
                    {
                        if (firstAckAfterKill == 0)
                        {
                            firstAckAfterKill = now;
                        }
                        ackedAfterKill.add(count);
                    }
                    else
                    {
                        lastAckBeforeKill = now;
                    }
                }
            }
            else
            {
                errors.incrementAndGet(error.ordinal());
            }
            completed.incrementAndGet(thread * PAD);
        }

        private void onAgentError(final Throwable t)
        {
            agentErrors.increment();
            firstAgentError.compareAndSet(null, t);
        }

        /**
         * Wait until every request sent was answered, or no answer came for a while (a killed leader's queue).
         *
         * @return requests never answered.
         */
        private long drain()
        {
            if (!s.acknowledged())
            {
                return 0;
            }
            long lastProgress = System.nanoTime();
            long lastCompleted = -1;
            while (true)
            {
                long outstanding = 0;
                long done = 0;
                for (int t = 0; t < sent.length; t++)
                {
                    final long c = completed.get(t * PAD);
                    outstanding += sent[t] - c;
                    done += c;
                }
                if (outstanding == 0)
                {
                    return 0;
                }
                final long now = System.nanoTime();
                if (done != lastCompleted)
                {
                    lastCompleted = done;
                    lastProgress = now;
                }
                else if (now - lastProgress > DRAIN_STALL_NANOS)
                {
                    return outstanding;
                }
                LockSupport.parkNanos(1_000_000);
            }
        }

        private int sumLeaderEpochs()
        {
            int total = 0;
            for (final TopicPartition tp : tps)
            {
                final io.tidemark.replication.protocol.PartitionState state = cluster.state(tp);
                total += null == state ? 0 : state.leaderEpoch();
            }
            return total;
        }

        private long sumErrors()
        {
            long n = 0;
            for (int i = 0; i < errors.length(); i++)
            {
                n += errors.get(i);
            }
            return n;
        }
    }

    /** @return CPU time used by this JVM so far, in nanoseconds, or -1. */
    static long processCpuNanos()
    {
        final java.lang.management.OperatingSystemMXBean os =
            java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean ?
            ((com.sun.management.OperatingSystemMXBean)os).getProcessCpuTime() : -1;
    }

    /** @return the 1-minute load average, or NaN. */
    static double loadAverage()
    {
        final double load = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return load < 0 ? Double.NaN : load;
    }

    private static long sumLogEnd(final PartitionReader[] readers)
    {
        long total = 0;
        for (final PartitionReader reader : readers)
        {
            total += Math.max(0, reader.logEndOffset());
        }
        return total;
    }

    private static long sum(final long[] values)
    {
        long total = 0;
        for (final long v : values)
        {
            total += v;
        }
        return total;
    }

    /**
     * @param size value length.
     * @return an off-heap value of that length filled with a repeating pattern.
     */
    static UnsafeBuffer filled(final int size)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            org.agrona.BitUtil.align(Math.max(size, 64), 64), 64), 0, size);
        for (int i = 0; i < size; i++)
        {
            buffer.putByte(i, (byte)('a' + i % 26));
        }
        return buffer;
    }

    static void parkUntil(final long deadlineNanos)
    {
        long left;
        while ((left = deadlineNanos - System.nanoTime()) > 0)
        {
            LockSupport.parkNanos(Math.min(left, 50_000_000L));
        }
    }

    private static void joinQuietly(final Thread thread)
    {
        boolean interrupted = false;
        while (thread.isAlive())
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
    }
}
