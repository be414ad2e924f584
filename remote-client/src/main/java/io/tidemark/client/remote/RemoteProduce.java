package io.tidemark.client.remote;

import io.aeron.Publication;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Produce requests to the partitions' leaders and their results: the producer sessions (each with its listener), a
 * PRODUCE frame per run of records to the leader the metadata names, and each PRODUCE_RESULT to its session's
 * listener. The send path does not allocate (a header buffer per sending thread).
 */
final class RemoteProduce
{
    private final ClusterMetadata metadata;
    private final HostLinks links;
    private final int requestMaxBytes;
    private final Map<Integer, ProduceListener> listeners = new ConcurrentHashMap<>();
    private final AtomicInteger nextSession = new AtomicInteger(1);
    private final ThreadLocal<UnsafeBuffer> produceHeader =
        ThreadLocal.withInitial(() -> new UnsafeBuffer(new byte[GatewayMessages.PRODUCE_RECORDS_OFFSET]));

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
        final UnsafeBuffer header = produceHeader.get();
        header.putInt(GatewayMessages.PRODUCE_PARTITION_OFFSET, partitionId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_ACKS_OFFSET, acks, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_TIMEOUT_OFFSET, timeoutMs, GatewayMessages.ORDER);
        header.putShort(GatewayMessages.PRODUCE_EPOCH_OFFSET, producerEpoch, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_PRODUCER_ID_OFFSET, producerId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_SEQUENCE_OFFSET, baseSequence, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_CORRELATION_OFFSET,
            GatewayMessages.wireCorrelation(session, correlationId), GatewayMessages.ORDER);
        final long result = link.offer(GatewayMessages.PRODUCE, header, GatewayMessages.PRODUCE_RECORDS_OFFSET,
            records, length);
        if (result > 0)
        {
            return ReplicationError.NONE;
        }
        if (result == FrameWriter.TOO_LONG)
        {
            return ReplicationError.INVALID_RECORDS;
        }
        return result == Publication.NOT_CONNECTED ? ReplicationError.LEADER_NOT_AVAILABLE :
            ReplicationError.BACK_PRESSURED;
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
