package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.replication.spi.CachedControllerStore;
import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.format.CheckpointDescriptor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The controller's durable state in a directory, for controllers of one JVM: one file per partition,
 * {@code partition-<id>.state}, replaced atomically on every change and only by compare-and-set on the version, and
 * the producer id reservations in {@code producer-ids}. A new controller instance over the same directory
 * (controller failover) reads back exactly what the last one committed.
 * <pre>
 *  partition-&lt;id&gt;.state (framing: CheckpointFile, magic 'TMPS'; fields: PartitionStateCodec)
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
public final class FileControllerStore extends CachedControllerStore
{
    static final int MAGIC = 0x53504D54;
    private static final int PRODUCER_ID_MAGIC = 0x44494D54;

    private final Path dir;
    private final Path producerIdFile;

    /**
     * Open (creating it if needed) the controller state in {@code dir}.
     *
     * @param dir the directory.
     */
    public FileControllerStore(final Path dir)
    {
        this.producerIdFile = dir.resolve("producer-ids");
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
        in.position(CheckpointDescriptor.FIELDS_OFFSET);
        return PartitionStateCodec.decode(in);
    }

    private void write(final PartitionState state)
    {
        final ByteBuffer out = CheckpointFile.allocate(MAGIC, PartitionStateCodec.encodedLength(state));
        out.position(CheckpointDescriptor.FIELDS_OFFSET);
        PartitionStateCodec.encode(state, out);
        try
        {
            CheckpointFile.write(dir.resolve("partition-" + state.partitionId() + ".state"), out);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot write controller state of " + state.topicPartition(), ex);
        }
    }

    @Override
    public PartitionState create(final PartitionState state)
    {
        if (state.partitionId() != states.size())
        {
            throw new IllegalStateException("partition ids are dense: expected " + states.size());
        }
        write(state);
        states.add(state);
        return state;
    }

    @Override
    public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
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

    @Override
    public long reserveProducerIds(final int count)
    {
        try
        {
            final ByteBuffer in = ByteBuffer.allocate(CheckpointDescriptor.FIELDS_OFFSET + 12).order(ByteOrder.LITTLE_ENDIAN);
            long reservedUpTo = 0;
            if (CheckpointFile.read(producerIdFile, PRODUCER_ID_MAGIC, in) == CheckpointFile.Status.OK)
            {
                reservedUpTo = in.getLong(CheckpointDescriptor.FIELDS_OFFSET);
            }
            final ByteBuffer out = CheckpointFile.allocate(PRODUCER_ID_MAGIC, 8);
            out.putLong(CheckpointDescriptor.FIELDS_OFFSET, reservedUpTo + count);
            CheckpointFile.write(producerIdFile, out);
            return reservedUpTo;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot reserve producer ids in " + producerIdFile, ex);
        }
    }

    @Override
    public void close()
    {
    }
}
