package io.tidemark.client;

import io.tidemark.replication.ReplicationError;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Arrays;

/**
 * A run of records for one partition, encoded with {@link RecordEncoder} into a buffer from the {@link BufferPool},
 * with one callback per record, and the state of its delivery: sequence (idempotence), attempts, the correlation id
 * and target host of the attempt in flight, the last error. Pooled and reused with its buffer.
 * <p>
 * Filled by sending threads under its {@link PartitionAccumulator}'s lock; once handed to the sending agent it is
 * owned by the agent thread alone.
 */
final class ProducerBatch
{
    /** Waiting in the agent's queue: not sent yet. */
    static final int QUEUED = 0;
    /** An attempt is queued to the leader and not answered yet. */
    static final int AWAITING = 1;
    /** The last attempt failed: to be resent at {@link #retryAtMs}. */
    static final int RETRY = 2;
    /** Acknowledged (callbacks run) but still holding its place in an idempotent window behind an earlier batch. */
    static final int ACKED = 3;

    final UnsafeBuffer buffer;
    final boolean pooled;
    private SendCallback[] callbacks = new SendCallback[16];
    int recordCount;
    int length;

    long serial;
    long createdMs;
    boolean sendNow;

    int state;
    long producerId = -1;
    short epoch = -1;
    int sequence = -1;
    int attempts;
    long correlationId;
    long retryAtMs;
    long attemptDeadlineMs;
    long target = ClusterConnection.NO_LEADER;
    ReplicationError lastError = ReplicationError.NONE;
    boolean mayBeAppended;
    PartitionSender owner;

    ProducerBatch(final int capacity, final boolean pooled)
    {
        this.buffer = new UnsafeBuffer(new byte[capacity]);
        this.pooled = pooled;
    }

    /**
     * @return whether an attempt answered with {@code error} may have been appended anyway (the leader appended, then
     *         the acknowledgement was lost, timed out, or leadership moved); other errors are given before appending.
     */
    static boolean unknownOutcome(final ReplicationError error)
    {
        switch (error)
        {
            case NOT_LEADER:
            case REQUEST_TIMED_OUT:
            case NOT_ENOUGH_REPLICAS_AFTER_APPEND:
            case STORAGE_ERROR:
                return true;
            default:
                return false;
        }
    }

    int capacity()
    {
        return buffer.capacity();
    }

    /**
     * Encode a record at the end of the batch if it fits (an empty batch takes any record its buffer can hold).
     *
     * @return whether it was appended.
     */
    boolean tryAppend(final ProducerRecord record, final int encodedLength, final SendCallback callback)
    {
        if (length + encodedLength > buffer.capacity())
        {
            return false;
        }
        length += RecordEncoder.encode(buffer, length, recordCount, record.timestamp(),
            record.keyBuffer(), record.keyOffset(), record.keyLength(),
            record.valueBuffer(), record.valueOffset(), record.valueLength(),
            record.headersBuffer(), record.headersOffset(), record.headersLength());
        if (recordCount == callbacks.length)
        {
            callbacks = Arrays.copyOf(callbacks, recordCount * 2);
        }
        callbacks[recordCount++] = callback;
        return true;
    }

    /** @return whether not even an empty record fits any more. */
    boolean isFull()
    {
        return buffer.capacity() - length < RecordDescriptor.HEADER_LENGTH;
    }

    /**
     * Report the outcome to every record's callback (offsets {@code baseOffset + i}; -1 when unknown). One-way
     * records have no callback: their failure goes to the error handler, once per batch.
     */
    void complete(final PartitionSender sender, final long baseOffset, final ProducerException error,
        final ErrorHandler errorHandler)
    {
        int oneWay = 0;
        for (int i = 0; i < recordCount; i++)
        {
            final SendCallback callback = callbacks[i];
            callbacks[i] = null;
            if (null == callback)
            {
                oneWay++;
                continue;
            }
            try
            {
                callback.onCompletion(sender.topicPartition(), baseOffset < 0 ? -1 : baseOffset + i, error);
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
            }
        }
        if (null != error && oneWay > 0)
        {
            errorHandler.onError(new ProducerException(error.code(), error.replicationError(), error.partition(),
                error.outcomeUnknown(), oneWay + " one-way record(s) failed: " + error.getMessage()));
        }
    }

    /** Make the batch empty for reuse. */
    void reset()
    {
        Arrays.fill(callbacks, 0, recordCount, null);
        recordCount = 0;
        length = 0;
        serial = 0;
        createdMs = 0;
        sendNow = false;
        state = QUEUED;
        producerId = -1;
        epoch = -1;
        sequence = -1;
        attempts = 0;
        correlationId = 0;
        retryAtMs = 0;
        attemptDeadlineMs = 0;
        target = ClusterConnection.NO_LEADER;
        lastError = ReplicationError.NONE;
        mayBeAppended = false;
        owner = null;
    }

    @Override
    public String toString()
    {
        return "ProducerBatch{serial=" + serial + ", records=" + recordCount + ", bytes=" + length + ", state=" + state +
            ", epoch=" + epoch + ", sequence=" + sequence + ", attempts=" + attempts + ", lastError=" + lastError + '}';
    }
}
