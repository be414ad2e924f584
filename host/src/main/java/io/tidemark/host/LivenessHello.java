package io.tidemark.host;

import io.tidemark.aeron.HmacSha256;

import java.nio.ByteBuffer;
import java.security.MessageDigest;

/**
 * The two messages of a liveness connection ({@link ProcessExitWatch}), in network byte order. The connecting side
 * sends a challenge with a fresh random nonce; the listening host answers with a hello naming itself, whose tag
 * (HMAC-SHA256 keyed with the cluster secret) covers that nonce, so that a hello proves the answering process holds
 * the secret and is answering this connection now: it cannot be replayed from another connection.
 * <pre>
 * Challenge (connecting side to listener), {@link #CHALLENGE_LENGTH} bytes:
 *   0        4        8                        24
 *   +--------+--------+------------------------+
 *   | magic  | cluster|         nonce          |
 *   | 'TMLC' | hash   |       (16 bytes)       |
 *   +--------+--------+------------------------+
 *
 * Hello (listener to connecting side), {@link #HELLO_LENGTH} bytes:
 *   0        4        8        12               20                               52
 *   +--------+--------+--------+----------------+--------------------------------+
 *   | magic  | cluster| host id| incarnation    | tag: HMAC(secret, nonce of the |
 *   | 'TMLH' | hash   |        |                | challenge, hello bytes 0..20)  |
 *   +--------+--------+--------+----------------+--------------------------------+
 * </pre>
 * Design note: both messages are of fixed length and nothing else is ever sent on the connection, so a reader needs
 * no framing, and any byte beyond them is a protocol violation. A cluster without a secret
 * ({@code cluster.insecure=true}) sends a zero tag and checks none: the hello then shows only that the answering
 * process speaks this protocol as that host id and incarnation of this cluster, as every message of such a cluster
 * is unauthenticated. Stateless.
 */
final class LivenessHello
{
    /** Bytes of a challenge. */
    static final int CHALLENGE_LENGTH = 24;
    /** Bytes of a hello. */
    static final int HELLO_LENGTH = 52;
    /** Bytes of the challenge's nonce. */
    static final int NONCE_LENGTH = 16;
    static final int CHALLENGE_MAGIC = 0x544D4C43; // "TMLC"
    static final int HELLO_MAGIC = 0x544D4C48; // "TMLH"
    private static final int NONCE_OFFSET = 8;
    private static final int HOST_ID_OFFSET = 8;
    private static final int INCARNATION_OFFSET = 12;
    private static final int TAG_OFFSET = 20;

    /** {@link #verifyHello}: the hello is from the expected host incarnation and, with a secret, its tag is right. */
    static final int VERIFIED = 0;
    /** {@link #verifyHello}: not a hello (another protocol answered on the port). */
    static final int NOT_A_HELLO = 1;
    /** {@link #verifyHello}: a hello of another cluster. */
    static final int FOREIGN_CLUSTER = 2;
    /** {@link #verifyHello}: a hello of another host id. */
    static final int OTHER_HOST = 3;
    /** {@link #verifyHello}: a hello of another incarnation (the port now belongs to a later start, say). */
    static final int OTHER_INCARNATION = 4;
    /** {@link #verifyHello}: the tag does not match: forged, or keyed with another secret. */
    static final int BAD_TAG = 5;

    private LivenessHello()
    {
    }

    /** Write a challenge at {@code out}'s position (it advances by {@link #CHALLENGE_LENGTH}). */
    static void writeChallenge(final ByteBuffer out, final int clusterHash, final byte[] nonce)
    {
        out.putInt(CHALLENGE_MAGIC).putInt(clusterHash).put(nonce, 0, NONCE_LENGTH);
    }

    /**
     * Read a challenge from {@code in}, from 0 to {@link #CHALLENGE_LENGTH}.
     *
     * @param nonce receives the challenge's nonce.
     * @return whether it is a challenge of this cluster.
     */
    static boolean readChallenge(final ByteBuffer in, final int clusterHash, final byte[] nonce)
    {
        if (in.getInt(0) != CHALLENGE_MAGIC || in.getInt(4) != clusterHash)
        {
            return false;
        }
        in.get(NONCE_OFFSET, nonce, 0, NONCE_LENGTH);
        return true;
    }

    /**
     * Write a hello at {@code out}'s position (it advances by {@link #HELLO_LENGTH}).
     *
     * @param nonce the challenge's nonce.
     * @param mac   keyed with the cluster secret; null for a cluster without one.
     */
    static void writeHello(final ByteBuffer out, final int clusterHash, final int hostId, final long incarnation,
        final byte[] nonce, final HmacSha256 mac)
    {
        final int start = out.position();
        out.putInt(HELLO_MAGIC).putInt(clusterHash).putInt(hostId).putLong(incarnation);
        final byte[] tag = new byte[HmacSha256.LENGTH];
        if (null != mac)
        {
            tag(mac, nonce, out, start, tag);
        }
        out.put(tag);
    }

    /**
     * Check a hello in {@code in}, from 0 to {@link #HELLO_LENGTH}.
     *
     * @param nonce the nonce of the challenge this connection sent.
     * @param mac   keyed with the cluster secret; null for a cluster without one (no tag is checked).
     * @return {@link #VERIFIED}, or why not.
     */
    static int verifyHello(final ByteBuffer in, final int clusterHash, final int hostId, final long incarnation,
        final byte[] nonce, final HmacSha256 mac)
    {
        if (in.getInt(0) != HELLO_MAGIC)
        {
            return NOT_A_HELLO;
        }
        if (in.getInt(4) != clusterHash)
        {
            return FOREIGN_CLUSTER;
        }
        if (null != mac)
        {
            final byte[] expected = new byte[HmacSha256.LENGTH];
            tag(mac, nonce, in, 0, expected);
            final byte[] received = new byte[HmacSha256.LENGTH];
            in.get(TAG_OFFSET, received, 0, HmacSha256.LENGTH);
            if (!MessageDigest.isEqual(expected, received))
            {
                return BAD_TAG;
            }
        }
        if (in.getInt(HOST_ID_OFFSET) != hostId)
        {
            return OTHER_HOST;
        }
        return in.getLong(INCARNATION_OFFSET) == incarnation ? VERIFIED : OTHER_INCARNATION;
    }

    /** @return the host id a hello names (for a log line: meaningful only once verified). */
    static int helloHostId(final ByteBuffer in)
    {
        return in.getInt(HOST_ID_OFFSET);
    }

    /** @return the incarnation a hello names (for a log line: meaningful only once verified). */
    static long helloIncarnation(final ByteBuffer in)
    {
        return in.getLong(INCARNATION_OFFSET);
    }

    /** @return a result of {@link #verifyHello} in words. */
    static String describe(final int result)
    {
        return switch (result)
        {
            case VERIFIED -> "verified";
            case NOT_A_HELLO -> "not a liveness hello";
            case FOREIGN_CLUSTER -> "a hello of another cluster";
            case OTHER_HOST -> "a hello of another host id";
            case OTHER_INCARNATION -> "a hello of another incarnation";
            case BAD_TAG -> "a hello whose tag does not match the cluster secret";
            default -> "result " + result;
        };
    }

    private static void tag(final HmacSha256 mac, final byte[] nonce, final ByteBuffer hello, final int start,
        final byte[] out)
    {
        final byte[] fields = new byte[TAG_OFFSET];
        hello.get(start, fields, 0, TAG_OFFSET);
        mac.begin();
        mac.update(nonce, 0, NONCE_LENGTH);
        mac.update(fields, 0, TAG_OFFSET);
        mac.finish(out, 0);
    }
}
