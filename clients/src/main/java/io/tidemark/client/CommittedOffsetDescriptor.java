package io.tidemark.client;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.format.CheckpointDescriptor;

/**
 * Layout of a committed-offset file, {@code <offsets.dir>/<group.id>/<topic>-<partition>.offset}, written
 * atomically by {@link CheckpointFile} (temporary file, fsync, rename, directory fsync). Little-endian.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                      Magic ("TMCO")                           |  0
 *  +---------------------------------------------------------------+
 *  |                         Version (1)                           |  4
 *  +---------------------------------------------------------------+
 *  |               Committed Offset (int64): next to read          |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |     Leader Epoch of the record before it (int32, -1 unknown)  |  16
 *  +---------------------------------------------------------------+
 *  |                        Reserved (0)                           |  20
 *  +---------------------------------------------------------------+
 *  |                Commit Time (int64, epoch millis)              |  24
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                CRC32C of all preceding bytes                  |  32
 *  +---------------------------------------------------------------+
 * </pre>
 * <b>Design note.</b> One small file per group and partition, rather than one per group: consumers of a group that
 * share the partitions never read-modify-write each other's offsets, and a commit of one partition costs one
 * atomic replace. The leader epoch is kept so that a consumer resuming from the offset can tell, as the consumer
 * that committed it could, whether the log was truncated under it (KIP-320).
 */
final class CommittedOffsetDescriptor
{
    /** "TMCO", little-endian. */
    static final int MAGIC = 0x4F434D54;
    /** Offset of the committed offset. */
    static final int OFFSET_OFFSET = CheckpointDescriptor.FIELDS_OFFSET;
    /** Offset of the leader epoch. */
    static final int LEADER_EPOCH_OFFSET = OFFSET_OFFSET + 8;
    /** Offset of the reserved word. */
    static final int RESERVED_OFFSET = LEADER_EPOCH_OFFSET + 4;
    /** Offset of the commit time. */
    static final int TIMESTAMP_OFFSET = RESERVED_OFFSET + 4;
    /** Length of the fields. */
    static final int FIELDS_LENGTH = TIMESTAMP_OFFSET + 8 - CheckpointDescriptor.FIELDS_OFFSET;
    /** Suffix of a committed-offset file. */
    static final String SUFFIX = ".offset";

    private CommittedOffsetDescriptor()
    {
    }
}
