package io.tidemark.store;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * How bytes reach stable storage: forcing a range of a mapping, a file channel, or a directory entry.
 * <p>
 * The store funnels every fsync through this interface so that tests can inject a failing disk (an fsync error
 * must take the log offline, never be retried). Implementations are thread-safe.
 */
interface FileSync
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
}
