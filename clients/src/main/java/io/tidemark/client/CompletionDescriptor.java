package io.tidemark.client;

/**
 * Layout of one produce outcome in the producer's completion ring ({@link CompletionQueue}), written by the leader
 * host's agent thread and read by the producer's agent. Little-endian, in an Agrona ring-buffer record.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                     Correlation Id (int64)                    |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                       Base Offset (int64)                     |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |               Replication Error (int32, ordinal)              |  16
 *  +---------------------------------------------------------------+
 * </pre>
 */
final class CompletionDescriptor
{
    /** Ring-buffer message type of an outcome. */
    static final int MSG_TYPE_ID = 1;
    /** Offset of the attempt's correlation id. */
    static final int CORRELATION_ID_OFFSET = 0;
    /** Offset of the base offset (-1 on error). */
    static final int BASE_OFFSET_OFFSET = 8;
    /** Offset of the {@code ReplicationError} ordinal. */
    static final int ERROR_OFFSET = 16;
    /** Length of a message. */
    static final int LENGTH = 20;

    private CompletionDescriptor()
    {
    }
}
