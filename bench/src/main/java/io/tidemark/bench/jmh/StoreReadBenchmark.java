package io.tidemark.bench.jmh;

import io.tidemark.bench.JvmFlags;
import io.tidemark.store.Log;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.RecordView;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Reads from a log pre-filled (once per trial) with {@link #records} records of {@link #valueSize} bytes, one
 * record per batch, flushed before measuring. Readers verify each batch's CRC ({@code read.verify.crc}, the
 * default; {@code -p verifyCrc=false} to measure without).
 * <ul>
 *     <li>{@link #sequentialPoll}: {@code LogReader.poll} of {@value #POLL_BATCH} records per call, wrapping to
 *     the start at the end of the log; one operation is one record, so the score is records/s.</li>
 *     <li>{@link #randomLookup}: {@code seek(randomOffset)} (segment search, sparse index lookup, scan to the
 *     batch) then {@code poll} of one record.</li>
 * </ul>
 * The handler touches each record's offset, length and first value byte; the benchmarks return a checksum of
 * them so nothing is optimised away.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Benchmark)
public class StoreReadBenchmark
{
    /** Records delivered by one {@link #sequentialPoll} call. */
    public static final int POLL_BATCH = 100;
    /** Number of pre-drawn random offsets (a power of two). */
    static final int RANDOM_OFFSETS = 1 << 16;

    /** Records in the log. */
    @Param({"1000000"})
    public int records;

    /** Value length in bytes. */
    @Param({"100"})
    public int valueSize;

    /** Whether readers check each batch's CRC. */
    @Param({"true"})
    public boolean verifyCrc;

    Path dir;
    Log log;

    /** Open a log in a fresh temporary directory, fill it and flush it. */
    @Setup(Level.Trial)
    public void fillLog() throws IOException
    {
        if (records < 1)
        {
            throw new IllegalArgumentException("records must be positive: " + records);
        }
        final UnsafeBuffer value = BenchLogs.value(valueSize);
        dir = BenchLogs.createTempDir("read");
        log = Log.open(BenchLogs.context(dir).readVerifyCrc(verifyCrc));
        for (int i = 0; i < records; i++)
        {
            value.putByte(0, (byte)i);
            log.append(value, 0, valueSize);
        }
        log.flush();
        log.applyRetention(); // only a huge -p records goes past retention.bytes: settle it before reading
    }

    /** Close the log and delete its directory. */
    @TearDown(Level.Trial)
    public void closeLog()
    {
        BenchLogs.closeAndDelete(dir, log);
    }

    /** One reader per benchmark thread, with its handler and its random offsets. */
    @State(Scope.Thread)
    public static class Cursor
    {
        LogReader reader;
        long startOffset;
        private final long[] randomOffsets = new long[RANDOM_OFFSETS];
        private int next;
        private long checksum;
        final RecordHandler handler = this::onRecord;

        /**
         * @param bench the benchmark's log.
         */
        @Setup(Level.Trial)
        public void openReader(final StoreReadBenchmark bench)
        {
            reader = bench.log.openReader();
            startOffset = bench.log.logStartOffset();
            final long endOffset = bench.log.logEndOffset();
            final SplittableRandom random = new SplittableRandom(42);
            for (int i = 0; i < randomOffsets.length; i++)
            {
                randomOffsets[i] = random.nextLong(startOffset, endOffset);
            }
        }

        /** Close the reader. */
        @TearDown(Level.Trial)
        public void closeReader()
        {
            if (null != reader)
            {
                reader.close();
            }
        }

        private void onRecord(final RecordView record)
        {
            checksum += record.offset() + record.valueLength() + record.buffer().getByte(record.valueOffset());
        }

        long checksum()
        {
            return checksum;
        }
    }

    /**
     * @param cursor this thread's reader.
     * @return a checksum of the records read so far.
     */
    @Benchmark
    @OperationsPerInvocation(POLL_BATCH)
    public long sequentialPoll(final Cursor cursor)
    {
        final LogReader reader = cursor.reader;
        int delivered = reader.poll(cursor.handler, Long.MAX_VALUE, POLL_BATCH);
        while (delivered < POLL_BATCH)
        {
            reader.seek(cursor.startOffset);
            delivered += reader.poll(cursor.handler, Long.MAX_VALUE, POLL_BATCH - delivered);
        }
        return cursor.checksum;
    }

    /**
     * @param cursor this thread's reader.
     * @return a checksum of the records read so far.
     */
    @Benchmark
    public long randomLookup(final Cursor cursor)
    {
        final LogReader reader = cursor.reader;
        final long offset = cursor.randomOffsets[cursor.next++ & (RANDOM_OFFSETS - 1)];
        reader.seek(offset);
        if (reader.poll(cursor.handler, Long.MAX_VALUE, 1) != 1)
        {
            throw new IllegalStateException("no record at offset " + offset);
        }
        return cursor.checksum;
    }
}
