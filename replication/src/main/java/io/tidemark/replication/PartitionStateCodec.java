package io.tidemark.replication;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The binary form of a {@link PartitionState}, little-endian, shared by the controller stores (a file's fields, a
 * znode's data):
 * <pre>
 *  +---------------------------------------------------------------+
 *  |    Partition Id   |  Partition Number  |  Leader  |  Epoch    |  0, 4, 8, 12
 *  +---------------------------------------------------------------+
 *  |  State Version  |  AR count  |  ISR count  |  Topic length    | 16, 20, 24, 28
 *  +---------------------------------------------------------------+
 *  |          ELR count            |      Recovering count         | 32, 36
 *  +---------------------------------------------------------------+
 *  |   Topic (UTF-8), then host ids (int32): AR, ISR, ELR, recovering ... 40
 *  +---------------------------------------------------------------+
 * </pre>
 */
public final class PartitionStateCodec
{
    static final int FIXED_LENGTH = 40;

    private PartitionStateCodec()
    {
    }

    /** @return the bytes {@link #encode} writes for {@code state}. */
    public static int encodedLength(final PartitionState state)
    {
        return FIXED_LENGTH + state.topicPartition().topic().getBytes(StandardCharsets.UTF_8).length + 4 *
            (state.assignedReplicas().length + state.isr().length + state.eligible().length +
            state.recovering().length);
    }

    /** @return {@code state} encoded in a new array. */
    public static byte[] encode(final PartitionState state)
    {
        final byte[] bytes = new byte[encodedLength(state)];
        encode(state, ByteBuffer.wrap(bytes));
        return bytes;
    }

    /** Write {@code state} at {@code out}'s position (little-endian whatever its order), advancing it. */
    public static void encode(final PartitionState state, final ByteBuffer out)
    {
        final ByteOrder order = out.order();
        out.order(ByteOrder.LITTLE_ENDIAN);
        final byte[] topic = state.topicPartition().topic().getBytes(StandardCharsets.UTF_8);
        out.putInt(state.partitionId()).putInt(state.topicPartition().partition()).putInt(state.leader())
            .putInt(state.leaderEpoch()).putInt(state.version()).putInt(state.assignedReplicas().length)
            .putInt(state.isr().length).putInt(topic.length).putInt(state.eligible().length)
            .putInt(state.recovering().length);
        out.put(topic);
        putAll(out, state.assignedReplicas());
        putAll(out, state.isr());
        putAll(out, state.eligible());
        putAll(out, state.recovering());
        out.order(order);
    }

    private static void putAll(final ByteBuffer out, final int[] hosts)
    {
        for (final int host : hosts)
        {
            out.putInt(host);
        }
    }

    /**
     * Read a state at {@code in}'s position, advancing it.
     *
     * @throws IllegalArgumentException when the bytes do not hold a well-formed state.
     */
    public static PartitionState decode(final ByteBuffer in)
    {
        final ByteOrder order = in.order();
        in.order(ByteOrder.LITTLE_ENDIAN);
        try
        {
            if (in.remaining() < FIXED_LENGTH)
            {
                throw new IllegalArgumentException("partition state too short: " + in.remaining() + " bytes");
            }
            final int id = in.getInt();
            final int number = in.getInt();
            final int leader = in.getInt();
            final int epoch = in.getInt();
            final int version = in.getInt();
            final int arCount = in.getInt();
            final int isrCount = in.getInt();
            final int topicLength = in.getInt();
            final int elrCount = in.getInt();
            final int recoveringCount = in.getInt();
            final long rest = (long)topicLength + 4L * ((long)arCount + isrCount + elrCount + recoveringCount);
            if (id < 0 || number < 0 || topicLength < 0 || arCount < 0 || isrCount < 0 || elrCount < 0 ||
                recoveringCount < 0 || rest > in.remaining())
            {
                throw new IllegalArgumentException("malformed partition state (id " + id + ", " + in.remaining() +
                    " bytes after the fixed fields)");
            }
            final byte[] topic = new byte[topicLength];
            in.get(topic);
            final int[] ar = getAll(in, arCount);
            final int[] isr = getAll(in, isrCount);
            final int[] elr = getAll(in, elrCount);
            final int[] recovering = getAll(in, recoveringCount);
            return new PartitionState(id, new TopicPartition(new String(topic, StandardCharsets.UTF_8), number), ar,
                isr, elr, recovering, leader, epoch, version);
        }
        finally
        {
            in.order(order);
        }
    }

    private static int[] getAll(final ByteBuffer in, final int count)
    {
        final int[] hosts = new int[count];
        for (int i = 0; i < count; i++)
        {
            hosts[i] = in.getInt();
        }
        return hosts;
    }
}
