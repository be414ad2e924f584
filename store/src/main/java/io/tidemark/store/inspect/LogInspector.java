package io.tidemark.store.inspect;

import io.tidemark.store.MissingJvmFlagException;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileWindow;
import io.tidemark.store.format.BatchScanner;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.IndexDescriptor;
import io.tidemark.store.format.LogFiles;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.agrona.DirectBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Stream;

import static io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;

/**
 * Read-only inspection of a log directory, for tools (dump, verify, read-only tailing) and tests: lists the
 * segments, walks their batches by position with their validation status, reads the sparse indexes, the
 * checkpoint and the meta file, and verifies the whole directory the way recovery would, without taking the lock
 * and without changing any file. It may therefore be used on the directory of a log that a running process has
 * open: batches are read with positional reads (never mapped), so a file that the owner trims or deletes meanwhile
 * is never a fault, at worst a batch seen as incomplete.
 * <pre>{@code
 * LogInspector inspector = LogInspector.open(Path.of("data/orders-0"));
 * LogInspectionReport report = inspector.verify();
 * for (LogInspector.SegmentInfo segment : inspector.segments())
 * {
 *     inspector.walk(segment, (info, batch) -> { System.out.println(info); return true; });
 * }
 * }</pre>
 * Layouts: {@link RecordBatchDescriptor}, {@link IndexDescriptor} (the offset and time indexes),
 * {@link CheckpointDescriptor} ({@code log.checkpoint}, {@code log.meta}), {@link LogFiles} (the names).
 * <p>
 * Not thread-safe: one inspector per thread. It holds no open file between calls.
 */
public final class LogInspector
{
    /** Name of the checkpoint file. */
    public static final String CHECKPOINT_FILE = LogFiles.CHECKPOINT_FILE;
    /** Name of the meta file. */
    public static final String META_FILE = LogFiles.META_FILE;
    /** Name of the lock file. */
    public static final String LOCK_FILE = LogFiles.LOCK_FILE;
    /** Name of the clean-shutdown marker. */
    public static final String CLEAN_SHUTDOWN_FILE = LogFiles.CLEAN_SHUTDOWN_FILE;
    /** Name of the counters file a log without an application counters manager writes. */
    public static final String COUNTERS_FILE = LogFiles.COUNTERS_FILE;
    /** Length of an offset index entry. */
    public static final int OFFSET_INDEX_ENTRY_LENGTH = IndexDescriptor.OFFSET_INDEX_ENTRY_LENGTH;
    /** Length of a time index entry. */
    public static final int TIME_INDEX_ENTRY_LENGTH = IndexDescriptor.TIME_INDEX_ENTRY_LENGTH;

    private static final int META_LENGTH = CheckpointDescriptor.META_LENGTH;

    private final Path dir;
    private final BatchScanner scanner = new BatchScanner(new Crc32c(), Integer.MAX_VALUE);
    private FileWindow window; // made by the first walk, reused by the next ones
    private final RecordBatch batch = new RecordBatch();

    /** The meta file: its status and the log's creation time (-1 unless OK). */
    public record Meta(CheckpointFile.Status status, long creationTimeMs)
    {
    }

    /** The checkpoint file: its status, recovery point and log start offset (both -1 unless OK). */
    public record Checkpoint(CheckpointFile.Status status, long recoveryPoint, long logStartOffset)
    {
    }

    /**
     * One segment's files.
     *
     * @param baseOffset  base offset, from the file name.
     * @param log         the {@code .log} file.
     * @param offsetIndex the {@code .index} file (may be missing).
     * @param timeIndex   the {@code .timeindex} file (may be missing).
     * @param fileSize    size of the {@code .log} file when listed.
     */
    public record SegmentInfo(long baseOffset, Path log, Path offsetIndex, Path timeIndex, long fileSize)
    {
    }

    /**
     * A batch (or what stands where a batch should be) at a position of a segment. Header fields are as read and
     * are only meaningful when {@link #valid()}.
     *
     * @param position       position in the {@code .log} file.
     * @param status         a {@link RecordBatch} validation result ({@link RecordBatch#VALID} ...).
     * @param length         the batch length field (0 at the end of the data).
     * @param baseOffset     base offset field.
     * @param recordCount    record count field.
     * @param leaderEpoch    leader epoch field.
     * @param firstTimestamp first timestamp field.
     * @param maxTimestamp   max timestamp field.
     * @param producerId     producer id field.
     * @param producerEpoch  producer epoch field.
     * @param baseSequence   base sequence field.
     * @param crc            the stored CRC32C.
     * @param magic          the format version byte.
     */
    public record BatchInfo(
        int position,
        int status,
        int length,
        long baseOffset,
        int recordCount,
        int leaderEpoch,
        long firstTimestamp,
        long maxTimestamp,
        long producerId,
        short producerEpoch,
        int baseSequence,
        int crc,
        byte magic)
    {
        /** @return whether the batch is well formed and its CRC matches. */
        public boolean valid()
        {
            return status == RecordBatch.VALID;
        }

        /** @return whether this is the end of the data (a zero length), rather than a batch. */
        public boolean endOfData()
        {
            return length == 0 && status == RecordBatch.INCOMPLETE;
        }

        /** @return offset after the batch's last record. */
        public long nextOffset()
        {
            return baseOffset + recordCount;
        }

        /** @return the length of the frame the batch occupies. */
        public int frameLength()
        {
            return RecordBatchDescriptor.frameLength(length);
        }

        /** @return the validation status in words. */
        public String describeStatus()
        {
            return RecordBatch.describe(status);
        }
    }

    /** Receives the batches of a walk. */
    @FunctionalInterface
    public interface BatchVisitor
    {
        /**
         * @param info  the batch's position, status and header fields.
         * @param batch a flyweight over a copy of the batch when it is valid (records may be read from it), else
         *              null. Valid only during the call.
         * @return false to stop the walk.
         */
        boolean onBatch(BatchInfo info, RecordBatch batch);
    }

    /**
     * Where a walk over a segment ended.
     *
     * @param stopPosition   position at which it stopped: the end of the data (a zero length, or the file end), the
     *                       first invalid batch (a scan, or a walk with no valid batch after the damage), or where
     *                       the visitor stopped it.
     * @param stopStatus     {@link RecordBatch#VALID} when the visitor stopped it, {@link RecordBatch#INCOMPLETE}
     *                       at the end of the data or at a batch cut short, else the reason the batch there is
     *                       invalid.
     * @param nextOffset     offset after the last valid batch seen, or -1 when none was.
     * @param validBatches   valid batches seen.
     * @param damagedBatches invalid batches seen.
     * @param dataEnd        position after the last non-zero byte of the file (a walk only; -1 for a scan and
     *                       for a walk the visitor stopped: nothing after its stop is read).
     * @param fileSize       size of the file when walked.
     */
    public record ScanResult(
        int stopPosition,
        int stopStatus,
        long nextOffset,
        int validBatches,
        int damagedBatches,
        long dataEnd,
        long fileSize)
    {
    }

    /**
     * An index file's content. An index of an active segment is pre-sized with zeros; entries end at the first
     * all-zero entry after the first one, and the zero slots after it are counted, not listed.
     *
     * @param file         the index file.
     * @param exists       whether it exists.
     * @param fileSize     its size (0 when missing).
     * @param wholeEntries whether the size is a whole number of entries.
     * @param offsets      entry offsets (absolute).
     * @param values       the other field: the position (offset index) or the timestamp (time index).
     * @param zeroSlots    all-zero entries after the last entry.
     */
    public record IndexContent(
        Path file, boolean exists, long fileSize, boolean wholeEntries, long[] offsets, long[] values, int zeroSlots)
    {
        /** @return the number of entries. */
        public int entries()
        {
            return offsets.length;
        }
    }

    private LogInspector(final Path dir)
    {
        this.dir = dir;
    }

    /**
     * @param dir a log directory.
     * @return an inspector over it.
     * @throws StorageException NOT_A_LOG_DIRECTORY when it does not exist, is not a directory, or holds neither a
     *                          meta file nor a segment; IO_ERROR when it cannot be listed.
     * @throws MissingJvmFlagException when the JVM runs without the one flag Tidemark needs, naming it.
     */
    public static LogInspector open(final Path dir)
    {
        MissingJvmFlagException.check();
        if (!Files.exists(dir))
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY, dir + " does not exist");
        }
        if (!Files.isDirectory(dir))
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY, dir + " is not a directory");
        }
        final LogInspector inspector = new LogInspector(dir);
        if (!Files.exists(dir.resolve(META_FILE)) && inspector.segments().isEmpty())
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY,
                dir + " holds neither " + META_FILE + " nor a segment: it is not a Tidemark log directory");
        }
        return inspector;
    }

    /** @return the log directory. */
    public Path directory()
    {
        return dir;
    }

    /**
     * @return the meta file's status and creation time.
     * @throws StorageException IO_ERROR when it exists but cannot be read.
     */
    public Meta meta()
    {
        final ByteBuffer in = ByteBuffer.allocate(META_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        final CheckpointFile.Status status = readCheckpointFile(dir.resolve(META_FILE), CheckpointDescriptor.META_MAGIC, in);
        return new Meta(status, status == CheckpointFile.Status.OK ? in.getLong(CheckpointDescriptor.META_CREATION_TIME_OFFSET) : -1);
    }

    /**
     * @return the checkpoint's status, recovery point and log start offset (negative values make it CORRUPT, as
     *         they do for the log).
     * @throws StorageException IO_ERROR when it exists but cannot be read.
     */
    public Checkpoint checkpoint()
    {
        final ByteBuffer in = ByteBuffer.allocate(CheckpointDescriptor.LOG_CHECKPOINT_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        CheckpointFile.Status status = readCheckpointFile(dir.resolve(CHECKPOINT_FILE), CheckpointDescriptor.LOG_CHECKPOINT_MAGIC, in);
        long recoveryPoint = -1;
        long logStartOffset = -1;
        if (status == CheckpointFile.Status.OK)
        {
            recoveryPoint = in.getLong(CheckpointDescriptor.RECOVERY_POINT_OFFSET);
            logStartOffset = in.getLong(CheckpointDescriptor.LOG_START_OFFSET_OFFSET);
            if (recoveryPoint < 0 || logStartOffset < 0)
            {
                status = CheckpointFile.Status.CORRUPT;
                recoveryPoint = -1;
                logStartOffset = -1;
            }
        }
        return new Checkpoint(status, recoveryPoint, logStartOffset);
    }

    private static CheckpointFile.Status readCheckpointFile(final Path file, final int magic, final ByteBuffer into)
    {
        try
        {
            if (Files.isDirectory(file))
            {
                return CheckpointFile.Status.CORRUPT;
            }
            if (Files.exists(file) && Files.size(file) != into.capacity())
            {
                return CheckpointFile.Status.CORRUPT;
            }
            return CheckpointFile.read(file, magic, into);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read " + file, ex);
        }
    }

    /** @return whether the clean-shutdown marker is present. */
    public boolean cleanShutdownMarker()
    {
        return Files.exists(dir.resolve(CLEAN_SHUTDOWN_FILE));
    }

    /**
     * @return the pid the last process to open the log wrote into {@code .lock}, or -1 (the file outlives the
     *         process: see {@link #lockOwnerRunning()}).
     */
    public long lockOwnerPid()
    {
        try
        {
            final String text = Files.readString(dir.resolve(LOCK_FILE), StandardCharsets.US_ASCII).trim();
            return text.isEmpty() ? -1 : Long.parseLong(text);
        }
        catch (final IOException | NumberFormatException ex)
        {
            return -1;
        }
    }

    /**
     * @return whether the log is most likely open in a running process: the process named in {@code .lock} is
     *         running and the clean-shutdown marker (written by close, deleted by open) is absent. The inspector
     *         never takes the lock to find out.
     */
    public boolean lockOwnerRunning()
    {
        final long pid = lockOwnerPid();
        return pid > 0 && !cleanShutdownMarker() && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    /**
     * @return the segments (files named by 20 digits with the {@code .log} suffix), by base offset; listed anew on
     *         every call.
     * @throws StorageException IO_ERROR when the directory cannot be listed.
     */
    public List<SegmentInfo> segments()
    {
        final TreeMap<Long, SegmentInfo> found = new TreeMap<>();
        for (final Path path : list())
        {
            final String name = path.getFileName().toString();
            if (!name.endsWith(SegmentFiles.LOG_SUFFIX))
            {
                continue;
            }
            final long base = SegmentFiles.parseBaseOffset(
                name.substring(0, name.length() - SegmentFiles.LOG_SUFFIX.length()));
            if (base < 0 || !Files.isRegularFile(path))
            {
                continue;
            }
            final SegmentFiles files = new SegmentFiles(dir, base);
            found.put(base, new SegmentInfo(base, files.log(), files.offsetIndex(), files.timeIndex(), size(path)));
        }
        return new ArrayList<>(found.values());
    }

    /**
     * @param file a {@code .log}, {@code .index} or {@code .timeindex} file of this directory.
     * @return its segment, or null when it names none.
     */
    public SegmentInfo segmentOf(final Path file)
    {
        final String name = file.getFileName().toString();
        final int dot = name.indexOf('.');
        final long base = dot < 0 ? -1 : SegmentFiles.parseBaseOffset(name.substring(0, dot));
        for (final SegmentInfo segment : segments())
        {
            if (segment.baseOffset() == base)
            {
                return segment;
            }
        }
        return null;
    }

    List<Path> list()
    {
        try (Stream<Path> stream = Files.list(dir))
        {
            return stream.sorted().toList();
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot list " + dir, ex);
        }
    }

    private static long size(final Path path)
    {
        try
        {
            return Files.size(path);
        }
        catch (final IOException ex)
        {
            return 0;
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Batches
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Read batches from {@code fromPosition} until the end of the data or the first invalid batch (which the
     * visitor sees, unless it is the end of the data), as a reader would: for following a log.
     *
     * @param segment      the segment.
     * @param fromPosition a batch position (0, or where a previous scan stopped).
     * @param visitor      receives each batch.
     * @return where the scan stopped.
     * @throws StorageException IO_ERROR when the file cannot be read (NOT_A_LOG_DIRECTORY-free: a deleted file
     *                          reads as empty).
     */
    public ScanResult scan(final SegmentInfo segment, final int fromPosition, final BatchVisitor visitor)
    {
        return walk(segment, fromPosition, visitor, false);
    }

    /**
     * Walk a whole segment from position 0 the way recovery does: every batch is validated (CRC included); after
     * an invalid batch the walk resumes at the next 8-aligned position holding a batch that validates with its
     * CRC, so that every damaged region is reported; it also finds the last non-zero byte of the file, so that
     * garbage after the data is seen.
     *
     * @param segment the segment.
     * @param visitor receives each batch, valid or not (not the end of the data).
     * @return where the walk stopped.
     */
    public ScanResult walk(final SegmentInfo segment, final BatchVisitor visitor)
    {
        return walk(segment, 0, visitor, true);
    }

    private ScanResult walk(
        final SegmentInfo segment, final int fromPosition, final BatchVisitor visitor, final boolean full)
    {
        if (fromPosition < 0)
        {
            throw new IllegalArgumentException("negative position " + fromPosition);
        }
        try (FileChannel channel = FileChannel.open(segment.log(), StandardOpenOption.READ))
        {
            final long fileSize = channel.size();
            if (null == this.window)
            {
                this.window = new FileWindow(channel, fileSize, Integer.MAX_VALUE);
            }
            final FileWindow window = this.window.wrap(channel, fileSize);
            final WalkState state = new WalkState();
            // A walk from the start checks offset continuity from the segment's base offset; a scan from a
            // position (a follower's, an index entry's) takes the first batch's base offset as it finds it.
            final long expected = fromPosition == 0 ? segment.baseOffset() : -1;
            final long stop = scanner.walk(window, fromPosition, expected, true, full, new BatchScanner.Visitor()
            {
                @Override
                public boolean onBatch(
                    final long position, final DirectBuffer buffer, final int index, final boolean resumed)
                {
                    final BatchInfo info = info(position, RecordBatch.VALID, buffer, index, buffer.getInt(index));
                    state.validBatches++;
                    state.nextOffset = info.nextOffset();
                    state.stopStatus = RecordBatch.INCOMPLETE;
                    if (!visitor.onBatch(info, batch.wrap(buffer, index)))
                    {
                        state.stopStatus = RecordBatch.VALID;
                        return false;
                    }
                    return true;
                }

                @Override
                public boolean onDamage(
                    final long position,
                    final int status,
                    final long expectedOffset,
                    final DirectBuffer buffer,
                    final int index,
                    final int available)
                {
                    state.damagedBatches++;
                    state.stopStatus = status;
                    return visitor.onBatch(info(position, status, buffer, index, available), null);
                }
            });
            final int position = (int)(stop > fileSize && stop != fromPosition ? fileSize : stop);
            // Stopped by the visitor: nothing more is read (not even to look for garbage after it).
            final long dataEnd = full && !scanner.stoppedByVisitor() ? scanner.dataEnd(window, position) : -1;
            return new ScanResult(position, state.stopStatus, state.nextOffset, state.validBatches,
                state.damagedBatches, dataEnd, fileSize);
        }
        catch (final NoSuchFileException ex)
        {
            return new ScanResult(fromPosition, RecordBatch.INCOMPLETE, -1, 0, 0, full ? fromPosition : -1, 0);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read " + segment.log(), ex);
        }
    }

    /** Counts of a walk in progress. */
    private static final class WalkState
    {
        long nextOffset = -1;
        int validBatches;
        int damagedBatches;
        int stopStatus = RecordBatch.INCOMPLETE;
    }

    /** @return the header fields of what stands at {@code position}, as read ({@code available} bytes there). */
    private static BatchInfo info(
        final long position, final int status, final DirectBuffer view, final int at, final int available)
    {
        final boolean header = available >= HEADER_LENGTH;
        return new BatchInfo((int)position, status, available >= 4 ? view.getInt(at) : 0,
            header ? view.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : -1,
            header ? view.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET) : 0,
            header ? view.getInt(at + RecordBatchDescriptor.LEADER_EPOCH_OFFSET) : -1,
            header ? view.getLong(at + RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET) : -1,
            header ? view.getLong(at + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET) : -1,
            header ? view.getLong(at + RecordBatchDescriptor.PRODUCER_ID_OFFSET) : -1,
            header ? view.getShort(at + RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET) : -1,
            header ? view.getInt(at + RecordBatchDescriptor.BASE_SEQUENCE_OFFSET) : -1,
            available >= 8 ? view.getInt(at + RecordBatchDescriptor.CRC_OFFSET) : 0,
            header ? view.getByte(at + RecordBatchDescriptor.MAGIC_OFFSET) : 0);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Indexes
    // ------------------------------------------------------------------------------------------------------------

    /**
     * @param segment a segment.
     * @return its offset index: entry offsets and positions.
     */
    public IndexContent offsetIndex(final SegmentInfo segment)
    {
        return IndexFileReader.read(segment.offsetIndex(), segment.baseOffset(), IndexDescriptor.OFFSET_INDEX_ENTRY_LENGTH);
    }

    /**
     * @param segment a segment.
     * @return its time index: entry offsets and timestamps.
     */
    public IndexContent timeIndex(final SegmentInfo segment)
    {
        return IndexFileReader.read(segment.timeIndex(), segment.baseOffset(), IndexDescriptor.TIME_INDEX_ENTRY_LENGTH);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Verification
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Check the whole directory as recovery would, changing nothing: the meta file and checkpoint; every batch of
     * every segment (length, magic, record structure, CRC32C, offset continuity within and across segments,
     * non-decreasing leader epoch); garbage after the data; both indexes of every segment against the batches
     * (every offset index entry names the base offset of the batch at its position; every time index entry sits
     * on a batch boundary and bounds the timestamps before it); the checkpoint against the data (the recovery
     * point and log start offset within the log); leftovers the next open would delete.
     *
     * @return the report; {@link LogInspectionReport#clean()} says whether it verified.
     */
    public LogInspectionReport verify()
    {
        return new LogVerification(this).run();
    }

}
