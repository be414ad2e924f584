package io.tidemark.host;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.ProducerSessions;
import io.tidemark.replication.ReplicaNode;
import io.tidemark.replication.ReplicationError;
import io.tidemark.store.BatchHandler;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.StorageException;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.host.GatewayMessages.*;

/**
 * A host's door to the network besides the fetch transport: control messages from other hosts and the controller
 * (handed to the {@link ControlChannel}), and client requests (produce onto the leader's queue, read committed
 * batches). A client introduces itself with HELLO and its reply channel; the gateway opens a publication to it and
 * a producer session whose outcomes it sends there. Messages carrying another cluster's id are dropped and counted.
 * <p>
 * An Agrona {@link Agent} on its own thread. Produce outcomes are sent from the host agent's thread (the
 * session's listener); everything else from this one.
 */
final class HostGateway implements Agent
{
    private static final long IDLE_CLIENT_MS = 30_000;
    private static final int READ_MAX_BYTES_LIMIT = 4 * 1024 * 1024;

    private final int hostId;
    private final int clusterHash;
    private final Aeron aeron;
    private final ReplicaNode node;
    private final ControlChannel channel;
    private final ProducerSessions sessions;
    private final EpochClock clock;
    private final int transportMtu;
    private final Subscription gatewayIn;
    private final Subscription controlIn;
    private final FragmentAssembler gatewayAssembler = new FragmentAssembler(this::onRequest);
    private final FragmentAssembler controlAssembler = new FragmentAssembler(this::onControl);
    private final Long2ObjectHashMap<ClientPeer> clients = new Long2ObjectHashMap<>();
    private final List<ClientPeer> pendingHellos = new ArrayList<>();
    private final Int2ObjectHashMap<LogReader> readers = new Int2ObjectHashMap<>();
    private final org.agrona.collections.Int2IntHashMap readerEpochs = new org.agrona.collections.Int2IntHashMap(-2);
    private final UnsafeBuffer readResult;
    private final BatchHandler copyBatch = this::copyBatch;
    private int readLength;
    private int readLimit;
    private long nextHousekeepingMs;
    private long foreignMessages;
    private long rejectedRequests;

    /** A client this host has heard from: its reply publication and its producer session here. */
    private final class ClientPeer
    {
        final long clientId;
        final Publication reply;
        final int session;
        final UnsafeBuffer result = new UnsafeBuffer(ByteBuffer.allocateDirect(PRODUCE_RESULT_LENGTH));
        long lastHeardMs;
        long helloDeadlineMs;

        ClientPeer(final long clientId, final Publication reply)
        {
            this.clientId = clientId;
            this.reply = reply;
            this.session = sessions.register(this::onComplete);
            result.putInt(CLUSTER_OFFSET, clusterHash, ORDER);
            result.putInt(TYPE_OFFSET, PRODUCE_RESULT, ORDER);
        }

        /** On the host agent's thread: the outcome of a produce request of this client. */
        private void onComplete(final io.tidemark.replication.TopicPartition tp, final long correlationId,
            final long baseOffset, final ReplicationError error)
        {
            sendResult(node.partitionIdOf(tp), correlationId, baseOffset, error);
        }

        void sendResult(final int partitionId, final long correlationId, final long baseOffset,
            final ReplicationError error)
        {
            synchronized (result)
            {
                result.putInt(RESULT_PARTITION_OFFSET, partitionId, ORDER);
                result.putInt(RESULT_ERROR_OFFSET, error.ordinal(), ORDER);
                result.putLong(RESULT_CORRELATION_OFFSET, correlationId, ORDER);
                result.putLong(PRODUCE_RESULT_BASE_OFFSET, baseOffset, ORDER);
                reply.offer(result, 0, PRODUCE_RESULT_LENGTH); // lost on back-pressure: the client times out, retries
            }
        }

        boolean sendHelloAck()
        {
            final UnsafeBuffer ack = new UnsafeBuffer(new byte[HELLO_ACK_LENGTH]);
            ack.putInt(CLUSTER_OFFSET, clusterHash, ORDER);
            ack.putInt(TYPE_OFFSET, HELLO_ACK, ORDER);
            ack.putLong(CLIENT_ID_OFFSET, clientId, ORDER);
            ack.putInt(HELLO_ACK_HOST_OFFSET, hostId, ORDER);
            ack.putLong(HELLO_ACK_INCARNATION_OFFSET, node.incarnation(), ORDER);
            return reply.offer(ack, 0, HELLO_ACK_LENGTH) > 0;
        }

        void close()
        {
            sessions.unregister(session);
            CloseHelper.quietClose(reply);
        }
    }

    HostGateway(final int hostId, final int clusterHash, final Aeron aeron, final String ownChannel,
        final ReplicaNode node, final ControlChannel channel, final ProducerSessions sessions,
        final EpochClock clock, final int transportMtu)
    {
        this.hostId = hostId;
        this.transportMtu = transportMtu;
        this.clusterHash = clusterHash;
        this.aeron = aeron;
        this.node = node;
        this.channel = channel;
        this.sessions = sessions;
        this.clock = clock;
        this.gatewayIn = aeron.addSubscription(ownChannel, GATEWAY_STREAM_ID);
        this.controlIn = aeron.addSubscription(ownChannel, CONTROL_STREAM_ID);
        this.readResult = new UnsafeBuffer(ByteBuffer.allocateDirect(READ_RESULT_BATCHES_OFFSET +
            READ_MAX_BYTES_LIMIT));
        readResult.putInt(CLUSTER_OFFSET, clusterHash, ORDER);
        readResult.putInt(TYPE_OFFSET, READ_RESULT, ORDER);
    }

    @Override
    public int doWork()
    {
        int work = controlIn.poll(controlAssembler, 16);
        work += gatewayIn.poll(gatewayAssembler, 64);
        final long now = clock.time();
        if (!pendingHellos.isEmpty())
        {
            for (int i = pendingHellos.size() - 1; i >= 0; i--)
            {
                final ClientPeer peer = pendingHellos.get(i);
                if (peer.sendHelloAck() || now > peer.helloDeadlineMs)
                {
                    pendingHellos.remove(i);
                    work++;
                }
            }
        }
        if (now >= nextHousekeepingMs)
        {
            nextHousekeepingMs = now + 1_000;
            work += evictIdleClients(now);
        }
        return work;
    }

    private int evictIdleClients(final long now)
    {
        int evicted = 0;
        final Long2ObjectHashMap<ClientPeer>.ValueIterator it = clients.values().iterator();
        while (it.hasNext())
        {
            final ClientPeer peer = it.next();
            if (!peer.reply.isConnected() && now - peer.lastHeardMs > IDLE_CLIENT_MS)
            {
                it.remove();
                pendingHellos.remove(peer);
                peer.close();
                evicted++;
            }
        }
        return evicted;
    }

    private void onControl(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        if (!isOurs(buffer, offset, length, clusterHash) || type(buffer, offset) != CONTROL)
        {
            foreignMessages++;
            return;
        }
        channel.deliver(buffer, offset + HEADER_LENGTH, length - HEADER_LENGTH);
    }

    private void onRequest(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        if (!isOurs(buffer, offset, length, clusterHash) || length < CLIENT_ID_OFFSET + 8)
        {
            foreignMessages++;
            return;
        }
        final int type = type(buffer, offset);
        final long clientId = buffer.getLong(offset + CLIENT_ID_OFFSET, ORDER);
        if (type == HELLO)
        {
            onHello(clientId, buffer, offset, length);
            return;
        }
        final ClientPeer peer = clients.get(clientId);
        if (null == peer)
        {
            rejectedRequests++; // a client this incarnation never met: it re-introduces itself when it notices
            return;
        }
        peer.lastHeardMs = clock.time();
        if (type == PRODUCE && length >= PRODUCE_RECORDS_OFFSET)
        {
            onProduce(peer, buffer, offset, length);
        }
        else if (type == READ && length >= READ_LENGTH)
        {
            onRead(peer, buffer, offset);
        }
        else if (type == GOODBYE)
        {
            clients.remove(clientId);
            pendingHellos.remove(peer);
            peer.close();
        }
        else
        {
            rejectedRequests++;
        }
    }

    private void onHello(final long clientId, final DirectBuffer buffer, final int offset, final int length)
    {
        final int channelLength = length >= HELLO_CHANNEL_OFFSET ?
            buffer.getInt(offset + HELLO_CHANNEL_LENGTH_OFFSET, ORDER) : -1;
        if (channelLength <= 0 || channelLength > MAX_REPLY_CHANNEL_LENGTH ||
            HELLO_CHANNEL_OFFSET + channelLength > length)
        {
            rejectedRequests++;
            return;
        }
        ClientPeer peer = clients.get(clientId);
        if (null == peer)
        {
            final byte[] channelBytes = new byte[channelLength];
            buffer.getBytes(offset + HELLO_CHANNEL_OFFSET, channelBytes);
            // only the endpoint comes from the client: the publication's parameters are this host's, for its path
            final String endpoint = io.tidemark.aeron.UdpChannels.endpointOf(
                new String(channelBytes, StandardCharsets.US_ASCII));
            if (null == endpoint || !isEndpoint(endpoint))
            {
                rejectedRequests++;
                return;
            }
            peer = new ClientPeer(clientId, aeron.addPublication(
                io.tidemark.aeron.UdpChannels.publication(endpoint, transportMtu), REPLY_STREAM_ID));
            clients.put(clientId, peer);
        }
        final long now = clock.time();
        peer.lastHeardMs = now;
        peer.helloDeadlineMs = now + 5_000;
        if (!pendingHellos.contains(peer))
        {
            pendingHellos.add(peer);
        }
    }

    /** @return whether {@code endpoint} is {@code address:port} of printable characters without a separator. */
    private static boolean isEndpoint(final String endpoint)
    {
        final int colon = endpoint.lastIndexOf(':');
        if (colon <= 0 || colon == endpoint.length() - 1 || endpoint.length() > 300)
        {
            return false;
        }
        for (int i = 0; i < endpoint.length(); i++)
        {
            final char c = endpoint.charAt(i);
            if (c <= ' ' || c > '~' || c == '|' || c == '?' || c == '=')
            {
                return false;
            }
        }
        for (int i = colon + 1; i < endpoint.length(); i++)
        {
            if (!Character.isDigit(endpoint.charAt(i)))
            {
                return false;
            }
        }
        return endpoint.length() - colon - 1 <= 5 && Integer.parseInt(endpoint.substring(colon + 1)) <= 65535;
    }

    private void onProduce(final ClientPeer peer, final DirectBuffer buffer, final int offset, final int length)
    {
        final int partitionId = buffer.getInt(offset + PRODUCE_PARTITION_OFFSET, ORDER);
        final long correlationId = buffer.getLong(offset + PRODUCE_CORRELATION_OFFSET, ORDER);
        final ReplicationError error = node.produceRecords(peer.session, partitionId, correlationId,
            buffer.getInt(offset + PRODUCE_ACKS_OFFSET, ORDER),
            buffer.getInt(offset + PRODUCE_TIMEOUT_OFFSET, ORDER),
            buffer.getLong(offset + PRODUCE_PRODUCER_ID_OFFSET, ORDER),
            buffer.getShort(offset + PRODUCE_EPOCH_OFFSET, ORDER),
            buffer.getInt(offset + PRODUCE_SEQUENCE_OFFSET, ORDER),
            buffer, offset + PRODUCE_RECORDS_OFFSET, length - PRODUCE_RECORDS_OFFSET);
        if (error != ReplicationError.NONE)
        {
            peer.sendResult(partitionId, correlationId, -1, error);
        }
    }

    private void onRead(final ClientPeer peer, final DirectBuffer buffer, final int offset)
    {
        final int partitionId = buffer.getInt(offset + READ_PARTITION_OFFSET, ORDER);
        final int maxBytes = Math.max(1, Math.min(READ_MAX_BYTES_LIMIT,
            Math.min(buffer.getInt(offset + READ_MAX_BYTES_OFFSET, ORDER), peer.reply.maxMessageLength() -
            READ_RESULT_BATCHES_OFFSET)));
        final long fetchOffset = buffer.getLong(offset + READ_OFFSET_OFFSET, ORDER);
        final long correlationId = buffer.getLong(offset + READ_CORRELATION_OFFSET, ORDER);
        ReplicationError error = ReplicationError.NONE;
        readLength = 0;
        readLimit = maxBytes;
        long highWatermark = -1;
        long logStart = -1;
        final int epoch = node.leaderEpoch(partitionId);
        final LogReader reader = readerFor(partitionId, epoch);
        if (null == reader)
        {
            error = ReplicationError.NOT_LEADER;
        }
        else
        {
            try
            {
                highWatermark = node.highWatermark(partitionId);
                logStart = node.logStartOffset(partitionId);
                if (fetchOffset < logStart || fetchOffset > node.logEndOffset(partitionId))
                {
                    error = ReplicationError.OFFSET_OUT_OF_RANGE;
                }
                else if (fetchOffset < highWatermark)
                {
                    reader.seek(fetchOffset);
                    reader.pollBatches(copyBatch, highWatermark, maxBytes);
                }
            }
            catch (final StorageException ex)
            {
                closeReader(partitionId); // the replica closed or moved: the client asks again
                error = ReplicationError.NOT_LEADER;
                readLength = 0;
            }
        }
        readResult.putInt(RESULT_PARTITION_OFFSET, partitionId, ORDER);
        readResult.putInt(RESULT_ERROR_OFFSET, error.ordinal(), ORDER);
        readResult.putLong(RESULT_CORRELATION_OFFSET, correlationId, ORDER);
        readResult.putLong(READ_RESULT_HW_OFFSET, highWatermark, ORDER);
        readResult.putLong(READ_RESULT_LOG_START_OFFSET, logStart, ORDER);
        readResult.putInt(READ_RESULT_EPOCH_OFFSET, epoch, ORDER);
        peer.reply.offer(readResult, 0, READ_RESULT_BATCHES_OFFSET + readLength);
    }

    private void copyBatch(final RecordBatch batch)
    {
        if (readLength + batch.frameLength() <= readLimit || readLength == 0)
        {
            if (readLength + batch.frameLength() <= readResult.capacity() - READ_RESULT_BATCHES_OFFSET)
            {
                readResult.putBytes(READ_RESULT_BATCHES_OFFSET + readLength, batch.buffer(), batch.offset(),
                    batch.frameLength());
                readLength += batch.frameLength();
            }
        }
    }

    private LogReader readerFor(final int partitionId, final int epoch)
    {
        LogReader reader = readers.get(partitionId);
        if (null != reader && (readerEpochs.get(partitionId) != epoch || !node.isLeading(partitionId)))
        {
            closeReader(partitionId);
            reader = null;
        }
        if (null == reader)
        {
            reader = node.openLeaderReader(partitionId);
            if (null != reader)
            {
                readers.put(partitionId, reader);
                readerEpochs.put(partitionId, epoch);
            }
        }
        return reader;
    }

    private void closeReader(final int partitionId)
    {
        final LogReader reader = readers.remove(partitionId);
        readerEpochs.remove(partitionId);
        if (null != reader)
        {
            try
            {
                reader.close();
            }
            catch (final RuntimeException ignore)
            {
                // the log under it is gone already
            }
        }
    }

    /** @return messages dropped for carrying another cluster's id or no header. */
    long foreignMessages()
    {
        return foreignMessages;
    }

    /** @return requests dropped: unknown client, malformed. */
    long rejectedRequests()
    {
        return rejectedRequests;
    }

    @Override
    public void onClose()
    {
        for (final int partitionId : readers.keySet().stream().mapToInt(Integer::intValue).toArray())
        {
            closeReader(partitionId);
        }
        for (final ClientPeer peer : clients.values())
        {
            peer.close();
        }
        clients.clear();
        CloseHelper.closeAll(gatewayIn, controlIn);
    }

    @Override
    public String roleName()
    {
        return "tidemark-gateway-" + hostId;
    }
}
