package io.tidemark.store.file;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * How bytes and names reach stable storage: forcing a range of a mapping, a file channel or a directory entry, and
 * the atomic rename that publishes a checkpoint file ({@link CheckpointFile}).
 * <p>
 * The store funnels every fsync and every checkpoint rename through this interface, and the replication layer its
 * own checkpoints (high watermark, leader epochs) through the one of their log ({@link io.tidemark.store.LogContext#fileSync()}), so
 * that tests and the fault simulation can inject a failing disk (an fsync error must take the log offline, never be
 * retried) or stop the process between two durable steps and look at the files as the disk would hold them.
 * Applications leave the default, {@link #SYSTEM}. Implementations are thread-safe.
 */
public interface FileSync
{
    /** The real thing: msync/fsync through the JDK. */
    FileSync SYSTEM = new FileSync()
    {
        public void force(final MappedByteBuffer mapping, final int offset, final int length)
        {
            mapping.force(offset, length);
        }

        public void force(final FileChannel channel, final boolean metadata) throws IOException
        {
            channel.force(metadata);
        }

        public void forceDirectory(final Path dir) throws IOException
        {
            try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ))
            {
                channel.force(true);
            }
        }
    };

    /**
     * Force a range of a mapping to disk (msync).
     *
     * @param mapping the mapping.
     * @param offset  first byte of the range.
     * @param length  length of the range.
     * @throws java.io.UncheckedIOException if the sync fails.
     */
    void force(MappedByteBuffer mapping, int offset, int length);

    /**
     * Force a file's content (and with {@code metadata}, its size and times) to disk.
     *
     * @param channel  the file.
     * @param metadata whether to sync metadata too.
     * @throws IOException if the sync fails.
     */
    void force(FileChannel channel, boolean metadata) throws IOException;

    /**
     * Make a directory's entries (new, renamed and deleted files) durable.
     *
     * @param dir the directory.
     * @throws IOException if the sync fails.
     */
    void forceDirectory(Path dir) throws IOException;

    /**
     * Atomically replace {@code target} by {@code source} (a checkpoint's temporary file, already forced). The
     * rename is durable once the directory is forced ({@link #forceDirectory}).
     *
     * @param source the file to rename.
     * @param target the name it takes, replacing any file of that name.
     * @throws IOException if the rename fails.
     */
    default void rename(final Path source, final Path target) throws IOException
    {
        Files.move(source, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
