package io.tidemark.store.file;

import io.tidemark.store.ConfigException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Reads a file that holds secrets (the cluster secret, the Kafka listener's user credentials) only when its owner
 * alone may read it: a file that grants any permission to its group or to others, or that is a link to a file of
 * another owner, is refused, so that a configuration file can be shared without the secrets it points to. Where the
 * file system has no POSIX permissions the check is skipped. Errors never contain the file's content.
 * <p>
 * Stateless and thread-safe.
 */
public final class OwnerOnlyFile
{
    private OwnerOnlyFile()
    {
    }

    /**
     * Read a whole owner-only file.
     *
     * @param file      the file.
     * @param configKey the configuration key that named it, for errors.
     * @param what      what it holds, for errors ("secret", "credentials").
     * @param maxBytes  largest size accepted.
     * @return its bytes (the caller clears them when done).
     * @throws ConfigException naming {@code configKey} when the file is missing, unreadable, open to its group or
     *                         others, a link to another owner's file, or larger than {@code maxBytes}.
     */
    public static byte[] read(final Path file, final String configKey, final String what, final long maxBytes)
    {
        if (!Files.isRegularFile(file))
        {
            throw new ConfigException(configKey, "no " + what + " file at " + file);
        }
        try
        {
            checkPermissions(file, configKey, what);
            if (Files.size(file) > maxBytes)
            {
                throw new ConfigException(configKey, what + " file " + file + " is larger than " + maxBytes +
                    " bytes");
            }
            return Files.readAllBytes(file);
        }
        catch (final IOException ex)
        {
            throw new ConfigException(configKey, "cannot read " + what + " file " + file + ": " +
                ex.getClass().getSimpleName());
        }
    }

    /**
     * Refuse a file its group or others may use.
     *
     * @throws ConfigException naming {@code configKey}.
     * @throws IOException     when its attributes cannot be read.
     */
    public static void checkPermissions(final Path file, final String configKey, final String what)
        throws IOException
    {
        final PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (null == view)
        {
            return;
        }
        final Set<PosixFilePermission> permissions = view.readAttributes().permissions();
        final Set<PosixFilePermission> open = EnumSet.noneOf(PosixFilePermission.class);
        for (final PosixFilePermission permission : permissions)
        {
            if (permission.name().startsWith("GROUP_") || permission.name().startsWith("OTHERS_"))
            {
                open.add(permission);
            }
        }
        if (!open.isEmpty())
        {
            throw new ConfigException(configKey, what + " file " + file + " must be readable by its owner only, " +
                "but its mode is " + PosixFilePermissions.toString(permissions) + " (run: chmod 600 " + file + ")");
        }
        if (Files.isSymbolicLink(file) && !view.readAttributes().owner().equals(
            Files.getOwner(file, LinkOption.NOFOLLOW_LINKS)))
        {
            throw new ConfigException(configKey, what + " file " + file + " is a link to a file of another owner");
        }
    }
}
