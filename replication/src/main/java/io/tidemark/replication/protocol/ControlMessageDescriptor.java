package io.tidemark.replication.protocol;

/**
 * The layout of a {@link ControlMessage} on the wire ({@link ControlMessageCodec} reads and writes it). All fields
 * little-endian. Every message starts with the same 4-byte header; the flags' meaning depends on the type, and a
 * flag a type does not define must be zero:
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------+---------------+-------------------------------+
 *  |    Version    |     Type      |             Flags             |  0
 *  +---------------+---------------+-------------------------------+
 *
 *  REGISTER_HOST (1), host -> controller; flag 0x1: possible data loss
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  HEARTBEAT (2), host -> controller
 *  |     Host Id     |   Incarnation (int64)   |   State Digest (int64)   |  4, 8, 16   length 24
 *
 *  UNREGISTER_HOST (3), host -> controller
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  ALTER_ISR (4), leader -> controller; flag 0x1: incarnations present (else Incarnation Count is 0)
 *  +---------------------------------------------------------------+
 *  |  Partition Id  |  Leader Id  |  Leader Epoch  | Expected Version |  4, 8, 12, 16
 *  +---------------------------------------------------------------+
 *  |        ISR Count (n)          |     Incarnation Count (m)     |  20, 24
 *  +---------------------------------------------------------------+
 *  |   ISR host ids: n x int32, then incarnations: m x int64     ... 28        length 28 + 4n + 8m
 *  +---------------------------------------------------------------+
 *
 *  PARTITION_UPDATE (5), controller -> host
 *  |  State Length (s)  |  State: s bytes of PartitionStateCodec ...  |  4, 8   length 8 + s
 *
 *  ALTER_ISR_RESPONSE (6), controller -> leader; flag 0x1: accepted, 0x2: current state present (else s is 0)
 *  |  Partition Id  |  State Length (s)  |  State: s bytes of PartitionStateCodec ... | 4, 8, 12  length 12 + s
 *
 *  REGISTERED (7), controller -> host
 *  |     Host Id     |        Incarnation (int64)        |  4, 8          length 16
 *
 *  SESSION_EXPIRED (8), controller -> host
 *  |     Host Id     |  4                                                 length 8
 *
 *  CONTROLLER_ALIVE (9), controller -> host
 *  |     Host Id     |     Controller Epoch (int64)      |  4, 8          length 16
 * </pre>
 * A message fills its {@code length} exactly: the decoder rejects missing and trailing bytes alike.
 * <p>
 * <b>Design note:</b> the partition state is length-prefixed although it is the last field, so that a truncated
 * message is told from a malformed state, and so that a later version can append fields after it. Counts are
 * checked against the message length before any array is allocated: a hostile count cannot make the decoder
 * allocate more than the message's own size.
 * <p>
 * Constants only.
 */
final class ControlMessageDescriptor
{
    /** The format version this codec writes and the only one it reads. */
    static final int VERSION = 1;

    static final int REGISTER_HOST = 1;
    static final int HEARTBEAT = 2;
    static final int UNREGISTER_HOST = 3;
    static final int ALTER_ISR = 4;
    static final int PARTITION_UPDATE = 5;
    static final int ALTER_ISR_RESPONSE = 6;
    static final int REGISTERED = 7;
    static final int SESSION_EXPIRED = 8;
    static final int CONTROLLER_ALIVE = 9;

    static final int VERSION_OFFSET = 0;
    static final int TYPE_OFFSET = 1;
    static final int FLAGS_OFFSET = 2;
    static final int HEADER_LENGTH = 4;

    /** Offsets shared by the host messages (REGISTER_HOST, HEARTBEAT, UNREGISTER_HOST, REGISTERED, ...). */
    static final int HOST_ID_OFFSET = 4;
    static final int INCARNATION_OFFSET = 8;
    static final int STATE_DIGEST_OFFSET = 16;

    static final int PARTITION_ID_OFFSET = 4;
    static final int LEADER_ID_OFFSET = 8;
    static final int LEADER_EPOCH_OFFSET = 12;
    static final int EXPECTED_VERSION_OFFSET = 16;
    static final int ISR_COUNT_OFFSET = 20;
    static final int INCARNATION_COUNT_OFFSET = 24;
    static final int ALTER_ISR_FIXED_LENGTH = 28;

    static final int UPDATE_STATE_LENGTH_OFFSET = 4;
    static final int UPDATE_FIXED_LENGTH = 8;
    static final int RESPONSE_STATE_LENGTH_OFFSET = 8;
    static final int RESPONSE_FIXED_LENGTH = 12;

    static final int HOST_INCARNATION_LENGTH = 16;
    static final int HEARTBEAT_LENGTH = 24;
    static final int SESSION_EXPIRED_LENGTH = 8;

    static final int POSSIBLE_DATA_LOSS_FLAG = 0x1;
    static final int INCARNATIONS_PRESENT_FLAG = 0x1;
    static final int ACCEPTED_FLAG = 0x1;
    static final int CURRENT_PRESENT_FLAG = 0x2;

    private ControlMessageDescriptor()
    {
    }
}
