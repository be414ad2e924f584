package io.tidemark.bench.harness;

import io.tidemark.bench.report.MachineState;
import io.tidemark.replication.Acks;
import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.LogContext;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;
import io.tidemark.store.RecordView;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One run of the ISR-flap cell (issue 21): acks=all writes in bursts on one partition, RF=3,
 * {@code min.insync.replicas=2}, the replication defaults otherwise, with {@code replica.lag.max.messages} set or
 * off. Every {@code burstIntervalNanos} the producer queues {@code burstRecords} records in requests of
 * {@code batchRecords} as fast as the produce ring takes them. Measured over the window: the ISR shrinks and
 * expansions the controller committed, how long the ISR was below min.insync.replicas (the controller's state,
 * sampled every millisecond), the outcome of every request, and the latency of the acknowledged ones from the moment
 * their burst was due (a burst counts whole: the last request of a burst waits behind the others). Then every
 * acknowledged record is checked at its offset with its content; records whose outcome is unknown
 * (NOT_ENOUGH_REPLICAS_AFTER_APPEND) may be there or not.
 */
public final class IsrFlapRun
{
    /** The topic. */
    public static final String TOPIC = "flap";
    private static final int REQUEST_TIMEOUT_MS = 30_000;
    private static final long SETTLE_TIMEOUT_MS = 60_000;
    private static final long DRAIN_TIMEOUT_NANOS = 35_000_000_000L;

    /**
     * What one run measured.
     *
     * @param lagMaxMessages     {@code replica.lag.max.messages} (0: off).
     * @param bursts             bursts due inside the window.
     * @param requestsSent       requests of those bursts.
     * @param outcomes           the outcomes of those requests.
     * @param isrShrinks         ISR shrinks committed inside the window.
     * @param isrExpansions      ISR expansions committed inside the window.
     * @param msBelowMinInsync   milliseconds (sampled) with the ISR below min.insync.replicas.
     * @param latency            acknowledged requests, from their burst's due time, in nanoseconds.
     * @param recordsPerSecond   records acknowledged per second of the window.
     * @param verified           acknowledged records found at their offsets.
     * @param problem            null when verified, else what is wrong.
     * @param cpus               CPUs the JVM used over the window (2.0: both cores of a 2-core machine).
     * @param load1              one-minute load at the end of the window.
     */
    public record Result(long lagMaxMessages, long bursts, long requestsSent, Map<ReplicationError, Long> outcomes,
        long isrShrinks, long isrExpansions, long msBelowMinInsync, Histogram latency, double recordsPerSecond,
        long verified, String problem, double cpus, double load1)
    {
        /** @return ISR changes per burst. */
        public double changesPerBurst()
        {
            return bursts == 0 ? 0 : (isrShrinks + isrExpansions) / (double)bursts;
        }

        /** @return requests not acknowledged (refused or failed), of those sent. */
        public long failed()
        {
            long n = 0;
            for (final Map.Entry<ReplicationError, Long> e : outcomes.entrySet())
            {
                n += e.getKey() == ReplicationError.NONE ? 0 : e.getValue();
            }
            return n;
        }
    }

    private final Path workRoot;
    private final ReplicationContext.ThreadingMode threading;
    private final int messageSize;
    private final int batchRecords;
    private final int burstRecords;
    private final long burstIntervalNanos;

    /**
     * @param workRoot           where the run's temporary logs go.
     * @param threading          how the cluster's agents are threaded (busy-spinning when idle).
     * @param messageSize        value bytes per record (at least 12).
     * @param batchRecords       records per request.
     * @param burstRecords       records per burst.
     * @param burstIntervalNanos time between two bursts' due times.
     */
    public IsrFlapRun(final Path workRoot, final ReplicationContext.ThreadingMode threading, final int messageSize,
        final int batchRecords, final int burstRecords, final long burstIntervalNanos)
    {
        if (messageSize < Scenario.MIN_MESSAGE_SIZE || batchRecords < 1 || burstRecords < batchRecords ||
            burstIntervalNanos < 1)
        {
            throw new IllegalArgumentException("invalid burst cell: size " + messageSize + ", batch " + batchRecords +
                ", burst " + burstRecords + ", interval " + burstIntervalNanos + " ns");
        }
        this.workRoot = workRoot;
        this.threading = threading;
        this.messageSize = messageSize;
        this.batchRecords = batchRecords;
        this.burstRecords = burstRecords;
        this.burstIntervalNanos = burstIntervalNanos;
    }

    /**
     * @param lagMaxMessages {@code replica.lag.max.messages}, 0 for off.
     * @param warmupNanos    bursts before the window.
     * @param measureNanos   the window.
     * @return what was measured.
     */
    public Result run(final long lagMaxMessages, final long warmupNanos, final long measureNanos) throws IOException
    {
        Files.createDirectories(workRoot);
        final Path dir = Files.createTempDirectory(workRoot, "tidemark-isr-flap-");
        try
        {
            return new Run(dir, lagMaxMessages, warmupNanos, measureNanos).execute();
        }
        finally
        {
            TempDirs.deleteRecursively(dir);
        }
    }

    private final class Run implements ProduceListener
    {
        private final Path dir;
        private final long lagMaxMessages;
        private final long warmupNanos;
        private final long measureNanos;
        private final int requestsPerBurst = Math.max(1, burstRecords / batchRecords);
        private final long[] dueTimes = new long[1 << 22];
        private final AckLog acks = new AckLog();
        private final Recorder latency = new Recorder(3);
        private final AtomicLongArray outcomes = new AtomicLongArray(ReplicationError.values().length);
        private final AtomicLongArray windowOutcomes = new AtomicLongArray(ReplicationError.values().length);
        private final AtomicLong answered = new AtomicLong();
        private final AtomicLong windowAcked = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private volatile long windowStart = Long.MAX_VALUE;
        private volatile long windowEnd = Long.MAX_VALUE;
        private volatile boolean stop;
        private long sent;
        private long windowRequests;
        private long windowBursts;
        private ReplicationCluster cluster;
        private TopicPartition tp;
        private int session;

        Run(final Path dir, final long lagMaxMessages, final long warmupNanos, final long measureNanos)
        {
            this.dir = dir;
            this.lagMaxMessages = lagMaxMessages;
            this.warmupNanos = warmupNanos;
            this.measureNanos = measureNanos;
        }

        Result execute()
        {
            final ReplicationContext ctx = new ReplicationContext().minInsyncReplicas(2)
                .replicaLagMaxMessages(lagMaxMessages).requestTimeoutMs(REQUEST_TIMEOUT_MS).threadingMode(threading)
                .idleStrategySupplier(BusySpinIdleStrategy::new).errorHandler((t) -> failure.compareAndSet(null, t))
                .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(256L * 1024 * 1024));
            try (ReplicationCluster c = ReplicationCluster.start(dir, 3, ctx))
            {
                cluster = c;
                cluster.createTopic(TOPIC, 1, 3);
                tp = new TopicPartition(TOPIC, 0);
                if (!cluster.awaitLeaders(TOPIC, SETTLE_TIMEOUT_MS))
                {
                    throw new IllegalStateException("no leader: " + cluster.partitions(TOPIC));
                }
                session = cluster.sessions().register(this);
                final Result result = measure();
                for (int host = 0; host < 3; host++)
                {
                    cluster.killHost(host); // the data is deleted next: no clean close that forces it first
                }
                return result;
            }
        }

        private Result measure()
        {
            final Producer producer = new Producer();
            settle(producer);
            final long start = System.nanoTime() + 20_000_000L;
            windowStart = start + warmupNanos;
            windowEnd = windowStart + measureNanos;
            final Thread thread = new Thread(() -> producer.run(start), "isr-flap-producer");
            thread.setDaemon(true);
            thread.start();
            ScenarioRunner.parkUntil(windowStart);
            final long shrinks = cluster.controller().isrShrinks();
            final long expansions = cluster.controller().isrExpansions();
            final long cpuStart = MachineState.currentProcessCpuNs();
            long below = 0;
            for (long now = System.nanoTime(); now < windowEnd; now = System.nanoTime())
            {
                below += cluster.state(tp).isr().length < 2 ? 1 : 0;
                LockSupport.parkNanos(Math.min(1_000_000L, windowEnd - now));
            }
            final long cpuEnd = MachineState.currentProcessCpuNs();
            final long shrunk = cluster.controller().isrShrinks() - shrinks;
            final long expanded = cluster.controller().isrExpansions() - expansions;
            final double load = MachineState.currentLoad1();
            stop = true;
            join(thread);
            final long deadline = System.nanoTime() + DRAIN_TIMEOUT_NANOS;
            while (answered.get() < sent && System.nanoTime() < deadline)
            {
                LockSupport.parkNanos(1_000_000L);
            }
            String problem = null;
            if (answered.get() < sent)
            {
                problem = (sent - answered.get()) + " requests never answered";
            }
            if (null == problem && null != failure.get())
            {
                problem = "failure: " + failure.get();
            }
            final long[] verified = new long[1];
            final String verification = verify(verified);
            if (null == problem)
            {
                problem = verification;
            }
            final Map<ReplicationError, Long> counts = new EnumMap<>(ReplicationError.class);
            for (final ReplicationError error : ReplicationError.values())
            {
                if (windowOutcomes.get(error.ordinal()) > 0)
                {
                    counts.put(error, windowOutcomes.get(error.ordinal()));
                }
            }
            return new Result(lagMaxMessages, windowBursts, windowRequests, counts, shrunk, expanded, below,
                latency.getIntervalHistogram(), windowAcked.get() / (measureNanos / 1e9), verified[0], problem,
                cpuStart < 0 || cpuEnd < 0 ? Double.NaN : (cpuEnd - cpuStart) / (double)measureNanos, load);
        }

        /**
         * acks=all requests, one at a time, until one is acknowledged, before the clock starts (the followers fetch,
         * the pages are faulted; on a busy machine the first may time out or meet an ISR that shrank).
         */
        private void settle(final Producer producer)
        {
            final long deadline = System.nanoTime() + SETTLE_TIMEOUT_MS * 1_000_000L;
            while (outcomes.get(ReplicationError.NONE.ordinal()) == 0)
            {
                final long correlationId = sent;
                dueTimes[(int)correlationId] = System.nanoTime();
                ReplicationError queued;
                while ((queued = producer.send(correlationId)) != ReplicationError.NONE)
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new IllegalStateException("settling: the leader takes no request: " + queued);
                    }
                    Thread.onSpinWait();
                }
                sent++;
                while (answered.get() < sent)
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new IllegalStateException("settling: no acks=all request acknowledged in " +
                            SETTLE_TIMEOUT_MS + " ms");
                    }
                    LockSupport.parkNanos(100_000L);
                }
            }
        }

        private String verify(final long[] verified)
        {
            try (PartitionReader reader = cluster.openReader(tp))
            {
                if (!cluster.await(() -> reader.highWatermark() >= 0 && reader.highWatermark() >= reader.logEndOffset(),
                    SETTLE_TIMEOUT_MS))
                {
                    return "high watermark " + reader.highWatermark() + " never reached the log end " +
                        reader.logEndOffset();
                }
                final long end = reader.highWatermark();
                final AckChecker checker = new AckChecker(acks);
                reader.seek(Math.max(0, reader.logStartOffset()));
                final io.tidemark.store.RecordHandler handler = (RecordView record) ->
                {
                    final DirectBuffer buffer = record.buffer();
                    final boolean ours = record.valueLength() >= Scenario.MIN_MESSAGE_SIZE;
                    checker.onRecord(record.offset(), ours ? buffer.getLong(record.valueOffset()) : -1,
                        ours ? buffer.getInt(record.valueOffset() + 8) : -1);
                };
                int idle = 0;
                while (reader.position() < end && idle < 1_000)
                {
                    idle = reader.poll(handler, 10_000) == 0 ? idle + 1 : 0;
                }
                verified[0] = checker.found();
                return checker.ok() ? null : checker.problem();
            }
        }

        @Override
        public void onComplete(final TopicPartition partition, final long correlationId, final long baseOffset,
            final ReplicationError error)
        {
            final long now = System.nanoTime();
            outcomes.incrementAndGet(error.ordinal());
            final long due = dueTimes[(int)(correlationId & (dueTimes.length - 1))];
            final boolean inWindow = due >= windowStart && due < windowEnd;
            if (inWindow)
            {
                windowOutcomes.incrementAndGet(error.ordinal());
            }
            if (error == ReplicationError.NONE)
            {
                acks.add(baseOffset, correlationId, batchRecords);
                if (inWindow)
                {
                    latency.recordValue(Math.max(0, now - due));
                    windowAcked.addAndGet(batchRecords);
                }
            }
            answered.incrementAndGet();
        }

        private final class Producer
        {
            private final UnsafeBuffer run;
            private final int runLength;
            private final int[] valueAt = new int[batchRecords];

            Producer()
            {
                final UnsafeBuffer value = ScenarioRunner.filled(messageSize);
                final int recordLength = RecordEncoder.encodedLength(-1, messageSize, 0);
                runLength = recordLength * batchRecords;
                run = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
                    org.agrona.BitUtil.align(Math.max(runLength, 64), 64), 64));
                int at = 0;
                for (int i = 0; i < batchRecords; i++)
                {
                    RecordEncoder.encode(run, at, i, BatchClaim.NOW, null, 0, 0, value, 0, messageSize, null, 0, 0);
                    valueAt[i] = at + RecordDescriptor.HEADER_LENGTH;
                    at += recordLength;
                }
            }

            ReplicationError send(final long correlationId)
            {
                for (int i = 0; i < valueAt.length; i++)
                {
                    run.putLong(valueAt[i], correlationId);
                    run.putInt(valueAt[i] + 8, i);
                }
                return cluster.produceRecords(session, tp, correlationId, Acks.ALL, REQUEST_TIMEOUT_MS, run, 0,
                    runLength);
            }

            void run(final long start)
            {
                try
                {
                    for (long burst = 0; !stop; burst++)
                    {
                        final long due = start + burst * burstIntervalNanos;
                        ScenarioRunner.parkUntil(due);
                        if (stop)
                        {
                            return;
                        }
                        final boolean inWindow = due >= windowStart && due < windowEnd;
                        windowBursts += inWindow ? 1 : 0;
                        for (int r = 0; r < requestsPerBurst; r++)
                        {
                            final long correlationId = sent;
                            if (sent - answered.get() >= dueTimes.length)
                            {
                                throw new IllegalStateException("more than " + dueTimes.length + " requests waiting");
                            }
                            dueTimes[(int)(correlationId & (dueTimes.length - 1))] = due;
                            ReplicationError queued;
                            while ((queued = send(correlationId)) == ReplicationError.BACK_PRESSURED)
                            {
                                Thread.onSpinWait();
                            }
                            if (queued != ReplicationError.NONE)
                            {
                                throw new IllegalStateException("produce refused: " + queued);
                            }
                            sent++;
                            windowRequests += inWindow ? 1 : 0;
                        }
                    }
                }
                catch (final Throwable t)
                {
                    failure.compareAndSet(null, t);
                }
            }
        }

        private void join(final Thread thread)
        {
            try
            {
                thread.join();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
