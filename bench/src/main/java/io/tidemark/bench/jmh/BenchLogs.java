package io.tidemark.bench.jmh;

import io.tidemark.store.LogContext;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the store benchmarks share: a temporary log directory per trial and a log configuration that keeps a long
 * run from filling the disk.
 * <p>
 * Sizing: segments of 1 GiB so that rolls are rare; {@code retention.bytes} of 2 GiB, applied by the log agent
 * every second, so that however long an iteration runs the log holds at most about 2 GiB of sealed segments plus
 * the active one (and the pre-created spare, sparse); the append benchmarks also empty the log before each
 * iteration. Everything else is the store's default: page-cache durability (no flush by count or time), agent
 * mode DEDICATED (its own thread pre-faults pages ahead of the writer), CRC verified on read.
 */
final class BenchLogs
{
    /** Segment size: large enough that rolls are rare. */
    static final long SEGMENT_BYTES = 1L << 30;
    /** Upper bound of the sealed data a log keeps, whatever the run length. */
    static final long RETENTION_BYTES = 2L << 30;
    /** How often the log agent applies retention. */
    static final long RETENTION_CHECK_INTERVAL_MS = 1_000;

    private BenchLogs()
    {
    }

    /**
     * @param name names the benchmark in the directory name.
     * @return a new, empty directory under {@code java.io.tmpdir}.
     */
    static Path createTempDir(final String name) throws IOException
    {
        return Files.createTempDirectory("tidemark-bench-" + name + "-");
    }

    /**
     * @param dir the trial's temporary directory; the log lives in its {@code log} sub-directory.
     * @return the benchmark configuration (not concluded: callers may adjust it).
     */
    static LogContext context(final Path dir)
    {
        return new LogContext()
            .logDir(dir.resolve("log"))
            .segmentBytes(SEGMENT_BYTES)
            .retentionBytes(RETENTION_BYTES)
            .retentionCheckIntervalMs(RETENTION_CHECK_INTERVAL_MS);
    }

    /**
     * @param size value length in bytes.
     * @return an off-heap buffer of {@code size} bytes filled with a repeating pattern.
     */
    static UnsafeBuffer value(final int size)
    {
        if (size < 1)
        {
            throw new IllegalArgumentException("value size must be positive: " + size);
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            BitUtil.align(size, 64), 64), 0, size);
        for (int i = 0; i < size; i++)
        {
            buffer.putByte(i, (byte)('a' + i % 26));
        }
        return buffer;
    }

    /**
     * The end of a trial: close what it opened (in order; the nulls of a setup that failed part way are passed
     * over), then delete its directory, even when a close fails.
     *
     * @param dir        the trial's temporary directory.
     * @param closeables the log and whatever drives it, e.g. the drainer thread before the log it appends to.
     */
    static void closeAndDelete(final Path dir, final AutoCloseable... closeables)
    {
        try
        {
            CloseHelper.closeAll(closeables);
        }
        finally
        {
            deleteRecursively(dir);
        }
    }

    /** Delete a directory tree (best effort: a benchmark must not fail in its teardown because of leftovers). */
    static void deleteRecursively(final Path dir)
    {
        io.tidemark.bench.harness.TempDirs.deleteRecursively(dir);
    }
}
