package io.tidemark.bench.jmh;

import io.tidemark.bench.JvmFlags;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.Log;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
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
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Single-writer append of one record (no key) per operation, page-cache durability (the default flush policy:
 * never by count or time), agent mode DEDICATED so the log agent pre-faults pages ahead of the writer.
 * <ul>
 *     <li>{@link #append}: {@code Log.append(DirectBuffer, int, int)}, the value copied from an off-heap buffer.</li>
 *     <li>{@link #claimAndCommit}: the zero-copy path: {@code tryClaim}, {@code addRecord(.., valueLength)},
 *     the value encoded in place in the mapping, {@code commit}.</li>
 * </ul>
 * Each record is its own batch (header, CRC32C, index schedule): the score is records/s. The log is emptied
 * before every iteration ({@code truncateFullyAndStartAt}), so an iteration writes at most what it can in its
 * time and the disk never fills; see {@link BenchLogs} for the sizing.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Thread)
public class StoreAppendBenchmark extends TrialLog
{
    /** Value length in bytes. */
    @Param({"100", "1024"})
    public int valueSize;

    private UnsafeBuffer value;
    private int batchLength;

    /** Open a log in a fresh temporary directory. */
    @Setup(Level.Trial)
    public void openLog() throws IOException
    {
        value = BenchLogs.value(valueSize);
        batchLength = RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.recordLength(-1, valueSize, 0);
        dir = BenchLogs.createTempDir("append");
        log = Log.open(BenchLogs.context(dir));
    }

    /** @return the record's offset. */
    @Benchmark
    public long append()
    {
        return log.append(value, 0, valueSize);
    }

    /** @return the record's offset. */
    @Benchmark
    public long claimAndCommit()
    {
        final BatchClaim claim = log.tryClaim(batchLength);
        final int at = claim.addRecord(BatchClaim.NOW, null, 0, -1, valueSize);
        claim.buffer().putBytes(at, value, 0, valueSize);
        return claim.commit();
    }
}
