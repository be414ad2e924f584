package io.tidemark.replication.protocol;

import io.tidemark.replication.TopicPartition;

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
 * {@link #decode} reads bytes from outside (a znode anyone with the credentials can write, a control message) and
 * accepts only a state that could have been written: host ids in {@code [0, }{@link PartitionState#MAX_HOSTS}{@code )},
 * no host twice in a list, the ISR, eligible and recovering replicas among the assigned ones, the leader an
 * assigned replica or {@link PartitionState#NO_LEADER}, a non-empty ISR, and no negative epoch or version.
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
            if (topicLength > MAX_TOPIC_LENGTH || arCount > PartitionState.MAX_HOSTS || isrCount > arCount ||
                elrCount > arCount || recoveringCount > arCount)
            {
                throw new IllegalArgumentException("malformed partition state (id " + id + "): topic length " +
                    topicLength + ", " + arCount + " assigned, " + isrCount + " in sync, " + elrCount + " eligible, " +
                    recoveringCount + " recovering");
            }
            final byte[] topic = new byte[topicLength];
            in.get(topic);
            final int[] ar = getAll(in, arCount);
            final int[] isr = getAll(in, isrCount);
            final int[] elr = getAll(in, elrCount);
            final int[] recovering = getAll(in, recoveringCount);
            final PartitionState state = new PartitionState(id,
                new TopicPartition(new String(topic, StandardCharsets.UTF_8), number), ar, isr, elr, recovering, leader,
                epoch, version);
            checkHosts(state);
            return state;
        }
        finally
        {
            in.order(order);
        }
    }

    /** Longest topic name a state may carry (bytes). */
    static final int MAX_TOPIC_LENGTH = 255;

    /**
     * @throws IllegalArgumentException unless every host id of {@code state} is in {@code [0, MAX_HOSTS)}, no list
     *                                  names a host twice, the ISR, eligible and recovering replicas are assigned
     *                                  ones, the ISR is not empty, the leader is assigned or absent, and the epoch and
     *                                  version are not negative.
     */
    public static void checkHosts(final PartitionState state)
    {
        final int[] ar = state.assignedReplicas();
        if (ar.length == 0 || state.isr().length == 0)
        {
            throw new IllegalArgumentException("partition state " + state.partitionId() + " has no " +
                (ar.length == 0 ? "assigned replica" : "in-sync replica"));
        }
        checkDistinct(state, "assigned", ar);
        for (final int host : ar)
        {
            if (host < 0 || host >= PartitionState.MAX_HOSTS)
            {
                throw new IllegalArgumentException("partition state " + state.partitionId() + " assigns host " + host +
                    ", outside [0, " + PartitionState.MAX_HOSTS + ")");
            }
        }
        checkSubset(state, "in-sync", state.isr());
        checkSubset(state, "eligible", state.eligible());
        checkSubset(state, "recovering", state.recovering());
        if (state.leader() != PartitionState.NO_LEADER && !state.assigned(state.leader()))
        {
            throw new IllegalArgumentException("partition state " + state.partitionId() + " names leader " +
                state.leader() + ", not an assigned replica");
        }
        if (state.leaderEpoch() < 0 || state.version() < 0)
        {
            throw new IllegalArgumentException("partition state " + state.partitionId() + " has a negative epoch (" +
                state.leaderEpoch() + ") or version (" + state.version() + ")");
        }
    }

    private static void checkSubset(final PartitionState state, final String what, final int[] hosts)
    {
        checkDistinct(state, what, hosts);
        for (final int host : hosts)
        {
            if (!state.assigned(host))
            {
                throw new IllegalArgumentException("partition state " + state.partitionId() + " lists host " + host +
                    " as " + what + ", not an assigned replica");
            }
        }
    }

    private static void checkDistinct(final PartitionState state, final String what, final int[] hosts)
    {
        for (int i = 0; i < hosts.length; i++)
        {
            for (int j = i + 1; j < hosts.length; j++)
            {
                if (hosts[i] == hosts[j])
                {
                    throw new IllegalArgumentException("partition state " + state.partitionId() + " lists host " +
                        hosts[i] + " twice as " + what);
                }
            }
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
