package io.tidemark.kafka;

import io.tidemark.store.ConfigException;
import io.tidemark.store.file.OwnerOnlyFile;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The users a SASL listener accepts, read from {@code kafka.sasl.users.file}: one {@code user=password} line each
 * ({@code #} starts a comment; the first {@code =} ends the name, so a password may hold one), in a file only its
 * owner may read (the check the cluster secret file gets, {@link OwnerOnlyFile}). Passwords are not kept: each
 * user gets a salted SHA-256 of the password for PLAIN and, when SCRAM-SHA-256 is enabled, a SCRAM credential
 * (salt, 4096 PBKDF2 iterations, stored and server keys) as RFC 5802 has the server keep.
 * <p>
 * Checks compare digests in constant time ({@link MessageDigest#isEqual}), and an unknown user is checked against a
 * decoy, so that neither the time taken nor the error tells whether a user exists. Immutable and thread-safe.
 */
final class SaslUsers
{
    /** Most bytes of a users file. */
    static final int MAX_FILE_BYTES = 1 << 20;
    /** PBKDF2 iterations of the SCRAM credentials derived from the file (RFC 7677's minimum). */
    static final int SCRAM_ITERATIONS = 4096;

    private final byte[] salt = new byte[16];
    private final Map<String, byte[]> plain = new HashMap<>();
    private final Map<String, ScramCredential> scram = new HashMap<>();
    private final byte[] decoyPlain;
    private final ScramCredential decoyScram;

    private SaslUsers(final boolean withScram)
    {
        final SecureRandom random = new SecureRandom();
        random.nextBytes(salt);
        final byte[] decoyPassword = new byte[24];
        random.nextBytes(decoyPassword);
        this.decoyPlain = digest(decoyPassword);
        this.decoyScram = withScram ? scramCredential(java.util.Base64.getEncoder().encodeToString(decoyPassword)) :
            null;
    }

    /**
     * Read the users file.
     *
     * @param file       {@code user=password} lines.
     * @param mechanisms the mechanisms to prepare credentials for.
     * @throws ConfigException naming {@link KafkaContext#SASL_USERS_FILE} (and the line) when the file is open to
     *                         others, unreadable, empty, or a line is malformed; never with a password in it.
     */
    static SaslUsers load(final Path file, final List<String> mechanisms)
    {
        final byte[] content = OwnerOnlyFile.read(file, KafkaContext.SASL_USERS_FILE, "credentials", MAX_FILE_BYTES);
        final boolean withScram = mechanisms.contains("SCRAM-SHA-256");
        final SaslUsers users = new SaslUsers(withScram);
        final CharBuffer text;
        try
        {
            text = StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(content));
        }
        catch (final java.nio.charset.CharacterCodingException ex)
        {
            throw new ConfigException(KafkaContext.SASL_USERS_FILE, file + " is not UTF-8");
        }
        finally
        {
            Arrays.fill(content, (byte)0);
        }
        final String[] lines = text.toString().split("\r?\n");
        for (int i = 0; i < lines.length; i++)
        {
            final String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#"))
            {
                continue;
            }
            final int eq = line.indexOf('=');
            if (eq <= 0 || eq == line.length() - 1)
            {
                throw new ConfigException(KafkaContext.SASL_USERS_FILE, file + " line " + (i + 1) + ": expected " +
                    "user=password");
            }
            final String user = line.substring(0, eq).strip();
            final String password = line.substring(eq + 1);
            if (user.isEmpty() || user.indexOf(',') >= 0 || user.chars().anyMatch(Character::isISOControl))
            {
                throw new ConfigException(KafkaContext.SASL_USERS_FILE, file + " line " + (i + 1) + ": a user " +
                    "name is not empty and has no ',' or control characters");
            }
            if (users.plain.containsKey(user))
            {
                throw new ConfigException(KafkaContext.SASL_USERS_FILE, file + " line " + (i + 1) + ": user '" +
                    user + "' appears twice");
            }
            final byte[] bytes = password.getBytes(StandardCharsets.UTF_8);
            users.plain.put(user, users.digest(bytes));
            Arrays.fill(bytes, (byte)0);
            if (withScram)
            {
                users.scram.put(user, scramCredential(password));
            }
        }
        if (users.plain.isEmpty())
        {
            throw new ConfigException(KafkaContext.SASL_USERS_FILE, file + " has no user=password line");
        }
        return users;
    }

    /** @return how many users. */
    int size()
    {
        return plain.size();
    }

    /**
     * SASL/PLAIN: whether the password is the user's, in time that depends on neither.
     *
     * @param user     the name.
     * @param password the password's UTF-8 bytes (cleared by the caller).
     */
    boolean checkPlain(final String user, final byte[] password)
    {
        final byte[] expected = plain.get(user);
        final byte[] actual = digest(password);
        final boolean equal = MessageDigest.isEqual(null == expected ? decoyPlain : expected, actual);
        return null != expected && equal;
    }

    /**
     * @return the user's SCRAM credential, or for an unknown user a decoy that no proof matches, with a salt of its
     *         own that stays the same for that name (as a real user's does).
     */
    ScramCredential scram(final String user)
    {
        final ScramCredential credential = scram.get(user);
        if (null != credential)
        {
            return credential;
        }
        // shaped as ScramFormatter's salts are: a 130-bit number in base 36, as text
        final byte[] decoySalt = new java.math.BigInteger(1, digest(user.getBytes(StandardCharsets.UTF_8)))
            .mod(java.math.BigInteger.ONE.shiftLeft(130)).toString(Character.MAX_RADIX)
            .getBytes(StandardCharsets.UTF_8);
        return new ScramCredential(decoySalt, decoyScram.storedKey(), decoyScram.serverKey(),
            decoyScram.iterations());
    }

    private byte[] digest(final byte[] password)
    {
        try
        {
            final MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(salt);
            return sha.digest(password);
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("the JDK has no SHA-256", ex);
        }
    }

    private static ScramCredential scramCredential(final String password)
    {
        try
        {
            return new ScramFormatter(ScramMechanism.SCRAM_SHA_256).generateCredential(password, SCRAM_ITERATIONS);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("the JDK has no HmacSHA256/SHA-256", ex);
        }
    }
}
