package io.tidemark.client;

import io.tidemark.replication.TopicPartition;
import io.tidemark.store.file.CheckpointFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A consumer group's committed offsets: one checkpoint file per partition ({@link CommittedOffsetDescriptor}),
 * replaced atomically and fsynced on every commit, so a commit that returned survives a crash or power loss, and a
 * new consumer of the group on the same machine resumes from it.
 * <p>
 * Public for the Kafka listener (module {@code kafka}), which keeps a KafkaConsumer group's commits here, so that
 * Kafka and Tidemark consumers of one group resume from each other's commits.
 * <p>
 * Thread-safe: each operation is self-contained; two consumers must not commit the same partition of one group at
 * the same time (last writer wins, as with an unfenced Kafka commit).
 */
public final class OffsetStore
{
    /**
     * A committed offset and the leader epoch of the record before it.
     *
     * @param offset      the next offset to read.
     * @param leaderEpoch leader epoch of the record before it, or -1.
     */
    public record Committed(long offset, int leaderEpoch)
    {
    }

    private final Path groupDir;

    /**
     * @param offsetsDir the directory of every group's offsets.
     * @param groupId    the group (a directory name: {@code [A-Za-z0-9._-]}).
     */
    public OffsetStore(final Path offsetsDir, final String groupId)
    {
        this.groupDir = offsetsDir.resolve(groupId);
        try
        {
            Files.createDirectories(groupDir);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create the offsets directory " + groupDir, ex);
        }
    }

    Path directory()
    {
        return groupDir;
    }

    private Path file(final TopicPartition tp)
    {
        return groupDir.resolve(tp.logName() + CommittedOffsetDescriptor.SUFFIX);
    }

    /**
     * @return the committed offset, or null when none was committed (or the file is damaged: its CRC fails, and it
     *         is treated as never written).
     */
    public Committed read(final TopicPartition tp) throws IOException
    {
        final ByteBuffer buffer = CheckpointFile.allocate(CommittedOffsetDescriptor.MAGIC,
            CommittedOffsetDescriptor.FIELDS_LENGTH);
        if (CheckpointFile.read(file(tp), CommittedOffsetDescriptor.MAGIC, buffer) != CheckpointFile.Status.OK)
        {
            return null;
        }
        return new Committed(buffer.getLong(CommittedOffsetDescriptor.OFFSET_OFFSET),
            buffer.getInt(CommittedOffsetDescriptor.LEADER_EPOCH_OFFSET));
    }

    /** Store a committed offset durably (returns once it is on disk). */
    public void write(final TopicPartition tp, final long offset, final int leaderEpoch) throws IOException
    {
        final ByteBuffer buffer = CheckpointFile.allocate(CommittedOffsetDescriptor.MAGIC,
            CommittedOffsetDescriptor.FIELDS_LENGTH);
        buffer.putLong(CommittedOffsetDescriptor.OFFSET_OFFSET, offset)
            .putInt(CommittedOffsetDescriptor.LEADER_EPOCH_OFFSET, leaderEpoch)
            .putInt(CommittedOffsetDescriptor.RESERVED_OFFSET, 0)
            .putLong(CommittedOffsetDescriptor.TIMESTAMP_OFFSET, System.currentTimeMillis());
        CheckpointFile.write(file(tp), buffer);
    }
}
