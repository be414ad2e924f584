package io.tidemark.replication;

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
 */
final class ProduceMessages
{
    static final int PRODUCE_REQUEST = 11;
    static final int SESSION_OFFSET = 0;
    static final int ACKS_OFFSET = 4;
    static final int TIMEOUT_OFFSET = 8;
    static final int PRODUCER_EPOCH_OFFSET = 12;
    static final int PRODUCER_ID_OFFSET = 16;
    static final int BASE_SEQUENCE_OFFSET = 24;
    static final int RECORDS_LENGTH_OFFSET = 28;
    static final int CORRELATION_ID_OFFSET = 32;
    static final int HEADER_LENGTH = 40;

    private ProduceMessages()
    {
    }

    static int records(final DirectBuffer buffer, final int index)
    {
        return index + HEADER_LENGTH;
    }
}
