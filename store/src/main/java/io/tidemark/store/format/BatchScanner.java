package io.tidemark.store.format;

import org.agrona.DirectBuffer;

import java.io.IOException;

/**
 * The one rule of the store for "where does valid data end, and where does it resume after damage", used by
 * recovery ({@link io.tidemark.store.LogLoader}), inspection ({@link io.tidemark.store.inspect.LogInspector}: {@code tidemark verify} and {@code dump}) and
 * index rebuild ({@code SegmentReplay.replay}, {@code RebuiltOffsetIndex}), over positional reads ({@link io.tidemark.store.file.FileWindow}) or
 * a mapping ({@link #mapped}).
 * <ul>
 *   <li><b>A batch continues the data</b> when {@link BatchValidator#validate} accepts it (length, magic, record
 *       structure, and its CRC32C when the caller checks CRCs) and its base offset is the offset expected after the
 *       batch before it ({@link #check}; {@link #BAD_OFFSET} otherwise).</li>
 *   <li><b>After damage the data resumes</b> at the first 8-aligned position after the damaged batch's start that
 *       holds a batch valid <em>with its CRC</em> whose base offset does not go back below the offset expected
 *       ({@link #resync}): damage hides only its own offsets, and a stale copy of an earlier batch is never taken
 *       for data. The batch found there is data even when its base offset leaves a gap (the damaged offsets).</li>
 *   <li><b>A zero length ends the data</b> (the writer publishes a batch by writing its length last) unless a valid
 *       batch follows it, in which case the zeros are damage (lost blocks of flushed data).</li>
 *   <li><b>The end of the non-zero bytes</b> ({@link #dataEnd}) tells a torn write or garbage after the data from a
 *       clean end; a run of zeros longer than any batch ends the search.</li>
 * </ul>
 * {@link #walk} applies the rule from a position to the end and hands each batch and each damaged region to a
 * {@link Visitor}; recovery applies the same steps ({@link #check}, {@link #resync}, {@link #dataEnd}) with its
 * policy on top (what is kept below the recovery point, what is truncated above it). Single-threaded; reusable.
 * <p>
 * Internal: public only so that the store's recovery and its inspection tools share it; not part of the API.
 */
public final class BatchScanner
{
    /** Status of {@link #check}: the batch validates, but its base offset does not continue the data. */
    public static final int BAD_OFFSET = BatchValidator.BAD_OFFSET;

    /** The bytes of one segment file. */
    public interface Source
    {
        /** @return the file's length: no byte at or after it is read. */
        long fileLength();

        /** @return the buffer {@link #load} fills; valid until the next load. */
        DirectBuffer buffer();

        /**
         * Make {@code [position, position + length)} readable in {@link #buffer()}, as far as the file holds it.
         *
         * @return the index of {@code position} in {@link #buffer()}.
         */
        int load(long position, int length) throws IOException;

        /** @return bytes readable in {@link #buffer()} from {@code position} (just loaded). */
        int available(long position);

        /**
         * Scan forward from {@code from} for the end of non-zero data, stopping at the file end or after
         * {@code zeroRun} zero bytes in a row (data never holds such a run).
         *
         * @return the position after the last non-zero byte found, or {@code from}.
         */
        long dataEnd(long from, long zeroRun) throws IOException;
    }

    /** Receives what a {@link #walk} finds. */
    public interface Visitor
    {
        /** Takes every batch and stops at damage (where a walk that does not resume stops anyway). */
        Visitor NONE = new Visitor()
        {
            @Override
            public boolean onBatch(
                final long position, final DirectBuffer buffer, final int index, final boolean resumed)
            {
                return true;
            }

            @Override
            public boolean onDamage(
                final long position,
                final int status,
                final long expected,
                final DirectBuffer buffer,
                final int index,
                final int available)
            {
                return false;
            }
        };

        /**
         * A batch that continues the data (it validated, with its CRC if checked, and continues the offsets, or the
         * walk resumed at it after damage).
         *
         * @param position its position in the file.
         * @param buffer   holds it, from {@code index}, whole.
         * @param index    its index in {@code buffer}.
         * @param resumed  whether the walk resumed at it after damage.
         * @return false to stop the walk after it.
         */
        boolean onBatch(long position, DirectBuffer buffer, int index, boolean resumed);

        /**
         * Damage at {@code position}: what stands there does not continue the data. Not called for a zero length
         * with no valid batch after it (the end of the data).
         *
         * @param position  its position in the file.
         * @param status    why ({@link BatchValidator#validate} result, or {@link #BAD_OFFSET}).
         * @param expected  the offset the data expected there.
         * @param buffer    holds its first bytes from {@code index} ({@code available} of them).
         * @param index     its index in {@code buffer}.
         * @param available bytes readable there.
         * @return false to stop the walk at it, true to resume at the next valid batch.
         */
        boolean onDamage(long position, int status, long expected, DirectBuffer buffer, int index, int available);
    }

    private final Crc32c crc;
    private final int maxBatchLength;

    private int index;
    private int available;
    private int claimed;
    private long nextOffset;
    private boolean stoppedByVisitor;
    private boolean recordsValidated;

    /**
     * @param crc            CRC calculator.
     * @param maxBatchLength the longest batch accepted (longer length fields are damage).
     */
    public BatchScanner(final Crc32c crc, final int maxBatchLength)
    {
        this.crc = crc;
        this.maxBatchLength = maxBatchLength;
    }

    /**
     * @param mapping a mapped segment (or its bytes).
     * @param limit   where its data may end.
     * @return a source over it.
     */
    public static Source mapped(final DirectBuffer mapping, final int limit)
    {
        return new Source()
        {
            @Override
            public long fileLength()
            {
                return limit;
            }

            @Override
            public DirectBuffer buffer()
            {
                return mapping;
            }

            @Override
            public int load(final long position, final int length)
            {
                return (int)position;
            }

            @Override
            public int available(final long position)
            {
                return (int)Math.max(0, limit - position);
            }

            @Override
            public long dataEnd(final long from, final long zeroRun)
            {
                long end = from;
                for (long position = from; position < limit && position - end < zeroRun; position++)
                {
                    if (mapping.getByte((int)position) != 0)
                    {
                        end = position + 1;
                    }
                }
                return end;
            }
        };
    }

    public int maxBatchLength()
    {
        return maxBatchLength;
    }

    /**
     * From now on check each batch's frame only, not its records: for a second pass over bytes a first pass
     * validated completely, unchanged since (a recovery's replay of what its walk validated, the directory locked).
     *
     * @return this scanner.
     */
    public BatchScanner recordsValidated()
    {
        recordsValidated = true;
        return this;
    }

    /**
     * Check the batch at {@code position}: load it, validate it, and check that it continues the offsets.
     *
     * @param expected  the base offset it must have, or -1 for any.
     * @param verifyCrc whether its CRC is checked (else its structure only).
     * @return {@link BatchValidator#VALID}, a {@link BatchValidator#validate} result, or {@link #BAD_OFFSET}. The
     *         batch's bytes are then at {@link #index()} in {@code source.buffer()}.
     */
    public int check(final Source source, final long position, final long expected, final boolean verifyCrc)
        throws IOException
    {
        index = source.load(position, RecordBatchDescriptor.HEADER_LENGTH);
        final DirectBuffer buffer = source.buffer();
        claimed = source.available(position) >= 4 ? buffer.getInt(index) : 0;
        if (claimed > RecordBatchDescriptor.HEADER_LENGTH && claimed <= maxBatchLength)
        {
            index = source.load(position, claimed);
        }
        available = source.available(position);
        final int status = BatchValidator.validate(buffer, index, available, maxBatchLength, verifyCrc ? crc : null,
            !recordsValidated);
        if (status == BatchValidator.VALID && expected >= 0 &&
            buffer.getLong(index + RecordBatchDescriptor.BASE_OFFSET_OFFSET) != expected)
        {
            return BAD_OFFSET;
        }
        return status;
    }

    /** @return index in the source's buffer of the batch last checked. */
    public int index()
    {
        return index;
    }

    /** @return bytes readable from the batch last checked. */
    public int available()
    {
        return available;
    }

    /** @return the length field of the batch last checked (0 when fewer than 4 bytes were there). */
    public int claimed()
    {
        return claimed;
    }

    /**
     * @param from    where to start looking (rounded up to the frame alignment).
     * @param minBase the least base offset the batch may have, or -1 for any.
     * @return the first 8-aligned position at or after {@code from} holding a batch that validates with its CRC
     *         and starts at or above {@code minBase}, or -1.
     */
    public long resync(final Source source, final long from, final long minBase) throws IOException
    {
        final long length = source.fileLength();
        final DirectBuffer buffer = source.buffer();
        for (long position = (from + RecordBatchDescriptor.FRAME_ALIGNMENT - 1) & -RecordBatchDescriptor.FRAME_ALIGNMENT;
            position + RecordBatchDescriptor.HEADER_LENGTH <= length;
            position += RecordBatchDescriptor.FRAME_ALIGNMENT)
        {
            int at = source.load(position, RecordBatchDescriptor.HEADER_LENGTH);
            final int length0 = buffer.getInt(at);
            if (length0 >= RecordBatchDescriptor.HEADER_LENGTH && length0 <= maxBatchLength &&
                length0 <= length - position &&
                buffer.getByte(at + RecordBatchDescriptor.MAGIC_OFFSET) == RecordBatchDescriptor.MAGIC &&
                buffer.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET) >= minBase)
            {
                at = source.load(position, length0);
                if (BatchValidator.validate(buffer, at, source.available(position), maxBatchLength, crc) ==
                    BatchValidator.VALID)
                {
                    return position;
                }
            }
        }
        return -1;
    }

    /**
     * @return the position after the last non-zero byte at or after {@code from}, or {@code from}; the search ends
     *         at the file end or after a run of zeros longer than any batch (data never holds one).
     */
    public long dataEnd(final Source source, final long from) throws IOException
    {
        return source.dataEnd(from, (long)maxBatchLength + RecordBatchDescriptor.FRAME_ALIGNMENT);
    }

    /**
     * Walk the batches from {@code from} to the end of the data, by the rule above.
     *
     * @param expected  the base offset of the batch at {@code from}, or -1 for any.
     * @param verifyCrc whether batches are checked with their CRC (a walk always resumes at a CRC-valid batch).
     * @param resume    whether to resume after damage (else the walk stops at the first damage, as a reader does).
     * @return the position where the walk stopped: the end of the data, damage with no valid batch after it (or
     *         any damage when not resuming), or after the batch at which the visitor stopped it. A last frame's
     *         padding may take it past the file end.
     */
    public long walk(
        final Source source,
        final long from,
        final long expected,
        final boolean verifyCrc,
        final boolean resume,
        final Visitor visitor) throws IOException
    {
        final long length = source.fileLength();
        long position = from;
        long next = expected;
        boolean resumed = false;
        stoppedByVisitor = false;
        while (position < length)
        {
            final int status = check(source, position, next, verifyCrc);
            final DirectBuffer buffer = source.buffer();
            if (status != BatchValidator.VALID && !resumed)
            {
                final long found;
                if (claimed == 0)
                {
                    // A zero length ends the data, unless a valid batch follows: then the zeros are damage.
                    found = resume ? resync(source, position + RecordBatchDescriptor.FRAME_ALIGNMENT, next) : -1;
                    if (found < 0)
                    {
                        break;
                    }
                    check(source, position, next, verifyCrc); // the zeros again, for the visitor
                    if (!visitor.onDamage(position, status, next, buffer, index, available))
                    {
                        stoppedByVisitor = true;
                        break;
                    }
                }
                else
                {
                    if (!visitor.onDamage(position, status, next, buffer, index, available))
                    {
                        stoppedByVisitor = true;
                        break;
                    }
                    found = resume ? resync(source, position + RecordBatchDescriptor.FRAME_ALIGNMENT, next) : -1;
                    if (found < 0)
                    {
                        break;
                    }
                }
                position = found;
                resumed = true;
                continue;
            }
            // Valid and continuing the offsets, or the batch the walk resumed at (valid with its CRC, at or above
            // the offset expected: the offsets in between are the damaged ones).
            final int batchLength = buffer.getInt(index);
            next = buffer.getLong(index + RecordBatchDescriptor.BASE_OFFSET_OFFSET) +
                buffer.getInt(index + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
            final boolean more = visitor.onBatch(position, buffer, index, resumed);
            resumed = false;
            position += RecordBatchDescriptor.frameLength(batchLength);
            if (!more)
            {
                stoppedByVisitor = true;
                break;
            }
        }
        nextOffset = next;
        return position;
    }

    /** @return the offset after the last batch of the last {@link #walk} (its {@code expected} if none). */
    public long nextOffset()
    {
        return nextOffset;
    }

    /** @return whether the visitor stopped the last {@link #walk}. */
    public boolean stoppedByVisitor()
    {
        return stoppedByVisitor;
    }
}
