package io.tidemark.aeron;

import io.tidemark.store.ConfigException;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HexFormat;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.*;

/** The pieces of frame authentication: the HMAC, the secret file, the replay window, a frame's checks. */
class FrameAuthenticationTest
{
    @TempDir
    Path tmp;

    private static byte[] hmac(final byte[] key, final byte[] message)
    {
        final HmacSha256 mac = new HmacSha256(key);
        mac.begin();
        mac.update(new UnsafeBuffer(message), 0, message.length);
        final byte[] out = new byte[32];
        mac.finish(out, 0);
        return out;
    }

    @Test
    void hmacMatchesRfc4231AndTheJdkMac() throws Exception
    {
        // RFC 4231 test case 2 and test case 6 (a key longer than the block)
        assertEquals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            HexFormat.of().formatHex(hmac("Jefe".getBytes(StandardCharsets.US_ASCII),
            "what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII))));
        final byte[] longKey = new byte[131];
        java.util.Arrays.fill(longKey, (byte)0xaa);
        assertEquals("60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            HexFormat.of().formatHex(hmac(longKey, "Test Using Larger Than Block-Size Key - Hash Key First"
            .getBytes(StandardCharsets.US_ASCII))));

        final Random random = new Random(7);
        for (int i = 0; i < 200; i++)
        {
            final byte[] key = new byte[1 + random.nextInt(100)];
            final byte[] message = new byte[random.nextInt(5000)];
            random.nextBytes(key);
            random.nextBytes(message);
            final Mac jdk = Mac.getInstance("HmacSHA256");
            jdk.init(new SecretKeySpec(key, "HmacSHA256"));
            assertArrayEquals(jdk.doFinal(message), hmac(key, message));
            // the same over a direct buffer, read in chunks
            final UnsafeBuffer direct = new UnsafeBuffer(ByteBuffer.allocateDirect(message.length + 3));
            direct.putBytes(3, message);
            final HmacSha256 mac = new HmacSha256(key);
            mac.begin();
            mac.update(direct, 3, message.length);
            final byte[] out = new byte[32];
            mac.finish(out, 0);
            assertArrayEquals(jdk.doFinal(message), out);
        }
    }

    @Test
    void aStreamIdIsTaggedAsFourLittleEndianBytes() throws Exception
    {
        final byte[] key = "stream-id-key".getBytes(StandardCharsets.US_ASCII);
        final Mac jdk = Mac.getInstance("HmacSHA256");
        jdk.init(new SecretKeySpec(key, "HmacSHA256"));
        final HmacSha256 mac = new HmacSha256(key);
        mac.begin();
        mac.updateInt(0x0A0B0C0D);
        final byte[] out = new byte[32];
        mac.finish(out, 0);
        assertArrayEquals(jdk.doFinal(new byte[] {0x0D, 0x0C, 0x0B, 0x0A}), out, "the layout FrameDescriptor draws");
    }

    @Test
    void secretFileMustBeReadableByItsOwnerOnly() throws Exception
    {
        final Path file = tmp.resolve("secret");
        ClusterSecret.generate(file);
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
        final ClusterSecret secret = ClusterSecret.load(file, "cluster.secret.file");
        assertTrue(secret.authenticates());
        final String content = Files.readString(file).trim();
        assertFalse(secret.toString().contains(content), "the secret is never in its string form");

        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r-----"));
        final ConfigException groupReadable = assertThrows(ConfigException.class,
            () -> ClusterSecret.load(file, "cluster.secret.file"));
        assertEquals("cluster.secret.file", groupReadable.key());
        assertTrue(groupReadable.getMessage().contains("owner only"), groupReadable.getMessage());
        assertFalse(groupReadable.getMessage().contains(content));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw----r--"));
        assertThrows(ConfigException.class, () -> ClusterSecret.load(file, "cluster.secret.file"));

        final Path shortSecret = tmp.resolve("short");
        Files.writeString(shortSecret, "tooshort\n");
        Files.setPosixFilePermissions(shortSecret, PosixFilePermissions.fromString("r--------"));
        final ConfigException tooShort = assertThrows(ConfigException.class,
            () -> ClusterSecret.load(shortSecret, "cluster.secret.file"));
        assertFalse(tooShort.getMessage().contains("tooshort"), "the content is never in an error");
        assertThrows(ConfigException.class, () -> ClusterSecret.load(tmp.resolve("missing"), "cluster.secret.file"));
        assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> ClusterSecret.generate(file));
    }

    @Test
    void replayWindowRefusesRepeatsAndOldNumbersAndRestartsWithANewEpoch()
    {
        final ReplayWindow window = new ReplayWindow();
        assertTrue(window.accept(5, 10));
        assertFalse(window.accept(5, 10), "a repeat");
        assertTrue(window.accept(5, 12));
        assertTrue(window.accept(5, 11), "out of order within the window");
        assertFalse(window.accept(5, 11));
        assertTrue(window.accept(5, 200));
        assertFalse(window.accept(5, 200 - ReplayWindow.WIDTH), "older than the window");
        assertTrue(window.accept(5, 200 - ReplayWindow.WIDTH + 1));
        assertFalse(window.accept(5, 0), "sequence numbers start at 1");
        assertTrue(window.accept(6, 1), "a new epoch starts a new window");
        assertFalse(window.accept(6, 1));
    }

    @Test
    void aFrameIsCheckedBeforeAnythingOfItIsUsed() throws Exception
    {
        final Path file = tmp.resolve("secret");
        ClusterSecret.generate(file);
        final ClusterSecret secret = ClusterSecret.load(file, "k");
        final Path otherFile = tmp.resolve("other");
        ClusterSecret.generate(otherFile);
        final ClusterSecret other = ClusterSecret.load(otherFile, "k");

        final CapturingPublication out = new CapturingPublication();
        final byte[] payload = "payload bytes".getBytes(StandardCharsets.US_ASCII);
        final FrameWriter writer = new FrameWriter(secret, 77, FrameDescriptor.HOST, 3, 9, 0);
        assertTrue(out.send(writer, 5, 11, payload) > 0);
        final UnsafeBuffer frame = out.last;

        final FrameReader reader = new FrameReader(secret, 77);
        assertNull(reader.verify(frame, 0, frame.capacity(), 77));
        assertEquals(3, reader.senderId());
        assertEquals(9, reader.senderEpoch());
        assertEquals(11, reader.receiverEpoch());
        assertEquals(1, reader.sequence());
        assertEquals(5, reader.type());
        assertEquals(2, reader.receiverId());
        assertEquals(EdgeCounters.Reason.BAD_TAG, reader.verify(frame, 0, frame.capacity(), 78),
            "the tag binds the stream: replayed on another stream it fails");
        assertEquals(payload.length, reader.payloadLength());

        assertEquals(EdgeCounters.Reason.BAD_TAG, new FrameReader(other, 77).verify(frame, 0, frame.capacity(), 77),
            "another secret");
        assertEquals(EdgeCounters.Reason.FOREIGN_CLUSTER, new FrameReader(secret, 78).verify(frame, 0,
            frame.capacity(), 77));
        assertEquals(EdgeCounters.Reason.MALFORMED, reader.verify(frame, 0, FrameDescriptor.HEADER_LENGTH - 1, 77));
        assertEquals(EdgeCounters.Reason.BAD_TAG, reader.verify(frame, 0, frame.capacity() - 1, 77), "truncated");
        for (int i = 0; i < frame.capacity(); i++)
        {
            if (i >= FrameDescriptor.VERSION_OFFSET && i < FrameDescriptor.FLAGS_OFFSET + 2)
            {
                continue; // checked as malformed before the tag
            }
            final UnsafeBuffer flipped = new UnsafeBuffer(frame.byteArray().clone());
            flipped.putByte(i, (byte)(flipped.getByte(i) ^ 0x10));
            assertNotNull(reader.verify(flipped, 0, flipped.capacity(), 77), "a changed byte at " + i);
        }

        // an insecure sender's frame: refused by a process with a secret, taken by an insecure one
        final FrameWriter insecure = new FrameWriter(ClusterSecret.insecure(), 77, FrameDescriptor.HOST, 3, 9, 0);
        out.send(insecure, 5, 11, payload);
        assertEquals(EdgeCounters.Reason.UNAUTHENTICATED, reader.verify(out.last, 0, out.last.capacity(), 77));
        assertNull(new FrameReader(ClusterSecret.insecure(), 77).verify(out.last, 0, out.last.capacity(), 77));

        // sequence numbers grow per writer
        out.send(writer, 5, 11, payload);
        assertNull(reader.verify(out.last, 0, out.last.capacity(), 77));
        assertEquals(2, reader.sequence());
    }

    /** Captures what a writer offers, by sending it through a real IPC publication to a subscription. */
    private final class CapturingPublication
    {
        UnsafeBuffer last;

        long send(final FrameWriter writer, final int type, final long receiverEpoch, final byte[] payload)
            throws InterruptedException
        {
            try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron-" + System.nanoTime()));
                io.aeron.Subscription subscription = media.aeron().addSubscription("aeron:ipc", 77);
                io.aeron.Publication publication = media.aeron().addPublication("aeron:ipc", 77))
            {
                final long deadline = System.nanoTime() + 10_000_000_000L;
                // connected first: every offer takes the writer's next sequence number, a refused one too (the
                // receiver's window accepts the gap), and the caller checks the first frame's number
                while (!publication.isConnected())
                {
                    assertTrue(System.nanoTime() < deadline, "connect");
                    Thread.sleep(1);
                }
                long result;
                while ((result = writer.offer(publication, type, 2, receiverEpoch, new UnsafeBuffer(payload), 0,
                    payload.length)) < 0)
                {
                    assertTrue(System.nanoTime() < deadline, "offer " + result);
                    Thread.sleep(1);
                }
                last = null;
                while (null == last)
                {
                    subscription.poll((buffer, offset, length, header) ->
                    {
                        final byte[] copy = new byte[length];
                        buffer.getBytes(offset, copy);
                        last = new UnsafeBuffer(copy);
                    }, 1);
                    assertTrue(System.nanoTime() < deadline, "poll");
                }
                return result;
            }
        }
    }
}
