package io.tidemark.client.remote;

import io.aeron.Publication;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.client.remote.protocol.ProduceSet;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Produce requests to the partitions' leaders and their results: the producer sessions (each with its listener), a
 * PRODUCE frame per run of records to the leader the metadata names, and each PRODUCE_RESULT to its session's
 * listener. The send path does not allocate (a header buffer per sending thread).
 * <p>
 * <b>Gathering.</b> Between {@link #gatherSends} and {@link #flushSends} (one duty cycle of a producer, on one
 * thread) the requests a thread sends are gathered per host link, each as an entry of a PRODUCE_SET
 * ({@link ProduceSet}), and leave at the flush, one frame per host (a plain PRODUCE when only one request is
 * gathered): one publication offer, authentication tag and host-side frame check per host instead of one per
 * partition. A request waits for nothing but the end of its producer's duty cycle (linger is unchanged), and
 * entries keep their send order, so each partition's batches reach the leader in sequence order. A gathered
 * request counts as sent; should its frame then be refused (back pressure, no connection), its outcome is that
 * error, delivered to its session's listener at the flush like any answer, and every later request of the cycle to
 * that link is refused at once with it, so no batch of a partition overtakes an earlier one that was not sent.
 * Gathered bytes are bounded per link ({@link #GATHER_BYTES}; the buffer starts at 32 KiB and grows only as a
 * cycle needs, so a thread that sends little holds little); a request too large to gather is sent alone, after
 * what was gathered before it.
 */
final class RemoteProduce
{
    /** Most bytes one thread gathers for one host link before it sends them (a frame; at most the publication's). */
    static final int GATHER_BYTES = 256 * 1024;
    /** What a thread's gathering for a host starts with; it doubles, up to {@link #GATHER_BYTES}, when a cycle needs. */
    private static final int FIRST_GATHER_BYTES = 32 * 1024;

    private final ClusterMetadata metadata;
    private final HostLinks links;
    private final int requestMaxBytes;
    private final Map<Integer, ProduceListener> listeners = new ConcurrentHashMap<>();
    private final AtomicInteger nextSession = new AtomicInteger(1);
    private final ThreadLocal<UnsafeBuffer> produceHeader =
        ThreadLocal.withInitial(() -> new UnsafeBuffer(new byte[GatewayMessages.PRODUCE_RECORDS_OFFSET]));
    private final ThreadLocal<Gathering> gathering = ThreadLocal.withInitial(Gathering::new);

    /** One thread's gathered requests: whether it gathers now, and what per host link. */
    private static final class Gathering
    {
        final Int2ObjectHashMap<Gathered> byHost = new Int2ObjectHashMap<>();
        Gathered[] pending = new Gathered[4];
        int pendingCount;
        boolean active;
    }

    /** The requests gathered for one host link: a PRODUCE_SET being written, and whether the link refused one. */
    private static final class Gathered
    {
        final int hostId;
        HostLinks.HostLink link;
        UnsafeBuffer buffer;
        /** The most bytes gathered for the link: {@link #GATHER_BYTES}, or less for a publication's longest message. */
        int limit;
        int length = ProduceSet.ENTRIES_OFFSET;
        int count;
        ReplicationError refused;
        boolean pending;

        Gathered(final int hostId)
        {
            this.hostId = hostId;
        }
    }

    RemoteProduce(final ClusterMetadata metadata, final HostLinks links, final int requestMaxBytes)
    {
        this.metadata = metadata;
        this.links = links;
        this.requestMaxBytes = requestMaxBytes;
    }

    /** @return a new session whose results go to {@code listener}. */
    int register(final ProduceListener listener)
    {
        final int session = nextSession.getAndIncrement();
        if (session >= 1 << 15)
        {
            throw new IllegalStateException("more than 32767 producer sessions on one client");
        }
        listeners.put(session, listener);
        return session;
    }

    void unregister(final int session)
    {
        listeners.remove(session);
    }

    /** @return as {@link io.tidemark.client.ClusterConnection#send}: to the partition's leader as last seen. */
    ReplicationError send(final int session, final int partitionId, final long correlationId, final int acks,
        final int timeoutMs, final long producerId, final short producerEpoch, final int baseSequence,
        final DirectBuffer records, final int length)
    {
        if (length > requestMaxBytes)
        {
            return ReplicationError.INVALID_RECORDS;
        }
        final PartitionState state = metadata.partition(partitionId);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        return send(links.linkTo(state.leader()), session, partitionId, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, length);
    }

    /**
     * Send a produce request over a link (null: the host is not registered).
     *
     * @return NONE when sent; LEADER_NOT_AVAILABLE, BACK_PRESSURED (also while the host has not answered this client's
     *         HELLO) when not; INVALID_RECORDS when the frame is too long.
     */
    ReplicationError send(final HostLinks.HostLink link, final int session, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int length)
    {
        if (null == link)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        if (!link.ready)
        {
            link.helloIfDue(System.currentTimeMillis());
            return ReplicationError.BACK_PRESSURED;
        }
        final Gathering gathering = this.gathering.get();
        if (gathering.active)
        {
            final Gathered gathered = gatheredFor(gathering, link);
            if (null != gathered.refused)
            {
                return gathered.refused; // an earlier request of this cycle to the link was refused: not sent either
            }
            final int entryLength = ProduceSet.ENTRY_HEADER_LENGTH + length;
            if (entryLength <= gathered.limit - ProduceSet.ENTRIES_OFFSET)
            {
                if (gathered.length + entryLength > gathered.limit || gathered.count == ProduceSet.MAX_ENTRIES)
                {
                    sendGathered(gathered);
                    if (null != gathered.refused)
                    {
                        return gathered.refused;
                    }
                }
                if (gathered.length + entryLength > gathered.buffer.capacity())
                {
                    grow(gathered, gathered.length + entryLength);
                }
                gathered.length += ProduceSet.putEntry(gathered.buffer, gathered.length, partitionId, acks,
                    timeoutMs, producerEpoch, producerId, baseSequence,
                    GatewayMessages.wireCorrelation(session, correlationId), records, 0, length);
                gathered.count++;
                if (!gathered.pending)
                {
                    gathered.pending = true;
                    if (gathering.pendingCount == gathering.pending.length)
                    {
                        gathering.pending = java.util.Arrays.copyOf(gathering.pending, gathering.pendingCount * 2);
                    }
                    gathering.pending[gathering.pendingCount++] = gathered;
                }
                return ReplicationError.NONE;
            }
            sendGathered(gathered); // too long to gather: after what was gathered before it, alone
            if (null != gathered.refused)
            {
                return gathered.refused;
            }
        }
        final UnsafeBuffer header = produceHeader.get();
        header.putInt(GatewayMessages.PRODUCE_PARTITION_OFFSET, partitionId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_ACKS_OFFSET, acks, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_TIMEOUT_OFFSET, timeoutMs, GatewayMessages.ORDER);
        header.putShort(GatewayMessages.PRODUCE_EPOCH_OFFSET, producerEpoch, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_PRODUCER_ID_OFFSET, producerId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_SEQUENCE_OFFSET, baseSequence, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_CORRELATION_OFFSET,
            GatewayMessages.wireCorrelation(session, correlationId), GatewayMessages.ORDER);
        return outcome(link.offer(GatewayMessages.PRODUCE, header, GatewayMessages.PRODUCE_RECORDS_OFFSET,
            records, length));
    }

    private static ReplicationError outcome(final long offerResult)
    {
        if (offerResult > 0)
        {
            return ReplicationError.NONE;
        }
        if (offerResult == FrameWriter.TOO_LONG)
        {
            return ReplicationError.INVALID_RECORDS;
        }
        return offerResult == Publication.NOT_CONNECTED ? ReplicationError.LEADER_NOT_AVAILABLE :
            ReplicationError.BACK_PRESSURED;
    }

    /** Gather this thread's requests until {@link #flushSends} (a producer's duty cycle). */
    void gatherSends()
    {
        gathering.get().active = true;
    }

    /** Send what this thread gathered, one frame per host link, and stop gathering. */
    void flushSends()
    {
        final Gathering gathering = this.gathering.get();
        gathering.active = false;
        for (int i = 0; i < gathering.pendingCount; i++)
        {
            final Gathered gathered = gathering.pending[i];
            gathering.pending[i] = null;
            sendGathered(gathered);
            gathered.pending = false;
            gathered.refused = null;
        }
        gathering.pendingCount = 0;
    }

    /** @return what this thread gathers for the link's host, flushed first when it was gathered for another link. */
    private Gathered gatheredFor(final Gathering gathering, final HostLinks.HostLink link)
    {
        Gathered gathered = gathering.byHost.get(link.hostId);
        if (null == gathered)
        {
            gathered = new Gathered(link.hostId);
            gathering.byHost.put(link.hostId, gathered);
        }
        if (gathered.link != link)
        {
            sendGathered(gathered); // to the host's previous incarnation: its frames fail there, as they would have
            gathered.refused = null;
            gathered.link = link;
            gathered.limit = (int)Math.min(GATHER_BYTES,
                (long)link.gateway.maxMessageLength() - FrameDescriptor.HEADER_LENGTH);
            if (null == gathered.buffer || gathered.buffer.capacity() > gathered.limit)
            {
                gathered.buffer = new UnsafeBuffer(new byte[Math.min(FIRST_GATHER_BYTES, gathered.limit)]);
            }
        }
        return gathered;
    }

    /** Make room for {@code needed} bytes (at most the link's limit): gathering grows only as far as it is used. */
    private static void grow(final Gathered gathered, final int needed)
    {
        int capacity = gathered.buffer.capacity();
        while (capacity < needed)
        {
            capacity = (int)Math.min(gathered.limit, 2L * capacity);
        }
        final UnsafeBuffer grown = new UnsafeBuffer(new byte[capacity]);
        grown.putBytes(0, gathered.buffer, 0, gathered.length);
        gathered.buffer = grown;
    }

    /**
     * Send the gathered requests of a link as one frame; when the link refuses it, fail each of them with the
     * refusal (at its session's listener) and refuse the link's later requests of this cycle.
     */
    private void sendGathered(final Gathered gathered)
    {
        if (0 == gathered.count)
        {
            return;
        }
        final UnsafeBuffer buffer = gathered.buffer;
        final ReplicationError error;
        if (1 == gathered.count)
        {
            error = outcome(gathered.link.offer(GatewayMessages.PRODUCE, buffer, ProduceSet.ENTRIES_OFFSET,
                gathered.length - ProduceSet.ENTRIES_OFFSET));
        }
        else
        {
            ProduceSet.putHeader(buffer, 0, gathered.count);
            error = outcome(gathered.link.offer(GatewayMessages.PRODUCE_SET, buffer, 0, gathered.length));
        }
        if (error != ReplicationError.NONE)
        {
            gathered.refused = error;
            for (int at = ProduceSet.ENTRIES_OFFSET; at < gathered.length; at += ProduceSet.entryLength(buffer, at))
            {
                final long wire = buffer.getLong(at + GatewayMessages.PRODUCE_CORRELATION_OFFSET,
                    GatewayMessages.ORDER);
                final ProduceListener listener = listeners.get(GatewayMessages.sessionOf(wire));
                if (null != listener)
                {
                    final PartitionState state = metadata.partition(buffer.getInt(
                        at + GatewayMessages.PRODUCE_PARTITION_OFFSET, GatewayMessages.ORDER));
                    listener.onComplete(null == state ? null : state.topicPartition(),
                        GatewayMessages.correlationOf(wire), -1, error);
                }
            }
        }
        gathered.length = ProduceSet.ENTRIES_OFFSET;
        gathered.count = 0;
    }

    /** On the reply agent: a PRODUCE_RESULT payload at {@code at} (its length checked), to its session's listener. */
    void onResult(final DirectBuffer buffer, final int at)
    {
        final long wire = buffer.getLong(at + GatewayMessages.RESULT_CORRELATION_OFFSET, GatewayMessages.ORDER);
        final ProduceListener listener = listeners.get(GatewayMessages.sessionOf(wire));
        final PartitionState state = metadata.partition(buffer.getInt(
            at + GatewayMessages.RESULT_PARTITION_OFFSET, GatewayMessages.ORDER));
        final ReplicationError error = ReplicationError.fromCode(
            buffer.getInt(at + GatewayMessages.RESULT_ERROR_OFFSET, GatewayMessages.ORDER));
        if (null != listener && null != error)
        {
            listener.onComplete(null == state ? null : state.topicPartition(), GatewayMessages.correlationOf(wire),
                buffer.getLong(at + GatewayMessages.PRODUCE_RESULT_BASE_OFFSET, GatewayMessages.ORDER), error);
        }
    }
}
