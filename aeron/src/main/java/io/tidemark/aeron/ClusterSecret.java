package io.tidemark.aeron;

import io.tidemark.store.ConfigException;
import io.tidemark.store.file.OwnerOnlyFile;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;

/**
 * The cluster's shared secret, which keys the authentication tag of every message between hosts and between
 * clients and hosts ({@link FrameDescriptor}), or the explicit choice to run without one ({@link #insecure()}, for
 * local try-outs).
 * <p>
 * The secret lives in a file of its own that only its owner may read: {@link #load} refuses a file that grants any
 * permission to its group or to others, so that a configuration file can be shared without the secret. Its content
 * is at least {@link #MIN_LENGTH} bytes (surrounding white space ignored); {@link #generate} writes 32 random bytes,
 * Base64-encoded, with mode 0600. Every host and client of a cluster uses the same file content.
 * <p>
 * The secret is never logged: {@link #toString} names the file only. Immutable and thread-safe; each
 * {@link #newMac()} is for one thread.
 */
public final class ClusterSecret
{
    /** Fewest bytes a secret file must hold. */
    public static final int MIN_LENGTH = 32;
    /** Most bytes a secret file may hold. */
    public static final int MAX_LENGTH = 4096;

    private static final ClusterSecret INSECURE = new ClusterSecret(null, null);

    private final byte[] key;
    private final Path file;

    private ClusterSecret(final byte[] key, final Path file)
    {
        this.key = key;
        this.file = file;
    }

    /** @return no secret: messages carry no tag and none is checked. Only for local try-outs. */
    public static ClusterSecret insecure()
    {
        return INSECURE;
    }

    /**
     * Read the secret from a file readable by its owner only.
     *
     * @param file       the secret file.
     * @param configKey  the configuration key that named it, for the error.
     * @return the secret.
     * @throws ConfigException naming {@code configKey} when the file is missing, unreadable, grants permissions to
     *                         its group or others, or holds fewer than {@link #MIN_LENGTH} or more than
     *                         {@link #MAX_LENGTH} bytes. The message never contains the file's content.
     */
    public static ClusterSecret load(final Path file, final String configKey)
    {
        if (!Files.isRegularFile(file))
        {
            throw new ConfigException(configKey, "no secret file at " + file + " (create one with: tidemark secret " +
                file + ")");
        }
        try
        {
            OwnerOnlyFile.checkPermissions(file, configKey, "secret");
            if (Files.size(file) > MAX_LENGTH + 64L)
            {
                throw new ConfigException(configKey, "secret file " + file + " is larger than " + MAX_LENGTH +
                    " bytes");
            }
            final byte[] content = trim(Files.readAllBytes(file));
            if (content.length < MIN_LENGTH || content.length > MAX_LENGTH)
            {
                final int length = content.length;
                Arrays.fill(content, (byte)0);
                throw new ConfigException(configKey, "secret file " + file + " holds " + length + " bytes; a secret " +
                    "needs " + MIN_LENGTH + " to " + MAX_LENGTH + " (tidemark secret FILE writes one)");
            }
            return new ClusterSecret(content, file);
        }
        catch (final IOException ex)
        {
            throw new ConfigException(configKey, "cannot read secret file " + file + ": " + ex.getClass()
                .getSimpleName());
        }
    }

    /**
     * Write a new secret: 32 random bytes from {@link SecureRandom}, Base64-encoded, in a new file created with
     * mode 0600 (where the file system has POSIX permissions).
     *
     * @param file where; must not exist.
     * @throws IOException when it exists or cannot be written.
     */
    public static void generate(final Path file) throws IOException
    {
        final byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        final byte[] text = (Base64.getEncoder().encodeToString(random) + "\n").getBytes(
            java.nio.charset.StandardCharsets.US_ASCII);
        if (null != Files.getFileAttributeView(file.toAbsolutePath().getParent(), PosixFileAttributeView.class))
        {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        else
        {
            Files.createFile(file);
        }
        Files.write(file, text);
        Arrays.fill(random, (byte)0);
    }

    private static byte[] trim(final byte[] bytes)
    {
        int start = 0;
        int end = bytes.length;
        while (start < end && Character.isWhitespace(bytes[start]))
        {
            start++;
        }
        while (end > start && Character.isWhitespace(bytes[end - 1]))
        {
            end--;
        }
        final byte[] trimmed = Arrays.copyOfRange(bytes, start, end);
        Arrays.fill(bytes, (byte)0);
        return trimmed;
    }

    /** @return whether messages are authenticated (false only for {@link #insecure()}). */
    public boolean authenticates()
    {
        return null != key;
    }

    /**
     * @return a new HMAC keyed with the secret, for one thread.
     * @throws IllegalStateException for {@link #insecure()}.
     */
    public HmacSha256 newMac()
    {
        if (null == key)
        {
            throw new IllegalStateException("an insecure cluster has no secret");
        }
        return new HmacSha256(key);
    }

    @Override
    public String toString()
    {
        return null == key ? "ClusterSecret{insecure}" : "ClusterSecret{" + file + "}";
    }
}
