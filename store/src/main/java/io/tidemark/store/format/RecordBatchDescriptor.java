package io.tidemark.store.format;

import org.agrona.BitUtil;

/**
 * On-disk (and on-the-wire) layout of a record batch. All fields are little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |            Batch Length (written last, with release)          |  0
 *  +---------------------------------------------------------------+
 *  |               CRC32C of bytes [8, Batch Length)               |  4
 *  +---------------------------------------------------------------+
 *  |                          Base Offset                          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                         Leader Epoch                          | 16
 *  +---------------------------------------------------------------+
 *  |                         Record Count                          | 20
 *  +---------------------------------------------------------------+
 *  |                 First Timestamp (epoch millis)                | 24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Max Timestamp (epoch millis)                 | 32
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                          Producer Id                          | 40
 *  |                                                               |
 *  +-------------------------------+---------------+---------------+
 *  |        Producer Epoch         |     Magic     |  Attributes   | 48
 *  +-------------------------------+---------------+---------------+
 *  |                         Base Sequence                         | 52
 *  +---------------------------------------------------------------+
 *  |                 Records (see RecordDescriptor)               ...  56
 *  +---------------------------------------------------------------+
 * </pre>
 * A batch occupies a <em>frame</em> of {@code align(Batch Length, 8)} bytes; padding bytes are zero. Offsets are
 * dense: the records of a batch have offsets {@code Base Offset .. Base Offset + Record Count - 1}.
 * <p>
 * <b>Design note.</b> The CRC covers everything after itself, base offset and leader epoch included, unlike
 * Kafka's. Offsets and epochs are assigned by the log at commit time (in process, before the CRC is computed), so
 * nothing needs to be rewritten after the CRC is taken, and a flipped bit in an offset or epoch is detected like
 * any other. A batch is published by writing its length last with release semantics; a reader that observes a
 * non-zero length with acquire semantics sees the whole batch. A zero length marks the end of the valid data of
 * a segment, which is why every region the writer may reuse (a truncated tail) is zeroed first.
 */
public final class RecordBatchDescriptor
{
    /** Offset of the batch length field. */
    public static final int LENGTH_OFFSET = 0;
    /** Offset of the CRC32C field. */
    public static final int CRC_OFFSET = 4;
    /** Offset of the base offset field. */
    public static final int BASE_OFFSET_OFFSET = 8;
    /** Offset of the leader epoch field. */
    public static final int LEADER_EPOCH_OFFSET = 16;
    /** Offset of the record count field. */
    public static final int RECORD_COUNT_OFFSET = 20;
    /** Offset of the first timestamp field. */
    public static final int FIRST_TIMESTAMP_OFFSET = 24;
    /** Offset of the max timestamp field. */
    public static final int MAX_TIMESTAMP_OFFSET = 32;
    /** Offset of the producer id field. */
    public static final int PRODUCER_ID_OFFSET = 40;
    /** Offset of the producer epoch field. */
    public static final int PRODUCER_EPOCH_OFFSET = 48;
    /** Offset of the magic (format version) byte. */
    public static final int MAGIC_OFFSET = 50;
    /** Offset of the attributes byte. */
    public static final int ATTRIBUTES_OFFSET = 51;
    /** Offset of the base sequence field. */
    public static final int BASE_SEQUENCE_OFFSET = 52;
    /** Length of the batch header; records start here. */
    public static final int HEADER_LENGTH = 56;
    /** First byte covered by the CRC. */
    public static final int CRC_START_OFFSET = BASE_OFFSET_OFFSET;

    /** Current format version. */
    public static final byte MAGIC = 1;
    /** Alignment of batch frames. */
    public static final int FRAME_ALIGNMENT = 8;

    /** Producer id of a batch written without an idempotent producer. */
    public static final long NO_PRODUCER_ID = -1;
    /** Producer epoch of a batch written without an idempotent producer. */
    public static final short NO_PRODUCER_EPOCH = -1;
    /** Base sequence of a batch written without an idempotent producer. */
    public static final int NO_SEQUENCE = -1;
    /** Leader epoch of a batch written outside replication. */
    public static final int NO_LEADER_EPOCH = -1;
    /** Timestamp value meaning "let the log stamp it with its clock". */
    public static final long NO_TIMESTAMP = -1;

    private RecordBatchDescriptor()
    {
    }

    /**
     * @param batchLength length of a batch.
     * @return the length of the frame it occupies.
     */
    public static int frameLength(final int batchLength)
    {
        return BitUtil.align(batchLength, FRAME_ALIGNMENT);
    }
}
