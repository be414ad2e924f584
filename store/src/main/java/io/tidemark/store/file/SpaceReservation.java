package io.tidemark.store.file;

import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;

/**
 * Reserves file blocks by writing zeros through a {@link FileChannel} before the region is touched through a
 * mapping.
 * <p>
 * <b>Design note.</b> Writing to a page of a sparse mapped file when the disk is full kills the JVM with SIGBUS;
 * a {@code write(2)} of the same bytes fails cleanly with ENOSPC instead. The JDK offers no {@code fallocate}, so
 * reserving a region means writing its zeros once through the channel; from then on the blocks exist and mapped
 * writes to them cannot fail for lack of space. The cost is a second pass over the bytes, paid off the append
 * path by the log agent, ahead of the writer.
 * <p>
 * Internal: public only so that the store's packages share it; not part of the API. Stateless; thread-safe.
 */
public final class SpaceReservation
{
    private static final int CHUNK = 64 * 1024;
    /** One direct buffer of zeros per writing thread: no allocation and no JDK bounce copy per chunk. */
    private static final ThreadLocal<ByteBuffer> ZEROS = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(CHUNK));

    private SpaceReservation()
    {
    }

    /**
     * Write {@code length} zero bytes at {@code position}.
     *
     * @throws IOException when the write fails (ENOSPC included).
     */
    public static void writeZeros(final FileChannel channel, final long position, final long length) throws IOException
    {
        final long written = writeZerosUpTo(channel, position, length);
        if (written < length)
        {
            throw new IOException("No space left on device (reserved " + written + " of " + length + " bytes)");
        }
    }

    /**
     * Write up to {@code length} zero bytes at {@code position}, stopping at the first failure.
     *
     * @return the bytes written (their blocks now exist), less than {@code length} when the file system filled.
     * @throws IOException when nothing could be written.
     */
    public static long writeZerosUpTo(final FileChannel channel, final long position, final long length) throws IOException
    {
        final ByteBuffer zeros = ZEROS.get();
        long written = 0;
        try
        {
            while (written < length)
            {
                zeros.clear().limit((int)Math.min(CHUNK, length - written));
                while (zeros.hasRemaining())
                {
                    written += channel.write(zeros, position + written);
                }
            }
        }
        catch (final IOException ex)
        {
            if (written == 0)
            {
                throw ex;
            }
        }
        return written;
    }

    /**
     * @param ex   an I/O failure.
     * @param path the file being written.
     * @return true when the failure means the file system is full.
     */
    public static boolean isOutOfSpace(final IOException ex, final Path path)
    {
        final String message = String.valueOf(ex.getMessage()).toLowerCase(java.util.Locale.ROOT);
        if (message.contains("no space left") || message.contains("not enough space") ||
            message.contains("disk quota exceeded") || message.contains("file too large"))
        {
            return true;
        }
        try
        {
            final Path dir = path.toAbsolutePath().getParent();
            return null != dir && java.nio.file.Files.getFileStore(dir).getUsableSpace() < CHUNK;
        }
        catch (final IOException ignore)
        {
            return false;
        }
    }

    /**
     * Turn a failed reservation into the store's typed error.
     *
     * @param ex   the failure.
     * @param path the file being written.
     * @return a STORAGE_SPACE error when the disk is full, an IO_ERROR otherwise.
     */
    public static StorageException toStorageException(final IOException ex, final Path path)
    {
        if (isOutOfSpace(ex, path))
        {
            return new StorageException(StorageErrorCode.STORAGE_SPACE, "no space left to extend " + path, ex);
        }
        return new StorageException(StorageErrorCode.IO_ERROR, "failed to extend " + path, ex);
    }
}
