package io.tidemark.store.file;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

import static io.tidemark.store.format.CheckpointDescriptor.CRC_LENGTH;
import static io.tidemark.store.format.CheckpointDescriptor.FIELDS_OFFSET;
import static io.tidemark.store.format.CheckpointDescriptor.MAGIC_OFFSET;
import static io.tidemark.store.format.CheckpointDescriptor.TMP_SUFFIX;
import static io.tidemark.store.format.CheckpointDescriptor.VERSION;
import static io.tidemark.store.format.CheckpointDescriptor.VERSION_OFFSET;
/**
 * Small binary files written atomically: {@code name.tmp} is written, fsynced, renamed over {@code name}, and
 * the directory is fsynced, so a reader sees the old or the new version and never a torn one. Every payload ends
 * with a CRC32C of the bytes before it, so a file damaged some other way is detected, not trusted.
 * The framing (magic, version, the kind's fields, CRC32C) is laid out in
 * {@link io.tidemark.store.format.CheckpointDescriptor}.
 * Public so that other modules (replication's high-watermark and leader-epoch checkpoints) share one atomic-write
 * path. Thread-safe: every operation is self-contained; concurrent writers of one file must be serialized by the
 * caller.
 */
public final class CheckpointFile
{
    /** Outcome of reading a checkpoint file. */
    public enum Status
    {
        /** Read and verified. */
        OK,
        /** The file does not exist. */
        MISSING,
        /** Wrong length, magic, version or CRC: the content is not trusted. */
        CORRUPT
    }

    private CheckpointFile()
    {
    }

    /**
     * @param magic      the kind of file.
     * @param fieldBytes length of the kind's fields.
     * @return a little-endian buffer with magic and version written, positioned at the fields.
     */
    public static ByteBuffer allocate(final int magic, final int fieldBytes)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(FIELDS_OFFSET + fieldBytes + CRC_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(MAGIC_OFFSET, magic).putInt(VERSION_OFFSET, VERSION);
        return buffer;
    }

    /**
     * Seal the buffer with its CRC and write it atomically, syncing through the JDK.
     *
     * @param file    destination.
     * @param content from {@link #allocate}, fields filled in.
     * @throws IOException when writing, syncing or renaming fails.
     */
    public static void write(final Path file, final ByteBuffer content) throws IOException
    {
        write(file, content, FileSync.SYSTEM);
    }

    /**
     * Seal the buffer with its CRC and write it atomically: the temporary file is written and forced, renamed over
     * {@code file}, and the directory forced, each step through {@code sync}.
     *
     * @param file    destination.
     * @param content from {@link #allocate}, fields filled in.
     * @param sync    how the bytes and the rename reach the disk (a log's: {@link io.tidemark.store.LogContext#fileSync()}).
     * @throws IOException when writing, syncing or renaming fails.
     */
    public static void write(final Path file, final ByteBuffer content, final FileSync sync) throws IOException
    {
        final int crcOffset = content.capacity() - CRC_LENGTH;
        final CRC32C crc = new CRC32C();
        crc.update(content.array(), 0, crcOffset);
        content.putInt(crcOffset, (int)crc.getValue());

        final Path tmp = file.resolveSibling(file.getFileName() + TMP_SUFFIX);
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            final ByteBuffer src = ByteBuffer.wrap(content.array());
            while (src.hasRemaining())
            {
                channel.write(src);
            }
            sync.force(channel, true);
        }
        sync.rename(tmp, file);
        sync.forceDirectory(file.toAbsolutePath().getParent());
    }

    /**
     * Read and verify a file of the given kind into {@code into} (whose capacity is the expected length).
     *
     * @param file  the file.
     * @param magic expected magic number.
     * @param into  little-endian buffer of the expected length.
     * @return whether it was read, missing, or corrupt.
     * @throws IOException when the file exists but cannot be read.
     */
    public static Status read(final Path file, final int magic, final ByteBuffer into) throws IOException
    {
        final long size;
        try
        {
            size = Files.size(file);
        }
        catch (final NoSuchFileException ex)
        {
            return Status.MISSING;
        }
        if (!Files.isRegularFile(file))
        {
            throw new FileSystemException(file.toString(), null, "not a regular file");
        }
        if (size != into.capacity())
        {
            return Status.CORRUPT; // checked before reading: an oversized file is never read whole
        }
        final byte[] bytes;
        try
        {
            bytes = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            return Status.MISSING;
        }
        if (bytes.length != into.capacity())
        {
            return Status.CORRUPT;
        }
        into.clear();
        into.put(bytes).clear();
        final int crcOffset = bytes.length - CRC_LENGTH;
        final CRC32C crc = new CRC32C();
        crc.update(bytes, 0, crcOffset);
        if (into.getInt(MAGIC_OFFSET) != magic || into.getInt(VERSION_OFFSET) != VERSION ||
            into.getInt(crcOffset) != (int)crc.getValue())
        {
            return Status.CORRUPT;
        }
        return Status.OK;
    }
}
