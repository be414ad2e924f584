package io.tidemark.bench.harness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Deletes the temporary directories the harness creates. */
public final class TempDirs
{
    private TempDirs()
    {
    }

    /**
     * Delete a directory tree; a file that cannot be deleted is reported on stderr, not thrown.
     *
     * @param dir the directory (nothing happens when it does not exist).
     */
    public static void deleteRecursively(final Path dir)
    {
        if (null == dir || !Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(TempDirs::deleteQuietly);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("could not delete " + dir, ex);
        }
    }

    private static void deleteQuietly(final Path path)
    {
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            System.err.println("tidemark-bench: could not delete " + path + ": " + ex);
        }
    }
}
