package io.tidemark.store;

import io.tidemark.store.file.SpaceReservation;
import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A size-limited tmpfs mounted for a test (needs root, as in CI); {@link #mount} returns null when the
 * environment cannot mount one, {@link #mountOrSkip} skips the test with the reason. {@link #fillUp} fills it.
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

    /**
     * Mount one, or end the calling test as skipped (a failed JUnit assumption) when this environment cannot.
     */
    static SmallFileSystem mountOrSkip(final Path mountPoint, final int megabytes)
        throws IOException, InterruptedException
    {
        final SmallFileSystem fs = mount(mountPoint, megabytes);
        Assumptions.assumeTrue(null != fs, "cannot mount a " + megabytes + " MiB tmpfs here (needs root): skipped");
        return fs;
    }

    /**
     * Append {@code chunkBytes} at a time to {@code filler} until its file system is full.
     *
     * @throws IOException any failure but running out of space.
     */
    static void fillUp(final Path filler, final int chunkBytes) throws IOException
    {
        final byte[] chunk = new byte[chunkBytes];
        try (RandomAccessFile file = new RandomAccessFile(filler.toFile(), "rw"))
        {
            file.seek(file.length());
            while (true)
            {
                file.write(chunk);
            }
        }
        catch (final IOException full)
        {
            if (!SpaceReservation.isOutOfSpace(full, filler))
            {
                throw full;
            }
        }
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
