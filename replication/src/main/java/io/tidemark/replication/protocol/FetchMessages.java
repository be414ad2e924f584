package io.tidemark.replication.protocol;

import io.tidemark.replication.ReplicationError;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The replication protocol's messages, carried over the {@link io.tidemark.replication.spi.Transport} (Agrona
 * ring buffers in process) and encoded with the flyweights below. All fields little-endian; the ring's message
 * type id says which message it is.
 * <pre>
 *  FETCH_REQUEST (type 1): follower -> leader
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                         Partition Id                          |  0
 *  +---------------------------------------------------------------+
 *  |                 Replica Id (the follower host)                |  4
 *  +---------------------------------------------------------------+
 *  |                 Current Leader Epoch (follower's)             |  8
 *  +---------------------------------------------------------------+
 *  |                           Max Bytes                           | 12
 *  +---------------------------------------------------------------+
 *  |                 Incarnation of the follower host              | 16
 *  +---------------------------------------------------------------+
 *  |                Fetch Offset (the follower's LEO)              | 24
 *  +---------------------------------------------------------------+
 *  |                         Correlation Id                        | 32
 *  +---------------------------------------------------------------+
 *
 *  FETCH_RESPONSE (type 2): leader -> follower
 *  +---------------------------------------------------------------+
 *  |                         Partition Id                          |  0
 *  +---------------------------------------------------------------+
 *  |                   Error (ReplicationError ordinal)            |  4
 *  +---------------------------------------------------------------+
 *  |                      Leader Epoch (leader's)                  |  8
 *  +---------------------------------------------------------------+
 *  |                         Records Length                        | 12
 *  +---------------------------------------------------------------+
 *  |                         Correlation Id                        | 16
 *  +---------------------------------------------------------------+
 *  |                    High Watermark (leader's)                  | 24
 *  +---------------------------------------------------------------+
 *  |                        Log Start Offset                       | 32
 *  +---------------------------------------------------------------+
 *  |                         Log End Offset                        | 40
 *  +---------------------------------------------------------------+
 *  |        Records: raw batch frames, as in the leader's log     ... 48
 *  +---------------------------------------------------------------+
 *
 *  EPOCH_REQUEST (type 3): follower -> leader, "where does epoch E end?"
 *  +---------------------------------------------------------------+
 *  |    Partition Id    |    Replica Id    | Current Leader Epoch  |  0, 4, 8
 *  +---------------------------------------------------------------+
 *  |                         Requested Epoch                       | 12
 *  +---------------------------------------------------------------+
 *  |                         Correlation Id                        | 16
 *  +---------------------------------------------------------------+
 *
 *  EPOCH_RESPONSE (type 4): leader -> follower
 *  +---------------------------------------------------------------+
 *  |     Partition Id    |    Error    |  Leader Epoch (leader's)  |  0, 4, 8
 *  +---------------------------------------------------------------+
 *  |        Epoch: largest epoch <= requested the leader knows     | 12
 *  +---------------------------------------------------------------+
 *  |                         Correlation Id                        | 16
 *  +---------------------------------------------------------------+
 *  |                  End Offset of that epoch                     | 24
 *  +---------------------------------------------------------------+
 * </pre>
 * <p>
 * Internal: public only so that the replication packages share it; not part of the API.
 */
public final class FetchMessages
{
    public static final int FETCH_REQUEST = 1;
    public static final int FETCH_RESPONSE = 2;
    public static final int EPOCH_REQUEST = 3;
    public static final int EPOCH_RESPONSE = 4;

    private FetchMessages()
    {
    }

    /**
     * The fields both requests start with, at the same offsets: partition id (0), replica id (4) and the follower's
     * leader epoch (8); offset 12 and what follows are each request's own. Its getters reach users through
     * {@link FetchRequest} and {@link EpochRequest}.
     */
    abstract static class PartitionRequest
    {
        MutableDirectBuffer buffer;
        int offset;

        final void wrapAt(final MutableDirectBuffer buffer, final int offset)
        {
            this.buffer = buffer;
            this.offset = offset;
        }

        final void putHeader(final int partitionId, final int replicaId, final int leaderEpoch, final int field12)
        {
            buffer.putInt(offset, partitionId);
            buffer.putInt(offset + 4, replicaId);
            buffer.putInt(offset + 8, leaderEpoch);
            buffer.putInt(offset + 12, field12);
        }

        public final int partitionId()
        {
            return buffer.getInt(offset);
        }

        public final int replicaId()
        {
            return buffer.getInt(offset + 4);
        }

        public final int leaderEpoch()
        {
            return buffer.getInt(offset + 8);
        }
    }

    /** Flyweight over a FETCH_REQUEST. */
    public static final class FetchRequest extends PartitionRequest
    {
        public static final int LENGTH = 40;

        public FetchRequest wrap(final MutableDirectBuffer buffer, final int offset)
        {
            wrapAt(buffer, offset);
            return this;
        }

        public FetchRequest encode(
            final int partitionId, final int replicaId, final int leaderEpoch, final int maxBytes,
            final long incarnation, final long fetchOffset, final long correlationId)
        {
            putHeader(partitionId, replicaId, leaderEpoch, maxBytes);
            buffer.putLong(offset + 16, incarnation);
            buffer.putLong(offset + 24, fetchOffset);
            buffer.putLong(offset + 32, correlationId);
            return this;
        }

        public int maxBytes()
        {
            return buffer.getInt(offset + 12);
        }

        public long incarnation()
        {
            return buffer.getLong(offset + 16);
        }

        public long fetchOffset()
        {
            return buffer.getLong(offset + 24);
        }

        public long correlationId()
        {
            return buffer.getLong(offset + 32);
        }
    }

    /**
     * The fields both responses start with, at the same offsets: partition id (0), error (4), the leader's epoch (8)
     * and the correlation id (16); offset 12 and what follows 24 are each response's own. Its getters reach users
     * through {@link FetchResponse} and {@link EpochResponse}.
     */
    abstract static class PartitionResponse
    {
        MutableDirectBuffer buffer;
        int offset;

        final void wrapAt(final MutableDirectBuffer buffer, final int offset)
        {
            this.buffer = buffer;
            this.offset = offset;
        }

        final void putHeader(final int partitionId, final ReplicationError error, final int leaderEpoch,
            final int field12, final long correlationId)
        {
            buffer.putInt(offset, partitionId);
            buffer.putInt(offset + 4, error.code());
            buffer.putInt(offset + 8, leaderEpoch);
            buffer.putInt(offset + 12, field12);
            buffer.putLong(offset + 16, correlationId);
        }

        public final int partitionId()
        {
            return buffer.getInt(offset);
        }

        public final ReplicationError error()
        {
            return ReplicationError.fromCodeOrStorageError(buffer.getInt(offset + 4));
        }

        public final int leaderEpoch()
        {
            return buffer.getInt(offset + 8);
        }

        public final long correlationId()
        {
            return buffer.getLong(offset + 16);
        }
    }

    /** Flyweight over a FETCH_RESPONSE. */
    public static final class FetchResponse extends PartitionResponse
    {
        public static final int HEADER_LENGTH = 48;

        public FetchResponse wrap(final MutableDirectBuffer buffer, final int offset)
        {
            wrapAt(buffer, offset);
            return this;
        }

        public FetchResponse encode(final int partitionId, final ReplicationError error, final int leaderEpoch,
            final int recordsLength, final long correlationId, final long highWatermark, final long logStartOffset,
            final long logEndOffset)
        {
            putHeader(partitionId, error, leaderEpoch, recordsLength, correlationId);
            buffer.putLong(offset + 24, highWatermark);
            buffer.putLong(offset + 32, logStartOffset);
            buffer.putLong(offset + 40, logEndOffset);
            return this;
        }

        public int recordsLength()
        {
            return buffer.getInt(offset + 12);
        }

        public long highWatermark()
        {
            return buffer.getLong(offset + 24);
        }

        public long logStartOffset()
        {
            return buffer.getLong(offset + 32);
        }

        public long logEndOffset()
        {
            return buffer.getLong(offset + 40);
        }

        public DirectBuffer buffer()
        {
            return buffer;
        }

        public int recordsOffset()
        {
            return offset + HEADER_LENGTH;
        }
    }

    /** Flyweight over an EPOCH_REQUEST. */
    public static final class EpochRequest extends PartitionRequest
    {
        public static final int LENGTH = 24;

        public EpochRequest wrap(final MutableDirectBuffer buffer, final int offset)
        {
            wrapAt(buffer, offset);
            return this;
        }

        public EpochRequest encode(final int partitionId, final int replicaId, final int leaderEpoch,
            final int requestedEpoch, final long correlationId)
        {
            putHeader(partitionId, replicaId, leaderEpoch, requestedEpoch);
            buffer.putLong(offset + 16, correlationId);
            return this;
        }

        public int requestedEpoch()
        {
            return buffer.getInt(offset + 12);
        }

        public long correlationId()
        {
            return buffer.getLong(offset + 16);
        }
    }

    /** Flyweight over an EPOCH_RESPONSE. */
    public static final class EpochResponse extends PartitionResponse
    {
        public static final int LENGTH = 32;

        public EpochResponse wrap(final MutableDirectBuffer buffer, final int offset)
        {
            wrapAt(buffer, offset);
            return this;
        }

        public EpochResponse encode(final int partitionId, final ReplicationError error, final int leaderEpoch,
            final int epoch, final long correlationId, final long endOffset)
        {
            putHeader(partitionId, error, leaderEpoch, epoch, correlationId);
            buffer.putLong(offset + 24, endOffset);
            return this;
        }

        public int epoch()
        {
            return buffer.getInt(offset + 12);
        }

        public long endOffset()
        {
            return buffer.getLong(offset + 24);
        }
    }
}
