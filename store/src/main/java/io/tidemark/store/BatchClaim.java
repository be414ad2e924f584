package io.tidemark.store;

import io.tidemark.store.format.HeadersEncoder;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.tidemark.store.format.RecordBatchDescriptor.HEADER_LENGTH;
import static io.tidemark.store.format.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * A batch being encoded straight into the active segment's mapping: obtained from {@link Log#tryClaim(int)},
 * filled with {@code addRecord} calls, then {@link #commit()}ted (offsets assigned, CRC computed, length published
 * with release semantics) or {@link #abort()}ed (bytes zeroed, nothing published).
 * <pre>{@code
 * BatchClaim claim = log.tryClaim(4096);
 * claim.addRecord(BatchClaim.NOW, key, 0, key.capacity(), value, 0, value.capacity());
 * int at = claim.addRecord(BatchClaim.NOW, null, 0, -1, 64);   // reserve 64 value bytes...
 * claim.buffer().putLong(at, price);                              // ...and encode them in place
 * long baseOffset = claim.commit();
 * }</pre>
 * Arguments are checked before anything is written: a record whose lengths are negative or whose ranges lie outside
 * their buffers is refused with the claim unchanged (still open, as it was). A claim holds the log's writer guard
 * from {@link Log#tryClaim} until it is committed or aborted: no other writer call runs meanwhile.
 * <p>
 * One reusable instance per log, owned by the writer thread; not thread-safe.
 */
public final class BatchClaim
{
    /** Timestamp argument meaning "stamp the record with the log's clock". */
    public static final long NOW = NO_TIMESTAMP;

    private final LogWriter writer;
    private UnsafeBuffer buffer;
    private Segment segment;
    private int position;
    private int limit;
    private int writePosition;
    private int recordCount;
    private long firstTimestamp;
    private long maxTimestamp;
    private long nowMs;
    private int leaderEpoch;
    private long producerId;
    private short producerEpoch;
    private int baseSequence;
    private boolean active;

    BatchClaim(final LogWriter writer)
    {
        this.writer = writer;
    }

    void wrap(final Segment segment, final int position, final int maxLength, final int leaderEpoch, final long nowMs)
    {
        this.segment = segment;
        this.buffer = segment.buffer();
        this.position = position;
        this.limit = position + maxLength;
        this.writePosition = position + HEADER_LENGTH;
        this.recordCount = 0;
        this.firstTimestamp = NO_TIMESTAMP;
        this.maxTimestamp = Long.MIN_VALUE;
        this.nowMs = nowMs;
        this.leaderEpoch = leaderEpoch;
        this.producerId = RecordBatchDescriptor.NO_PRODUCER_ID;
        this.producerEpoch = RecordBatchDescriptor.NO_PRODUCER_EPOCH;
        this.baseSequence = RecordBatchDescriptor.NO_SEQUENCE;
        this.active = true;
    }

    /** @return whether the claim is open (neither committed nor aborted). */
    public boolean isActive()
    {
        return active;
    }

    /** @return the mapping the batch is encoded into; write only where {@code addRecord} said. */
    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    /** @return bytes still available for records. */
    public int remaining()
    {
        return limit - writePosition;
    }

    /** @return records added so far. */
    public int recordCount()
    {
        return recordCount;
    }

    /**
     * @param leaderEpoch epoch of the leader appending the batch (replication); defaults to the log's last epoch.
     * @return this
     */
    public BatchClaim leaderEpoch(final int leaderEpoch)
    {
        checkActive();
        this.leaderEpoch = leaderEpoch;
        return this;
    }

    /**
     * Stamp the batch with an idempotent producer's identity.
     *
     * @param producerId    producer id.
     * @param producerEpoch producer epoch.
     * @param baseSequence  sequence number of the first record.
     * @return this
     */
    public BatchClaim producer(final long producerId, final short producerEpoch, final int baseSequence)
    {
        checkActive();
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.baseSequence = baseSequence;
        return this;
    }

    /**
     * Add a record without headers.
     *
     * @param timestamp   epoch millis, or {@link #NOW}.
     * @param key         key bytes, or null.
     * @param keyOffset   index of the key.
     * @param keyLength   key length, or -1 for null.
     * @param value       value bytes, or null.
     * @param valueOffset index of the value.
     * @param valueLength value length, or -1 for null.
     * @return this
     * @throws IllegalStateException if the record does not fit in the claimed length.
     */
    public BatchClaim addRecord(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength)
    {
        return addRecord(timestamp, key, keyOffset, keyLength, value, valueOffset, valueLength, null, 0, 0);
    }

    /**
     * Add a record with headers encoded by a {@link HeadersEncoder}.
     *
     * @param timestamp     epoch millis, or {@link #NOW}.
     * @param key           key bytes, or null.
     * @param keyOffset     index of the key.
     * @param keyLength     key length, or -1 for null.
     * @param value         value bytes, or null.
     * @param valueOffset   index of the value.
     * @param valueLength   value length, or -1 for null.
     * @param headers       encoded headers, or null.
     * @param headersOffset index of the headers.
     * @param headersLength length of the headers.
     * @return this
     */
    public BatchClaim addRecord(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer value,
        final int valueOffset,
        final int valueLength,
        final DirectBuffer headers,
        final int headersOffset,
        final int headersLength)
    {
        checkActive();
        if (null != value)
        {
            checkRange("value", value, valueOffset, valueLength);
        }
        if (headersLength > 0)
        {
            checkRange("headers", headers, headersOffset, headersLength);
        }
        final int valueAt = beginRecord(
            timestamp, key, keyOffset, null == key ? -1 : keyLength, null == value ? -1 : valueLength, headersLength);
        if (null != value && valueLength > 0)
        {
            buffer.putBytes(valueAt, value, valueOffset, valueLength);
        }
        if (headersLength > 0)
        {
            buffer.putBytes(valueAt + Math.max(valueLength, 0), headers, headersOffset, headersLength);
        }
        return this;
    }

    /**
     * Add a record whose value the caller encodes in place, zero-copy.
     *
     * @param timestamp   epoch millis, or {@link #NOW}.
     * @param key         key bytes, or null.
     * @param keyOffset   index of the key.
     * @param keyLength   key length, or -1 for null.
     * @param valueLength number of value bytes the caller will write.
     * @return index in {@link #buffer()} at which to write the value.
     */
    public int addRecord(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final int valueLength)
    {
        return beginRecord(timestamp, key, keyOffset, null == key ? -1 : keyLength, valueLength, 0);
    }

    /**
     * Copy a run of records encoded elsewhere ({@link RecordEncoder}) into the batch in one go; offset deltas are
     * renumbered and records stamped {@link #NOW} get the log's clock.
     *
     * @param source holds the records.
     * @param offset index of the first record.
     * @param length bytes of the run.
     * @return the number of records added.
     * @throws IllegalArgumentException when the run is malformed (nothing is added).
     * @throws IllegalStateException    when the run does not fit in the claim (nothing is added).
     */
    public int addRecords(final DirectBuffer source, final int offset, final int length)
    {
        checkActive();
        checkRange("records", source, offset, length);
        final int count = RecordEncoder.countRecords(source, offset, length);
        if (count <= 0)
        {
            throw new IllegalArgumentException("malformed or empty run of records (" + length + " bytes)");
        }
        if (length > limit - writePosition)
        {
            throw new IllegalStateException("records of " + length + " bytes do not fit: " +
                (limit - writePosition) + " bytes left in the claim");
        }
        buffer.putBytes(writePosition, source, offset, length);
        int at = writePosition;
        for (int i = 0; i < count; i++)
        {
            buffer.putInt(at + RecordDescriptor.OFFSET_DELTA_OFFSET, recordCount);
            long stamp = buffer.getLong(at + RecordDescriptor.TIMESTAMP_OFFSET);
            if (stamp == NO_TIMESTAMP)
            {
                stamp = nowMs;
                buffer.putLong(at + RecordDescriptor.TIMESTAMP_OFFSET, stamp);
            }
            if (recordCount == 0)
            {
                firstTimestamp = stamp;
            }
            if (stamp > maxTimestamp)
            {
                maxTimestamp = stamp;
            }
            recordCount++;
            at += buffer.getInt(at + RecordDescriptor.LENGTH_OFFSET);
        }
        writePosition += length;
        return count;
    }

    private int beginRecord(
        final long timestamp,
        final DirectBuffer key,
        final int keyOffset,
        final int keyLength,
        final int valueLength,
        final int headersLength)
    {
        checkActive();
        if (keyLength < -1 || valueLength < -1 || headersLength < 0)
        {
            throw new IllegalArgumentException("negative length: key=" + keyLength + " value=" + valueLength +
                " headers=" + headersLength);
        }
        checkRange("key", key, keyOffset, keyLength);
        final long recordLength = (long)RecordDescriptor.HEADER_LENGTH + Math.max(keyLength, 0) +
            Math.max(valueLength, 0) + headersLength;
        if (recordLength > limit - writePosition)
        {
            throw new IllegalStateException("record of " + recordLength + " bytes does not fit: " +
                (limit - writePosition) + " bytes left in the claim");
        }
        final long stamp = timestamp == NO_TIMESTAMP ? nowMs : timestamp;
        final int at = writePosition;
        buffer.putInt(at + RecordDescriptor.LENGTH_OFFSET, (int)recordLength);
        buffer.putInt(at + RecordDescriptor.OFFSET_DELTA_OFFSET, recordCount);
        buffer.putLong(at + RecordDescriptor.TIMESTAMP_OFFSET, stamp);
        buffer.putInt(at + RecordDescriptor.KEY_LENGTH_OFFSET, keyLength);
        buffer.putInt(at + RecordDescriptor.VALUE_LENGTH_OFFSET, valueLength);
        buffer.putInt(at + RecordDescriptor.HEADERS_LENGTH_OFFSET, headersLength);
        int valueAt = at + RecordDescriptor.HEADER_LENGTH;
        if (keyLength > 0)
        {
            buffer.putBytes(valueAt, key, keyOffset, keyLength);
            valueAt += keyLength;
        }
        if (recordCount == 0)
        {
            firstTimestamp = stamp;
        }
        if (stamp > maxTimestamp)
        {
            maxTimestamp = stamp;
        }
        recordCount++;
        writePosition += (int)recordLength;
        return valueAt;
    }

    /**
     * @throws IndexOutOfBoundsException when {@code length > 0} bytes at {@code offset} are not all inside
     *                                   {@code buffer} (computed without overflow).
     */
    private static void checkRange(final String what, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length > 0 && (null == buffer || offset < 0 || offset > buffer.capacity() - length))
        {
            throw new IndexOutOfBoundsException(what + " [" + offset + ", " + offset + " + " + length + ") is " +
                "outside its buffer of " + (null == buffer ? 0 : buffer.capacity()) + " bytes");
        }
    }

    /**
     * Assign offsets, seal the batch with its CRC and publish it.
     *
     * @return the offset of the batch's first record.
     * @throws IllegalStateException when the batch is empty (it is aborted).
     */
    public long commit()
    {
        checkActive();
        if (recordCount == 0)
        {
            abort();
            throw new IllegalStateException("cannot commit a batch without records");
        }
        active = false;
        final UnsafeBuffer b = buffer;
        b.putInt(position + RecordBatchDescriptor.RECORD_COUNT_OFFSET, recordCount);
        b.putInt(position + RecordBatchDescriptor.LEADER_EPOCH_OFFSET, leaderEpoch);
        b.putLong(position + RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET, firstTimestamp);
        b.putLong(position + RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET, maxTimestamp);
        b.putLong(position + RecordBatchDescriptor.PRODUCER_ID_OFFSET, producerId);
        b.putShort(position + RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET, producerEpoch);
        b.putByte(position + RecordBatchDescriptor.MAGIC_OFFSET, RecordBatchDescriptor.MAGIC);
        b.putByte(position + RecordBatchDescriptor.ATTRIBUTES_OFFSET, (byte)0);
        b.putInt(position + RecordBatchDescriptor.BASE_SEQUENCE_OFFSET, baseSequence);
        return writer.commit(segment, position, writePosition - position, recordCount, maxTimestamp, leaderEpoch);
    }

    /** Discard the batch: its bytes are zeroed and nothing is published. No-op when no claim is open. */
    public void abort()
    {
        if (active)
        {
            active = false;
            zero();
            writer.claimAborted();
        }
    }

    /** Zero the bytes written so far (a commit the log refused). */
    void zero()
    {
        buffer.setMemory(position, writePosition - position, (byte)0);
    }

    private void checkActive()
    {
        if (!active)
        {
            throw new IllegalStateException("no open claim: call Log.tryClaim first");
        }
    }
}
