package io.tidemark.bench.jmh;

import io.tidemark.bench.JvmFlags;
import io.tidemark.store.LockingAppender;
import io.tidemark.store.Log;
import io.tidemark.store.RingBufferAppender;
import io.tidemark.store.StorageException;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Two threads appending one record each per operation to one log, through the two multi-writer front ends:
 * <ul>
 *     <li>{@link #lockingAppender}: {@link LockingAppender}, a lock around {@code Log.append}; the offset is
 *     known when the call returns.</li>
 *     <li>{@link #ringBufferAppender}: {@link RingBufferAppender#offer} into a many-to-one ring; a drainer thread
 *     (an Agrona {@link AgentRunner}, idle strategy {@link RingLog#drainIdle}) packs the records into batches and
 *     appends them, reporting offsets to a listener. When the ring is full the producer yields and retries, so in
 *     steady state the score is the rate at which the drainer empties the ring.</li>
 * </ul>
 * The score is records/s summed over the threads. The drainer and the log agent are threads of their own: on a
 * 2-core machine four threads share two cores, which the ring variant pays for. The log is emptied before every
 * iteration, with the writer (the drainer) stopped.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@Threads(2)
public class ConcurrentAppendBenchmark
{
    /** Ring capacity of the ring-buffer appender (bytes, a power of two). */
    static final int RING_CAPACITY = 1 << 20;
    /** Largest batch the drainer packs records into. */
    static final int BATCH_BYTES = 64 * 1024;

    /** A log shared by all benchmark threads, behind a {@link LockingAppender}. */
    @State(Scope.Benchmark)
    public static class LockingLog extends TrialLog
    {
        /** Value length in bytes. */
        @Param({"100"})
        public int valueSize;

        LockingAppender appender;
        UnsafeBuffer value;

        /** Open a log in a fresh temporary directory. */
        @Setup(Level.Trial)
        public void openLog() throws IOException
        {
            value = BenchLogs.value(valueSize);
            dir = BenchLogs.createTempDir("locking");
            log = Log.open(BenchLogs.context(dir));
            appender = new LockingAppender(log);
        }

    }

    /** A log shared by all benchmark threads, behind a {@link RingBufferAppender} drained by its own thread. */
    @State(Scope.Benchmark)
    public static class RingLog
    {
        /** Value length in bytes. */
        @Param({"100"})
        public int valueSize;

        /** Idle strategy of the drainer thread: {@code yielding} or {@code busyspin}. */
        @Param({"yielding"})
        public String drainIdle;

        Path dir;
        Log log;
        RingBufferAppender appender;
        UnsafeBuffer value;
        final CountingListener listener = new CountingListener();
        private AgentRunner drainer;
        private volatile Throwable drainError;

        /** Open a log in a fresh temporary directory and put the ring in front of it. */
        @Setup(Level.Trial)
        public void openLog() throws IOException
        {
            idleStrategy(drainIdle); // fail fast on a bad parameter
            value = BenchLogs.value(valueSize);
            dir = BenchLogs.createTempDir("ring");
            log = Log.open(BenchLogs.context(dir));
            appender = new RingBufferAppender(log, RING_CAPACITY, BATCH_BYTES, listener);
        }

        /** Empty the log, then start the drainer: from here on it is the log's writer thread. */
        @Setup(Level.Iteration)
        public void startDrainer()
        {
            log.truncateFullyAndStartAt(log.logEndOffset());
            drainer = new AgentRunner(idleStrategy(drainIdle), (t) -> drainError = t, null, appender);
            AgentRunner.startOnThread(drainer);
        }

        /**
         * Stop the drainer (the writer thread ends, so this thread may write), append what is left in the ring,
         * and fail the run if any record failed.
         */
        @TearDown(Level.Iteration)
        public void stopDrainer()
        {
            drainer.close();
            drainer = null;
            drainRemaining();
            final Throwable error = drainError;
            if (null != error)
            {
                throw new IllegalStateException("the ring drainer failed", error);
            }
            listener.check();
        }

        /**
         * Append everything left in the ring, on the calling thread (the drainer must be stopped and no producer
         * offering). {@code doWork()} also returns 0 when all it did was step over the padding record at the end of
         * the ring buffer, with messages still waiting at its start; so stop only after two empty passes in a row
         * (there is at most one padding record per pass over the buffer's end).
         */
        void drainRemaining()
        {
            int emptyPasses = 0;
            while (emptyPasses < 2)
            {
                emptyPasses = appender.doWork() > 0 ? 0 : emptyPasses + 1;
            }
        }

        /** Close the log and delete its directory. */
        @TearDown(Level.Trial)
        public void closeLog()
        {
            BenchLogs.closeAndDelete(dir, drainer, log);
        }

        static IdleStrategy idleStrategy(final String name)
        {
            switch (name)
            {
                case "yielding": return new YieldingIdleStrategy();
                case "busyspin": return new BusySpinIdleStrategy();
                default: throw new IllegalArgumentException("drainIdle must be yielding or busyspin, not " + name);
            }
        }
    }

    /** Counts the ring appender's outcomes (called on the drainer thread only). */
    static final class CountingListener implements RingBufferAppender.AppendListener
    {
        private long appended;
        private long failed;
        private StorageException firstError;

        @Override
        public void onAppended(final long correlationId, final long offset)
        {
            appended++;
        }

        @Override
        public void onFailed(final long correlationId, final StorageException error)
        {
            if (failed++ == 0)
            {
                firstError = error;
            }
        }

        /** @return records appended so far (read after the drainer stopped). */
        long appended()
        {
            return appended;
        }

        void check()
        {
            if (failed > 0)
            {
                throw new IllegalStateException(failed + " records failed to append", firstError);
            }
        }
    }

    /** Per-thread producer state. */
    @State(Scope.Thread)
    public static class Producer
    {
        long nextCorrelationId;
    }

    /**
     * @param log the shared log.
     * @return the record's offset.
     */
    @Benchmark
    public long lockingAppender(final LockingLog log)
    {
        return log.appender.append(log.value, 0, log.valueSize);
    }

    /**
     * @param log      the shared log.
     * @param producer this thread's correlation ids.
     * @return the record's correlation id.
     */
    @Benchmark
    public long ringBufferAppender(final RingLog log, final Producer producer)
    {
        final long correlationId = producer.nextCorrelationId++;
        while (!log.appender.offer(correlationId, log.value, 0, log.valueSize))
        {
            Thread.yield(); // ring full: let the drainer run
        }
        return correlationId;
    }
}
