package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.file.FileWindow;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Cuts the zero tail a crash can leave on a sealed segment's files before anything maps them.
 * <p>
 * A segment is pre-sized (sparse) to {@code segment.bytes}, and so are its index files; after a roll, the log trims
 * them to their data. A process killed after the roll and before the trim leaves a sealed segment below the
 * recovery point whose files still end in a long run of zeros, mostly holes. A sealed segment below the recovery
 * point is trusted and mapped, and reading a hole through a mapping on a full tmpfs is a SIGBUS (the read fault
 * allocates a page); scanning the zeros on every open would also cost up to a whole segment. So the loader first
 * finds where each file's data ends with positional reads ({@code read(2)} of a hole returns zeros without
 * allocating) and truncates the zeros after it, once: the next open finds the files trimmed.
 * <p>
 * Only zeros are ever cut, and never inside the data: the log's data end is the end of the last batch that
 * validates (structure and CRC) on the walk from the last offset index entry, so a batch whose last bytes are zero
 * keeps them. When that walk cannot start (the index points at no valid batch) the log file is left as it is, and
 * the loader's own checks deal with it. An index file is cut after its last non-zero entry.
 * <p>
 * Single-threaded (the loader's).
 */
final class SegmentTail
{
    private static final int FIRST_READ = 4096;
    private static final int MAX_READ = 1024 * 1024;

    private SegmentTail()
    {
    }

    /**
     * Trim the zero tails of a sealed segment's files.
     *
     * @param files          the segment.
     * @param maxBatchLength the longest batch to accept.
     * @param crc            a CRC calculator.
     * @param sync           forces the truncations.
     * @return what was cut, for the recovery report, or null when the files were trimmed already.
     */
    static String trim(final SegmentFiles files, final int maxBatchLength, final Crc32c crc, final FileSync sync)
        throws IOException
    {
        final long offsetIndexCut = trimIndex(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH, sync);
        final long timeIndexCut = trimIndex(files.timeIndex(), TimeIndex.ENTRY_LENGTH, sync);
        long logCut = 0;
        try (FileChannel channel = FileChannel.open(files.log(), StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final long length = channel.size();
            if (length > Segment.MAX_FILE_LENGTH)
            {
                return null; // no segment is this long: not a crash's leftover; the loader refuses the file
            }
            final long dataEnd = dataEnd(channel, length, lastIndexedPosition(files.offsetIndex()), maxBatchLength,
                crc);
            if (dataEnd >= 0 && dataEnd < length)
            {
                final long keep = lengthWithoutZeroTail(channel, dataEnd, length, RecordBatchDescriptor.FRAME_ALIGNMENT);
                if (keep < length)
                {
                    channel.truncate(keep);
                    sync.force(channel, true);
                    logCut = length - keep;
                }
            }
        }
        if (logCut == 0 && offsetIndexCut == 0 && timeIndexCut == 0)
        {
            return null;
        }
        return "segment " + files.baseOffset() + " was never trimmed after its roll (the process stopped first): " +
            "cut the zeros after its data (" + logCut + " bytes of the log, " + offsetIndexCut + " and " +
            timeIndexCut + " bytes of its indexes)";
    }

    private static long trimIndex(final Path index, final int entryLength, final FileSync sync) throws IOException
    {
        if (!Files.exists(index))
        {
            return 0;
        }
        try (FileChannel channel = FileChannel.open(index, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final long length = channel.size();
            final long keep = lengthWithoutZeroTail(channel, 0, length, entryLength);
            if (keep < length)
            {
                channel.truncate(keep);
                sync.force(channel, true);
                return length - keep;
            }
            return 0;
        }
    }

    /** @return the position of the batch the last whole offset index entry names, 0 when there is none. */
    private static long lastIndexedPosition(final Path offsetIndex) throws IOException
    {
        if (!Files.exists(offsetIndex))
        {
            return 0;
        }
        try (FileChannel channel = FileChannel.open(offsetIndex, StandardOpenOption.READ))
        {
            final long entries = channel.size() / OffsetIndex.ENTRY_LENGTH;
            if (entries == 0)
            {
                return 0;
            }
            final ByteBuffer entry = ByteBuffer.allocate(OffsetIndex.ENTRY_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, entry, (entries - 1) * OffsetIndex.ENTRY_LENGTH);
            return entry.getInt(4);
        }
    }

    /**
     * Walk the batches from {@code from} through positional reads.
     *
     * @return the end of the last batch that validates, or -1 when none does at {@code from} (and {@code from} is
     *         not 0: the index points at no batch, so where the data ends is not known).
     */
    private static long dataEnd(
        final FileChannel channel, final long length, final long from, final int maxBatchLength, final Crc32c crc)
        throws IOException
    {
        if (from < 0 || from > length)
        {
            return -1;
        }
        final long position = new BatchScanner(crc, maxBatchLength).walk(
            new FileWindow(channel, length, maxBatchLength), from, -1, true, false, BatchScanner.Visitor.NONE);
        if (position == from && from != 0)
        {
            return -1;
        }
        return Math.min(position, length);
    }

    /**
     * Scan backwards from the end of the file for its last non-zero byte.
     *
     * @param floor  never cut below this.
     * @param length the file length.
     * @param unit   the length kept is a multiple of this (entries, frames) unless it is the floor or the length.
     * @return the length to keep: the file without its trailing zeros, rounded up to {@code unit}.
     */
    static long lengthWithoutZeroTail(final FileChannel channel, final long floor, final long length, final int unit)
        throws IOException
    {
        ByteBuffer bytes = null;
        ByteBuffer zeros = null;
        long end = length;
        int chunk = FIRST_READ;
        while (end > floor)
        {
            final int size = (int)Math.min(chunk, end - floor);
            if (null == bytes || bytes.capacity() < size)
            {
                bytes = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
                zeros = ByteBuffer.allocate(size);
            }
            bytes.clear().limit(size);
            readFully(channel, bytes, end - size);
            bytes.position(0);
            zeros.clear().limit(size);
            if (bytes.mismatch(zeros) >= 0) // vectorized: a long zero tail is scanned at memory speed
            {
                int last = size;
                while (last >= 8 && bytes.getLong(last - 8) == 0)
                {
                    last -= 8;
                }
                while (last > 0 && bytes.get(last - 1) == 0)
                {
                    last--;
                }
                final long dataEnd = end - size + last;
                return Math.min(length, Math.max(floor, (dataEnd + unit - 1) / unit * unit));
            }
            end -= size;
            chunk = Math.min(MAX_READ, chunk * 2);
        }
        return floor;
    }

    private static void readFully(final FileChannel channel, final ByteBuffer into, final long position)
        throws IOException
    {
        while (into.hasRemaining())
        {
            if (channel.read(into, position + into.position()) < 0)
            {
                while (into.hasRemaining())
                {
                    into.put((byte)0); // past the end of the file: nothing there
                }
            }
        }
    }
}
