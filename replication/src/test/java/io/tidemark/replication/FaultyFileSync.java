package io.tidemark.replication;

import io.tidemark.store.file.FileSync;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Random;

/**
 * The durability seam of one replica log ({@link io.tidemark.store.LogContext#fileSync}) for tests and the fault
 * simulation: it forwards to the real {@link FileSync#SYSTEM}, and before each durable step asks a {@link Faults}
 * whether that step fails (an I/O error, a full disk) or whether the host stops right there ({@link Crash}, an
 * {@link Error} that unwinds the host's duty cycle, so that the caller kills the host with its files as they are:
 * what was written is in the page cache, what was forced is on disk).
 * <p>
 * Every durable step of the store and of the replication checkpoints goes through here: forcing a mapping range (log
 * data, indexes), forcing a file (a checkpoint's temporary file, a trimmed segment), the checkpoint rename, and forcing
 * the directory. A crash "before" each step covers every window between two of them: after a checkpoint's temporary
 * file was written but not forced, after it was forced but not renamed, after the rename but before the directory
 * was forced (ALICE's crash states of an atomic replace).
 * <p>
 * Renames not yet made durable by a directory force are remembered ({@link Renames}) so that a power loss can undo
 * them, as a file system may: the old version of the file comes back.
 */
final class FaultyFileSync implements FileSync
{
    /** A durable step. */
    enum Step
    {
        FORCE_MAPPING,
        FORCE_FILE,
        RENAME,
        FORCE_DIRECTORY
    }

    /** What happens at a durable step. */
    enum Fault
    {
        NONE,
        /** EIO. */
        IO_ERROR,
        /** ENOSPC. */
        NO_SPACE,
        /** The host stops before the step (kill -9 or power loss, as the caller decides). */
        CRASH
    }

    /** Decides, for each durable step of a host, what happens. Called on the thread taking the step. */
    @FunctionalInterface
    interface Faults
    {
        /**
         * @param host the host whose log takes the step.
         * @param step the step.
         * @param path the file renamed (its new name), the directory forced, or null for a data force.
         * @return what happens.
         */
        Fault at(int host, Step step, Path path);
    }

    /** The host stops here: thrown out of its duty cycle; the caller kills it. */
    static final class Crash extends Error
    {
        private static final long serialVersionUID = 1L;
        final int host;

        Crash(final int host, final Step step, final Path path)
        {
            super("host " + host + " stops before " + step + (null == path ? "" : " of " + path.getFileName()), null,
                false, false);
            this.host = host;
        }
    }

    /** An injected I/O failure (its message names the errno, so that the store classifies it as a real one). */
    static final class InjectedIOException extends IOException
    {
        private static final long serialVersionUID = 1L;

        InjectedIOException(final String message)
        {
            super(message);
        }
    }

    /**
     * Renames whose directory has not been forced since, by target: the content the target had before (null when it
     * did not exist). Thread-safe.
     */
    static final class Renames
    {
        private final Map<Path, byte[]> before = new HashMap<>();
        private final Map<Path, Boolean> existed = new HashMap<>();

        synchronized void renamed(final Path file) throws IOException
        {
            final Path target = file.toAbsolutePath();
            if (!existed.containsKey(target))
            {
                final boolean exists = Files.isRegularFile(target);
                existed.put(target, exists);
                before.put(target, exists ? Files.readAllBytes(target) : null);
            }
        }

        synchronized void directoryForced(final Path forced)
        {
            final Path dir = forced.toAbsolutePath();
            existed.keySet().removeIf((target) -> dir.equals(target.getParent()));
            before.keySet().removeIf((target) -> dir.equals(target.getParent()));
        }

        /**
         * A power loss under {@code root}: each rename not made durable is undone or kept, at random.
         *
         * @return how many were undone.
         */
        synchronized int powerLoss(final Path hostRoot, final Random random) throws IOException
        {
            final Path root = hostRoot.toAbsolutePath();
            int undone = 0;
            for (final Iterator<Map.Entry<Path, Boolean>> it = existed.entrySet().iterator(); it.hasNext(); )
            {
                final Map.Entry<Path, Boolean> e = it.next();
                final Path target = e.getKey();
                if (!target.startsWith(root))
                {
                    continue;
                }
                if (random.nextBoolean())
                {
                    undone++;
                    if (e.getValue())
                    {
                        Files.write(target, before.get(target));
                    }
                    else
                    {
                        Files.deleteIfExists(target);
                    }
                }
                before.remove(target);
                it.remove();
            }
            return undone;
        }

        /** The host's files were replaced as a whole (a clean stop forced everything): nothing pending under it. */
        synchronized void forget(final Path hostRoot)
        {
            final Path root = hostRoot.toAbsolutePath();
            existed.keySet().removeIf((target) -> target.startsWith(root));
            before.keySet().removeIf((target) -> target.startsWith(root));
        }
    }

    private final int host;
    private final Faults faults;
    private final Renames renames;

    FaultyFileSync(final int host, final Faults faults, final Renames renames)
    {
        this.host = host;
        this.faults = faults;
        this.renames = renames;
    }

    /** @return the host id of a replica log directory {@code <root>/host-<id>/<log>}, or -1. */
    static int hostOf(final Path logDir)
    {
        final Path parent = logDir.toAbsolutePath().getParent();
        final String name = null == parent ? "" : parent.getFileName().toString();
        return name.startsWith("host-") ? Integer.parseInt(name.substring(5)) : -1;
    }

    private IOException failure(final Fault fault, final Step step, final Path path)
    {
        return new InjectedIOException((fault == Fault.NO_SPACE ? "No space left on device" :
            "Input/output error") + " (injected at " + step + (null == path ? "" : " of " + path) + ")");
    }

    private void check(final Step step, final Path path) throws IOException
    {
        final Fault fault = faults.at(host, step, path);
        switch (fault)
        {
            case NONE:
                return;
            case CRASH:
                throw new Crash(host, step, path);
            default:
                throw failure(fault, step, path);
        }
    }

    @Override
    public void force(final MappedByteBuffer mapping, final int offset, final int length)
    {
        try
        {
            check(Step.FORCE_MAPPING, null);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        FileSync.SYSTEM.force(mapping, offset, length);
    }

    @Override
    public void force(final FileChannel channel, final boolean metadata) throws IOException
    {
        check(Step.FORCE_FILE, null);
        FileSync.SYSTEM.force(channel, metadata);
    }

    @Override
    public void rename(final Path source, final Path target) throws IOException
    {
        check(Step.RENAME, target);
        renames.renamed(target);
        FileSync.SYSTEM.rename(source, target);
    }

    @Override
    public void forceDirectory(final Path dir) throws IOException
    {
        check(Step.FORCE_DIRECTORY, dir);
        FileSync.SYSTEM.forceDirectory(dir);
        renames.directoryForced(dir);
    }
}
