package io.tidemark.store;

import io.tidemark.store.file.SpaceReservation;
import io.tidemark.store.format.SegmentFiles;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Opens the three files of a segment ({@code <base>.log}, {@code .index}, {@code .timeindex}) into a {@link Segment},
 * which owns them from then on: the active segment read-write, its log file pre-sized (sparse) to
 * {@code segment.bytes} and mapped whole; a sealed one read-only at its length, its indexes rebuilt when they are
 * missing or torn. A file larger than a segment may be is refused ({@code CORRUPT_LOG}); when a step fails, what was
 * opened is closed before the error goes on.
 * <p>
 * Threads: the caller's (the log's writer or its loader); nothing is shared until the segment is published.
 */
final class SegmentOpener
{
    private SegmentOpener()
    {
    }

    /**
     * Open a segment for appending: its log file keeps {@code dataSize} bytes of data (validated or trusted by the
     * caller), everything after is zero, and it is extended, sparse, to {@code capacity}. Indexes keep the given
     * number of trusted entries (0 to rebuild them by {@link SegmentReplay#replay}). With {@code mayShrink} false no
     * file is
     * cut shorter, because an older mapping of it may still be read (truncation into a sealed segment); the tail is
     * zeroed through the channel instead.
     */
    static Segment openActive(
        final SegmentFiles files,
        final int capacity,
        final int dataSize,
        final int maxIndexEntries,
        final int keepOffsetEntries,
        final int keepTimeEntries,
        final boolean mayShrink) throws IOException
    {
        final RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "rw");
        IndexFile offsetFile = null;
        IndexFile timeFile = null;
        try
        {
            final long oldLength = file.length();
            if (oldLength > Segment.MAX_FILE_LENGTH)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_LOG,
                    files.log() + " is larger than a segment may be: " + oldLength + " bytes");
            }
            int reserved = dataSize;
            if (mayShrink)
            {
                file.setLength(dataSize);
            }
            else if (oldLength > dataSize)
            {
                SpaceReservation.writeZeros(file.getChannel(), dataSize, oldLength - dataSize);
                reserved = (int)Math.min(oldLength, capacity);
            }
            final int mapped = (int)Math.max(capacity, file.length());
            file.setLength(mapped);
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, mapped);
            offsetFile = IndexFile.openForAppend(
                files.offsetIndex(), OffsetIndex.ENTRY_LENGTH, maxIndexEntries, keepOffsetEntries, mayShrink);
            timeFile = IndexFile.openForAppend(
                files.timeIndex(), TimeIndex.ENTRY_LENGTH, maxIndexEntries, keepTimeEntries, mayShrink);
            return new Segment(files, file, mapping, mapped,
                new OffsetIndex(offsetFile, files.baseOffset()), new TimeIndex(timeFile, files.baseOffset()), false,
                dataSize, reserved, dataSize, dataSize, dataSize & -Segment.PAGE_SIZE);
        }
        catch (final Throwable ex)
        {
            IndexFile.closeQuietly(offsetFile);
            IndexFile.closeQuietly(timeFile);
            IndexFile.closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Open a sealed segment read-only at its file length. Index files that are missing or do not hold whole
     * entries are rebuilt ({@code rebuildIndexes} forces a rebuild).
     */
    static Segment openSealed(final SegmentFiles files, final int maxIndexEntries, final boolean rebuildIndexes)
        throws IOException
    {
        final RandomAccessFile file = new RandomAccessFile(files.log().toFile(), "r");
        IndexFile offsetFile = null;
        IndexFile timeFile = null;
        try
        {
            final long length = file.length();
            if (length > Segment.MAX_FILE_LENGTH)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_LOG,
                    files.log() + " is larger than a segment may be: " + length + " bytes");
            }
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, length);
            boolean rebuild = rebuildIndexes;
            if (!rebuild)
            {
                offsetFile = Files.exists(files.offsetIndex()) ?
                    IndexFile.openSealed(files.offsetIndex(), OffsetIndex.ENTRY_LENGTH) : null;
                timeFile = Files.exists(files.timeIndex()) ?
                    IndexFile.openSealed(files.timeIndex(), TimeIndex.ENTRY_LENGTH) : null;
                rebuild = null == offsetFile || null == timeFile;
            }
            if (rebuild)
            {
                IndexFile.closeQuietly(offsetFile);
                IndexFile.closeQuietly(timeFile);
                offsetFile = IndexFile.openForAppend(
                    files.offsetIndex(), OffsetIndex.ENTRY_LENGTH, maxIndexEntries, 0, true);
                timeFile = IndexFile.openForAppend(
                    files.timeIndex(), TimeIndex.ENTRY_LENGTH, maxIndexEntries, 0, true);
            }
            return new Segment(files, file, mapping, (int)length,
                new OffsetIndex(offsetFile, files.baseOffset()), new TimeIndex(timeFile, files.baseOffset()), true,
                (int)length, (int)length, (int)length, 0, 0);
        }
        catch (final Throwable ex)
        {
            IndexFile.closeQuietly(offsetFile);
            IndexFile.closeQuietly(timeFile);
            IndexFile.closeQuietly(file);
            throw ex;
        }
    }

    /**
     * Create the spare segment (log agent): files sized, the first {@code reserveBytes} reserved and pre-faulted,
     * so that the roll that adopts it ({@link Segment#activate}) costs three renames.
     */
    static Segment createSpare(final Path dir, final int capacity, final int maxIndexEntries, final int reserveBytes)
        throws IOException
    {
        final SegmentFiles spareFiles = SegmentFiles.spare(dir);
        final Segment spare = openActive(spareFiles, capacity, 0, maxIndexEntries, 0, 0, true);
        try
        {
            final int target = Math.min(capacity, reserveBytes);
            spare.prepareSpare(target);
            return spare;
        }
        catch (final Throwable ex)
        {
            spare.discard();
            throw ex;
        }
    }
}
