package io.tidemark.kafka;

import io.tidemark.store.format.RecordBatchDescriptor;

/**
 * Layout of a Kafka record batch, magic 2 (KIP-98), as clients send it in produce requests and expect it in fetch
 * responses. All fixed fields are big-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                          Base Offset                          |  0
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |             Batch Length (bytes after this field)             |  8
 *  +---------------------------------------------------------------+
 *  |                    Partition Leader Epoch                     | 12
 *  +---------------+-----------------------------------------------+
 *  |   Magic (2)   |  CRC32C of bytes [21, end) ...                  16
 *  +---------------+---------------+-------------------------------+
 *  |    ... CRC    |          Attributes           | Last Offset     20
 *  +---------------+-------------------------------+---------------+
 *  |    Delta ...                                  | Base Timestamp  24
 *  +-----------------------------------------------+---------------+
 *  |   ... (int64)                                  | Max Timestamp  ...   35
 *  +---------------------------------------------------------------+
 *  |  Producer Id (int64) at 43, Producer Epoch (int16) at 51, Base Sequence (int32) at 53,
 *  |  Record Count (int32) at 57, then the records at 61
 *  +---------------------------------------------------------------+
 * </pre>
 * Attributes: bits 0-2 compression (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), bit 3 timestamp type (1 = log append
 * time), bit 4 transactional, bit 5 control batch, bit 6 delete horizon set.
 * <p>
 * Each record, unaligned, with zig-zag varints: length (varint, bytes after itself), attributes (int8, unused),
 * timestamp delta from the base timestamp (varlong), offset delta (varint), key length (varint, -1 null) and key,
 * value length (varint, -1 null) and value, header count (varint), then per header its key length (varint) and
 * UTF-8 key, its value length (varint, -1 null) and value.
 * <p>
 * <b>Design note.</b> Tidemark keeps its own batch layout on disk ({@code RecordBatchDescriptor}: fixed-width
 * little-endian fields, a CRC that also covers the base offset and leader epoch) and transcodes at the Kafka
 * listener, on produce and on fetch. The costs of both choices were measured before choosing; see the module's
 * documentation.
 */
final class KafkaBatchDescriptor
{
    static final int BASE_OFFSET_OFFSET = 0;
    static final int LENGTH_OFFSET = 8;
    static final int PARTITION_LEADER_EPOCH_OFFSET = 12;
    static final int MAGIC_OFFSET = 16;
    static final int CRC_OFFSET = 17;
    static final int ATTRIBUTES_OFFSET = 21;
    static final int LAST_OFFSET_DELTA_OFFSET = 23;
    static final int BASE_TIMESTAMP_OFFSET = 27;
    static final int MAX_TIMESTAMP_OFFSET = 35;
    static final int PRODUCER_ID_OFFSET = 43;
    static final int PRODUCER_EPOCH_OFFSET = 51;
    static final int BASE_SEQUENCE_OFFSET = 53;
    static final int RECORDS_COUNT_OFFSET = 57;
    static final int RECORDS_OFFSET = 61;
    /** Bytes counted before the batch length field is: base offset and the length itself. */
    static final int LOG_OVERHEAD = 12;

    static final byte MAGIC = 2;
    static final int COMPRESSION_MASK = 0x07;
    static final int TIMESTAMP_TYPE_MASK = 0x08;
    static final int TRANSACTIONAL_MASK = 0x10;
    static final int CONTROL_MASK = 0x20;

    private KafkaBatchDescriptor()
    {
    }
}
