package io.tidemark.host;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.HmacSha256;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The liveness connection's challenge and hello ({@link LivenessHello}): a hello verifies only for the nonce it
 * answers, the host and incarnation expected, this cluster and this secret.
 */
class LivenessHelloTest
{
    private static final int CLUSTER = 0x1234_5678;

    @TempDir
    Path tmp;

    private HmacSha256 mac;
    private HmacSha256 otherMac;
    private final byte[] nonce = new byte[LivenessHello.NONCE_LENGTH];

    @BeforeEach
    void secrets() throws Exception
    {
        ClusterSecret.generate(tmp.resolve("a.secret"));
        ClusterSecret.generate(tmp.resolve("b.secret"));
        mac = ClusterSecret.load(tmp.resolve("a.secret"), "k").newMac();
        otherMac = ClusterSecret.load(tmp.resolve("b.secret"), "k").newMac();
        Arrays.fill(nonce, (byte)7);
    }

    private ByteBuffer hello(final int cluster, final int host, final long incarnation, final byte[] forNonce,
        final HmacSha256 with)
    {
        final ByteBuffer out = ByteBuffer.allocate(LivenessHello.HELLO_LENGTH);
        LivenessHello.writeHello(out, cluster, host, incarnation, forNonce, with);
        assertEquals(LivenessHello.HELLO_LENGTH, out.position(), "a hello fills its length");
        return out;
    }

    @Test
    void aChallengeReadsBackItsNonce()
    {
        final ByteBuffer out = ByteBuffer.allocate(LivenessHello.CHALLENGE_LENGTH);
        LivenessHello.writeChallenge(out, CLUSTER, nonce);
        assertEquals(LivenessHello.CHALLENGE_LENGTH, out.position());
        final byte[] read = new byte[LivenessHello.NONCE_LENGTH];
        assertTrue(LivenessHello.readChallenge(out, CLUSTER, read));
        assertArrayEquals(nonce, read);
        assertFalse(LivenessHello.readChallenge(out, CLUSTER + 1, read), "another cluster's challenge");
        out.putInt(0, LivenessHello.HELLO_MAGIC);
        assertFalse(LivenessHello.readChallenge(out, CLUSTER, read), "not a challenge");
    }

    @Test
    void aHelloVerifiesForItsNonceHostAndIncarnation()
    {
        assertEquals(LivenessHello.VERIFIED,
            LivenessHello.verifyHello(hello(CLUSTER, 2, 41, nonce, mac), CLUSTER, 2, 41, nonce, mac));
    }

    @Test
    void aHelloReplayedOnAnotherConnectionDoesNotVerify()
    {
        final byte[] otherNonce = nonce.clone();
        otherNonce[3] ^= 1;
        assertEquals(LivenessHello.BAD_TAG,
            LivenessHello.verifyHello(hello(CLUSTER, 2, 41, nonce, mac), CLUSTER, 2, 41, otherNonce, mac));
    }

    @Test
    void aHelloTaggedWithAnotherSecretOrNoneIsForged()
    {
        assertEquals(LivenessHello.BAD_TAG,
            LivenessHello.verifyHello(hello(CLUSTER, 2, 41, nonce, otherMac), CLUSTER, 2, 41, nonce, mac));
        assertEquals(LivenessHello.BAD_TAG,
            LivenessHello.verifyHello(hello(CLUSTER, 2, 41, nonce, null), CLUSTER, 2, 41, nonce, mac));
    }

    @Test
    void aHelloWithAFieldChangedAfterTaggingIsForged()
    {
        for (int offset = 8; offset < 20; offset++)
        {
            final ByteBuffer forged = hello(CLUSTER, 2, 41, nonce, mac);
            forged.put(offset, (byte)(forged.get(offset) ^ 0x10));
            assertEquals(LivenessHello.BAD_TAG, LivenessHello.verifyHello(forged, CLUSTER, 2, 41, nonce, mac),
                "byte " + offset + " changed");
        }
        for (int offset = 20; offset < LivenessHello.HELLO_LENGTH; offset++)
        {
            final ByteBuffer forged = hello(CLUSTER, 2, 41, nonce, mac);
            forged.put(offset, (byte)(forged.get(offset) ^ 0x01));
            assertEquals(LivenessHello.BAD_TAG, LivenessHello.verifyHello(forged, CLUSTER, 2, 41, nonce, mac),
                "tag byte " + offset + " changed");
        }
    }

    @Test
    void aGenuineHelloOfAnotherHostOrIncarnationIsNotThatProcess()
    {
        assertEquals(LivenessHello.OTHER_HOST,
            LivenessHello.verifyHello(hello(CLUSTER, 1, 41, nonce, mac), CLUSTER, 2, 41, nonce, mac));
        assertEquals(LivenessHello.OTHER_INCARNATION,
            LivenessHello.verifyHello(hello(CLUSTER, 2, 42, nonce, mac), CLUSTER, 2, 41, nonce, mac),
            "the host's next start on a reused port");
    }

    @Test
    void anotherClusterOrProtocolIsNotAHello()
    {
        assertEquals(LivenessHello.FOREIGN_CLUSTER,
            LivenessHello.verifyHello(hello(CLUSTER + 1, 2, 41, nonce, mac), CLUSTER, 2, 41, nonce, mac));
        final ByteBuffer http = ByteBuffer.allocate(LivenessHello.HELLO_LENGTH);
        http.put("HTTP/1.1 400 Bad Request\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        assertEquals(LivenessHello.NOT_A_HELLO, LivenessHello.verifyHello(http, CLUSTER, 2, 41, nonce, mac));
    }

    @Test
    void withoutASecretTheHelloCarriesNoTagAndNoneIsChecked()
    {
        final ByteBuffer insecure = hello(CLUSTER, 2, 41, nonce, null);
        for (int offset = 20; offset < LivenessHello.HELLO_LENGTH; offset++)
        {
            assertEquals(0, insecure.get(offset), "a zero tag");
        }
        assertEquals(LivenessHello.VERIFIED, LivenessHello.verifyHello(insecure, CLUSTER, 2, 41, nonce, null));
        assertEquals(LivenessHello.OTHER_INCARNATION,
            LivenessHello.verifyHello(insecure, CLUSTER, 2, 40, nonce, null));
    }
}
