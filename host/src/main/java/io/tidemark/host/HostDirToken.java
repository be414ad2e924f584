package io.tidemark.host;

import io.tidemark.store.file.FileSync;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The token of a host directory: 32 random hex digits in {@code host.token}, made once, that this host's ZooKeeper
 * registration carries. A host that holds the directory's lock ({@code host.lock}) knows that no other live process
 * works in that directory, so a registration that carries the directory's token was left by a process that is dead
 * (killed moments ago, its ZooKeeper session not expired yet): the new process may delete it and register at once
 * instead of waiting the session out. A registration with another token (or none) belongs to a process elsewhere
 * and is waited out as before.
 * <p>
 * The file is written to a temporary file, forced, renamed over the name and the directory forced, so a crash
 * leaves either no token or a whole one. A token file that is missing or not 32 hex digits is replaced by a new
 * token: the only cost is that the registration of the process before it is not recognised and is waited out.
 */
final class HostDirToken
{
    /** The token's file in the host directory. */
    static final String FILE = "host.token";
    /** Hex digits of a token. */
    static final int LENGTH = 32;

    private HostDirToken()
    {
    }

    /**
     * @param dir    the host directory, locked by the caller.
     * @param logger where a replaced damaged token is reported.
     * @return the directory's token, made now if it had none.
     * @throws IOException when the token cannot be read or written.
     */
    static String readOrCreate(final Path dir, final System.Logger logger) throws IOException
    {
        final Path file = dir.resolve(FILE);
        try
        {
            final String text = Files.readString(file, StandardCharsets.US_ASCII).trim();
            if (isToken(text))
            {
                return text;
            }
            logger.log(System.Logger.Level.WARNING, "host directory token " + file + " is damaged (" +
                text.length() + " characters); a new one is made: a registration left by the process before this " +
                "one is waited out");
        }
        catch (final NoSuchFileException ex)
        {
            // first start in this directory
        }
        catch (final java.nio.charset.CharacterCodingException ex)
        {
            logger.log(System.Logger.Level.WARNING, "host directory token " + file + " is not text; a new one " +
                "is made");
        }
        final byte[] random = new byte[LENGTH / 2];
        new SecureRandom().nextBytes(random);
        final String token = HexFormat.of().formatHex(random);
        final Path temporary = dir.resolve(FILE + ".tmp");
        Files.writeString(temporary, token + "\n", StandardCharsets.US_ASCII);
        try (java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(temporary,
            java.nio.file.StandardOpenOption.WRITE))
        {
            FileSync.SYSTEM.force(channel, true);
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        FileSync.SYSTEM.forceDirectory(dir);
        return token;
    }

    /** @return whether {@code text} is exactly a token: {@link #LENGTH} lower-case hex digits. */
    static boolean isToken(final String text)
    {
        if (null == text || text.length() != LENGTH)
        {
            return false;
        }
        for (int i = 0; i < LENGTH; i++)
        {
            final char c = text.charAt(i);
            if (!(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f'))
            {
                return false;
            }
        }
        return true;
    }
}
