package io.tidemark.replication;

import io.tidemark.store.CheckpointFile;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The controller's durable partition state: one file per partition, {@code partition-<id>.state}, replaced
 * atomically on every change and only by compare-and-set on the version. A new controller instance over the same
 * directory (controller failover) reads back exactly what the last one committed.
 * <pre>
 *  partition-&lt;id&gt;.state (framing: CheckpointFile, magic 'TMPS')
 *  +---------------------------------------------------------------+
 *  |                      Magic, Version (8 bytes)                ...  0
 *  +---------------------------------------------------------------+
 *  |    Partition Id   |  Partition Number  |  Leader  |  Epoch    |  8, 12, 16, 20
 *  +---------------------------------------------------------------+
 *  |  State Version  |  AR count  |  ISR count  |  Topic length    | 24, 28, 32, 36
 *  +---------------------------------------------------------------+
 *  |          ELR count            |      Recovering count         | 40, 44
 *  +---------------------------------------------------------------+
 *  |   Topic (UTF-8), then host ids (int32): AR, ISR, ELR, recovering ... 48
 *  +---------------------------------------------------------------+
 *  |                            CRC32C                             |
 *  +---------------------------------------------------------------+
 * </pre>
 * Not thread-safe: the controller serializes access.
 */
final class PartitionStateStore
{
    static final int MAGIC = 0x53504D54;
    private static final int FIXED = 40;

    private final Path dir;
    private final List<PartitionState> states = new ArrayList<>();

    PartitionStateStore(final Path dir)
    {
        this.dir = dir;
        try
        {
            Files.createDirectories(dir);
            load();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open controller state in " + dir, ex);
        }
    }

    private void load() throws IOException
    {
        final List<Path> files;
        try (Stream<Path> list = Files.list(dir))
        {
            files = list.filter((p) -> p.getFileName().toString().matches("partition-\\d+\\.state")).toList();
        }
        for (final Path file : files)
        {
            final PartitionState state = read(file);
            while (states.size() <= state.partitionId())
            {
                states.add(null);
            }
            states.set(state.partitionId(), state);
        }
        for (int i = 0; i < states.size(); i++)
        {
            if (null == states.get(i))
            {
                throw new IllegalStateException("controller state in " + dir + " lacks partition " + i);
            }
        }
    }

    private static PartitionState read(final Path file) throws IOException
    {
        final long length = Files.size(file);
        final ByteBuffer in = ByteBuffer.allocate((int)length).order(ByteOrder.LITTLE_ENDIAN);
        final CheckpointFile.Status status = CheckpointFile.read(file, MAGIC, in);
        if (status != CheckpointFile.Status.OK)
        {
            throw new IllegalStateException("controller state file " + file + " is " + status);
        }
        int at = CheckpointFile.FIELDS_OFFSET;
        final int id = in.getInt(at);
        final int number = in.getInt(at + 4);
        final int leader = in.getInt(at + 8);
        final int epoch = in.getInt(at + 12);
        final int version = in.getInt(at + 16);
        final int arCount = in.getInt(at + 20);
        final int isrCount = in.getInt(at + 24);
        final int topicLength = in.getInt(at + 28);
        final int elrCount = in.getInt(at + 32);
        final int recoveringCount = in.getInt(at + 36);
        at += FIXED;
        final byte[] topic = new byte[topicLength];
        in.get(at, topic);
        at += topicLength;
        final int[] ar = new int[arCount];
        for (int i = 0; i < arCount; i++, at += 4)
        {
            ar[i] = in.getInt(at);
        }
        final int[] isr = new int[isrCount];
        for (int i = 0; i < isrCount; i++, at += 4)
        {
            isr[i] = in.getInt(at);
        }
        final int[] elr = new int[elrCount];
        for (int i = 0; i < elrCount; i++, at += 4)
        {
            elr[i] = in.getInt(at);
        }
        final int[] recovering = new int[recoveringCount];
        for (int i = 0; i < recoveringCount; i++, at += 4)
        {
            recovering[i] = in.getInt(at);
        }
        return new PartitionState(id, new TopicPartition(new String(topic, StandardCharsets.UTF_8), number), ar, isr,
            elr, recovering, leader, epoch, version);
    }

    private void write(final PartitionState state)
    {
        final byte[] topic = state.topicPartition().topic().getBytes(StandardCharsets.UTF_8);
        final ByteBuffer out = CheckpointFile.allocate(MAGIC,
            FIXED + topic.length + 4 * (state.assignedReplicas().length + state.isr().length +
            state.eligible().length + state.recovering().length));
        int at = CheckpointFile.FIELDS_OFFSET;
        out.putInt(at, state.partitionId()).putInt(at + 4, state.topicPartition().partition())
            .putInt(at + 8, state.leader()).putInt(at + 12, state.leaderEpoch()).putInt(at + 16, state.version())
            .putInt(at + 20, state.assignedReplicas().length).putInt(at + 24, state.isr().length)
            .putInt(at + 28, topic.length).putInt(at + 32, state.eligible().length)
            .putInt(at + 36, state.recovering().length);
        at += FIXED;
        out.put(at, topic);
        at += topic.length;
        for (final int host : state.assignedReplicas())
        {
            out.putInt(at, host);
            at += 4;
        }
        for (final int host : state.isr())
        {
            out.putInt(at, host);
            at += 4;
        }
        for (final int host : state.eligible())
        {
            out.putInt(at, host);
            at += 4;
        }
        for (final int host : state.recovering())
        {
            out.putInt(at, host);
            at += 4;
        }
        try
        {
            CheckpointFile.write(dir.resolve("partition-" + state.partitionId() + ".state"), out);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write controller state of " + state.topicPartition(), ex);
        }
    }

    /** Store a new partition (version 0). */
    PartitionState create(final PartitionState state)
    {
        if (state.partitionId() != states.size())
        {
            throw new IllegalStateException("partition ids are dense: expected " + states.size());
        }
        write(state);
        states.add(state);
        return state;
    }

    /**
     * Replace a partition's state if its current version is {@code expectedVersion}.
     *
     * @return the stored state, or null when the version did not match (nothing written).
     */
    PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
    {
        final PartitionState current = states.get(next.partitionId());
        if (current.version() != expectedVersion || next.version() != expectedVersion + 1)
        {
            return null;
        }
        write(next);
        states.set(next.partitionId(), next);
        return next;
    }

    PartitionState get(final int partitionId)
    {
        return partitionId >= 0 && partitionId < states.size() ? states.get(partitionId) : null;
    }

    List<PartitionState> all()
    {
        return List.copyOf(states);
    }

    int size()
    {
        return states.size();
    }
}
