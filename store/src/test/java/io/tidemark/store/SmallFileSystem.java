package io.tidemark.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A size-limited tmpfs mounted for a test (needs root, as in CI); {@link #mount} returns null when the
 * environment cannot mount one, and the caller skips with the reason.
 */
final class SmallFileSystem implements AutoCloseable
{
    private final Path mountPoint;

    private SmallFileSystem(final Path mountPoint)
    {
        this.mountPoint = mountPoint;
    }

    static SmallFileSystem mount(final Path mountPoint, final int megabytes) throws IOException, InterruptedException
    {
        Files.createDirectories(mountPoint);
        final Process process = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=" + megabytes + "m", "tmpfs",
            mountPoint.toString()).redirectErrorStream(true).start();
        final boolean done = process.waitFor(20, TimeUnit.SECONDS);
        if (!done || process.exitValue() != 0)
        {
            return null;
        }
        return new SmallFileSystem(mountPoint);
    }

    Path path()
    {
        return mountPoint;
    }

    @Override
    public void close() throws IOException
    {
        try
        {
            new ProcessBuilder("umount", "-l", mountPoint.toString()).inheritIO().start()
                .waitFor(20, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
