package io.tidemark.store;

import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;

import static io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.RecordBatchDescriptor.frameLength;

/**
 * The writer part of a log: the active segment, the claim, the writer's CRC, the last leader epoch and the log end
 * offset; appends, claims and commits, follower appends ({@link #appendRaw}) and rolls. Everything here runs on the
 * one writer thread of the moment, which {@link WriterGuard} admits (a second thread is refused before it writes);
 * truncation ({@link LogTruncation}) runs inside the same guard and resets this state through
 * {@link #truncatedTo} and {@link #restartedAt}.
 * <p>
 * <b>Publication.</b> A batch is published by writing its length last (release), then the segment's size and end
 * offset, then {@link #logEndOffset()} (release); readers bound themselves by the log end offset (acquire). The log
 * end offset, the truncation count and the closed flag are volatile: any thread reads them. The rest is the writer
 * thread's alone; no lock guards it.
 */
final class LogWriter
{
    private static final VarHandle LOG_END_OFFSET;
    private static final long NO_TIME = Long.MIN_VALUE;

    static
    {
        try
        {
            LOG_END_OFFSET = MethodHandles.lookup().findVarHandle(LogWriter.class, "logEndOffset", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final LogContext ctx;
    private final Path dir;
    private final EpochClock clock;
    private final LogCounters counters;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final BatchClaim claim = new BatchClaim(this);
    private final WriterGuard guard = new WriterGuard();
    private final Crc32c writerCrc = new Crc32c();

    private Segment active;
    private int lastLeaderEpoch;
    @SuppressWarnings("unused") // accessed through LOG_END_OFFSET
    private volatile long logEndOffset;
    private volatile int truncations;
    private volatile boolean closed;

    LogWriter(
        final LogContext ctx,
        final LogCounters counters,
        final LogSegments segments,
        final LogFlusher flusher,
        final int lastLeaderEpoch)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        this.clock = ctx.epochClock();
        this.counters = counters;
        this.segments = segments;
        this.flusher = flusher;
        this.active = segments.last();
        this.logEndOffset = active.endOffset();
        this.lastLeaderEpoch = lastLeaderEpoch;
    }

    /** @return the offset the next appended record gets (acquire). */
    long logEndOffset()
    {
        return (long)LOG_END_OFFSET.getAcquire(this);
    }

    int lastLeaderEpoch()
    {
        return lastLeaderEpoch;
    }

    Segment active()
    {
        return active;
    }

    int truncations()
    {
        return truncations;
    }

    boolean isClosed()
    {
        return closed;
    }

    /** @return whether this call closed the writer (false when it was closed already). */
    synchronized boolean markClosed()
    {
        if (closed)
        {
            return false;
        }
        closed = true;
        return true;
    }

    /** @throws StorageException CLOSED once the log is closed. */
    void checkOpen()
    {
        if (closed)
        {
            throw new StorageException(StorageErrorCode.CLOSED, "log " + dir + " is closed");
        }
    }

    /** @throws StorageException CLOSED, LOG_OFFLINE. */
    void checkOnline()
    {
        checkOpen();
        flusher.checkOnline();
    }

    private void checkAppendable()
    {
        checkOnline();
    }

    /** Admit the calling thread as the writer (a writer call of another part: truncation). */
    void acquire()
    {
        guard.acquire(claim.isActive());
    }

    void release()
    {
        guard.release();
    }

    /** @return the writer's CRC calculator (for the writer thread: truncation's replay). */
    Crc32c crc()
    {
        return writerCrc;
    }

    /** Truncation, first step: readers see the new end and the truncation before any segment goes. */
    void truncating(final long newEnd)
    {
        LOG_END_OFFSET.setRelease(this, newEnd);
        truncations++;
    }

    /** Truncation, last step: the writer appends to {@code kept} after a batch of {@code epoch}. */
    void truncatedTo(final Segment kept, final int epoch)
    {
        active = kept;
        lastLeaderEpoch = epoch;
    }

    /** The log starts again, empty: the writer appends to {@code fresh}. */
    void restartedAt(final Segment fresh)
    {
        active = fresh;
        lastLeaderEpoch = RecordBatchDescriptor.NO_LEADER_EPOCH;
    }

    /**
     * Close: abort the calling thread's open claim, then wait up to {@code waitMs} for a writer call of another
     * thread to end.
     *
     * @return whether the writer is stopped (held by the closing thread until {@link #releaseAfterClose}).
     */
    boolean stop(final long waitMs)
    {
        if (guard.heldByCurrentThread() && claim.isActive())
        {
            claim.abort();
        }
        return guard.acquireForClose(waitMs);
    }

    /** After close: later writer calls get CLOSED, not "another writer call is in progress". */
    void releaseAfterClose()
    {
        guard.release();
    }

    /** See {@link Log#append}. */
    long append(
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

    /** See {@link Log#tryClaim}. */
    BatchClaim tryClaim(final int maxBatchLength)
    {
        guard.acquire(claim.isActive());
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
            guard.release();
            throw ex;
        }
    }

    /** The claim was aborted: the writer call it was part of is over. */
    void claimAborted()
    {
        guard.release();
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
            if (recordCount > Log.MAX_LOG_END_OFFSET - baseOffset)
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
            guard.release();
        }
        maybeFlushByCount(baseOffset, baseOffset + recordCount);
        return baseOffset;
    }

    private StorageException noRoomForOffsets(final long baseOffset, final long recordCount)
    {
        return new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "no room for " + recordCount +
            " record(s) at offset " + baseOffset + ": the log end offset may not pass " + Log.MAX_LOG_END_OFFSET +
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
        if (nextOffset - flusher.recoveryPoint() >= ctx.flushIntervalMessages())
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
            flusher.lock().lock();
            try
            {
                checkOnline();
                flusher.forceAndCheckpoint(segments.snapshot(), logEndOffset(), segments.logStartOffset(), false,
                    false);
            }
            finally
            {
                flusher.lock().unlock();
            }
        }
        catch (final StorageException ex)
        {
            throw new StorageException(ex.code(), (nextOffset - baseOffset == 1 ? "offset " + baseOffset + " is" :
                "offsets [" + baseOffset + ", " + nextOffset + ") are") + " appended (readable, and it survives a " +
                "process crash) but the flush that followed failed: " + ex.getMessage(), ex);
        }
    }

    /** See {@link Log#appendRaw}. */
    long appendRaw(final DirectBuffer source, final int offset, final int length)
    {
        if (offset < 0 || length < 0 || offset > source.capacity() - length)
        {
            throw new IndexOutOfBoundsException("[" + offset + ", " + offset + " + " + length + ") is outside the " +
                source.capacity() + " bytes of the source");
        }
        final long before;
        final long after;
        guard.acquire(claim.isActive());
        try
        {
            checkAppendable();
            before = logEndOffset();
            after = appendRaw0(source, offset, length);
        }
        finally
        {
            guard.release();
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
            if (count > Log.MAX_LOG_END_OFFSET - base)
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

    /** See {@link Log#roll}. */
    void roll()
    {
        guard.acquire(claim.isActive());
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
            guard.release();
        }
    }

    private Segment roll0()
    {
        final Segment next = segments.roll(active, logEndOffset());
        active = next;
        flusher.segmentAdded();
        counters.segmentCount.setRelease(segments.count());
        return next;
    }
}
