package io.tidemark.store;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;

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
 * <p>
 * <b>Parts.</b> This class is a façade over parts that own their state (as Kafka's {@code UnifiedLog} over
 * {@code LocalLog} and {@code LogSegments}): {@link LogWriter} (active segment, claim, writer CRC, last leader epoch,
 * log end offset), {@link LogSegments} (the segment array, lookup, roll, spare, retired segments and readers, log
 * start offset), {@link LogFlusher} (flush, recovery point, checkpoint, the fail-stop switch), {@link LogTruncation},
 * {@link LogRetention} and {@link LogAgent} (the duty cycle), opened and shut down in their one safe order by
 * {@link LogLifecycle}. None points back to the {@code Log}. Lock order: the flusher's lock, then the segment set's.
 */
public final class Log implements AutoCloseable
{
    /** The largest log end offset: the last offset a record can have is one below it. */
    public static final long MAX_LOG_END_OFFSET = Long.MAX_VALUE;

    private final LogLifecycle lifecycle;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final LogWriter writer;

    private Log(final LogLifecycle lifecycle)
    {
        this.lifecycle = lifecycle;
        this.segments = lifecycle.segments;
        this.flusher = lifecycle.flusher;
        this.writer = lifecycle.writer;
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
        return new Log(new LogLifecycle(ctx.conclude()));
    }

    // ------------------------------------------------------------------------------------------------------------
    // Writer calls (one writer thread at a time: see LogWriter)
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Append one record without a key, stamped with the log's clock.
     *
     * @return the record's offset.
     */
    public long append(final DirectBuffer value, final int offset, final int length)
    {
        return writer.append(BatchClaim.NOW, null, 0, -1, value, offset, length);
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
        return writer.append(timestamp, key, keyOffset, keyLength, value, valueOffset, valueLength);
    }

    /**
     * Append one record holding a copy of {@code value}. A convenience that allocates a small wrapper per call;
     * the {@code DirectBuffer} overloads and {@link #tryClaim} allocate nothing.
     *
     * @return the record's offset.
     */
    public long append(final byte[] value)
    {
        return writer.append(BatchClaim.NOW, null, 0, -1, new UnsafeBuffer(value), 0, value.length);
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
        return writer.tryClaim(maxBatchLength);
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
        return writer.appendRaw(source, offset, length);
    }

    /**
     * Roll now: seal the active segment and start a new one at the log end offset (a no-op when the active segment
     * is empty). Writer thread.
     */
    public void roll()
    {
        writer.roll();
    }

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
        return lifecycle.truncation.truncate(offset);
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
        lifecycle.truncation.truncateFullyAndStartAt(offset);
    }

    // ------------------------------------------------------------------------------------------------------------
    // Thread-safe calls
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Force everything appended so far to disk, advance the recovery point to the log end offset and write the
     * checkpoint (temp file, fsync, rename, directory fsync). Thread-safe.
     *
     * @throws StorageException IO_ERROR when the fsync fails (the log is then offline), LOG_OFFLINE, CLOSED.
     */
    public void flush()
    {
        lifecycle.flush();
    }

    /**
     * Raise the log start offset (records below it become unreadable) and delete the segments wholly below it.
     * Thread-safe.
     *
     * @param offset new log start offset, at most the log end offset.
     */
    public void advanceLogStartOffset(final long offset)
    {
        lifecycle.advanceLogStartOffset(offset);
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
        writer.checkOnline();
        return lifecycle.retention.apply();
    }

    /**
     * @return a new reader positioned at the log start offset; close it when done.
     */
    public LogReader openReader()
    {
        return lifecycle.openReader();
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
        return segments.snapshot();
    }

    /** @return the offset the next appended record gets (acquire). */
    public long logEndOffset()
    {
        return writer.logEndOffset();
    }

    /** @return the first readable offset. */
    public long logStartOffset()
    {
        return segments.logStartOffset();
    }

    /** @return the segment the writer appends to (tests in this package). */
    Segment activeSegmentForTest()
    {
        return writer.active();
    }

    /** @return every offset below this is flushed to disk. */
    public long recoveryPoint()
    {
        return flusher.recoveryPoint();
    }

    /** @return the leader epoch of the last batch, or -1. */
    public int lastLeaderEpoch()
    {
        return writer.lastLeaderEpoch();
    }

    /** @return the number of segments. */
    public int segmentCount()
    {
        return segments.count();
    }

    /** @return base offset of the active segment. */
    public long activeSegmentBaseOffset()
    {
        return segments.last().baseOffset();
    }

    /** @return bytes of record data in all segments. */
    public long sizeInBytes()
    {
        return segments.sizeInBytes();
    }

    /** @return the log directory. */
    public Path directory()
    {
        return lifecycle.dir;
    }

    /** @return the concluded configuration. */
    public LogContext context()
    {
        return lifecycle.ctx;
    }

    /** @return what the open found and did. */
    public RecoveryReport recoveryReport()
    {
        return lifecycle.recoveryReport;
    }

    /** @return whether a fatal I/O error took the log offline. */
    public boolean isOffline()
    {
        return flusher.isOffline();
    }

    /** @return whether {@link #close()} was called. */
    public boolean isClosed()
    {
        return writer.isClosed();
    }

    /** @return the log's agent, to schedule when the agent mode is {@link LogContext.AgentMode#EXTERNAL}. */
    public Agent agent()
    {
        return lifecycle.agent;
    }

    /**
     * Run one duty cycle of the log agent on the calling thread (agent mode {@link LogContext.AgentMode#INVOKER}).
     *
     * @return work done.
     */
    public int invokeAgent()
    {
        return lifecycle.invokeAgent();
    }

    // ------------------------------------------------------------------------------------------------------------
    // Close
    // ------------------------------------------------------------------------------------------------------------

    /**
     * Flush, trim the active segment, write the checkpoint and the clean-shutdown marker, stop the agent, and
     * release every mapping and the directory lock. Idempotent. Appends must have stopped: a writer call still in
     * progress on another thread is waited for ({@value LogLifecycle#CLOSE_WAIT_MS} ms), and if it does not end the
     * log closes without trimming or unmapping its active segment (the next open recovers it), so that the writer
     * never touches an unmapped page; its commit then fails with CLOSED. A claim left open by the closing thread is
     * aborted. Readers inside a poll are waited for as long; a segment a reader is still inside is never unmapped
     * under it: the reader finishes the record its handler holds, its poll ends at the next batch boundary, and it
     * releases the mapping as it leaves. Their next poll gets CLOSED. This holds when a poll handler calls close
     * itself. An offline log closes without the marker, so the next open recovers it.
     */
    @Override
    public void close()
    {
        lifecycle.shutdown(true);
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
        lifecycle.shutdown(false);
    }

    @Override
    public String toString()
    {
        return "Log{dir=" + lifecycle.dir + ", start=" + logStartOffset() + ", end=" + logEndOffset() +
            ", recoveryPoint=" + recoveryPoint() + ", segments=" + segments.count() + '}';
    }
}
