package io.tidemark.store;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.CheckpointDescriptor;
import io.tidemark.store.format.LogFiles;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import static io.tidemark.store.format.CheckpointDescriptor.META_CREATION_TIME_OFFSET;
import static io.tidemark.store.format.CheckpointDescriptor.META_FIELDS_LENGTH;
import static io.tidemark.store.format.CheckpointDescriptor.META_LENGTH;
import static io.tidemark.store.format.CheckpointDescriptor.META_MAGIC;
import static io.tidemark.store.format.LogFiles.CLEAN_SHUTDOWN_FILE;
import static io.tidemark.store.format.LogFiles.COUNTERS_FILE;
import static io.tidemark.store.format.LogFiles.LOCK_FILE;
import static io.tidemark.store.format.LogFiles.META_FILE;

/**
 * A log directory's identity and ownership: the {@code log.meta} file that marks it as a Tidemark log, the
 * {@code .lock} file held with an OS file lock for as long as the log is open (a second process, or a second open
 * in this JVM, is refused with {@link StorageErrorCode#LOCKED}; the OS releases the lock when a process dies, so a
 * kill -9 never leaves the directory locked), and the {@code .clean-shutdown} marker.
 * Names: {@link LogFiles}; the layout of {@code log.meta}: {@link CheckpointDescriptor}.
 */
final class LogDirectory implements AutoCloseable
{
    private static final Set<Path> OPEN_IN_THIS_JVM = ConcurrentHashMap.newKeySet();

    private final Path dir;
    private final Path canonical;
    private final FileChannel lockChannel;
    private final FileLock lock;
    private final FileSync sync;

    private LogDirectory(
        final Path dir, final Path canonical, final FileChannel lockChannel, final FileLock lock, final FileSync sync)
    {
        this.dir = dir;
        this.canonical = canonical;
        this.lockChannel = lockChannel;
        this.lock = lock;
        this.sync = sync;
    }

    /**
     * Create the directory if needed, take its lock, and check (or, for a new log, write) its meta file.
     *
     * @throws StorageException LOCKED, NOT_A_LOG_DIRECTORY, CORRUPT_LOG or IO_ERROR.
     */
    static LogDirectory open(final Path dir, final long nowMs, final FileSync sync)
    {
        if (Files.exists(dir) && !Files.isDirectory(dir))
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY, dir + " exists and is not a directory");
        }
        final Path canonical;
        try
        {
            Files.createDirectories(dir);
            canonical = dir.toRealPath();
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot create log directory " + dir, ex);
        }
        if (!OPEN_IN_THIS_JVM.add(canonical))
        {
            throw new StorageException(StorageErrorCode.LOCKED, dir + " is already open in this JVM");
        }
        FileChannel channel = null;
        try
        {
            channel = FileChannel.open(dir.resolve(LOCK_FILE),
                StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            final FileLock lock = tryLock(channel, dir);
            channel.truncate(0);
            channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
            final LogDirectory logDirectory = new LogDirectory(dir, canonical, channel, lock, sync);
            logDirectory.checkOrCreateMeta(nowMs);
            return logDirectory;
        }
        catch (final IOException ex)
        {
            IndexFile.closeQuietly(channel);
            OPEN_IN_THIS_JVM.remove(canonical);
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot lock log directory " + dir, ex);
        }
        catch (final RuntimeException | Error ex)
        {
            IndexFile.closeQuietly(channel); // also when the thread dies here (the lock must not outlive the open)
            OPEN_IN_THIS_JVM.remove(canonical);
            throw ex;
        }
    }

    private static FileLock tryLock(final FileChannel channel, final Path dir) throws IOException
    {
        final FileLock lock;
        try
        {
            lock = channel.tryLock();
        }
        catch (final OverlappingFileLockException ex)
        {
            throw new StorageException(StorageErrorCode.LOCKED, dir + " is already open in this JVM", ex);
        }
        if (null == lock)
        {
            String holder = "another process";
            try
            {
                final String pid = Files.readString(dir.resolve(LOCK_FILE), StandardCharsets.US_ASCII).trim();
                if (!pid.isEmpty())
                {
                    holder = "process " + pid;
                }
            }
            catch (final IOException ignore)
            {
                // the holder's identity is a courtesy; the refusal stands without it
            }
            throw new StorageException(StorageErrorCode.LOCKED, dir + " is locked by " + holder);
        }
        return lock;
    }

    private void checkOrCreateMeta(final long nowMs) throws IOException
    {
        final Path meta = dir.resolve(META_FILE);
        final ByteBuffer in = ByteBuffer.allocate(META_LENGTH)
            .order(ByteOrder.LITTLE_ENDIAN);
        final CheckpointFile.Status status;
        try
        {
            status = CheckpointFile.read(meta, META_MAGIC, in);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY, "cannot read " + meta + ": " + ex, ex);
        }
        if (status == CheckpointFile.Status.OK)
        {
            return;
        }
        if (status == CheckpointFile.Status.CORRUPT)
        {
            throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY,
                meta + " is not a valid Tidemark log meta file (wrong length, magic, version or CRC)");
        }
        try (Stream<Path> files = Files.list(dir))
        {
            final Path foreign = files
                .filter((p) -> !isHousekeeping(p.getFileName().toString()))
                .findFirst()
                .orElse(null);
            if (null != foreign)
            {
                throw new StorageException(StorageErrorCode.NOT_A_LOG_DIRECTORY, dir + " holds " +
                    foreign.getFileName() + " but no " + META_FILE + ": it is not a Tidemark log directory");
            }
        }
        final ByteBuffer out = CheckpointFile.allocate(META_MAGIC, META_FIELDS_LENGTH);
        out.putLong(META_CREATION_TIME_OFFSET, nowMs);
        CheckpointFile.write(meta, out, sync);
    }

    private static boolean isHousekeeping(final String name)
    {
        return name.equals(LOCK_FILE) || name.equals(COUNTERS_FILE) || name.endsWith(CheckpointDescriptor.TMP_SUFFIX);
    }

    Path dir()
    {
        return dir;
    }

    boolean hasCleanShutdownMarker()
    {
        return Files.exists(dir.resolve(CLEAN_SHUTDOWN_FILE));
    }

    void deleteCleanShutdownMarker() throws IOException
    {
        if (Files.deleteIfExists(dir.resolve(CLEAN_SHUTDOWN_FILE)))
        {
            sync.forceDirectory(dir);
        }
    }

    void writeCleanShutdownMarker() throws IOException
    {
        final Path marker = dir.resolve(CLEAN_SHUTDOWN_FILE);
        try (FileChannel channel = FileChannel.open(marker, StandardOpenOption.CREATE, StandardOpenOption.WRITE))
        {
            sync.force(channel, true);
        }
        sync.forceDirectory(dir);
    }

    /** Release the lock (idempotent). */
    @Override
    public void close()
    {
        if (lockChannel.isOpen())
        {
            try
            {
                lock.release();
            }
            catch (final IOException ignore)
            {
                // closing the channel releases the lock as well
            }
            IndexFile.closeQuietly(lockChannel);
            OPEN_IN_THIS_JVM.remove(canonical);
        }
    }
}
