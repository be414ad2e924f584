package io.tidemark.kafka;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FrameBuffersTest
{
    @Test
    void aFrameHasExactlyItsLengthOfRoomAndIsReusedForSizesNearIt()
    {
        final FrameBuffers buffers = new FrameBuffers();
        final ByteBuffer first = buffers.take(16_500);
        assertEquals(0, first.position());
        assertEquals(16_500, first.limit(), "a read fills exactly the frame");
        assertEquals(32_768, first.capacity(), "sized to the next power of two");
        first.put(new byte[16_500]).flip();
        buffers.give(first);
        assertEquals(1, buffers.pooled());

        final ByteBuffer second = buffers.take(20_000);
        assertSame(first, second, "reused");
        assertEquals(0, second.position());
        assertEquals(20_000, second.limit());
        assertEquals(0, buffers.pooled());
        assertNotSame(second, buffers.take(20_000), "a buffer in use is never handed out twice");
    }

    @Test
    void theSmallestBufferThatFitsIsTaken()
    {
        final FrameBuffers buffers = new FrameBuffers();
        final ByteBuffer big = buffers.take(100_000);
        final ByteBuffer small = buffers.take(100);
        buffers.give(big);
        buffers.give(small);
        assertSame(small, buffers.take(500));
        assertSame(big, buffers.take(500));
    }

    @Test
    void largeBuffersAndBuffersBeyondThePoolAreDropped()
    {
        final FrameBuffers buffers = new FrameBuffers();
        final ByteBuffer huge = buffers.take(FrameBuffers.MAX_POOLED_CAPACITY + 1);
        assertEquals(FrameBuffers.MAX_POOLED_CAPACITY + 1, huge.capacity(), "not rounded above the pooled sizes");
        buffers.give(huge);
        assertEquals(0, buffers.pooled(), "a rare large request does not pin its buffer");

        for (int i = 0; i < FrameBuffers.MAX_POOLED + 8; i++)
        {
            buffers.give(ByteBuffer.allocate(1024));
        }
        assertEquals(FrameBuffers.MAX_POOLED, buffers.pooled());

        final FrameBuffers bytes = new FrameBuffers();
        int given = 0;
        while (given < FrameBuffers.MAX_POOLED)
        {
            bytes.give(ByteBuffer.allocate(FrameBuffers.MAX_POOLED_CAPACITY));
            given++;
        }
        assertTrue(bytes.pooled() * (long)FrameBuffers.MAX_POOLED_CAPACITY <= FrameBuffers.MAX_POOLED_BYTES,
            "at most " + FrameBuffers.MAX_POOLED_BYTES + " bytes pooled: " + bytes.pooled() + " MiB buffers");
    }
}
