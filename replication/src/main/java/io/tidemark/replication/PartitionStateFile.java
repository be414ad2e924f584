package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * A host's view of a partition: the last state it applied, kept beside the replica's log as {@code partition.state},
 * so that an operator can rebuild a partition state whose stored copy (a znode) is damaged
 * ({@code tidemark partition repair}).
 * <pre>
 *  0        4        8
 *  +--------+--------+--------------------------------------+--------+
 *  | magic  | length | PartitionStateCodec bytes (length)    | CRC32  |
 *  +--------+--------+--------------------------------------+--------+
 * </pre>
 * Little-endian; the CRC covers the state bytes. Written to a temporary file and renamed over the old one, so a crash
 * leaves the old view or the new one; not synced (an advisory copy: losing the latest view to a power loss leaves an
 * older one, which the repair's epoch bump still supersedes).
 */
public final class PartitionStateFile
{
    /** The file's name in a replica's log directory. */
    public static final String NAME = "partition.state";
    private static final int MAGIC = 0x5350_4D54; // "TMPS"
    private static final int HEADER = 8;
    private static final int MAX_LENGTH = 64 * 1024;

    private PartitionStateFile()
    {
    }

    /** Write {@code state} as the view of the replica in {@code logDir}. */
    static void write(final Path logDir, final PartitionState state) throws IOException
    {
        final byte[] bytes = PartitionStateCodec.encode(state);
        final CRC32 crc = new CRC32();
        crc.update(bytes);
        final ByteBuffer out = ByteBuffer.allocate(HEADER + bytes.length + 4).order(ByteOrder.LITTLE_ENDIAN);
        out.putInt(MAGIC).putInt(bytes.length).put(bytes).putInt((int)crc.getValue());
        final Path temporary = logDir.resolve(NAME + ".tmp");
        Files.write(temporary, out.array());
        try
        {
            Files.move(temporary, logDir.resolve(NAME), StandardCopyOption.REPLACE_EXISTING,
                StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final AtomicMoveNotSupportedException ex)
        {
            Files.move(temporary, logDir.resolve(NAME), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /**
     * @param file a {@code partition.state} file.
     * @return the state it holds.
     * @throws IOException              when it cannot be read.
     * @throws IllegalArgumentException when it is not a whole, undamaged view.
     */
    public static PartitionState read(final Path file) throws IOException
    {
        if (Files.size(file) > HEADER + MAX_LENGTH + 4)
        {
            throw new IllegalArgumentException(file + " is too large for a partition state");
        }
        final ByteBuffer in = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        if (in.remaining() < HEADER + 4 || in.getInt() != MAGIC)
        {
            throw new IllegalArgumentException(file + " is not a partition state file");
        }
        final int length = in.getInt();
        if (length < 0 || length != in.remaining() - 4)
        {
            throw new IllegalArgumentException(file + " is truncated or has trailing bytes");
        }
        final byte[] bytes = new byte[length];
        in.get(bytes);
        final CRC32 crc = new CRC32();
        crc.update(bytes);
        if ((int)crc.getValue() != in.getInt())
        {
            throw new IllegalArgumentException(file + " fails its CRC");
        }
        final ByteBuffer state = ByteBuffer.wrap(bytes);
        final PartitionState decoded = PartitionStateCodec.decode(state);
        if (state.hasRemaining())
        {
            throw new IllegalArgumentException(file + " has bytes after its state");
        }
        return decoded;
    }

    /**
     * @param hostDir a host's directory.
     * @param partitionId a partition id.
     * @return the host's views of that partition (normally one; none when the host has no replica of it or its view
     *         is unreadable).
     * @throws IOException when the directory cannot be listed.
     */
    public static List<PartitionState> find(final Path hostDir, final int partitionId) throws IOException
    {
        final List<PartitionState> found = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(hostDir))
        {
            for (final Path dir : dirs.filter(Files::isDirectory).toList())
            {
                final Path file = dir.resolve(NAME);
                if (Files.isRegularFile(file))
                {
                    try
                    {
                        final PartitionState state = read(file);
                        if (state.partitionId() == partitionId)
                        {
                            found.add(state);
                        }
                    }
                    catch (final IllegalArgumentException ex)
                    {
                        // another replica's damaged view: not this one
                    }
                }
            }
        }
        return found;
    }
}
