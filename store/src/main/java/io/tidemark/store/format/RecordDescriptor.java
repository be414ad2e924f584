package io.tidemark.store.format;

/**
 * Layout of one record inside a batch (records follow the batch header back to back, unaligned).
 * All fields are little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |               Record Length (this header included)            |  0
 *  +---------------------------------------------------------------+
 *  |                 Offset Delta (from Base Offset)               |  4
 *  +---------------------------------------------------------------+
 *  |                     Timestamp (epoch millis)                  |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                    Key Length (-1 for null)                   | 16
 *  +---------------------------------------------------------------+
 *  |                   Value Length (-1 for null)                  | 20
 *  +---------------------------------------------------------------+
 *  |                    Headers Length (bytes)                     | 24
 *  +---------------------------------------------------------------+
 *  |                        Key bytes                             ... 28
 *  +---------------------------------------------------------------+
 *  |                       Value bytes                            ...
 *  +---------------------------------------------------------------+
 *  |                 Headers (see HeadersEncoder)                 ...
 *  +---------------------------------------------------------------+
 * </pre>
 * <b>Design note.</b> Fields are fixed width rather than Kafka's varints: decoding is a load, not a loop, and a
 * value can be encoded in place at a position known before the record is written (the tryClaim path).
 */
public final class RecordDescriptor
{
    /** Offset of the record length field. */
    public static final int LENGTH_OFFSET = 0;
    /** Offset of the offset delta field. */
    public static final int OFFSET_DELTA_OFFSET = 4;
    /** Offset of the timestamp field. */
    public static final int TIMESTAMP_OFFSET = 8;
    /** Offset of the key length field. */
    public static final int KEY_LENGTH_OFFSET = 16;
    /** Offset of the value length field. */
    public static final int VALUE_LENGTH_OFFSET = 20;
    /** Offset of the headers length field. */
    public static final int HEADERS_LENGTH_OFFSET = 24;
    /** Length of the record header; the key starts here. */
    public static final int HEADER_LENGTH = 28;
    /** Length value meaning "null". */
    public static final int NULL_LENGTH = -1;

    private RecordDescriptor()
    {
    }

    /**
     * @param keyLength     key length, or -1 for null.
     * @param valueLength   value length, or -1 for null.
     * @param headersLength encoded headers length.
     * @return the encoded length of a record.
     */
    public static int recordLength(final int keyLength, final int valueLength, final int headersLength)
    {
        return HEADER_LENGTH + Math.max(keyLength, 0) + Math.max(valueLength, 0) + headersLength;
    }
}
