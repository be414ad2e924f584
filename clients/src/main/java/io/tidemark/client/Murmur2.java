package io.tidemark.client;

import org.agrona.DirectBuffer;

/**
 * Kafka's key hash (murmur2, seed 0x9747b28c), read in place from a buffer: a key lands on the same partition
 * number as with Kafka's default partitioner ({@code (murmur2(key) & 0x7fffffff) % partitions}). Stateless.
 */
final class Murmur2
{
    private static final int SEED = 0x9747b28c;
    private static final int M = 0x5bd1e995;
    private static final int R = 24;

    private Murmur2()
    {
    }

    static int hash(final DirectBuffer buffer, final int offset, final int length)
    {
        int h = SEED ^ length;
        final int whole = length & ~3;
        for (int i = 0; i < whole; i += 4)
        {
            int k = (buffer.getByte(offset + i) & 0xff) | ((buffer.getByte(offset + i + 1) & 0xff) << 8) |
                ((buffer.getByte(offset + i + 2) & 0xff) << 16) | ((buffer.getByte(offset + i + 3) & 0xff) << 24);
            k *= M;
            k ^= k >>> R;
            k *= M;
            h *= M;
            h ^= k;
        }
        final int tail = length & 3;
        if (tail == 3)
        {
            h ^= (buffer.getByte(offset + whole + 2) & 0xff) << 16;
        }
        if (tail >= 2)
        {
            h ^= (buffer.getByte(offset + whole + 1) & 0xff) << 8;
        }
        if (tail >= 1)
        {
            h ^= buffer.getByte(offset + whole) & 0xff;
            h *= M;
        }
        h ^= h >>> 13;
        h *= M;
        h ^= h >>> 15;
        return h;
    }

    /** @return the partition of a key: {@code (hash & 0x7fffffff) % partitions}. */
    static int partition(final DirectBuffer key, final int offset, final int length, final int partitions)
    {
        return (hash(key, offset, length) & 0x7fffffff) % partitions;
    }
}
