package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Reading and damaging a log directory's files from outside the store, the way a crash or a bad disk would:
 * walking batch headers (length at +0, base offset at +8, record count at +20, frames aligned to 8 bytes),
 * cutting, zeroing, overwriting and bit-flipping byte ranges, and copying directories.
 */
final class CrashFiles
{
    private CrashFiles()
    {
    }

    /** One batch found by walking the headers of a .log file. */
    record Batch(int position, int length, long base, int count)
    {
        long next()
        {
            return base + count;
        }

        int frameEnd()
        {
            return position + RecordBatchDescriptor.frameLength(length);
        }
    }

    /** A .log file as found on disk. */
    record SegmentScan(long base, Path log, long fileLength, List<Batch> batches, int dataEnd)
    {
        long end()
        {
            return batches.isEmpty() ? base : batches.get(batches.size() - 1).next();
        }

        Path offsetIndex()
        {
            return log.resolveSibling(SegmentFiles.fileName(base) + SegmentFiles.INDEX_SUFFIX);
        }

        Path timeIndex()
        {
            return log.resolveSibling(SegmentFiles.fileName(base) + SegmentFiles.TIME_INDEX_SUFFIX);
        }

        /** @return the batch holding {@code offset}, or null. */
        Batch batchOf(final long offset)
        {
            for (final Batch batch : batches)
            {
                if (offset >= batch.base() && offset < batch.next())
                {
                    return batch;
                }
            }
            return null;
        }

        /**
         * @return the number of bytes at the start of the file that hold only records below {@code offset}: what
         *         a flush up to {@code offset} made durable in this file.
         */
        int bytesBelow(final long offset)
        {
            int length = 0;
            for (final Batch batch : batches)
            {
                if (batch.next() <= offset)
                {
                    length = batch.frameEnd();
                }
            }
            return Math.min(length, dataEnd);
        }
    }

    /** @return the segment .log files of {@code dir} (named by 20 digits), sorted by base offset. */
    static List<Path> segmentLogs(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.list(dir))
        {
            return files.filter((p) -> p.getFileName().toString().matches("\\d{20}\\.log")).sorted().toList();
        }
    }

    static long baseOf(final Path segmentLog)
    {
        return Long.parseLong(segmentLog.getFileName().toString().substring(0, SegmentFiles.NAME_DIGITS));
    }

    /**
     * Walk the batch headers of every segment; a walk stops at a zero length, a length out of bounds or past the
     * end of the file (no CRC or structure check: that is what {@link #validBatches} does).
     */
    static List<SegmentScan> scan(final Path dir) throws IOException
    {
        final List<SegmentScan> scans = new ArrayList<>();
        for (final Path log : segmentLogs(dir))
        {
            scans.add(scanOne(log));
        }
        return scans;
    }

    static SegmentScan scanOne(final Path log) throws IOException
    {
        final byte[] bytes = Files.readAllBytes(log);
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        final List<Batch> batches = new ArrayList<>();
        int position = 0;
        while (position + RecordBatchDescriptor.HEADER_LENGTH <= bytes.length)
        {
            final int length = buffer.getInt(position);
            if (length < RecordBatchDescriptor.HEADER_LENGTH || length > bytes.length - position)
            {
                break;
            }
            batches.add(new Batch(position, length, buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET),
                buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET)));
            position += Math.min(RecordBatchDescriptor.frameLength(length), bytes.length - position);
        }
        return new SegmentScan(baseOf(log), log, bytes.length, batches, position);
    }

    /** What a CRC-checking walk of a closed log found. */
    record Validity(long end, long validBatches, long invalidBatches, long gaps, long trailingBytes, String problem)
    {
    }

    /**
     * Walk every batch of every segment validating structure and CRC, and check that offsets are dense from the
     * first segment's base, that each segment starts where the previous ended, and that nothing but zeros
     * follows the last batch of a segment. For a log that was closed cleanly.
     */
    static Validity validBatches(final Path dir) throws IOException
    {
        final Crc32c crc = new Crc32c();
        long expected = -1;
        long valid = 0;
        long invalid = 0;
        long gaps = 0;
        long trailing = 0;
        String problem = null;
        for (final Path log : segmentLogs(dir))
        {
            final byte[] bytes = Files.readAllBytes(log);
            final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
            final long base = baseOf(log);
            if (expected >= 0 && base != expected)
            {
                gaps++;
                problem = null == problem ? "segment " + base + " does not start at " + expected : problem;
            }
            expected = base;
            int position = 0;
            while (position < bytes.length && buffer.getInt(position) != 0)
            {
                final int status = RecordBatch.validate(buffer, position, bytes.length - position, Integer.MAX_VALUE,
                    crc);
                if (status != RecordBatch.VALID)
                {
                    invalid++;
                    problem = null == problem ? "segment " + base + " position " + position + ": " +
                        RecordBatch.describe(status) : problem;
                    break;
                }
                final long batchBase = buffer.getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
                if (batchBase != expected)
                {
                    gaps++;
                    problem = null == problem ? "segment " + base + " position " + position + ": base " + batchBase +
                        " where " + expected + " was expected" : problem;
                }
                valid++;
                expected = batchBase + buffer.getInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
                position += Math.min(RecordBatchDescriptor.frameLength(buffer.getInt(position)),
                    bytes.length - position);
            }
            for (int i = position; i < bytes.length; i++)
            {
                if (bytes[i] != 0)
                {
                    trailing++;
                }
            }
        }
        return new Validity(expected, valid, invalid, gaps, trailing, problem);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Damage
    // ------------------------------------------------------------------------------------------------------------

    static void cut(final Path file, final long length) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.setLength(length);
        }
    }

    static void write(final Path file, final long position, final byte[] bytes) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(position);
            raf.write(bytes);
        }
    }

    /** Zero {@code [from, to)}, not beyond the end of the file. */
    static void zero(final Path file, final long from, final long to) throws IOException
    {
        final long end = Math.min(to, Files.size(file));
        if (end > from)
        {
            write(file, from, new byte[(int)(end - from)]);
        }
    }

    static void flipBit(final Path file, final long position, final int bit) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
        {
            raf.seek(position);
            final int value = raf.read();
            raf.seek(position);
            raf.write(value ^ (1 << bit));
        }
    }

    static void putInt(final Path file, final long position, final int value) throws IOException
    {
        write(file, position, ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value).array());
    }

    /** Copy the regular files of {@code from} (a log directory has no subdirectories) into a new {@code to}. */
    static void copyDir(final Path from, final Path to) throws IOException
    {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                if (Files.isRegularFile(file))
                {
                    Files.copy(file, to.resolve(file.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Checkpoints
    // ------------------------------------------------------------------------------------------------------------

    /** @return the recovery point in the log's checkpoint file, or -1 when it is missing or not valid. */
    static long checkpointRecoveryPoint(final Path dir) throws IOException
    {
        final LogCheckpoint checkpoint = new LogCheckpoint(dir, FileSync.SYSTEM);
        return checkpoint.read() == CheckpointFile.Status.OK ? checkpoint.recoveryPoint() : -1;
    }

    /** @return the recovery point in a left-over {@code log.checkpoint.tmp}, or -1 when missing or not valid. */
    static long tmpCheckpointRecoveryPoint(final Path dir) throws IOException
    {
        final ByteBuffer in = ByteBuffer.allocate(CheckpointDescriptor.LOG_CHECKPOINT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final Path tmp = dir.resolve(LogFiles.CHECKPOINT_FILE + CheckpointDescriptor.TMP_SUFFIX);
        if (!Files.isRegularFile(tmp))
        {
            return -1;
        }
        return CheckpointFile.read(tmp, CheckpointDescriptor.LOG_CHECKPOINT_MAGIC, in) == CheckpointFile.Status.OK ?
            in.getLong(CheckpointDescriptor.RECOVERY_POINT_OFFSET) : -1;
    }

    /** Write a valid checkpoint (as the store does) with the given values. */
    static void writeCheckpoint(final Path dir, final long recoveryPoint, final long logStartOffset)
        throws IOException
    {
        new LogCheckpoint(dir, FileSync.SYSTEM).write(recoveryPoint, logStartOffset);
    }
}
