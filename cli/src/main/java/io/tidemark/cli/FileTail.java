package io.tidemark.cli;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.inspect.LogInspector;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;

import java.util.List;

/**
 * Reads (and follows) a log through its files only, with {@link LogInspector}: no lock, no recovery, no change to
 * any file. Used by tail when the log is open in a running process (or with --read-only). It follows appends and
 * segment rolls; it does not follow a truncation by the owner. A damaged batch is waited on briefly (it could be
 * a write in progress) and then reported as CORRUPT_BATCH.
 */
final class FileTail
{
    private static final long DAMAGE_PATIENCE_NS = 1_000_000_000L;

    private final LogInspector inspector;
    private LogInspector.SegmentInfo segment;
    private int position;
    private long nextOffset;
    private int damagedPosition = -1;
    private long damagedSinceNs;

    FileTail(final LogInspector inspector)
    {
        this.inspector = inspector;
        seekToBeginning();
    }

    /** @return whether the last poll stopped at a damaged batch (waited on until it is reported). */
    boolean blockedOnDamage()
    {
        return damagedPosition >= 0;
    }

    long position()
    {
        return nextOffset;
    }

    long logStartOffset()
    {
        final List<LogInspector.SegmentInfo> segments = inspector.segments();
        final long first = segments.isEmpty() ? 0 : segments.get(0).baseOffset();
        final LogInspector.Checkpoint checkpoint = inspector.checkpoint();
        return checkpoint.status() == CheckpointFile.Status.OK ? Math.max(first, checkpoint.logStartOffset()) : first;
    }

    /** @return the offset after the last readable batch (scanning the last segment from its last index entry). */
    long logEndOffset()
    {
        final List<LogInspector.SegmentInfo> segments = inspector.segments();
        if (segments.isEmpty())
        {
            return 0;
        }
        final LogInspector.SegmentInfo last = segments.get(segments.size() - 1);
        final int from = indexedPosition(last, Long.MAX_VALUE);
        final long[] end = {-1};
        final LogInspector.ScanResult result = inspector.scan(last, from, (info, batch) ->
        {
            if (info.valid())
            {
                end[0] = info.nextOffset();
            }
            return info.valid();
        });
        return end[0] >= 0 ? end[0] : from == 0 ? last.baseOffset() : result.nextOffset();
    }

    void seekToBeginning()
    {
        seekUnchecked(logStartOffset());
    }

    void seekToEnd()
    {
        seekUnchecked(logEndOffset());
    }

    void seek(final long offset)
    {
        final long start = logStartOffset();
        final long end = logEndOffset();
        if (offset < start || offset > end)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "offset " + offset + " is outside [" +
                start + ", " + end + "] of " + inspector.directory());
        }
        seekUnchecked(offset);
    }

    /** @return false, positioned at the end, when no record has a timestamp at or above {@code timestamp}. */
    boolean seekToTimestamp(final long timestamp)
    {
        final long start = logStartOffset();
        for (final LogInspector.SegmentInfo candidate : inspector.segments())
        {
            final long[] found = {-1};
            inspector.scan(candidate, 0, (info, batch) ->
            {
                if (!info.valid())
                {
                    return false;
                }
                if (info.maxTimestamp() >= timestamp && info.nextOffset() > start)
                {
                    batch.forEachRecord((record) ->
                    {
                        if (found[0] < 0 && record.timestamp() >= timestamp && record.offset() >= start)
                        {
                            found[0] = record.offset();
                        }
                    });
                }
                return found[0] < 0;
            });
            if (found[0] >= 0)
            {
                seekUnchecked(found[0]);
                return true;
            }
        }
        seekToEnd();
        return false;
    }

    private void seekUnchecked(final long offset)
    {
        nextOffset = offset;
        segment = null;
        final List<LogInspector.SegmentInfo> segments = inspector.segments();
        for (final LogInspector.SegmentInfo candidate : segments)
        {
            if (candidate.baseOffset() <= offset)
            {
                segment = candidate;
            }
        }
        if (null == segment && !segments.isEmpty())
        {
            segment = segments.get(0);
        }
        position = null == segment ? 0 : indexedPosition(segment, offset);
    }

    /** @return the position of the last indexed batch at or below {@code offset} that checks out, or 0. */
    private int indexedPosition(final LogInspector.SegmentInfo in, final long offset)
    {
        final LogInspector.IndexContent index = inspector.offsetIndex(in);
        for (int i = index.entries() - 1; i >= 0; i--)
        {
            if (index.offsets()[i] > offset)
            {
                continue;
            }
            final long expected = index.offsets()[i];
            final long[] base = {-1};
            inspector.scan(in, (int)index.values()[i], (info, batch) ->
            {
                base[0] = info.valid() ? info.baseOffset() : -1;
                return false;
            });
            if (base[0] == expected)
            {
                return (int)index.values()[i];
            }
        }
        return 0;
    }

    /**
     * Deliver records from the position, up to {@code maxRecords}.
     *
     * @return records delivered; 0 when nothing new is there.
     * @throws StorageException CORRUPT_BATCH when a damaged batch stays damaged, or offsets are missing.
     */
    int poll(final RecordHandler handler, final int maxRecords)
    {
        if (null == segment)
        {
            seekUnchecked(nextOffset);
            if (null == segment)
            {
                return 0;
            }
        }
        final int[] delivered = {0};
        final boolean[] damaged = {false};
        boolean rescanned = false;
        while (delivered[0] < maxRecords)
        {
            final LogInspector.ScanResult result = inspector.scan(segment, position, (info, batch) ->
            {
                if (!info.valid())
                {
                    damaged[0] = true;
                    onDamage(info);
                    return false;
                }
                damagedPosition = -1;
                if (info.nextOffset() <= nextOffset)
                {
                    position = info.position() + info.frameLength();
                    return true;
                }
                if (info.baseOffset() > nextOffset)
                {
                    throw missing(nextOffset, info.baseOffset());
                }
                final int n = batch.forEachRecord(handler, nextOffset, Long.MAX_VALUE, maxRecords - delivered[0]);
                delivered[0] += n;
                nextOffset += n;
                if (nextOffset >= info.nextOffset())
                {
                    position = info.position() + info.frameLength();
                    return delivered[0] < maxRecords;
                }
                return false;
            });
            if (damaged[0] || result.stopStatus() == RecordBatch.VALID)
            {
                break;
            }
            // The end of this segment's data: has the log rolled to a new segment?
            final LogInspector.SegmentInfo next = nextSegment();
            if (null == next)
            {
                break;
            }
            if (!rescanned)
            {
                rescanned = true; // the last batches of the old segment may have landed just before the roll
                continue;
            }
            if (next.baseOffset() != nextOffset)
            {
                throw missing(nextOffset, next.baseOffset());
            }
            segment = next;
            position = 0;
            rescanned = false;
        }
        return delivered[0];
    }

    private LogInspector.SegmentInfo nextSegment()
    {
        for (final LogInspector.SegmentInfo candidate : inspector.segments())
        {
            if (candidate.baseOffset() > segment.baseOffset())
            {
                return candidate;
            }
        }
        return null;
    }

    private void onDamage(final LogInspector.BatchInfo info)
    {
        final long now = System.nanoTime();
        if (damagedPosition != info.position())
        {
            damagedPosition = info.position();
            damagedSinceNs = now;
        }
        if (now - damagedSinceNs >= DAMAGE_PATIENCE_NS)
        {
            throw new StorageException(StorageErrorCode.CORRUPT_BATCH, "batch at position " + info.position() +
                " of " + segment.log() + " (reading offset " + nextOffset + "): " + info.describeStatus());
        }
    }

    private StorageException missing(final long from, final long to)
    {
        return new StorageException(StorageErrorCode.CORRUPT_BATCH, "offsets [" + from + ", " + to + ") are " +
            "not in " + inspector.directory() + " (damaged, deleted by retention, or truncated by the owner)");
    }
}
