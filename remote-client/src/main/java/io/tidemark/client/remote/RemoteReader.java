package io.tidemark.client.remote;

import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.format.Crc32c;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

import java.util.concurrent.locks.LockSupport;

/**
 * Reads a partition's committed records from its leader in another process: each poll asks the leader for the
 * batches from the reader's position up to the high watermark, checks every batch's CRC, and delivers the records.
 * A leader change is followed (the next poll asks the new leader from the same position). One thread per reader.
 */
public final class RemoteReader implements AutoCloseable
{
    private static final int MAX_BYTES = 1024 * 1024;

    private final RemoteReads reads;
    private final int partitionId;
    private final TopicPartition tp;
    private final long timeoutMs;
    private final RecordBatch batch = new RecordBatch();
    private final Crc32c crc = new Crc32c();
    private final ExpandableDirectByteBuffer result = new ExpandableDirectByteBuffer(64 * 1024);
    private volatile long answeredCorrelation = -1;
    private volatile Thread waiter;
    private int resultLength;
    private long nextCorrelation = 1;
    private long position;
    private long highWatermark = -1;

    RemoteReader(final RemoteReads reads, final int partitionId, final TopicPartition tp, final long timeoutMs)
    {
        this.reads = reads;
        this.partitionId = partitionId;
        this.tp = tp;
        this.timeoutMs = timeoutMs;
    }

    /** @return the partition read. */
    public TopicPartition topicPartition()
    {
        return tp;
    }

    /** @return the next offset to read. */
    public long position()
    {
        return position;
    }

    /** @param offset the next offset to read. */
    public void seek(final long offset)
    {
        position = offset;
    }

    /** @return the leader's high watermark at the last answer, or -1 before one. */
    public long highWatermark()
    {
        return highWatermark;
    }

    /**
     * Deliver committed records from the position.
     *
     * @return records delivered; 0 when nothing committed is new, the partition has no reachable leader now, or the
     *         leader did not answer within {@code request.timeout.ms}.
     * @throws StorageException OFFSET_OUT_OF_RANGE when the position is not in the leader's log; CORRUPT_BATCH when a
     *                          batch arrived damaged.
     */
    public int poll(final RecordHandler handler, final int maxRecords)
    {
        final long correlationId = nextCorrelation++ | ((long)System.identityHashCode(this) << 32);
        waiter = Thread.currentThread();
        if (!reads.send(this, partitionId, position, MAX_BYTES, correlationId))
        {
            return 0;
        }
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (answeredCorrelation != correlationId)
        {
            if (System.nanoTime() > deadline)
            {
                reads.forget(correlationId);
                return 0;
            }
            LockSupport.parkNanos(50_000);
        }
        final ReplicationError error = ReplicationError.fromCode(
            result.getInt(GatewayMessages.RESULT_ERROR_OFFSET, GatewayMessages.ORDER));
        if (null == error)
        {
            return 0; // not an error this client knows: ask again
        }
        if (error == ReplicationError.OFFSET_OUT_OF_RANGE)
        {
            throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "position " + position + " of " + tp +
                " is not in its leader's log (log start " +
                result.getLong(GatewayMessages.READ_RESULT_LOG_START_OFFSET, GatewayMessages.ORDER) + ")");
        }
        if (error != ReplicationError.NONE)
        {
            return 0;
        }
        highWatermark = result.getLong(GatewayMessages.READ_RESULT_HW_OFFSET, GatewayMessages.ORDER);
        int delivered = 0;
        int at = GatewayMessages.READ_RESULT_BATCHES_OFFSET;
        while (at < resultLength && delivered < maxRecords)
        {
            final int status = RecordBatch.validate(result, at, resultLength - at, resultLength - at, crc);
            if (status != RecordBatch.VALID)
            {
                throw new StorageException(StorageErrorCode.CORRUPT_BATCH, "a batch of " + tp + " from its leader " +
                    "failed validation (" + status + ") at position " + position);
            }
            batch.wrap(result, at);
            final int count = batch.forEachRecord(handler, position, highWatermark, maxRecords - delivered);
            delivered += count;
            if (count > 0)
            {
                position = Math.max(position, batch.baseOffset()) + count;
            }
            at += batch.frameLength();
        }
        return delivered;
    }

    /** On the client's agent thread: the leader's answer to request {@code correlationId}. */
    void onResult(final long correlationId, final DirectBuffer buffer, final int offset, final int length)
    {
        result.putBytes(0, buffer, offset, length);
        resultLength = length;
        answeredCorrelation = correlationId;
        final Thread thread = waiter;
        if (null != thread)
        {
            LockSupport.unpark(thread);
        }
    }

    @Override
    public void close()
    {
        waiter = null;
    }
}
