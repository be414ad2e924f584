package io.tidemark.bench.multiprocess;

import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteOrder;

/**
 * The value of every record the multiprocess bench sends: an id, then filler up to the record size.
 * <pre>
 *   byte 0         8                                        size
 *        +---------+------------------------------------------+
 *        |   id    |  filler: 'a'..'z' repeating               |
 *        +---------+------------------------------------------+
 *
 *   id, a little-endian long, by bit:
 *     63         48 47      40 39                            0
 *        +---------+----------+------------------------------+
 *        |   tag   |  thread  |           sequence           |
 *        +---------+----------+------------------------------+
 * </pre>
 * The tag tells one phase's records from another's when the read-back scans a partition; thread and sequence
 * tell the records of one phase apart.
 */
final class RecordValues
{
    /** Bytes of the id at the start of the value. */
    static final int ID_LENGTH = 8;
    /** Byte order of the id. */
    static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    /** Most sending threads one phase can tell apart. */
    static final int MAX_THREADS = 1 << 8;

    private static final int TAG_SHIFT = 48;
    private static final int THREAD_SHIFT = 40;
    private static final long SEQUENCE_MASK = (1L << THREAD_SHIFT) - 1;

    private RecordValues()
    {
    }

    /**
     * @param tag      the phase's tag, in {@code [0, 65536)}.
     * @param thread   the sending thread, in {@code [0, MAX_THREADS)}.
     * @param sequence the thread's sequence number.
     * @return the record id.
     */
    static long id(final int tag, final int thread, final long sequence)
    {
        return ((long)tag << TAG_SHIFT) | ((long)thread << THREAD_SHIFT) | (sequence & SEQUENCE_MASK);
    }

    /** @return the phase tag of an id. */
    static int tag(final long id)
    {
        return (int)(id >>> TAG_SHIFT);
    }

    /** @return the sequence number of an id. */
    static long sequence(final long id)
    {
        return id & SEQUENCE_MASK;
    }

    /**
     * @param size value length, at least {@link #ID_LENGTH}.
     * @return an off-heap value of that length: id 0, then a repeating pattern.
     */
    static UnsafeBuffer filled(final int size)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(
            BitUtil.align(Math.max(size, 64), 64), 64), 0, size);
        for (int i = ID_LENGTH; i < size; i++)
        {
            buffer.putByte(i, fillerAt(i));
        }
        return buffer;
    }

    /**
     * @param index a byte index of the value, past the id.
     * @return the filler byte there.
     */
    static byte fillerAt(final int index)
    {
        return (byte)('a' + index % 26);
    }
}
