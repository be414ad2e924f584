package io.tidemark.store.format;

import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/**
 * Computes CRC32C ({@link CRC32C}, hardware accelerated by the JDK) over a region of a {@link DirectBuffer}
 * without copying it when the buffer is backed by a byte array or a (mapped) {@link ByteBuffer}.
 * <p>
 * <b>Design note.</b> Agrona's own {@code Crc32c} reaches into {@code java.util.zip} and needs
 * {@code --add-opens}; this class only uses public API. A private duplicate of the last seen {@code ByteBuffer}
 * is cached, so steady-state computation over one segment allocates nothing.
 * <p>
 * Not thread-safe: one instance per thread (each reader and the writer own one).
 */
public final class Crc32c
{
    private final CRC32C crc = new CRC32C();
    private ByteBuffer source;
    private ByteBuffer view;
    private byte[] scratch;

    /**
     * @param buffer the bytes.
     * @param offset index of the first byte in {@code buffer}.
     * @param length number of bytes.
     * @return the CRC32C of the region.
     */
    public int compute(final DirectBuffer buffer, final int offset, final int length)
    {
        crc.reset();
        final byte[] array = buffer.byteArray();
        if (null != array)
        {
            crc.update(array, buffer.wrapAdjustment() + offset, length);
            return (int)crc.getValue();
        }
        final ByteBuffer byteBuffer = buffer.byteBuffer();
        if (null != byteBuffer)
        {
            if (byteBuffer != source)
            {
                source = byteBuffer;
                view = byteBuffer.duplicate();
            }
            final int start = buffer.wrapAdjustment() + offset;
            view.clear();
            view.limit(start + length).position(start);
            crc.update(view);
            return (int)crc.getValue();
        }
        if (null == scratch)
        {
            scratch = new byte[8192];
        }
        for (int done = 0; done < length; )
        {
            final int chunk = Math.min(scratch.length, length - done);
            buffer.getBytes(offset + done, scratch, 0, chunk);
            crc.update(scratch, 0, chunk);
            done += chunk;
        }
        return (int)crc.getValue();
    }

    /** Forget a cached view (its mapping is going away). */
    void release()
    {
        source = null;
        view = null;
    }
}
