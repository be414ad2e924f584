package io.tidemark.store;

import io.tidemark.store.format.Crc32c;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;

/**
 * A cursor over a log: reads records or whole batches from its position up to a limit offset (the replication
 * layer passes the high watermark; {@link Long#MAX_VALUE} reads to the log end). Reads are zero-copy: handlers get
 * flyweights over the mapped segment, valid only during the callback. Every batch is checked (structure, and CRC
 * unless {@code read.verify.crc=false}) before any of it is handed out; a damaged batch raises
 * {@link StorageErrorCode#CORRUPT_BATCH} and never yields bytes.
 * <p>
 * Any number of readers may read one log concurrently, without locks, while the writer appends. One reader
 * belongs to one thread at a time. Close it when done ({@link #close()}); between polls it holds no segment, so
 * retention and truncation are never blocked by an idle reader.
 * <p>
 * A log closed during a poll (from another thread, or by the poll's own handler) never unmaps the segment under
 * it: the record being handled stays readable, the poll ends at the next batch boundary and returns what it
 * delivered, and the next call throws CLOSED. The reader releases the segment's mapping as it leaves the poll.
 */
public final class LogReader implements AutoCloseable
{
    private final LogSegments segments;
    private final LogWriter writer;
    private final Path dir;
    private final RecordBatch batch = new RecordBatch();
    private final Crc32c crc;
    private volatile Segment pinned;
    /** The thread of the current poll: written before {@link #pinned}, so a reader of the pin sees it. */
    private Thread pollingThread;
    private Segment segment;
    private int position;
    private long nextOffset;
    private int truncationsSeen;
    private boolean closed;

    LogReader(final LogSegments segments, final LogWriter writer, final Path dir, final boolean verifyCrc)
    {
        this.segments = segments;
        this.writer = writer;
        this.dir = dir;
        this.crc = verifyCrc ? new Crc32c() : null;
        this.nextOffset = segments.logStartOffset();
        this.truncationsSeen = writer.truncations();
    }

    Segment pinned()
    {
        return pinned;
    }

    Thread pollingThread()
    {
        return pollingThread;
    }

    /** @return the offset of the next record this reader returns. */
    public long position()
    {
        return nextOffset;
    }

    /**
     * Move to an offset.
     *
     * @param offset in {@code [logStartOffset, logEndOffset]}.
     * @throws StorageException OFFSET_OUT_OF_RANGE outside that range.
     */
    public void seek(final long offset)
    {
        checkOpen();
        final long start = segments.logStartOffset();
        final long end = writer.logEndOffset();
        if (offset < start || offset > end)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE,
                "offset " + offset + " is outside [" + start + ", " + end + "] of " + dir);
        }
        nextOffset = offset;
        segment = null;
    }

    /** Move to the log start offset. */
    public void seekToBeginning()
    {
        seek(segments.logStartOffset());
    }

    /** Move to the log end offset: only records appended from now on will be read. */
    public void seekToEnd()
    {
        seek(writer.logEndOffset());
    }

    /**
     * Move to the first record whose timestamp is at or above {@code timestamp} (by the time index).
     *
     * @return false, positioned at the end, when no record is that recent.
     */
    public boolean seekToTimestamp(final long timestamp)
    {
        final long offset = findOffsetForTimestamp(timestamp);
        if (offset < 0)
        {
            seekToEnd();
            return false;
        }
        seek(offset);
        return true;
    }

    /**
     * Deliver records from the current position, up to {@code maxOffset} (exclusive) and the log end.
     *
     * @param handler    receives each record (valid during the call only).
     * @param maxOffset  first offset not to deliver (e.g. the high watermark).
     * @param maxRecords most records to deliver in this call.
     * @return the number of records delivered; 0 when nothing new is readable.
     */
    public int poll(final RecordHandler handler, final long maxOffset, final int maxRecords)
    {
        return read(handler, null, maxOffset, maxRecords);
    }

    /**
     * Deliver whole batches from the current position. A batch is delivered only when all its records are below
     * {@code maxOffset}; the batch holding the position is delivered whole even if the position is inside it.
     *
     * @param handler   receives each batch (valid during the call only).
     * @param maxOffset first offset not to deliver.
     * @param maxBytes  stop once this many bytes were delivered (at least one batch is delivered if readable).
     * @return the number of bytes (frames) delivered.
     */
    public int pollBatches(final BatchHandler handler, final long maxOffset, final int maxBytes)
    {
        return read(null, handler, maxOffset, maxBytes);
    }

    private int read(final RecordHandler recordHandler, final BatchHandler batchHandler, final long maxOffset,
        final int limit)
    {
        checkOpen();
        final long end = Math.min(maxOffset, writer.logEndOffset());
        if (nextOffset >= end)
        {
            return 0;
        }
        pollingThread = Thread.currentThread();
        long done = 0; // bytes or records; a long, so that a limit near Integer.MAX_VALUE plus one batch cannot wrap
        try
        {
            if (null != segment)
            {
                pinned = segment;
                if (segment.isRetired())
                {
                    pinned = null;
                    segment = null;
                }
                checkOpen();
            }
            while (done < limit && nextOffset < end)
            {
                if (writer.isClosed())
                {
                    break; // closed during this poll: end it at this batch boundary; the next poll gets CLOSED
                }
                if (truncationsSeen != writer.truncations())
                {
                    truncationsSeen = writer.truncations();
                    segment = null;
                }
                if (null == segment)
                {
                    locate();
                }
                final int size = segment.size();
                if (position >= size)
                {
                    final Segment next = segments.segmentAfter(segment);
                    if (null == next)
                    {
                        break;
                    }
                    pinned = next;
                    if (next.isRetired())
                    {
                        pinned = null;
                        segment = null;
                        continue;
                    }
                    if (next.baseOffset() > nextOffset)
                    {
                        throw corrupt("offsets [" + nextOffset + ", " + next.baseOffset() + ") are unreadable: " +
                            "segment " + segment.baseOffset() + " ends early");
                    }
                    segment = next;
                    position = 0;
                    continue;
                }
                final UnsafeBuffer buffer = segment.buffer();
                final int length = buffer.getIntAcquire(position);
                final int status = RecordBatch.validate(buffer, position, size - position, Integer.MAX_VALUE, crc);
                if (status != RecordBatch.VALID || length == 0)
                {
                    if (truncationsSeen != writer.truncations())
                    {
                        continue; // the log was truncated under us: relocate
                    }
                    throw corrupt("batch at position " + position + " of segment " + segment.baseOffset() +
                        " (reading offset " + nextOffset + "): " + RecordBatch.describe(status));
                }
                batch.wrap(buffer, position);
                final long batchNext = batch.nextOffset();
                if (batchNext <= nextOffset)
                {
                    position += batch.frameLength();
                    continue;
                }
                if (batch.baseOffset() > nextOffset)
                {
                    throw corrupt("offsets [" + nextOffset + ", " + batch.baseOffset() + ") are unreadable before " +
                        "position " + position + " of segment " + segment.baseOffset());
                }
                if (null != recordHandler)
                {
                    final long from = Math.max(nextOffset, batch.baseOffset());
                    final int delivered = batch.forEachRecord(recordHandler, from, end, (int)(limit - done));
                    done += delivered;
                    nextOffset = from + delivered;
                }
                else
                {
                    if (batchNext > end)
                    {
                        break;
                    }
                    batchHandler.onBatch(batch);
                    done += batch.frameLength();
                    nextOffset = batchNext;
                }
                if (nextOffset >= batchNext)
                {
                    position += batch.frameLength();
                }
            }
        }
        finally
        {
            leave();
        }
        return (int)Math.min(done, Integer.MAX_VALUE);
    }

    /** Unpin; on a closed log, release the mappings the log left to its readers. */
    private void leave()
    {
        pinned = null;
        if (writer.isClosed())
        {
            segments.readerLeft();
        }
    }

    private void locate()
    {
        while (true)
        {
            if (nextOffset < segments.logStartOffset())
            {
                throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "offset " + nextOffset +
                    " is below the log start offset " + segments.logStartOffset() + " of " + dir);
            }
            final Segment candidate = segments.segmentFor(nextOffset);
            if (null == candidate)
            {
                throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE,
                    "no segment holds offset " + nextOffset + " of " + dir);
            }
            pinned = candidate;
            if (candidate.isRetired())
            {
                pinned = null;
                checkOpen();
                Thread.onSpinWait();
                continue;
            }
            checkOpen();
            final int at = candidate.positionOf(nextOffset);
            if (at < 0)
            {
                throw corrupt("damaged batch header in segment " + candidate.baseOffset() + " before offset " +
                    nextOffset);
            }
            segment = candidate;
            position = at;
            return;
        }
    }

    /**
     * @return the first offset whose record has a timestamp at or above {@code timestamp}, or -1.
     */
    long findOffsetForTimestamp(final long timestamp)
    {
        checkOpen();
        pollingThread = Thread.currentThread();
        try
        {
            for (final Segment candidate : segments.snapshot())
            {
                if (candidate.maxTimestamp() < timestamp)
                {
                    continue;
                }
                pinned = candidate;
                if (candidate.isRetired())
                {
                    pinned = null;
                    continue;
                }
                checkOpen();
                final long from = Math.max(candidate.timeIndex().lookup(timestamp), segments.logStartOffset());
                int at = candidate.positionOf(Math.max(from, candidate.baseOffset()));
                final int size = candidate.size();
                final UnsafeBuffer buffer = candidate.buffer();
                while (at >= 0 && at < size)
                {
                    if (RecordBatch.validate(buffer, at, size - at, Integer.MAX_VALUE, crc) != RecordBatch.VALID)
                    {
                        throw corrupt("batch at position " + at + " of segment " + candidate.baseOffset() +
                            " while searching timestamp " + timestamp);
                    }
                    batch.wrap(buffer, at);
                    if (batch.maxTimestamp() >= timestamp && batch.nextOffset() > segments.logStartOffset())
                    {
                        final long found = batch.firstOffsetAtOrAfter(timestamp);
                        return Math.max(found, segments.logStartOffset());
                    }
                    at += batch.frameLength();
                }
                pinned = null;
            }
            return -1;
        }
        finally
        {
            leave();
        }
    }

    private StorageException corrupt(final String message)
    {
        return new StorageException(StorageErrorCode.CORRUPT_BATCH, message + " in " + dir);
    }

    private void checkOpen()
    {
        if (closed)
        {
            throw new StorageException(StorageErrorCode.CLOSED, "reader is closed");
        }
        if (writer.isClosed())
        {
            pinned = null;
            throw new StorageException(StorageErrorCode.CLOSED, "log " + dir + " is closed");
        }
    }

    /** Release the reader (idempotent). */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            pinned = null;
            segments.removeReader(this);
        }
    }
}
