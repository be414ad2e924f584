package io.tidemark.client.remote;

import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Read requests to the partitions' leaders and their answers: each {@link RemoteReader} sends a READ through here,
 * and the READ_RESULT goes back to the reader that waits for its correlation id.
 */
final class RemoteReads
{
    private final ClusterMetadata metadata;
    private final HostLinks links;
    private final long requestTimeoutMs;
    private final Long2ObjectHashMap<RemoteReader> pending = new Long2ObjectHashMap<>();

    RemoteReads(final ClusterMetadata metadata, final HostLinks links, final long requestTimeoutMs)
    {
        this.metadata = metadata;
        this.links = links;
        this.requestTimeoutMs = requestTimeoutMs;
    }

    /**
     * @return a reader of a partition's committed records, from its leader; one per thread.
     * @throws IllegalArgumentException for an unknown partition.
     */
    RemoteReader open(final String topic, final int partition)
    {
        for (final PartitionState state : metadata.knownPartitions(topic))
        {
            if (state.topicPartition().partition() == partition)
            {
                return new RemoteReader(this, state.partitionId(), state.topicPartition(), requestTimeoutMs);
            }
        }
        throw new IllegalArgumentException("unknown partition " + topic + "-" + partition);
    }

    /**
     * Send a read request to a partition's leader; the answer goes to {@code reader}.
     *
     * @return whether it was sent (not when the partition has no registered leader, the leader has not answered this
     *         client's HELLO yet, or its publication refused the frame).
     */
    boolean send(final RemoteReader reader, final int partitionId, final long offset, final int maxBytes,
        final long correlationId)
    {
        final PartitionState state = metadata.partition(partitionId);
        final HostLinks.HostLink link = null == state || state.leader() == PartitionState.NO_LEADER ? null :
            links.linkTo(state.leader());
        if (null == link)
        {
            return false;
        }
        if (!link.ready)
        {
            link.helloIfDue(System.currentTimeMillis());
            return false;
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[GatewayMessages.READ_LENGTH]);
        request.putInt(GatewayMessages.READ_PARTITION_OFFSET, partitionId, GatewayMessages.ORDER);
        request.putInt(GatewayMessages.READ_MAX_BYTES_OFFSET, maxBytes, GatewayMessages.ORDER);
        request.putLong(GatewayMessages.READ_OFFSET_OFFSET, offset, GatewayMessages.ORDER);
        request.putLong(GatewayMessages.READ_CORRELATION_OFFSET, correlationId, GatewayMessages.ORDER);
        synchronized (pending)
        {
            pending.put(correlationId, reader);
        }
        if (link.offer(GatewayMessages.READ, request, GatewayMessages.READ_LENGTH) > 0)
        {
            return true;
        }
        forget(correlationId);
        return false;
    }

    /** Drop a request whose answer no one waits for any more. */
    void forget(final long correlationId)
    {
        synchronized (pending)
        {
            pending.remove(correlationId);
        }
    }

    /** On the reply agent: a READ_RESULT payload (its length checked), to the reader waiting for it, if any. */
    void onResult(final DirectBuffer buffer, final int at, final int length)
    {
        final long correlationId = buffer.getLong(at + GatewayMessages.RESULT_CORRELATION_OFFSET,
            GatewayMessages.ORDER);
        final RemoteReader remote;
        synchronized (pending)
        {
            remote = pending.remove(correlationId);
        }
        if (null != remote)
        {
            remote.onResult(correlationId, buffer, at, length);
        }
    }
}
