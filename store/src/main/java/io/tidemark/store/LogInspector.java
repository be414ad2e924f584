package io.tidemark.store;

import org.agrona.concurrent.UnsafeBuffer;

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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

import static io.tidemark.store.RecordBatchDescriptor.HEADER_LENGTH;

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
 * Layouts: {@link RecordBatchDescriptor}, {@link OffsetIndex} (8-byte entries: relative offset, position),
 * {@link TimeIndex} (12-byte entries: timestamp, relative offset), {@link LogCheckpoint}, {@link LogDirectory}.
 * <p>
 * Not thread-safe: one inspector per thread. It holds no open file between calls.
 */
public final class LogInspector
{
    /** Name of the checkpoint file. */
    public static final String CHECKPOINT_FILE = LogCheckpoint.FILE_NAME;
    /** Name of the meta file. */
    public static final String META_FILE = LogDirectory.META_FILE;
    /** Name of the lock file. */
    public static final String LOCK_FILE = LogDirectory.LOCK_FILE;
    /** Name of the clean-shutdown marker. */
    public static final String CLEAN_SHUTDOWN_FILE = LogDirectory.CLEAN_SHUTDOWN_FILE;
    /** Name of the counters file a log without an application counters manager writes. */
    public static final String COUNTERS_FILE = LogDirectory.COUNTERS_FILE;
    /** Length of an offset index entry. */
    public static final int OFFSET_INDEX_ENTRY_LENGTH = OffsetIndex.ENTRY_LENGTH;
    /** Length of a time index entry. */
    public static final int TIME_INDEX_ENTRY_LENGTH = TimeIndex.ENTRY_LENGTH;

    private static final int META_LENGTH = CheckpointFile.FIELDS_OFFSET + 8 + 4;
    private static final int WINDOW = 1024 * 1024;

    private final Path dir;
    private final Crc32c crc = new Crc32c();
    private final RecordBatch batch = new RecordBatch();
    private byte[] bytes = new byte[64 * 1024];
    private final UnsafeBuffer view = new UnsafeBuffer(bytes);

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
     * @param dataEnd        position after the last non-zero byte of the file (a walk only; -1 for a scan).
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
     */
    public static LogInspector open(final Path dir)
    {
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
        final CheckpointFile.Status status = readCheckpointFile(dir.resolve(META_FILE), LogDirectory.META_MAGIC, in);
        return new Meta(status, status == CheckpointFile.Status.OK ? in.getLong(CheckpointFile.FIELDS_OFFSET) : -1);
    }

    /**
     * @return the checkpoint's status, recovery point and log start offset (negative values make it CORRUPT, as
     *         they do for the log).
     * @throws StorageException IO_ERROR when it exists but cannot be read.
     */
    public Checkpoint checkpoint()
    {
        final ByteBuffer in = ByteBuffer.allocate(LogCheckpoint.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        CheckpointFile.Status status = readCheckpointFile(dir.resolve(CHECKPOINT_FILE), LogCheckpoint.MAGIC, in);
        long recoveryPoint = -1;
        long logStartOffset = -1;
        if (status == CheckpointFile.Status.OK)
        {
            recoveryPoint = in.getLong(LogCheckpoint.RECOVERY_POINT_OFFSET);
            logStartOffset = in.getLong(LogCheckpoint.LOG_START_OFFSET_OFFSET);
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

    private List<Path> list()
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
            int position = fromPosition;
            long nextOffset = -1;
            int validBatches = 0;
            int damagedBatches = 0;
            int stopStatus = RecordBatch.INCOMPLETE;
            while (position < fileSize)
            {
                final BatchInfo info = read(channel, position, fileSize);
                if (info.endOfData())
                {
                    stopStatus = RecordBatch.INCOMPLETE;
                    break;
                }
                final boolean valid = info.valid();
                if (valid)
                {
                    validBatches++;
                    nextOffset = info.nextOffset();
                }
                else
                {
                    damagedBatches++;
                }
                if (!visitor.onBatch(info, valid ? batch.wrap(view, 0) : null))
                {
                    stopStatus = valid ? RecordBatch.VALID : info.status();
                    if (valid)
                    {
                        position += (int)Math.min(info.frameLength(), fileSize - position);
                    }
                    return new ScanResult(position, stopStatus, nextOffset, validBatches, damagedBatches,
                        full ? dataEnd(channel, position, fileSize) : -1, fileSize);
                }
                if (valid)
                {
                    position += (int)Math.min(info.frameLength(), fileSize - position);
                    continue;
                }
                stopStatus = info.status();
                if (!full)
                {
                    break;
                }
                final int next = resync(channel, position + RecordBatchDescriptor.FRAME_ALIGNMENT, fileSize);
                if (next < 0)
                {
                    break;
                }
                position = next;
                stopStatus = RecordBatch.INCOMPLETE;
            }
            return new ScanResult(position, stopStatus, nextOffset, validBatches, damagedBatches,
                full ? dataEnd(channel, position, fileSize) : -1, fileSize);
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

    /** Read and validate the batch at {@code position} into {@link #bytes}. */
    private BatchInfo read(final FileChannel channel, final int position, final long fileSize) throws IOException
    {
        final int available = (int)Math.min(Integer.MAX_VALUE, fileSize - position);
        int got = readAt(channel, position, Math.min(HEADER_LENGTH, available));
        final int length = got >= 4 ? view.getInt(RecordBatchDescriptor.LENGTH_OFFSET) : 0;
        if (got >= HEADER_LENGTH && length > HEADER_LENGTH && length <= available)
        {
            got = readAt(channel, position, length);
        }
        final int status = length == 0 ?
            RecordBatch.INCOMPLETE : RecordBatch.validate(view, 0, got, Integer.MAX_VALUE, crc);
        final boolean header = got >= HEADER_LENGTH;
        return new BatchInfo(position, status, length,
            header ? view.getLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET) : -1,
            header ? view.getInt(RecordBatchDescriptor.RECORD_COUNT_OFFSET) : 0,
            header ? view.getInt(RecordBatchDescriptor.LEADER_EPOCH_OFFSET) : -1,
            header ? view.getLong(RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET) : -1,
            header ? view.getLong(RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET) : -1,
            header ? view.getLong(RecordBatchDescriptor.PRODUCER_ID_OFFSET) : -1,
            header ? view.getShort(RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET) : -1,
            header ? view.getInt(RecordBatchDescriptor.BASE_SEQUENCE_OFFSET) : -1,
            got >= 8 ? view.getInt(RecordBatchDescriptor.CRC_OFFSET) : 0,
            header ? view.getByte(RecordBatchDescriptor.MAGIC_OFFSET) : 0);
    }

    /** Read up to {@code length} bytes at {@code position} into {@link #bytes}; @return bytes read. */
    private int readAt(final FileChannel channel, final long position, final int length) throws IOException
    {
        if (bytes.length < length)
        {
            bytes = new byte[Math.max(length, bytes.length * 2)];
            view.wrap(bytes);
        }
        final ByteBuffer target = ByteBuffer.wrap(bytes, 0, length);
        while (target.hasRemaining())
        {
            if (channel.read(target, position + target.position()) < 0)
            {
                break;
            }
        }
        if (target.position() < length)
        {
            java.util.Arrays.fill(bytes, target.position(), length, (byte)0);
        }
        return target.position();
    }

    /** @return the first 8-aligned position at or after {@code from} holding a batch valid with its CRC, or -1. */
    private int resync(final FileChannel channel, final int from, final long fileSize) throws IOException
    {
        final byte[] window = new byte[WINDOW + HEADER_LENGTH];
        final UnsafeBuffer windowView = new UnsafeBuffer(window);
        long start = org.agrona.BitUtil.align(from, RecordBatchDescriptor.FRAME_ALIGNMENT);
        while (start + HEADER_LENGTH <= fileSize)
        {
            final ByteBuffer target = ByteBuffer.wrap(window);
            while (target.hasRemaining() && channel.read(target, start + target.position()) >= 0)
            {
                if (start + target.position() >= fileSize)
                {
                    break;
                }
            }
            final int got = target.position();
            for (int at = 0; at + HEADER_LENGTH <= got && at < WINDOW; at += RecordBatchDescriptor.FRAME_ALIGNMENT)
            {
                final int length = windowView.getInt(at);
                if (length >= HEADER_LENGTH && length <= fileSize - (start + at) &&
                    windowView.getByte(at + RecordBatchDescriptor.MAGIC_OFFSET) == RecordBatchDescriptor.MAGIC &&
                    windowView.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET) > 0)
                {
                    final int candidate = (int)(start + at);
                    if (read(channel, candidate, fileSize).valid())
                    {
                        return candidate;
                    }
                }
            }
            start += WINDOW;
        }
        return -1;
    }

    /** @return the position after the last non-zero byte in {@code [from, fileSize)}, or {@code from}. */
    private static long dataEnd(final FileChannel channel, final long from, final long fileSize) throws IOException
    {
        final ByteBuffer chunk = ByteBuffer.allocate(WINDOW);
        long end = from;
        long at = from;
        while (at < fileSize)
        {
            chunk.clear();
            final int got = channel.read(chunk, at);
            if (got <= 0)
            {
                break;
            }
            final byte[] array = chunk.array();
            for (int i = got - 1; i >= 0; i--)
            {
                if (array[i] != 0)
                {
                    end = at + i + 1;
                    break;
                }
            }
            at += got;
        }
        return end;
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
        return readIndex(segment.offsetIndex(), segment.baseOffset(), OffsetIndex.ENTRY_LENGTH);
    }

    /**
     * @param segment a segment.
     * @return its time index: entry offsets and timestamps.
     */
    public IndexContent timeIndex(final SegmentInfo segment)
    {
        return readIndex(segment.timeIndex(), segment.baseOffset(), TimeIndex.ENTRY_LENGTH);
    }

    private static IndexContent readIndex(final Path file, final long baseOffset, final int entryLength)
    {
        final byte[] content;
        try
        {
            if (!Files.isRegularFile(file))
            {
                return new IndexContent(file, false, 0, false, new long[0], new long[0], 0);
            }
            content = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            return new IndexContent(file, false, 0, false, new long[0], new long[0], 0);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read " + file, ex);
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(content);
        final int slots = content.length / entryLength;
        int entries = slots;
        for (int i = 1; i < slots; i++)
        {
            boolean zero = true;
            for (int b = i * entryLength, end = b + entryLength; b < end && zero; b++)
            {
                zero = content[b] == 0;
            }
            if (zero)
            {
                entries = i;
                break;
            }
        }
        if (slots > 0 && allZero(content, 0, entryLength))
        {
            entries = 0; // an entry is never all zero: the first offset index entry has a position above 0
        }
        final long[] offsets = new long[entries];
        final long[] values = new long[entries];
        for (int i = 0; i < entries; i++)
        {
            final int at = i * entryLength;
            if (entryLength == OffsetIndex.ENTRY_LENGTH)
            {
                offsets[i] = baseOffset + buffer.getInt(at);
                values[i] = buffer.getInt(at + 4);
            }
            else
            {
                values[i] = buffer.getLong(at);
                offsets[i] = baseOffset + buffer.getInt(at + 8);
            }
        }
        return new IndexContent(file, true, content.length, content.length % entryLength == 0, offsets, values,
            slots - entries);
    }

    private static boolean allZero(final byte[] content, final int from, final int length)
    {
        for (int i = from; i < from + length; i++)
        {
            if (content[i] != 0)
            {
                return false;
            }
        }
        return true;
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
        final Verification v = new Verification();
        return v.run();
    }

    /** State of one verification. */
    private final class Verification
    {
        private final List<LogInspectionReport.Finding> findings = new ArrayList<>();
        private final List<LogInspectionReport.SegmentSummary> summaries = new ArrayList<>();
        private long batches;
        private long records;
        private long bytesTotal;
        private long truncateAt = Long.MAX_VALUE;
        private boolean ownerRunning;

        private void error(final long segment, final String message)
        {
            findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.ERROR, segment, message));
        }

        private void warning(final long segment, final String message)
        {
            findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.WARNING, segment, message));
        }

        private void info(final long segment, final String message)
        {
            findings.add(new LogInspectionReport.Finding(LogInspectionReport.Severity.INFO, segment, message));
        }

        LogInspectionReport run()
        {
            final Meta meta = meta();
            if (meta.status() != CheckpointFile.Status.OK)
            {
                error(-1, META_FILE + " is " + meta.status() + ": the next open refuses the directory " +
                    "(NOT_A_LOG_DIRECTORY)");
            }
            final Checkpoint checkpoint = checkpoint();
            final boolean clean = cleanShutdownMarker();
            final long pid = lockOwnerPid();
            final boolean running = lockOwnerRunning();
            ownerRunning = running;
            if (running)
            {
                info(-1, "the log is probably open in running process " + pid + " (named in " + LOCK_FILE +
                    "): its active segment may change while it is verified");
            }
            else if (!clean)
            {
                warning(-1, "no " + CLEAN_SHUTDOWN_FILE + " marker: the last process did not close the log " +
                    "cleanly; the next open re-validates it from the recovery point");
            }

            final List<SegmentInfo> segments = segments();
            checkFiles(segments, running);
            if (checkpoint.status() != CheckpointFile.Status.OK)
            {
                error(-1, CHECKPOINT_FILE + " is " + checkpoint.status() + ": the next open trusts nothing and " +
                    "re-validates every segment from the first");
            }
            final long firstBase = segments.isEmpty() ? Math.max(0, checkpoint.logStartOffset()) :
                segments.get(0).baseOffset();
            final long recoveryPoint = checkpoint.status() == CheckpointFile.Status.OK ?
                checkpoint.recoveryPoint() : firstBase;
            long logStart = checkpoint.status() == CheckpointFile.Status.OK ? checkpoint.logStartOffset() : firstBase;

            for (int i = 0; i + 1 < segments.size(); i++)
            {
                if (segments.get(i + 1).baseOffset() <= logStart)
                {
                    warning(segments.get(i).baseOffset(), "segment wholly below the log start offset " + logStart +
                        ": the next open deletes it");
                }
            }

            long previousEnd = -1;
            int epoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
            for (int i = 0; i < segments.size(); i++)
            {
                final SegmentInfo segment = segments.get(i);
                if (previousEnd >= 0 && segment.baseOffset() != previousEnd)
                {
                    error(segment.baseOffset(), "offsets [" + previousEnd + ", " + segment.baseOffset() + ") are " +
                        "missing: no segment holds them; " + (previousEnd < recoveryPoint ?
                        "they are below the recovery point " + recoveryPoint + ": the next open fails (CORRUPT_LOG)" :
                        "the next open truncates the log at " + previousEnd + " and deletes the later segments"));
                    if (previousEnd >= recoveryPoint)
                    {
                        truncateAt = Math.min(truncateAt, previousEnd);
                    }
                }
                final long expectedStart = segment.baseOffset();
                final SegmentCheck check = checkSegment(segment, expectedStart, epoch, recoveryPoint,
                    i == segments.size() - 1);
                epoch = check.epoch;
                previousEnd = check.endOffset;
            }
            final long logEnd = Math.min(truncateAt, segments.isEmpty() ? firstBase : previousEnd);
            if (checkpoint.status() == CheckpointFile.Status.OK)
            {
                if (checkpoint.recoveryPoint() > logEnd)
                {
                    error(-1, "the recovery point " + checkpoint.recoveryPoint() + " in " + CHECKPOINT_FILE +
                        " is above the log end offset " + logEnd + ": flushed records [" + logEnd + ", " +
                        checkpoint.recoveryPoint() + ") are missing or unreadable");
                }
                if (checkpoint.logStartOffset() > logEnd)
                {
                    error(-1, "the log start offset " + checkpoint.logStartOffset() + " in " + CHECKPOINT_FILE +
                        " is above the log end offset " + logEnd);
                }
                if (!segments.isEmpty() && checkpoint.logStartOffset() < firstBase)
                {
                    info(-1, "the log start offset " + checkpoint.logStartOffset() + " is below the first segment's " +
                        "base offset " + firstBase + "; the log starts at " + firstBase);
                }
            }
            logStart = Math.min(Math.max(logStart, firstBase), logEnd);
            return new LogInspectionReport(dir, meta.status(), checkpoint, clean, pid, running,
                List.copyOf(summaries), batches, records, bytesTotal, logStart, logEnd, List.copyOf(findings));
        }

        private void checkFiles(final List<SegmentInfo> segments, final boolean running)
        {
            final Map<Long, SegmentInfo> byBase = new HashMap<>();
            for (final SegmentInfo segment : segments)
            {
                byBase.put(segment.baseOffset(), segment);
            }
            for (final Path path : list())
            {
                final String name = path.getFileName().toString();
                if (name.equals(META_FILE) || name.equals(CHECKPOINT_FILE) || name.equals(LOCK_FILE) ||
                    name.equals(CLEAN_SHUTDOWN_FILE) || name.equals(COUNTERS_FILE))
                {
                    continue;
                }
                if (name.endsWith(LogLoader.SPARE_SUFFIX))
                {
                    if (running)
                    {
                        info(-1, "spare segment file " + name + " prepared by the running process");
                    }
                    else
                    {
                        warning(-1, "leftover spare segment file " + name + ": the next open deletes it");
                    }
                    continue;
                }
                if (name.endsWith(CheckpointFile.TMP_SUFFIX))
                {
                    warning(-1, "leftover temporary file " + name + " (an interrupted checkpoint write): the next " +
                        "open deletes it");
                    continue;
                }
                final String suffix = name.endsWith(SegmentFiles.LOG_SUFFIX) ? SegmentFiles.LOG_SUFFIX :
                    name.endsWith(SegmentFiles.INDEX_SUFFIX) ? SegmentFiles.INDEX_SUFFIX :
                    name.endsWith(SegmentFiles.TIME_INDEX_SUFFIX) ? SegmentFiles.TIME_INDEX_SUFFIX : null;
                if (null == suffix)
                {
                    info(-1, (name.endsWith(".checkpoint") ? "file " + name + " belongs to another layer " +
                        "(replication) and is not checked here" : "file " + name + " is not part of the store's " +
                        "format (ignored)"));
                    continue;
                }
                final long base = SegmentFiles.parseBaseOffset(name.substring(0, name.length() - suffix.length()));
                if (base < 0)
                {
                    error(-1, "unexpected file " + name + ": segment files must be named by 20 decimal digits; the " +
                        "next open refuses the directory (CORRUPT_LOG)");
                    continue;
                }
                if (!Files.isRegularFile(path))
                {
                    error(base, name + " is not a regular file: the next open refuses the directory (CORRUPT_LOG)");
                    continue;
                }
                if (!suffix.equals(SegmentFiles.LOG_SUFFIX) && !byBase.containsKey(base))
                {
                    warning(base, "index file " + name + " has no log file: the next open deletes it");
                }
            }
        }

        /** Outcome of one segment's check. */
        private static final class SegmentCheck
        {
            long endOffset;
            int epoch;
        }

        /** Running state of one segment's walk. */
        private static final class Walk
        {
            long expected;
            int epoch;
            long maxTimestamp = Long.MIN_VALUE;
            long records;
            long bytes;
            int lastGoodEnd;
            int lastDamaged = -1;

            Walk(final long expected, final int epoch)
            {
                this.expected = expected;
                this.epoch = epoch;
            }
        }

        private SegmentCheck checkSegment(
            final SegmentInfo segment,
            final long expectedStart,
            final int epochBefore,
            final long recoveryPoint,
            final boolean last)
        {
            final long base = segment.baseOffset();
            final Map<Integer, Long> batchAt = new HashMap<>();
            final Set<Integer> damagedAt = new HashSet<>();
            final Set<Long> damagedFrom = new HashSet<>();
            final List<long[]> boundaries = new ArrayList<>(); // {base, next, running max timestamp}
            // The indexes first: an entry is published after its batch, so the walk below sees every batch an
            // entry read now can name, even while a running owner appends.
            final IndexContent offsetIndex = offsetIndex(segment);
            final IndexContent timeIndex = timeIndex(segment);
            final Walk w = new Walk(expectedStart, epochBefore);
            final ScanResult result = walk(segment, (info, valid) ->
            {
                final long expected = w.expected;
                if (info.valid())
                {
                    if (info.baseOffset() != expected &&
                        (info.baseOffset() < expected || w.lastGoodEnd == info.position()))
                    {
                        // (a larger base offset after a damaged region is the damaged region's offsets: reported)
                        error(base, "batch at position " + info.position() + " has base offset " +
                            info.baseOffset() + " where " + expected + " was expected (offsets out of order); " +
                            consequence(expected, recoveryPoint));
                    }
                    if (info.leaderEpoch() < w.epoch)
                    {
                        error(base, "batch at position " + info.position() + " (offset " + info.baseOffset() +
                            ") has leader epoch " + info.leaderEpoch() + ", below the previous batch's " +
                            w.epoch + "; " + consequence(info.baseOffset(), recoveryPoint));
                    }
                    w.epoch = Math.max(w.epoch, info.leaderEpoch());
                    w.expected = Math.max(expected, info.nextOffset());
                    w.maxTimestamp = Math.max(w.maxTimestamp, info.maxTimestamp());
                    w.records += info.recordCount();
                    w.bytes += info.frameLength();
                    w.lastGoodEnd = info.position() + info.frameLength();
                    batchAt.put(info.position(), info.baseOffset());
                    boundaries.add(new long[] {info.baseOffset(), info.nextOffset(), w.maxTimestamp});
                }
                else
                {
                    w.lastDamaged = info.position();
                    damagedAt.add(info.position());
                    damagedFrom.add(expected);
                    error(base, "damaged batch at position " + info.position() + " (reading offset " + expected +
                        "): " + info.describeStatus() + " (length field " + info.length() + ", stored CRC 0x" +
                        Integer.toHexString(info.crc()) + "); " + consequence(expected, recoveryPoint));
                }
                return true;
            });
            final long endOffset = w.expected;
            final int dataSize = result.stopPosition();
            if (result.dataEnd() > dataSize)
            {
                final long extra = result.dataEnd() - dataSize;
                if (last && ownerRunning && w.lastDamaged != dataSize)
                {
                    info(base, extra + " byte(s) after the end of the data at position " + dataSize + ": an append " +
                        "in progress by the running owner");
                }
                else if (w.lastDamaged == dataSize)
                {
                    info(base, extra + " byte(s) from the damaged batch at position " + dataSize +
                        " to the last non-zero byte (position " + result.dataEnd() + ") follow no valid batch");
                }
                else
                {
                    error(base, extra + " non-zero byte(s) after the end of the data at position " + dataSize +
                        " (up to position " + result.dataEnd() + "): a torn write or garbage; " +
                        consequence(endOffset, recoveryPoint));
                }
            }
            if (!last && result.validBatches() == 0)
            {
                info(base, "sealed segment holds no batch");
            }

            checkOffsetIndex(segment, offsetIndex, batchAt, damagedAt, dataSize);
            checkTimeIndex(segment, timeIndex, boundaries, damagedFrom, endOffset);

            batches += result.validBatches();
            records += w.records;
            bytesTotal += w.bytes;
            summaries.add(new LogInspectionReport.SegmentSummary(base, result.fileSize(), dataSize,
                result.validBatches(), w.records, result.damagedBatches(), endOffset, w.maxTimestamp,
                offsetIndex.exists() && offsetIndex.wholeEntries() ? offsetIndex.entries() : -1,
                timeIndex.exists() && timeIndex.wholeEntries() ? timeIndex.entries() : -1));
            final SegmentCheck check = new SegmentCheck();
            check.endOffset = endOffset;
            check.epoch = w.epoch;
            return check;
        }

        /** @return what recovery does about damage at {@code offset} (and remember where it would truncate). */
        private String consequence(final long offset, final long recoveryPoint)
        {
            if (offset >= recoveryPoint)
            {
                truncateAt = Math.min(truncateAt, offset);
            }
            return offset < recoveryPoint ?
                "below the recovery point " + recoveryPoint + " (flushed data): the next open keeps it in place " +
                "and reading it fails with CORRUPT_BATCH" :
                "at or above the recovery point " + recoveryPoint + ": the next open truncates the log at offset " +
                offset + " and deletes any later segment";
        }

        private void checkOffsetIndex(
            final SegmentInfo segment,
            final IndexContent index,
            final Map<Integer, Long> batchAt,
            final Set<Integer> damagedAt,
            final int dataSize)
        {
            final long base = segment.baseOffset();
            final String name = index.file().getFileName().toString();
            if (!index.exists())
            {
                error(base, "offset index " + name + " is missing: the next open rebuilds it");
                return;
            }
            if (!index.wholeEntries())
            {
                error(base, "offset index " + name + " is " + index.fileSize() + " bytes, not a whole number of " +
                    OffsetIndex.ENTRY_LENGTH + "-byte entries: the next open rebuilds it");
                return;
            }
            long previousOffset = base - 1;
            long previousPosition = -1;
            for (int i = 0; i < index.entries(); i++)
            {
                final long offset = index.offsets()[i];
                final long position = index.values()[i];
                if (offset <= previousOffset || position <= previousPosition)
                {
                    error(base, "offset index " + name + " entry " + i + " (offset " + offset + ", position " +
                        position + ") is out of order: the next open rebuilds the index");
                    return;
                }
                final Long at = position >= 0 && position <= Integer.MAX_VALUE ? batchAt.get((int)position) : null;
                final boolean damaged = position >= 0 && position <= Integer.MAX_VALUE &&
                    damagedAt.contains((int)position); // a damaged batch: its offset cannot be checked (reported)
                if (!damaged && (null == at || at != offset))
                {
                    error(base, "offset index " + name + " entry " + i + " (offset " + offset + " -> position " +
                        position + ") does not point at a batch with that base offset" +
                        (position >= dataSize ? " (beyond the data, which ends at " + dataSize + ")" :
                        null == at ? " (no valid batch starts there)" : " (the batch there starts at offset " + at +
                        ")") + ": lookups would go wrong; the next open rebuilds an index that fails its sanity check, and the indexes of every segment it re-validates");
                    return;
                }
                previousOffset = offset;
                previousPosition = position;
            }
        }

        private void checkTimeIndex(
            final SegmentInfo segment,
            final IndexContent index,
            final List<long[]> boundaries,
            final Set<Long> damagedFrom,
            final long endOffset)
        {
            final long base = segment.baseOffset();
            final String name = index.file().getFileName().toString();
            if (!index.exists())
            {
                error(base, "time index " + name + " is missing: the next open rebuilds it");
                return;
            }
            if (!index.wholeEntries())
            {
                error(base, "time index " + name + " is " + index.fileSize() + " bytes, not a whole number of " +
                    TimeIndex.ENTRY_LENGTH + "-byte entries: the next open rebuilds it");
                return;
            }
            long previousTimestamp = Long.MIN_VALUE;
            long previousOffset = base - 1;
            int b = 0;
            long maxBefore = Long.MIN_VALUE;
            for (int i = 0; i < index.entries(); i++)
            {
                final long timestamp = index.values()[i];
                final long offset = index.offsets()[i];
                if ((i > 0 && timestamp <= previousTimestamp) || offset <= previousOffset)
                {
                    error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                        offset + ") is out of order: the next open rebuilds the index");
                    return;
                }
                if (offset > endOffset)
                {
                    error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                        offset + ") is beyond the segment's end offset " + endOffset);
                    return;
                }
                while (b < boundaries.size() && boundaries.get(b)[1] <= offset)
                {
                    maxBefore = boundaries.get(b)[2];
                    b++;
                }
                final boolean onBoundary = offset == endOffset ||
                    (b < boundaries.size() && boundaries.get(b)[0] == offset) || offset == base || damagedFrom.contains(offset);
                if (!onBoundary)
                {
                    error(base, "time index " + name + " entry " + i + " (timestamp " + timestamp + ", offset " +
                        offset + ") does not fall on a batch boundary");
                    return;
                }
                if (maxBefore > timestamp)
                {
                    error(base, "time index " + name + " entry " + i + " claims every record below offset " + offset +
                        " has a timestamp at most " + timestamp + ", but one has " + maxBefore +
                        ": timestamp lookups would skip records");
                    return;
                }
                previousTimestamp = timestamp;
                previousOffset = offset;
            }
        }
    }
}
