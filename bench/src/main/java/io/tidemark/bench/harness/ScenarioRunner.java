package io.tidemark.bench.harness;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import io.tidemark.store.format.RecordEncoder;
import org.HdrHistogram.Histogram;
import io.tidemark.bench.report.MachineState;
import org.HdrHistogram.Recorder;
import org.agrona.BufferUtil;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
 * The producer threads ({@link ScenarioProducer}), the completion listener and the main thread of a run share one
 * set of counters and flags ({@link RunCounters}); this class runs the phases.
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
    /** Timeout of every produce request. */
    static final int REQUEST_TIMEOUT_MS = 30_000;
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

    /** One run: its phases, over the counters its producer threads and the produce listener share. */
    private final class Run
    {
        private final Scenario s;
        private final Path dir;
        private final long warmupNanos;
        private final long measureNanos;
        private final long killAfterNanos;
        private final RunCounters counters;
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
            this.counters = new RunCounters(s, killAfterNanos >= 0);
        }

        RunResult execute()
        {
            final ReplicationContext ctx = new ReplicationContext()
                .minInsyncReplicas(s.minInsync())
                .requestTimeoutMs(REQUEST_TIMEOUT_MS)
                .threadingMode(s.threading())
                .errorHandler(counters::onAgentError)
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
                session = cluster.sessions().register(counters);
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
            counters.startAt = System.nanoTime() + STARTUP_NANOS;
            counters.windowStart = counters.startAt + warmupNanos;
            counters.windowEnd = counters.windowStart + measureNanos;
            final long windowStart = counters.windowStart;
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
                counters.killNanos = System.nanoTime();
                phase.accept("measure after kill");
            }
            parkUntil(counters.windowEnd);
            final long leoEnd = sumLogEnd(leoReaders);
            final long cpuEnd = processCpuNanos();
            final double cpusUsed = cpuStart < 0 || cpuEnd < 0 ? Double.NaN :
                (cpuEnd - cpuStart) / (double)(System.nanoTime() - windowStart);
            final double load = loadAverage();
            final MachineState machineAfter = MachineState.now();
            counters.stop = true;
            for (final Thread producer : producers)
            {
                joinQuietly(producer);
            }
            phase.accept("drain");
            final long unanswered = counters.drain(DRAIN_STALL_NANOS);
            final Histogram histogram = counters.latency.getIntervalHistogram();
            final int elections = sumLeaderEpochs() - epochsBefore;
            phase.accept("verify");
            final long queuedTotal = sum(counters.queued);
            final LogReadBack verification = LogReadBack.check(cluster, tps, counters.acks, queuedTotal,
                killedHost < 0 && counters.sumErrors() == 0);
            for (final PartitionReader reader : leoReaders)
            {
                reader.close();
            }

            final double seconds = measureNanos / 1e9;
            final double appendedPerSecond = (leoEnd - leoStart) / seconds;
            final double recordsPerSecond = s.acknowledged() ? counters.windowAcked.sum() / seconds : appendedPerSecond;
            final Map<String, Long> errorCounts = new LinkedHashMap<>();
            for (final ReplicationError error : ReplicationError.values())
            {
                final long n = counters.errors.get(error.ordinal());
                if (n > 0)
                {
                    errorCounts.put(error.name(), n);
                }
            }
            String problem = verification.problem;
            if (null == problem && null != counters.producerFailure.get())
            {
                problem = "producer failed: " + counters.producerFailure.get();
            }
            if (null == problem && killedHost < 0 && unanswered > 0)
            {
                problem = unanswered + " produce requests were never answered";
            }
            if (null == problem && killedHost < 0 && counters.agentErrors.sum() > 0)
            {
                problem = counters.agentErrors.sum() + " replication agent errors, the first: " +
                    counters.firstAgentError.get();
            }
            RunResult.Failover failover = null;
            if (killedHost >= 0)
            {
                final long kill = counters.killNanos;
                final long first = counters.firstAckAfterKill;
                failover = new RunResult.Failover(killedHost, cluster.leaderOf(tps[0]),
                    first == 0 ? -1 : first - kill, Math.max(0, kill - counters.lastAckBeforeKill),
                    counters.ackedAfterKill.sum(), unanswered);
                if (first == 0 && null == problem)
                {
                    problem = "no acknowledgement after the leader was killed";
                }
            }
            return new RunResult(s, measureNanos, recordsPerSecond, appendedPerSecond,
                recordsPerSecond * s.messageSize() / 1e6, histogram, queuedTotal, counters.ackedRecords.sum(), errorCounts,
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
            final ScenarioProducer settler = new ScenarioProducer(counters, cluster, session, tps, slot, all);
            final long deadline = System.nanoTime() + SETTLE_TIMEOUT_NANOS;
            final long base = (long)slot << SEQUENCE_BITS;
            for (int p = 0; p < all.length; p++)
            {
                final long correlationId = base | p;
                counters.times[slot][p] = System.nanoTime();
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
                counters.sent[slot]++;
                counters.queued[slot] += s.batchRecords();
            }
            while (counters.completed(slot) < all.length)
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("settling: " + counters.completed(slot) + " of " + all.length +
                        " partitions answered");
                }
                LockSupport.parkNanos(100_000);
            }
            if (counters.sumErrors() > 0)
            {
                throw new IllegalStateException("settling: produce errors " + counters.errors);
            }
        }

        private void produceLoop(final int thread, final int[] partitions)
        {
            try
            {
                new ScenarioProducer(counters, cluster, session, tps, thread, partitions).run();
            }
            catch (final Throwable t)
            {
                counters.producerFailure.compareAndSet(null, t);
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
