package io.tidemark.store;

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
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * Lookups in a full segment's sparse indexes, by themselves: {@code OffsetIndex.lookup} (offset to file position)
 * and {@code TimeIndex.lookup} (timestamp to offset), binary searches over memory-mapped entries. The indexes are
 * built the way a 1 GiB segment of 100-byte records fills them at the default {@code index.interval.bytes} (4 KiB):
 * {@link #entries} entries, one per 4 KiB of log, about 22 records apart. Targets are drawn at random over the whole
 * range (pre-drawn, so the benchmark measures the search, not the random generator).
 * <p>
 * This benchmark lives in the store's test sources because the indexes are package-private: the store exposes them
 * only through {@code LogReader.seek} and {@code Log.offsetForTimestamp}, which the bench's
 * {@code StoreReadBenchmark.randomLookup} measures end to end. {@code IndexLookupBenchmarkTest} runs it once as a
 * test; to measure it, run JMH on the module's test class path (the commands: docs/benchmarks.md), e.g.
 * {@code java -cp <store test class path> org.openjdk.jmh.Main IndexLookupBenchmark}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
@State(Scope.Thread)
public class IndexLookupBenchmark
{
    /** Records between two index entries (4 KiB of 184-byte frames). */
    static final int RECORDS_PER_ENTRY = 22;
    /** Pre-drawn targets (a power of two). */
    static final int TARGETS = 1 << 16;

    /** Index entries (262,144 = a 1 GiB segment at one entry per 4 KiB). */
    @Param({"262144"})
    public int entries;

    Path dir;
    OffsetIndex offsetIndex;
    TimeIndex timeIndex;
    private final long[] offsets = new long[TARGETS];
    private final long[] timestamps = new long[TARGETS];
    private int next;

    /** Build both indexes in a temporary directory. */
    @Setup(Level.Trial)
    public void build() throws IOException
    {
        dir = Files.createTempDirectory("tidemark-bench-index-");
        final long base = 1_000_000L;
        final IndexFile offsetFile = IndexFile.openForAppend(dir.resolve("index"), OffsetIndex.ENTRY_LENGTH, entries,
            0, true);
        final IndexFile timeFile = IndexFile.openForAppend(dir.resolve("timeindex"), TimeIndex.ENTRY_LENGTH, entries,
            0, true);
        offsetIndex = new OffsetIndex(offsetFile, base);
        timeIndex = new TimeIndex(timeFile, base);
        final long firstTimestamp = 1_700_000_000_000L;
        for (int i = 0; i < entries; i++)
        {
            offsetFile.ensureRoomForOneMore();
            offsetIndex.append(base + (long)i * RECORDS_PER_ENTRY, i * 4096);
            timeFile.ensureRoomForOneMore();
            if (!timeIndex.maybeAppend(firstTimestamp + i, base + (long)i * RECORDS_PER_ENTRY))
            {
                throw new IllegalStateException("time index full at " + i);
            }
        }
        final SplittableRandom random = new SplittableRandom(42);
        final long span = (long)entries * RECORDS_PER_ENTRY;
        for (int i = 0; i < TARGETS; i++)
        {
            offsets[i] = base + random.nextLong(span);
            timestamps[i] = firstTimestamp + random.nextLong(entries);
        }
    }

    /** Close the indexes and delete the directory. */
    @TearDown(Level.Trial)
    public void close()
    {
        if (null != offsetIndex)
        {
            offsetIndex.file().close();
        }
        if (null != timeIndex)
        {
            timeIndex.file().close();
        }
        if (null != dir)
        {
            CrashSupport.deleteTree(dir);
        }
    }

    /** @return the file position of the last indexed batch at or below a random offset. */
    @Benchmark
    public int offsetIndexLookup()
    {
        return offsetIndex.lookup(offsets[next++ & (TARGETS - 1)]);
    }

    /** @return the offset to scan from for a random timestamp. */
    @Benchmark
    public long timeIndexLookup()
    {
        return timeIndex.lookup(timestamps[next++ & (TARGETS - 1)]);
    }
}
