package io.tidemark.aeron;

import org.agrona.DirectBuffer;

import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * HMAC-SHA256 (RFC 2104) over the JDK's SHA-256, computed into buffers the caller owns, so that authenticating a
 * message allocates nothing: {@code javax.crypto.Mac} returns each tag in a new array. The result is the same as
 * {@code Mac.getInstance("HmacSHA256")} (a test checks it against the JDK's Mac and RFC 4231's vectors); the
 * digest is the JDK's own, with its SHA-extension intrinsics where the CPU has them.
 * <p>
 * Use: {@link #begin()}, {@link #update} over the authenticated bytes, then {@link #finish} into a 32-byte array.
 * Not thread-safe: one instance per sending publication (under its lock) or receiving subscription.
 */
public final class HmacSha256
{
    /** Bytes of a full HMAC-SHA256. */
    public static final int LENGTH = 32;
    private static final int BLOCK = 64;
    private static final int CHUNK = 1024;

    private final MessageDigest inner;
    private final MessageDigest outer;
    private final byte[] innerPad = new byte[BLOCK];
    private final byte[] outerPad = new byte[BLOCK];
    private final byte[] innerHash = new byte[LENGTH];
    private final byte[] chunk = new byte[CHUNK];
    private final byte[] intBytes = new byte[Integer.BYTES];

    /** @param key the secret; any length (a key longer than the block is hashed first, as RFC 2104 says). */
    HmacSha256(final byte[] key)
    {
        this.inner = sha256();
        this.outer = sha256();
        final byte[] k = key.length > BLOCK ? sha256().digest(key) : key;
        for (int i = 0; i < BLOCK; i++)
        {
            final byte b = i < k.length ? k[i] : 0;
            innerPad[i] = (byte)(b ^ 0x36);
            outerPad[i] = (byte)(b ^ 0x5c);
        }
    }

    private static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("this JVM has no SHA-256", ex);
        }
    }

    /** Start a new tag. */
    public void begin()
    {
        inner.reset();
        inner.update(innerPad);
    }

    /** Add {@code length} bytes at {@code offset} of {@code buffer}. */
    public void update(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] array = buffer.byteArray();
        if (null != array)
        {
            buffer.boundsCheck(offset, length);
            inner.update(array, buffer.wrapAdjustment() + offset, length);
            return;
        }
        int done = 0;
        while (done < length)
        {
            final int n = Math.min(CHUNK, length - done);
            buffer.getBytes(offset + done, chunk, 0, n);
            inner.update(chunk, 0, n);
            done += n;
        }
    }

    /** Add an int as 4 bytes, little-endian (a frame's stream id: {@link FrameDescriptor}). */
    public void updateInt(final int value)
    {
        intBytes[0] = (byte)value;
        intBytes[1] = (byte)(value >>> 8);
        intBytes[2] = (byte)(value >>> 16);
        intBytes[3] = (byte)(value >>> 24);
        inner.update(intBytes, 0, Integer.BYTES);
    }

    /** Add bytes of an array. */
    public void update(final byte[] bytes, final int offset, final int length)
    {
        inner.update(bytes, offset, length);
    }

    /**
     * Finish the tag.
     *
     * @param out receives the {@link #LENGTH}-byte HMAC at {@code offset}.
     */
    public void finish(final byte[] out, final int offset)
    {
        try
        {
            inner.digest(innerHash, 0, LENGTH);
            outer.reset();
            outer.update(outerPad);
            outer.update(innerHash);
            outer.digest(out, offset, LENGTH);
        }
        catch (final DigestException ex)
        {
            throw new IllegalStateException("SHA-256 refused a 32-byte output", ex);
        }
    }
}
