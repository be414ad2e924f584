package io.tidemark.replication.protocol;

import io.tidemark.replication.ReplicationError;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.format.RecordEncoder;

import org.agrona.DirectBuffer;

/**
 * Layout of a produce request on a partition's produce ring (producer threads to the leader host's agent).
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Producer Session Id                       |  0
 *  +---------------------------------------------------------------+
 *  |                  Acks (-1 all, 0, 1, 2..RF)                   |  4
 *  +---------------------------------------------------------------+
 *  |                          Timeout Ms                           |  8
 *  +-------------------------------+-------------------------------+
 *  |        Producer Epoch         |           (zero)              | 12
 *  +-------------------------------+-------------------------------+
 *  |                          Producer Id                          | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                         Base Sequence                         | 24
 *  +---------------------------------------------------------------+
 *  |                         Records Length                        | 28
 *  +---------------------------------------------------------------+
 *  |                         Correlation Id                        | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |       Records, encoded as in RecordDescriptor (RecordEncoder) ... 40
 *  +---------------------------------------------------------------+
 * </pre>
 * <p>
 * Internal: public only so that the replication packages share it; not part of the API.
 */
public final class ProduceMessages
{
    public static final int PRODUCE_REQUEST = 11;
    public static final int SESSION_OFFSET = 0;
    public static final int ACKS_OFFSET = 4;
    public static final int TIMEOUT_OFFSET = 8;
    public static final int PRODUCER_EPOCH_OFFSET = 12;
    public static final int PRODUCER_ID_OFFSET = 16;
    public static final int BASE_SEQUENCE_OFFSET = 24;
    public static final int RECORDS_LENGTH_OFFSET = 28;
    public static final int CORRELATION_ID_OFFSET = 32;
    public static final int HEADER_LENGTH = 40;

    private ProduceMessages()
    {
    }

    public static int records(final DirectBuffer buffer, final int index)
    {
        return index + HEADER_LENGTH;
    }

    /**
     * Put a produce request for a run of records on a leader's produce ring.
     *
     * @param ring the leader replica's ring, or null when the partition has no leader here.
     * @return NONE when queued; LEADER_NOT_AVAILABLE without a ring; BACK_PRESSURED when the ring is full;
     *         INVALID_RECORDS when the request cannot fit the ring.
     */
    public static ReplicationError enqueue(final org.agrona.concurrent.ringbuffer.RingBuffer ring, final int session,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int offset,
        final int length)
    {
        if (null == ring)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        if (HEADER_LENGTH + length > ring.maxMsgLength())
        {
            return ReplicationError.INVALID_RECORDS;
        }
        final int index = ring.tryClaim(PRODUCE_REQUEST, HEADER_LENGTH + length);
        if (index <= 0)
        {
            return ReplicationError.BACK_PRESSURED;
        }
        final org.agrona.MutableDirectBuffer buffer = ring.buffer();
        buffer.putInt(index + SESSION_OFFSET, session);
        buffer.putInt(index + ACKS_OFFSET, acks);
        buffer.putInt(index + TIMEOUT_OFFSET, timeoutMs);
        buffer.putShort(index + PRODUCER_EPOCH_OFFSET, producerEpoch);
        buffer.putShort(index + PRODUCER_EPOCH_OFFSET + 2, (short)0);
        buffer.putLong(index + PRODUCER_ID_OFFSET, producerId);
        buffer.putInt(index + BASE_SEQUENCE_OFFSET, baseSequence);
        buffer.putInt(index + RECORDS_LENGTH_OFFSET, length);
        buffer.putLong(index + CORRELATION_ID_OFFSET, correlationId);
        buffer.putBytes(index + HEADER_LENGTH, records, offset, length);
        ring.commit(index);
        return ReplicationError.NONE;
    }
}
