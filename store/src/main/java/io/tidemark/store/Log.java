package io.tidemark.store;

import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

import static io.tidemark.store.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.RecordBatchDescriptor.frameLength;

/**
 * A partition log: an append-only sequence of record batches with dense offsets, stored as memory-mapped
 * segments in one directory, with sparse offset and time indexes, flush policies, a recovery-point checkpoint,
 * crash recovery on open, retention and truncation.
 * <pre>{@code
 * try (Log log = Log.open(new LogContext().logDir(Path.of("data/orders-0"))))
 * {
 *     long offset = log.append(value, 0, value.capacity());
 *     try (LogReader reader = log.openReader())
 *     {
 *         reader.poll(record -> handle(record), Long.MAX_VALUE, 100);
 *     }
 * }
 * }</pre>
 * <b>Threads.</b> One writer thread at a time appends ({@code append*}, {@link #tryClaim}, {@link #appendRaw}),
 * rolls and truncates; to append from many threads put a {@link LockingAppender} or {@link RingBufferAppender} in
 * front. A writer call made while another is in progress (or while a claim is open) on another thread is detected
 * and refused with {@link IllegalStateException} before it writes anything. Any number of {@link LogReader}s read
 * concurrently without locks. {@link #flush()}, {@link #applyRetention()}, the getters and {@link #close()} are
 * thread-safe. The log's background work runs as an Agrona agent ({@link LogContext.AgentMode}); its dedicated
 * thread, when it has one, is a daemon: a JVM whose application returned without closing the log exits, and the
 * next open recovers the log as after a kill.
 * <p>
 * <b>Offsets.</b> The log end offset never passes {@link #MAX_LOG_END_OFFSET}: an append, a follower's
 * {@link #appendRaw} or a restart offset that would leave no room is refused with OFFSET_OUT_OF_RANGE.
 * <p>
 * <b>Durability.</b> An append is visible to readers when it returns and survives a crash of the process at once
 * (it is in the page cache). It survives power loss once flushed: by {@code flush.interval.messages},
 * {@code flush.interval.ms}, an explicit {@link #flush()}, or the background flush of a rolled segment. After an
 * unclean shutdown every batch from the recovery point on is re-validated and a torn tail is truncated. An fsync
 * failure takes the log offline (fail-stop): it is never retried.
 */
public final class Log implements AutoCloseable
{
    /** The largest log end offset: the last offset a record can have is one below it. */
    public static final long MAX_LOG_END_OFFSET = Long.MAX_VALUE;
    /**
     * How long {@link #close()} waits for readers inside a poll, and for a writer call in progress, before it goes on
     * without them (readers then release their segment's mapping themselves when they leave the poll).
     */
    static final long CLOSE_WAIT_MS = 1000;
    private static final VarHandle LOG_END_OFFSET;
    private static final long NO_TIME = Long.MIN_VALUE;
    private static final long SPARE_RETRY_MS = 100;
    private static final long CHECKPOINT_WARNING_INTERVAL_NS = TimeUnit.SECONDS.toNanos(10);

    static
    {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN)
        {
            throw new ExceptionInInitializerError("Tidemark's on-disk format is little-endian; this platform is not");
        }
        try
        {
            LOG_END_OFFSET = MethodHandles.lookup().findVarHandle(Log.class, "logEndOffset", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final LogContext ctx;
    private final Path dir;
    private final LogDirectory directory;
    private final LogCheckpoint checkpoint;
    private final FileSync sync;
    private final EpochClock clock;
    private final LogCounters counters;
    private final RecoveryReport recoveryReport;
    private final int maxIndexEntries;
    private final ReentrantLock flushLock = new ReentrantLock();
    private final ReentrantLock segmentsLock = new ReentrantLock();
    private final ReaderRegistry readers = new ReaderRegistry();
    private final List<Segment> retired = new ArrayList<>();
    private final AtomicReference<Segment> spare = new AtomicReference<>();
    private final BatchClaim claim = new BatchClaim(this);
    private final WriterGuard writer = new WriterGuard();
    private final ErrorRateLimiter checkpointWarnings = new ErrorRateLimiter(CHECKPOINT_WARNING_INTERVAL_NS);
    private final Crc32c writerCrc = new Crc32c();
    private final LogAgent agent;
    private final AgentRunner agentRunner;
    private final AgentInvoker agentInvoker;
    private final System.Logger logger = System.getLogger(Log.class.getName());

    private volatile Segment[] segments;
    private Segment active;
    @SuppressWarnings("unused") // accessed through LOG_END_OFFSET
    private volatile long logEndOffset;
    private volatile long logStartOffset;
    private volatile long recoveryPoint;
    private volatile int truncations;
    private volatile long lastFlushTimeMs;
    private volatile boolean rollFlushPending;
    private volatile boolean directoryDirty;
    private volatile StorageException offlineCause;
    private volatile boolean closed;
    private int lastLeaderEpoch;
    private long nextRetentionCheckMs;
    private long spareFailedAtMs = NO_TIME;

    private Log(final LogContext ctx)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        this.sync = ctx.fileSync();
        this.clock = ctx.epochClock();
        this.maxIndexEntries = LogLoader.maxIndexEntries(ctx);
        this.directory = LogDirectory.open(dir, clock.time(), sync);
        LogCounters openedCounters = null;
        try
        {
            this.checkpoint = new LogCheckpoint(dir, sync);
            final boolean clean = directory.hasCleanShutdownMarker();
            final LogLoader.Loaded loaded = new LogLoader(ctx).load(clean, checkpoint);
            this.segments = loaded.segments.toArray(new Segment[0]);
            this.active = segments[segments.length - 1];
            this.logStartOffset = loaded.logStartOffset;
            this.logEndOffset = active.endOffset();
            this.recoveryPoint = loaded.recoveryPoint;
            this.lastLeaderEpoch = loaded.lastLeaderEpoch;
            this.recoveryReport = loaded.report;
            openedCounters = LogCounters.create(ctx, clock.time());
            this.counters = openedCounters;
            if (loaded.recovered)
            {
                flushLock.lock();
                try
                {
                    directoryDirty = true;
                    forceSegmentsAndCheckpoint(logEndOffset(), true, false);
                }
                finally
                {
                    flushLock.unlock();
                }
            }
            directory.deleteCleanShutdownMarker();
            updateCounters();
            lastFlushTimeMs = clock.time();
            nextRetentionCheckMs = clock.time() + ctx.retentionCheckIntervalMs();
            final boolean repaired = recoveryReport.segmentsRecovered() > 0 || !recoveryReport.notes().isEmpty();
            logger.log(repaired ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                () -> "opened " + dir + ": " + recoveryReport);
        }
        catch (final IOException ex)
        {
            closeOnFailedOpen(openedCounters, ex);
            throw new StorageException(StorageErrorCode.IO_ERROR, "failed to open log " + dir, ex);
        }
        catch (final InternalError ex)
        {
            // What the JVM turns a fault on a mapped page into (SIGBUS: a hole of a full file system, a disk error).
            closeOnFailedOpen(openedCounters, ex);
            throw new StorageException(StorageErrorCode.IO_ERROR, "failed to open log " + dir +
                ": a memory-mapped access faulted (an unreadable page: a full file system or a disk error)", ex);
        }
        catch (final RuntimeException | Error ex)
        {
            closeOnFailedOpen(openedCounters, ex);
            throw ex;
        }

        final ErrorHandler errorHandler = null != ctx.errorHandler() ? ctx.errorHandler() :
            (t) -> logger.log(System.Logger.Level.ERROR, "log agent error in " + dir, t);
        this.agent = new LogAgent(this, "tidemark-log-" + dir.getFileName(), errorHandler);
        switch (ctx.agentMode())
        {
            case DEDICATED:
                agentRunner = new AgentRunner(ctx.agentIdleStrategy(), errorHandler, null, agent);
                agentInvoker = null;
                AgentRunner.startOnThread(agentRunner, ctx.agentThreadFactory());
                break;
            case INVOKER:
                agentRunner = null;
                agentInvoker = new AgentInvoker(errorHandler, null, agent);
                agentInvoker.start();
                break;
            default:
                agentRunner = null;
                agentInvoker = null;
                break;
        }
    }

    /** Release everything a failed open took, whatever the failure; the directory lock last, always. */
    private void closeOnFailedOpen(final LogCounters openedCounters, final Throwable failure)
    {
        try
        {
            final Segment[] loaded = segments;
            if (null != loaded)
            {
                for (final Segment segment : loaded)
                {
                    segment.close();
                }
            }
            if (null != openedCounters)
            {
                openedCounters.close();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            failure.addSuppressed(ex);
        }
        finally
        {
            directory.close();
        }
    }

    /**
     * Open (creating if needed) the log in {@code ctx.logDir()}, recovering it if the last session did not close
     * it cleanly.
     *
     * @param ctx configuration; concluded (validated) here.
     * @return the open log.
     * @throws ConfigException  for an invalid configuration value, naming the key.
     * @throws StorageException LOCKED, NOT_A_LOG_DIRECTORY, CORRUPT_LOG or IO_ERROR.
     * @throws MissingJvmFlagException when the JVM runs without the one flag Tidemark needs, naming it.
     */
    public static Log open(final LogContext ctx)
    {
        MissingJvmFlagException.check();
        return new Log(ctx.conclude());
    }

    // ------------------------------------------------------------------------------------------------------------
    // Appends (writer thread)
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Append one record without a key, stamped with the log's clock.
     *
     * @return the record's offset.
     */
    public long append(final DirectBuffer value, final int offset, final int length)
    {
        return append(BatchClaim.NOW, null, 0, -1, value, offset, length);
    }

    /**
     * Append one record.
     *
     * @param timestamp   epoch millis, or {@link BatchClaim#NOW}.
     * @param key         key bytes, or null.
     * @param keyOffset   index of the key.
     * @param keyLength   key length (ignored when the key is null).
     * @param value       value bytes, or null.
     * @param valueOffset index of the value.
     * @param valueLength value length (ignored when the value is null).
     * @return the record's offset.
     * @throws StorageException          STORAGE_SPACE (nothing appended), RECORD_TOO_LARGE, OFFSET_OUT_OF_RANGE,
     *                                   LOG_OFFLINE, CLOSED; an error of the flush that follows the append under
     *                                   {@code flush.interval.messages} says that the record is appended.
     * @throws IndexOutOfBoundsException when a key or value range lies outside its buffer (nothing appended).
     * @throws IllegalArgumentException  for a length below -1 (nothing appended).
     * @throws IllegalStateException     when another thread is in a writer call (nothing appended).
     */
    public long append(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength)
    {
        final long batchLength = (long)HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH +
            (null == key ? 0 : Math.max(keyLength, 0)) + (null == value ? 0 : Math.max(valueLength, 0));
        if (batchLength > ctx.maxMessageBytes())
        {
            throw tooLarge(batchLength);
        }
        final BatchClaim batch = tryClaim((int)batchLength);
        try
        {
            batch.addRecord(timestamp, key, keyOffset, keyLength, value, valueOffset, valueLength);
        }
        catch (final RuntimeException | Error ex)
        {
            batch.abort(); // bad arguments are refused before anything is written; the claim must not stay open
            throw ex;
        }
        return batch.commit();
    }

    private StorageException tooLarge(final long batchLength)
    {
        return new StorageException(StorageErrorCode.RECORD_TOO_LARGE, "batch of up to " + batchLength +
            " bytes exceeds " + LogContext.MAX_MESSAGE_BYTES + "=" + ctx.maxMessageBytes());
    }

    /**
     * Append one record holding a copy of {@code value}. A convenience that allocates a small wrapper per call;
     * the {@code DirectBuffer} overloads and {@link #tryClaim} allocate nothing.
     *
     * @return the record's offset.
     */
    public long append(final byte[] value)
    {
        return append(new UnsafeBuffer(value), 0, value.length);
    }

    /**
     * Claim room for one batch of at most {@code maxBatchLength} bytes (header included) at the end of the log,
     * to encode records straight into the mapping. Rolls the segment if the batch does not fit.
     *
     * @param maxBatchLength upper bound of the batch length; at most {@code max.message.bytes}.
     * @return the log's claim, to fill and commit (or abort) before the next writer call.
     * @throws StorageException      RECORD_TOO_LARGE, STORAGE_SPACE, LOG_OFFLINE, CLOSED.
     * @throws IllegalStateException when a claim is open, or another thread is in a writer call.
     */
    public BatchClaim tryClaim(final int maxBatchLength)
    {
        writer.acquire(claim.isActive());
        try
        {
            checkAppendable();
            if (maxBatchLength < HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH)
            {
                throw new IllegalArgumentException("a batch needs at least " +
                    (HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH) + " bytes, asked " + maxBatchLength);
            }
            if (maxBatchLength > ctx.maxMessageBytes())
            {
                throw tooLarge(maxBatchLength);
            }
            final long nowMs = clock.time();
            final int frame = frameLength(maxBatchLength);
            final Segment segment = segmentForAppend(frame, nowMs);
            final int position = segment.size();
            segment.ensureReserved(position + frame); // no overflow: the segment has room for the frame
            claim.wrap(segment, position, maxBatchLength, lastLeaderEpoch, nowMs);
            return claim;
        }
        catch (final RuntimeException | Error ex)
        {
            writer.release();
            throw ex;
        }
    }

    /** The claim was aborted: the writer call it was part of is over. */
    void claimAborted()
    {
        writer.release();
    }

    long commit(
        final Segment segment,
        final int position,
        final int length,
        final int recordCount,
        final long maxTimestamp,
        final int leaderEpoch)
    {
        final long baseOffset;
        try
        {
            if (leaderEpoch < lastLeaderEpoch)
            {
                claim.zero();
                throw new IllegalArgumentException("leader epoch " + leaderEpoch + " is below the log's last epoch " +
                    lastLeaderEpoch);
            }
            if (closed)
            {
                claim.zero(); // a close that could not wait for this claim any longer: nothing more is appended
                checkOpen();
            }
            baseOffset = logEndOffset();
            if (recordCount > MAX_LOG_END_OFFSET - baseOffset)
            {
                claim.zero();
                throw noRoomForOffsets(baseOffset, recordCount);
            }
            final UnsafeBuffer buffer = segment.buffer();
            buffer.putLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET, baseOffset);
            buffer.putInt(position + RecordBatchDescriptor.CRC_OFFSET, writerCrc.compute(buffer,
                position + RecordBatchDescriptor.CRC_START_OFFSET, length - RecordBatchDescriptor.CRC_START_OFFSET));
            buffer.putIntRelease(position + RecordBatchDescriptor.LENGTH_OFFSET, length);
            completeAppend(segment, position, frameLength(length), baseOffset, baseOffset + recordCount, maxTimestamp);
            lastLeaderEpoch = leaderEpoch;
        }
        finally
        {
            writer.release();
        }
        maybeFlushByCount(baseOffset, baseOffset + recordCount);
        return baseOffset;
    }

    private StorageException noRoomForOffsets(final long baseOffset, final long recordCount)
    {
        return new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "no room for " + recordCount +
            " record(s) at offset " + baseOffset + ": the log end offset may not pass " + MAX_LOG_END_OFFSET +
            "; nothing appended to " + dir);
    }

    private void completeAppend(
        final Segment segment,
        final int position,
        final int frame,
        final long baseOffset,
        final long nextOffset,
        final long maxTimestamp)
    {
        if (segment.rollBaseTimeMs() == NO_TIME)
        {
            segment.rollBaseTimeMs(clock.time());
        }
        segment.publish(position, frame, baseOffset, nextOffset, maxTimestamp, ctx.indexIntervalBytes());
        LOG_END_OFFSET.setRelease(this, nextOffset);
        counters.logEndOffset.setRelease(nextOffset);
    }

    private void maybeFlushByCount(final long baseOffset, final long nextOffset)
    {
        if (nextOffset - recoveryPoint >= ctx.flushIntervalMessages())
        {
            flushAfterPublication(baseOffset, nextOffset);
        }
    }

    /**
     * The flush of {@code flush.interval.messages}, after the records were published. A checkpoint that cannot be
     * written for lack of space does not fail it (the data is flushed; the checkpoint on disk lags, which only
     * means more work for recovery), and any other failure says that the records are in the log, so that no caller
     * takes it for an append that did not happen and retries it into a duplicate.
     */
    private void flushAfterPublication(final long baseOffset, final long nextOffset)
    {
        try
        {
            checkOnline();
            flushLock.lock();
            try
            {
                checkOnline();
                forceSegmentsAndCheckpoint(logEndOffset(), false, false);
            }
            finally
            {
                flushLock.unlock();
            }
        }
        catch (final StorageException ex)
        {
            throw new StorageException(ex.code(), (nextOffset - baseOffset == 1 ? "offset " + baseOffset + " is" :
                "offsets [" + baseOffset + ", " + nextOffset + ") are") + " appended (readable, and it survives a " +
                "process crash) but the flush that followed failed: " + ex.getMessage(), ex);
        }
    }

    /**
     * Append batches encoded elsewhere (a leader's log, for a follower), as raw bytes. Every batch is validated
     * first (structure, CRC, offsets continuing from the log end, non-decreasing leader epochs); nothing is
     * appended unless all are valid. The bytes are copied as they are: no re-encoding.
     *
     * @param source holds the batches, each in a frame aligned to 8 bytes (the last one's padding may be absent).
     * @param offset index of the first batch.
     * @param length total bytes.
     * @return the log end offset after the append.
     * @throws StorageException          INVALID_BATCH, RECORD_TOO_LARGE, OFFSET_OUT_OF_RANGE (for all three nothing
     *                                   is appended), LOG_OFFLINE; STORAGE_SPACE when a batch finds no room (the
     *                                   batches before it are appended: the message and the log end offset say how
     *                                   far); an error of the flush that follows under
     *                                   {@code flush.interval.messages} says what is appended.
     * @throws IndexOutOfBoundsException when {@code [offset, offset + length)} lies outside {@code source}.
     * @throws IllegalStateException     when a claim is open, or another thread is in a writer call.
     */
    public long appendRaw(final DirectBuffer source, final int offset, final int length)
    {
        if (offset < 0 || length < 0 || offset > source.capacity() - length)
        {
            throw new IndexOutOfBoundsException("[" + offset + ", " + offset + " + " + length + ") is outside the " +
                source.capacity() + " bytes of the source");
        }
        final long before;
        final long after;
        writer.acquire(claim.isActive());
        try
        {
            checkAppendable();
            before = logEndOffset();
            after = appendRaw0(source, offset, length);
        }
        finally
        {
            writer.release();
        }
        if (after > before)
        {
            maybeFlushByCount(before, after);
        }
        return after;
    }

    private long appendRaw0(final DirectBuffer source, final int offset, final int length)
    {
        long expected = logEndOffset();
        int epoch = lastLeaderEpoch;
        final int end = offset + length;
        for (int at = offset; at < end; )
        {
            final int status = RecordBatch.validate(source, at, end - at, Integer.MAX_VALUE, writerCrc);
            if (status != RecordBatch.VALID)
            {
                throw invalidBatch(at - offset, RecordBatch.describe(status));
            }
            final int batchLength = source.getInt(at);
            if (batchLength > ctx.maxMessageBytes())
            {
                throw tooLarge(batchLength);
            }
            final long base = source.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
            final int batchEpoch = source.getInt(at + RecordBatchDescriptor.LEADER_EPOCH_OFFSET);
            if (base != expected)
            {
                throw invalidBatch(at - offset, "base offset " + base + " where " + expected + " was expected");
            }
            if (batchEpoch < epoch)
            {
                throw invalidBatch(at - offset, "leader epoch " + batchEpoch + " below the last epoch " + epoch);
            }
            final int count = source.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
            if (count > MAX_LOG_END_OFFSET - base)
            {
                throw noRoomForOffsets(base, count);
            }
            expected = base + count;
            epoch = batchEpoch;
            at += Math.min(frameLength(batchLength), end - at);
        }

        final long nowMs = clock.time();
        final long before = logEndOffset();
        for (int at = offset; at < end; )
        {
            final int batchLength = source.getInt(at);
            final int frame = frameLength(batchLength);
            final Segment segment;
            final int position;
            try
            {
                segment = segmentForAppend(frame, nowMs);
                position = segment.size();
                segment.ensureReserved(position + frame);
            }
            catch (final StorageException ex)
            {
                if (logEndOffset() == before)
                {
                    throw ex;
                }
                throw new StorageException(ex.code(), "offsets [" + before + ", " + logEndOffset() + ") are " +
                    "appended, the batches after them are not: " + ex.getMessage(), ex);
            }
            final UnsafeBuffer buffer = segment.buffer();
            buffer.putBytes(position + RecordBatchDescriptor.CRC_OFFSET, source, at + RecordBatchDescriptor.CRC_OFFSET,
                batchLength - RecordBatchDescriptor.CRC_OFFSET);
            buffer.putIntRelease(position, batchLength);
            final long base = source.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
            completeAppend(segment, position, frame, base,
                base + source.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET),
                source.getLong(at + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET));
            lastLeaderEpoch = source.getInt(at + RecordBatchDescriptor.LEADER_EPOCH_OFFSET);
            at += Math.min(frame, end - at);
        }
        return logEndOffset();
    }

    private StorageException invalidBatch(final int at, final String why)
    {
        return new StorageException(StorageErrorCode.INVALID_BATCH,
            "batch at byte " + at + " of the appended bytes: " + why + "; nothing appended to " + dir);
    }

    private Segment segmentForAppend(final int frame, final long nowMs)
    {
        final Segment segment = active;
        if (segment.isEmpty())
        {
            return segment;
        }
        final boolean full = !segment.hasRoomFor(frame) || segment.indexFull();
        final boolean old = nowMs - segment.rollBaseTimeMs() > ctx.segmentMs();
        final boolean offsetsExhausted = logEndOffset() - segment.baseOffset() > Integer.MAX_VALUE - (long)frame;
        return full || old || offsetsExhausted ? roll0() : segment;
    }

    /**
     * Roll now: seal the active segment and start a new one at the log end offset (a no-op when the active segment
     * is empty). Writer thread.
     */
    public void roll()
    {
        writer.acquire(claim.isActive());
        try
        {
            checkAppendable();
            if (!active.isEmpty())
            {
                roll0();
            }
        }
        finally
        {
            writer.release();
        }
    }

    private Segment roll0()
    {
        segmentsLock.lock();
        try
        {
            final Segment old = active;
            final long base = logEndOffset();
            final SegmentFiles files = new SegmentFiles(dir, base);
            final Segment prepared = spare.getAndSet(null);
            Segment next = null;
            if (null != prepared)
            {
                try
                {
                    next = prepared.activate(files);
                }
                catch (final IOException ex)
                {
                    prepared.close();
                    logger.log(System.Logger.Level.WARNING, "could not use the prepared segment in " + dir, ex);
                }
            }
            if (null == next)
            {
                try
                {
                    next = Segment.openActive(files, ctx.segmentBytes(), 0, maxIndexEntries, 0, 0, true);
                }
                catch (final IOException | RuntimeException ex)
                {
                    deleteQuietly(files, ex); // a stray file at the log end offset would be mistaken for data
                    throw ex;
                }
            }
            old.seal();
            final Segment[] current = segments;
            final Segment[] updated = Arrays.copyOf(current, current.length + 1);
            updated[current.length] = next;
            segments = updated;
            active = next;
            directoryDirty = true;
            rollFlushPending = true;
            counters.segmentCount.setRelease(updated.length);
            return next;
        }
        catch (final IOException ex)
        {
            throw SpaceReservation.toStorageException(ex, dir);
        }
        finally
        {
            segmentsLock.unlock();
        }
    }

    private static void deleteQuietly(final SegmentFiles files, final Exception failure)
    {
        for (final Path path : new Path[]{ files.log(), files.offsetIndex(), files.timeIndex() })
        {
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ex)
            {
                failure.addSuppressed(ex);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Flush
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Force everything appended so far to disk, advance the recovery point to the log end offset and write the
     * checkpoint (temp file, fsync, rename, directory fsync). Thread-safe.
     *
     * @throws StorageException IO_ERROR when the fsync fails (the log is then offline), LOG_OFFLINE, CLOSED.
     */
    public void flush()
    {
        checkOnline();
        flushLock.lock();
        try
        {
            checkOnline();
            forceSegmentsAndCheckpoint(logEndOffset(), false, true);
        }
        finally
        {
            flushLock.unlock();
        }
    }

    /**
     * @param end                   the recovery point once forced.
     * @param always                write the checkpoint even when the recovery point does not move.
     * @param checkpointSpaceThrows whether a checkpoint that cannot be written for lack of space throws
     *                              STORAGE_SPACE; otherwise it is logged (rate-limited) and written by a later flush.
     */
    private void forceSegmentsAndCheckpoint(final long end, final boolean always, final boolean checkpointSpaceThrows)
    {
        try
        {
            final Segment[] snapshot = segments;
            int from = Math.max(0, floorIndex(snapshot, recoveryPoint));
            while (from > 0 && snapshot[from - 1].needsFlush())
            {
                from--; // sealed when the recovery point had already reached its end: trim it and force its indexes
            }
            for (int i = from; i < snapshot.length; i++)
            {
                final Segment segment = snapshot[i];
                if (segment.needsFlush())
                {
                    segment.flush(sync, segment.size());
                }
            }
            if (directoryDirty)
            {
                directoryDirty = false;
                sync.forceDirectory(dir);
            }
            lastFlushTimeMs = clock.time();
        }
        catch (final IOException | UncheckedIOException ex)
        {
            throw goOffline("flush failed", ex);
        }
        if (end > recoveryPoint || always)
        {
            recoveryPoint = end; // the data below is on disk; the checkpoint may only lag behind it, which is safe
            counters.recoveryPoint.setRelease(end);
            try
            {
                writeCheckpoint();
            }
            catch (final StorageException ex)
            {
                if (checkpointSpaceThrows || ex.code() != StorageErrorCode.STORAGE_SPACE)
                {
                    throw ex;
                }
                final long leftOut = checkpointWarnings.onOccurrence(System.nanoTime());
                if (leftOut >= 0)
                {
                    logger.log(System.Logger.Level.WARNING, ex.getMessage() + "; the checkpoint lags the flushed " +
                        "data until space is freed (" + leftOut + " such failure(s) not logged since the last one)");
                }
            }
        }
    }

    /**
     * Write the checkpoint. A full disk is reported as STORAGE_SPACE and leaves the log online: the checkpoint
     * on disk then lags the real recovery point, which only means more work for recovery. Any other failure
     * takes the log offline.
     */
    private void writeCheckpoint()
    {
        writeCheckpoint(recoveryPoint, logStartOffset);
    }

    private void writeCheckpoint(final long checkpointRecoveryPoint, final long checkpointLogStart)
    {
        try
        {
            checkpoint.write(checkpointRecoveryPoint, checkpointLogStart);
        }
        catch (final IOException ex)
        {
            if (SpaceReservation.isOutOfSpace(ex, checkpoint.file()))
            {
                throw new StorageException(StorageErrorCode.STORAGE_SPACE,
                    "no space to write " + checkpoint.file() + "; the data itself is flushed", ex);
            }
            throw goOffline("writing the checkpoint failed", ex);
        }
    }

    private StorageException goOffline(final String what, final Exception cause)
    {
        return takeOffline(what + ": log " + dir + " is now offline (an fsync failure is never retried)", cause);
    }

    private StorageException takeOffline(final String message, final Throwable cause)
    {
        final StorageException failure = new StorageException(StorageErrorCode.IO_ERROR, message, cause);
        if (null == offlineCause)
        {
            offlineCause = failure;
            logger.log(System.Logger.Level.ERROR, failure.getMessage(), cause);
        }
        return failure;
    }

    /**
     * The agent's duty cycle failed {@code cycles} times in a row: fail-stop rather than fail the same way forever.
     *
     * @return the error that took the log offline.
     */
    StorageException agentFailed(final int cycles, final Throwable failure)
    {
        return takeOffline("the log agent failed " + cycles + " duty cycles in a row (" + failure + "): log " + dir +
            " is now offline; the next open recovers it", failure);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Truncation, retention
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Remove every record at or above {@code offset} (follower truncation). The log is cut at the start of the
     * batch holding {@code offset}, so the new log end offset may be below it. The cut is forced to disk before
     * this returns. Writer thread; readers must not be reading at or above the cut (replication guarantees it:
     * they read below the high watermark, and truncation never goes below it).
     *
     * @param offset first offset to remove.
     * @return the new log end offset.
     */
    public long truncateTo(final long offset)
    {
        writer.acquire(claim.isActive());
        try
        {
            checkAppendable();
            if (offset >= logEndOffset())
            {
                return logEndOffset();
            }
            if (offset < logStartOffset)
            {
                truncateFullyAndStartAt0(offset);
                return offset;
            }
            return truncateTo0(offset);
        }
        finally
        {
            writer.release();
        }
    }

    private long truncateTo0(final long offset)
    {
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            final Segment[] current = segments;
            final int index = floorIndex(current, offset);
            final Segment target = current[index];
            final int position = target.positionOf(offset);
            if (position < 0)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_BATCH,
                    "cannot find the batch holding offset " + offset + " in segment " + target.baseOffset());
            }
            final long newEnd = position < target.size() ?
                target.buffer().getLong(position + RecordBatchDescriptor.BASE_OFFSET_OFFSET) : target.endOffset();
            if (recoveryPoint > newEnd)
            {
                // Checkpointed before the cut: a crash during it must not find the log ending below the recovery point.
                writeCheckpoint(newEnd, logStartOffset);
                recoveryPoint = newEnd;
                counters.recoveryPoint.setRelease(newEnd);
            }
            LOG_END_OFFSET.setRelease(this, newEnd);
            truncations++;
            for (int i = current.length - 1; i > index; i--)
            {
                retire(current[i], true);
            }
            final Segment kept;
            if (target == active)
            {
                final int oldSize = target.size();
                target.resetState(position, newEnd, Long.MIN_VALUE, 0);
                target.zeroTail(position, oldSize, sync);
                kept = target;
            }
            else
            {
                retire(target, false);
                // An index a lookup found wrong (its file removed) is not kept: it is rebuilt from the data below
                final boolean trusted = !target.offsetIndexRebuilt();
                kept = Segment.openActive(target.files(), ctx.segmentBytes(), position, maxIndexEntries,
                    trusted ? target.offsetIndex().entries() : 0, trusted ? target.timeIndex().entries() : 0, false);
            }
            kept.offsetIndex().truncateToOffset(newEnd);
            kept.timeIndex().truncateToOffset(newEnd);
            kept.startTrustedReplay();
            final int entries = kept.offsetIndex().entries();
            final int from = entries == 0 ? 0 : kept.offsetIndex().positionAt(entries - 1);
            kept.replay(from, position, ctx.indexIntervalBytes(), entries == 0 && from < position, writerCrc, false);
            kept.resetState(position, newEnd, kept.maxTimestamp(), position - from);
            final Segment[] updated = Arrays.copyOf(current, index + 1);
            updated[index] = kept;
            segments = updated;
            active = kept;
            lastLeaderEpoch = lastEpochBefore(updated);
            directoryDirty = true;
            if (recoveryPoint > newEnd)
            {
                recoveryPoint = newEnd;
            }
            forceSegmentsAndCheckpoint(newEnd, true, false);
            reclaimRetired();
            updateCounters();
            return newEnd;
        }
        catch (final IOException ex)
        {
            throw goOffline("truncation failed", ex);
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
        }
    }

    private int lastEpochBefore(final Segment[] current)
    {
        for (int i = current.length - 1; i >= 0; i--)
        {
            if (!current[i].isEmpty())
            {
                return current[i].lastBatchEpoch();
            }
        }
        return RecordBatchDescriptor.NO_LEADER_EPOCH;
    }

    /**
     * Delete the whole log and start it again, empty, at {@code offset} (a follower too far behind). Writer thread.
     *
     * @param offset the new log start and end offset.
     * @throws StorageException OFFSET_OUT_OF_RANGE when {@code offset} leaves no room for a record (it is
     *                          {@link #MAX_LOG_END_OFFSET}); nothing is changed.
     */
    public void truncateFullyAndStartAt(final long offset)
    {
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        if (offset >= MAX_LOG_END_OFFSET)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "cannot start " + dir + " at " + offset +
                ": it leaves no room for a record (the log end offset may not pass " + MAX_LOG_END_OFFSET + ")");
        }
        writer.acquire(claim.isActive());
        try
        {
            checkAppendable();
            truncateFullyAndStartAt0(offset);
        }
        finally
        {
            writer.release();
        }
    }

    private void truncateFullyAndStartAt0(final long offset)
    {
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            final Segment[] current = segments;
            // Checkpointed first: after a crash during the deletions, the loader finds every old segment below the
            // log start offset and starts the log again, empty, at it.
            writeCheckpoint(offset, offset);
            LOG_END_OFFSET.setRelease(this, offset);
            truncations++;
            for (final Segment segment : current)
            {
                retire(segment, true);
            }
            final Segment fresh = Segment.openActive(new SegmentFiles(dir, offset), ctx.segmentBytes(), 0,
                maxIndexEntries, 0, 0, false);
            fresh.resetState(0, offset, Long.MIN_VALUE, 0);
            segments = new Segment[]{ fresh };
            active = fresh;
            logStartOffset = offset;
            recoveryPoint = offset;
            lastLeaderEpoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
            directoryDirty = true;
            forceSegmentsAndCheckpoint(offset, true, false);
            reclaimRetired();
            updateCounters();
        }
        catch (final IOException ex)
        {
            throw goOffline("truncation failed", ex);
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
        }
    }

    /**
     * Raise the log start offset (records below it become unreadable) and delete the segments wholly below it.
     * Thread-safe.
     *
     * @param offset new log start offset, at most the log end offset.
     */
    public void advanceLogStartOffset(final long offset)
    {
        checkOnline();
        if (offset > logEndOffset())
        {
            throw new IllegalArgumentException("log start offset " + offset + " beyond the log end " + logEndOffset());
        }
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            if (offset > logStartOffset)
            {
                final Segment[] current = segments;
                int deletable = 0;
                while (deletable < current.length - 1 && current[deletable + 1].baseOffset() <= offset)
                {
                    deletable++;
                }
                deleteOldest(current, deletable, offset);
            }
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
        }
    }

    /**
     * Delete the oldest segments past {@code retention.bytes} or {@code retention.ms} (never the active one), and
     * advance and checkpoint the log start offset. Readers inside a deleted segment finish their poll first; the
     * mapping is released once they have left. Run periodically by the agent; thread-safe.
     *
     * @return the number of segments deleted.
     */
    public int applyRetention()
    {
        checkOnline();
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            final Segment[] current = segments;
            final long nowMs = clock.time();
            long total = 0;
            for (final Segment segment : current)
            {
                total += segment.size();
            }
            int deletable = 0;
            while (deletable < current.length - 1)
            {
                final Segment segment = current[deletable];
                final boolean bySize = ctx.retentionBytes() >= 0 && total - segment.size() >= ctx.retentionBytes();
                final boolean byTime = ctx.retentionMs() >= 0 && segment.maxTimestamp() != Long.MIN_VALUE &&
                    nowMs - segment.maxTimestamp() > ctx.retentionMs();
                if (!bySize && !byTime)
                {
                    break;
                }
                total -= segment.size();
                deletable++;
            }
            if (deletable > 0)
            {
                deleteOldest(current, deletable, current[deletable].baseOffset());
            }
            return deletable;
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
        }
    }

    private void deleteOldest(final Segment[] current, final int count, final long newLogStart)
    {
        // Deleting before the checkpoint records the new start is safe (the next open starts at the first segment
        // left), and it is what frees space on a full disk, so the deletion does not wait for the checkpoint.
        logStartOffset = Math.max(logStartOffset, newLogStart);
        segments = Arrays.copyOfRange(current, count, current.length);
        try
        {
            for (int i = 0; i < count; i++)
            {
                retire(current[i], true);
            }
            sync.forceDirectory(dir);
        }
        catch (final IOException ex)
        {
            throw goOffline("deleting segments failed", ex);
        }
        finally
        {
            reclaimRetired();
            updateCounters();
        }
        writeCheckpoint();
    }

    private void retire(final Segment segment, final boolean deleteFiles) throws IOException
    {
        segment.retire();
        if (deleteFiles)
        {
            segment.deleteFiles();
        }
        retired.add(segment);
    }

    /** Unmap retired segments no reader is inside. Caller holds the flush lock. */
    private int reclaimRetired()
    {
        int reclaimed = 0;
        for (int i = retired.size() - 1; i >= 0; i--)
        {
            final Segment segment = retired.get(i);
            if (!readers.isPinned(segment))
            {
                segment.close();
                retired.remove(i);
                reclaimed++;
            }
        }
        return reclaimed;
    }

    // ------------------------------------------------------------------------------------------------------------
    // Agent duty cycle
    // ------------------------------------------------------------------------------------------------------------

    int doAgentWork()
    {
        if (closed || null != offlineCause)
        {
            return 0;
        }
        final long nowMs = clock.time();
        final Segment[] current = segments;
        final Segment tail = current[current.length - 1];
        int work = tail.prepareAhead(ctx.pretouchBytes(), nowMs);
        try
        {
            work += tail.writeBack(sync, ctx.dirtyBytesMax());
        }
        catch (final UncheckedIOException ex)
        {
            throw goOffline("writeback failed", ex); // its error may be the one a later fsync would have reported
        }
        work += prepareSpare(tail, nowMs);
        final boolean flushDue = ctx.flushIntervalMs() != Long.MAX_VALUE &&
            nowMs - lastFlushTimeMs >= ctx.flushIntervalMs() && recoveryPoint < logEndOffset();
        if ((flushDue || rollFlushPending) && flushLock.tryLock())
        {
            try
            {
                rollFlushPending = false;
                forceSegmentsAndCheckpoint(logEndOffset(), false, false);
                work++;
            }
            finally
            {
                flushLock.unlock();
            }
        }
        if (nowMs >= nextRetentionCheckMs)
        {
            nextRetentionCheckMs = nowMs + ctx.retentionCheckIntervalMs();
            work += applyRetention();
        }
        if (flushLock.tryLock())
        {
            try
            {
                work += reclaimRetired();
            }
            finally
            {
                flushLock.unlock();
            }
        }
        return work;
    }

    private int prepareSpare(final Segment tail, final long nowMs)
    {
        if (null != spare.get() || tail.size() < tail.capacity() / 2 ||
            (spareFailedAtMs != NO_TIME && nowMs - spareFailedAtMs < SPARE_RETRY_MS))
        {
            return 0;
        }
        try
        {
            final Segment prepared = Segment.createSpare(dir, ctx.segmentBytes(), maxIndexEntries,
                ctx.pretouchBytes());
            spareFailedAtMs = NO_TIME;
            if (!spare.compareAndSet(null, prepared))
            {
                prepared.discard();
            }
            return 1;
        }
        catch (final IOException ex)
        {
            spareFailedAtMs = nowMs; // a full disk: the roll makes its segment itself, or meets the error typed
            logger.log(System.Logger.Level.DEBUG, "could not prepare the next segment of " + dir, ex);
            return 0;
        }
    }

    // ------------------------------------------------------------------------------------------------------------
    // Readers and state
    // ------------------------------------------------------------------------------------------------------------

    /**
     * @return a new reader positioned at the log start offset; close it when done.
     */
    public LogReader openReader()
    {
        checkOpen();
        final LogReader reader = new LogReader(this, ctx.readVerifyCrc());
        readers.add(reader);
        return reader;
    }

    void removeReader(final LogReader reader)
    {
        readers.remove(reader);
    }

    /**
     * @param timestamp epoch millis.
     * @return the offset of the first record with a timestamp at or above {@code timestamp}, or -1 if none.
     */
    public long offsetForTimestamp(final long timestamp)
    {
        try (LogReader reader = openReader())
        {
            return reader.findOffsetForTimestamp(timestamp);
        }
    }

    Segment[] segmentsSnapshot()
    {
        return segments;
    }

    Segment segmentFor(final long offset)
    {
        final Segment[] current = segments;
        final int index = floorIndex(current, offset);
        return index < 0 ? null : current[index];
    }

    Segment segmentAfter(final Segment segment)
    {
        final Segment[] current = segments;
        final int index = floorIndex(current, segment.baseOffset());
        return index >= 0 && index + 1 < current.length ? current[index + 1] : null;
    }

    private static int floorIndex(final Segment[] current, final long offset)
    {
        int low = 0;
        int high = current.length - 1;
        int result = -1;
        while (low <= high)
        {
            final int mid = (low + high) >>> 1;
            if (current[mid].baseOffset() <= offset)
            {
                result = mid;
                low = mid + 1;
            }
            else
            {
                high = mid - 1;
            }
        }
        return result;
    }

    int truncations()
    {
        return truncations;
    }

    /** @return the offset the next appended record gets (acquire). */
    public long logEndOffset()
    {
        return (long)LOG_END_OFFSET.getAcquire(this);
    }

    /** @return the first readable offset. */
    public long logStartOffset()
    {
        return logStartOffset;
    }

    /** @return the segment the writer appends to (tests in this package). */
    Segment activeSegmentForTest()
    {
        return active;
    }

    /** @return every offset below this is flushed to disk. */
    public long recoveryPoint()
    {
        return recoveryPoint;
    }

    /** @return the leader epoch of the last batch, or -1. */
    public int lastLeaderEpoch()
    {
        return lastLeaderEpoch;
    }

    /** @return the number of segments. */
    public int segmentCount()
    {
        return segments.length;
    }

    /** @return base offset of the active segment. */
    public long activeSegmentBaseOffset()
    {
        final Segment[] current = segments;
        return current[current.length - 1].baseOffset();
    }

    /** @return bytes of record data in all segments. */
    public long sizeInBytes()
    {
        long total = 0;
        for (final Segment segment : segments)
        {
            total += segment.size();
        }
        return total;
    }

    /** @return the log directory. */
    public Path directory()
    {
        return dir;
    }

    /** @return the concluded configuration. */
    public LogContext context()
    {
        return ctx;
    }

    /** @return what the open found and did. */
    public RecoveryReport recoveryReport()
    {
        return recoveryReport;
    }

    /** @return whether a fatal I/O error took the log offline. */
    public boolean isOffline()
    {
        return null != offlineCause;
    }

    /** @return whether {@link #close()} was called. */
    public boolean isClosed()
    {
        return closed;
    }

    /** @return the log's agent, to schedule when the agent mode is {@link LogContext.AgentMode#EXTERNAL}. */
    public Agent agent()
    {
        return agent;
    }

    /**
     * Run one duty cycle of the log agent on the calling thread (agent mode {@link LogContext.AgentMode#INVOKER}).
     *
     * @return work done.
     */
    public int invokeAgent()
    {
        if (null == agentInvoker)
        {
            throw new IllegalStateException("agent mode is " + ctx.agentMode() + ", not INVOKER");
        }
        return agentInvoker.invoke();
    }

    private void updateCounters()
    {
        counters.logEndOffset.setRelease(logEndOffset());
        counters.recoveryPoint.setRelease(recoveryPoint);
        counters.logStartOffset.setRelease(logStartOffset);
        counters.segmentCount.setRelease(segments.length);
    }

    private void checkOpen()
    {
        if (closed)
        {
            throw new StorageException(StorageErrorCode.CLOSED, "log " + dir + " is closed");
        }
    }

    private void checkOnline()
    {
        checkOpen();
        final StorageException cause = offlineCause;
        if (null != cause)
        {
            throw new StorageException(StorageErrorCode.LOG_OFFLINE, "log " + dir + " is offline", cause);
        }
    }

    private void checkAppendable()
    {
        checkOnline();
    }

    /**
     * Flush, trim the active segment, write the checkpoint and the clean-shutdown marker, stop the agent, and
     * release every mapping and the directory lock. Idempotent. Appends must have stopped: a writer call still in
     * progress on another thread is waited for ({@value #CLOSE_WAIT_MS} ms), and if it does not end the log closes
     * without trimming or unmapping its active segment (the next open recovers it), so that the writer never
     * touches an unmapped page; its commit then fails with CLOSED. A claim left open by the closing thread is
     * aborted. Readers inside a poll are waited for as long; a segment a reader is still inside is never unmapped
     * under it: the reader finishes the record its handler holds, its poll ends at the next batch boundary, and it
     * releases the mapping as it leaves. Their next poll gets CLOSED. This holds when a poll handler calls close
     * itself. An offline log closes without the marker, so the next open recovers it.
     */
    @Override
    public void close()
    {
        if (!markClosed())
        {
            return;
        }
        stopAgent();
        final boolean writerStopped = stopWriter();
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            if (null == offlineCause && writerStopped)
            {
                try
                {
                    forceSegmentsAndCheckpoint(logEndOffset(), false, true);
                    active.trimForClose(sync);
                    checkpoint.write(logEndOffset(), logStartOffset);
                    directory.writeCleanShutdownMarker();
                }
                catch (final IOException | RuntimeException ex)
                {
                    logger.log(System.Logger.Level.ERROR, "unclean close of " + dir + ": next open recovers it", ex);
                }
            }
            releaseMappings(writerStopped);
            final Segment prepared = spare.getAndSet(null);
            if (null != prepared)
            {
                prepared.discard();
            }
            counters.close();
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
            if (writerStopped)
            {
                writer.release(); // later writer calls get CLOSED, not "another writer call is in progress"
            }
            directory.close();
        }
    }

    /** Test seam kept for the crash suites: same as {@link #halt()}. */
    void simulateCrash()
    {
        halt();
    }

    /**
     * Stop as a killed process would: nothing is flushed, trimmed or checkpointed and no clean-shutdown marker is
     * written; the agent stops, the mappings are released (their dirty pages stay in the page cache, as after
     * kill -9; a reader inside a poll or a writer inside a claim is treated as by {@link #close()}) and so is the
     * directory lock. The next open recovers the log. For hosts that must "die" inside one JVM (tests, simulations,
     * a replica host being killed). Idempotent; a no-op after {@link #close()}.
     */
    public void halt()
    {
        if (!markClosed())
        {
            return;
        }
        stopAgent();
        final boolean writerStopped = stopWriter();
        flushLock.lock();
        segmentsLock.lock();
        try
        {
            releaseMappings(writerStopped);
            final Segment prepared = spare.getAndSet(null);
            if (null != prepared)
            {
                prepared.close();
            }
            counters.close();
        }
        finally
        {
            segmentsLock.unlock();
            flushLock.unlock();
            if (writerStopped)
            {
                writer.release();
            }
            directory.close();
        }
    }

    private synchronized boolean markClosed()
    {
        if (closed)
        {
            return false;
        }
        closed = true;
        return true;
    }

    private void stopAgent()
    {
        if (null != agentRunner)
        {
            agentRunner.close();
        }
        else if (null != agentInvoker)
        {
            agentInvoker.close();
        }
        agent.close();
    }

    /**
     * Make sure no writer call runs from now on: abort a claim the closing thread left open, and wait for a writer
     * call in progress on another thread to end.
     *
     * @return true when the writer guard is now held by this thread; false when another thread is still inside a
     *         writer call (then its segment must stay mapped and untrimmed).
     */
    private boolean stopWriter()
    {
        if (writer.heldByCurrentThread() && claim.isActive())
        {
            claim.abort();
        }
        if (writer.acquireForClose(CLOSE_WAIT_MS))
        {
            return true;
        }
        logger.log(System.Logger.Level.WARNING, "closing " + dir + " while another thread is still inside a writer " +
            "call after " + CLOSE_WAIT_MS + " ms: the active segment is left mapped and untrimmed, and the next open " +
            "recovers the log");
        return false;
    }

    /**
     * Unmap every segment, except those a reader is still inside: those are unmapped by the readers as they leave
     * their poll ({@link #readerLeft()}). With a writer still inside a claim, the active segment is not unmapped at
     * all: the JDK's cleaner releases its mapping once the log is unreachable.
     */
    private void releaseMappings(final boolean writerStopped)
    {
        final List<Segment> mapped = new ArrayList<>(segments.length + retired.size());
        for (final Segment segment : segments)
        {
            if (writerStopped || segment != active)
            {
                mapped.add(segment);
            }
        }
        mapped.addAll(retired);
        retired.clear();
        for (final Segment segment : mapped)
        {
            segment.retire(); // a reader that pins it from now on sees this and backs off
        }
        awaitReadersGone();
        final int leftToReaders = readers.closeWhenUnpinned(mapped);
        if (leftToReaders > 0)
        {
            logger.log(System.Logger.Level.INFO, "closed " + dir + " while readers were inside a poll: " +
                leftToReaders + " segment mapping(s) are released by those readers as they leave");
        }
    }

    /** A reader left its poll on a closed log: unmap what it (and no other reader) held. */
    void readerLeft()
    {
        readers.closeLeftUnpinned();
    }

    private void awaitReadersGone()
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MS);
        final Thread self = Thread.currentThread();
        while (readers.anyPinnedByAnotherThread(self) && System.nanoTime() - deadline < 0)
        {
            LockSupport.parkNanos(50_000);
        }
    }

    @Override
    public String toString()
    {
        return "Log{dir=" + dir + ", start=" + logStartOffset + ", end=" + logEndOffset() +
            ", recoveryPoint=" + recoveryPoint + ", segments=" + segments.length + '}';
    }
}
