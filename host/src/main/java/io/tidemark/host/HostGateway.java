package io.tidemark.host;

import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.client.remote.protocol.ProduceSet;
import io.tidemark.replication.RateLimitedLog;
import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameReader;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.aeron.ReplayWindow;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.spi.HostLiveness;
import io.tidemark.replication.LeaderReaders;
import io.tidemark.replication.ProducerSessions;
import io.tidemark.replication.ReplicaNode;
import io.tidemark.replication.ReplicationError;
import io.tidemark.store.BatchHandler;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.StorageException;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.collections.Object2IntHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntToLongFunction;

import static io.tidemark.client.remote.protocol.GatewayMessages.*;

/**
 * A host's door to the network besides the fetch transport: control messages from other hosts and the controller
 * (handed to the {@link ControlChannel} with their authenticated sender), and client requests (produce onto the
 * leader's queue, read committed batches). Every message is a frame ({@link FrameDescriptor}) checked before
 * anything of it is used: its tag, its cluster, its sender and receiver, and its sequence number; a frame that fails
 * is dropped and counted ({@link EdgeCounters}).
 * <p>
 * A client introduces itself with HELLO, stating the address and port it listens on; the gateway builds the reply
 * channel itself from them, with its own parameters ({@link GatewayMessages}), opens a publication to it and a
 * producer session whose outcomes it sends there, and answers with a random token that every later request of the
 * client must carry. Clients are limited in number, in total and per source address ({@link HostConfig}), and one
 * not heard from for the idle timeout is forgotten (a live client repeats its HELLO every few seconds), so a replayed
 * request of a client long gone names no known token.
 * <p>
 * An Agrona {@link Agent} on its own thread. Produce outcomes are sent from the host agent's thread (the
 * session's listener); everything else from this one.
 */
final class HostGateway implements Agent
{
    private static final int READ_MAX_BYTES_LIMIT = 4 * 1024 * 1024;
    private static final long HELLO_ACK_RETRY_MS = 5_000;
    /** Longest a produce request's acknowledgement may be awaited, whatever its client asks. */
    static final int MAX_PRODUCE_TIMEOUT_MS = (int)io.tidemark.replication.ReplicationContext.MAX_TIMEOUT_MS;
    /** Parameters of the reply channels the host builds: its own term length, sparse files. */
    static final String REPLY_CHANNEL_PARAMETERS = "|term-length=4m|sparse=true";

    private final int hostId;
    private final long incarnation;
    private final int clusterHash;
    private final ClusterSecret secret;
    private final Aeron aeron;
    private final ReplicaNode node;
    private final ControlChannel channel;
    private final ProducerSessions sessions;
    private final EpochClock clock;
    private final int transportMtu;
    private final IntToLongFunction registry;
    private final EdgeCounters counters;
    private final HostConfig.ClientLimits limits;
    private final Subscription gatewayIn;
    private final Subscription controlIn;
    private final FragmentAssembler gatewayAssembler = new FragmentAssembler(this::onRequest);
    private final FragmentAssembler controlAssembler = new FragmentAssembler(this::onControl);
    private final FrameReader gatewayReader;
    private final FrameReader controlReader;
    private final ReplayWindow[] controlWindows;
    private final SecureRandom random = new SecureRandom();
    private final Long2ObjectHashMap<ClientPeer> clients = new Long2ObjectHashMap<>();
    private final Object2IntHashMap<String> clientsPerAddress = new Object2IntHashMap<>(0);
    private final List<ClientPeer> pendingHellos = new ArrayList<>();
    private final LeaderReaders readers;
    private final UnsafeBuffer readResult;
    private final BatchHandler copyBatch = this::copyBatch;
    private int readLength;
    private int readLimit;
    private long nextHousekeepingMs;
    private int livenessFragments; // of the control poll under way: heartbeats and controller announcements
    /** What the clients' produce results share: who has a backlog, how many were dropped. */
    private final ClientReplies.Totals replyTotals = new ClientReplies.Totals();
    /** Produce sets refused as malformed: from outside, so rate-limited. */
    private final RateLimitedLog produceSetFaults = new RateLimitedLog(System.getLogger(HostGateway.class.getName()));

    /** A client this host has heard from: its reply publication, token, replay window and producer session here. */
    private final class ClientPeer
    {
        final long clientId;
        final long token;
        final String sourceAddress;
        final Publication reply;
        final FrameWriter writer;
        final ReplayWindow window = new ReplayWindow();
        final int session;
        final ClientReplies results;
        final UnsafeBuffer ack = new UnsafeBuffer(new byte[HELLO_ACK_LENGTH]);
        long lastHeardMs;
        long helloDeadlineMs;

        ClientPeer(final long clientId, final long token, final String sourceAddress, final Publication reply)
        {
            this.clientId = clientId;
            this.token = token;
            this.sourceAddress = sourceAddress;
            this.reply = reply;
            this.writer = new FrameWriter(secret, clusterHash, FrameDescriptor.HOST, hostId, incarnation, 0);
            this.results = new ClientReplies(hostId, clientId, sourceAddress, reply, writer, replyTotals);
            this.session = sessions.register(this::onComplete);
            ack.putLong(HELLO_ACK_TOKEN_OFFSET, token, ORDER);
        }

        /** On the host agent's thread: the outcome of a produce request of this client. */
        private void onComplete(final io.tidemark.replication.TopicPartition tp, final long correlationId,
            final long baseOffset, final ReplicationError error)
        {
            results.send(node.partitionIdOf(tp), correlationId, baseOffset, error);
        }

        boolean sendHelloAck()
        {
            return writer.offer(reply, HELLO_ACK, FrameDescriptor.CLIENT_RECEIVER, clientId, ack, 0, HELLO_ACK_LENGTH) > 0;
        }

        void close()
        {
            sessions.unregister(session);
            results.close();
            CloseHelper.quietClose(reply);
        }
    }

    HostGateway(final int hostId, final long incarnation, final int clusterHash, final ClusterSecret secret,
        final Aeron aeron, final String ownChannel, final ReplicaNode node, final ControlChannel channel,
        final ProducerSessions sessions, final EpochClock clock, final IntToLongFunction registry,
        final EdgeCounters counters, final HostConfig.ClientLimits limits, final int transportMtu)
    {
        this.hostId = hostId;
        this.incarnation = incarnation;
        this.transportMtu = transportMtu;
        this.clusterHash = clusterHash;
        this.secret = secret;
        this.aeron = aeron;
        this.node = node;
        this.readers = new LeaderReaders(node::openLeaderReader, node::isLeading);
        this.channel = channel;
        this.sessions = sessions;
        this.clock = clock;
        this.registry = registry;
        this.counters = counters;
        this.limits = limits;
        this.gatewayReader = new FrameReader(secret, clusterHash);
        this.controlReader = new FrameReader(secret, clusterHash);
        this.controlWindows = new ReplayWindow[channel.maxHosts()];
        for (int i = 0; i < controlWindows.length; i++)
        {
            controlWindows[i] = new ReplayWindow();
        }
        this.gatewayIn = aeron.addSubscription(ownChannel, GATEWAY_STREAM_ID);
        this.controlIn = aeron.addSubscription(ownChannel, CONTROL_STREAM_ID);
        this.readResult = new UnsafeBuffer(ByteBuffer.allocateDirect(READ_RESULT_BATCHES_OFFSET +
            READ_MAX_BYTES_LIMIT));
    }

    @Override
    public int doWork()
    {
        channel.reading(System.nanoTime());
        livenessFragments = 0;
        int work = controlIn.poll(controlAssembler, 16) - livenessFragments; // liveness traffic is not work
        if (replyTotals.clientsWithBacklog.get() > 0)
        {
            for (final ClientPeer peer : clients.values())
            {
                work += peer.results.resendBacklog();
            }
        }
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
            if (now - peer.lastHeardMs > limits.idleTimeoutMs())
            {
                it.remove();
                forget(peer);
                evicted++;
            }
        }
        return evicted;
    }

    private void forget(final ClientPeer peer)
    {
        pendingHellos.remove(peer);
        final int left = clientsPerAddress.getValue(peer.sourceAddress) - 1;
        if (left <= 0)
        {
            clientsPerAddress.removeKey(peer.sourceAddress);
        }
        else
        {
            clientsPerAddress.put(peer.sourceAddress, left);
        }
        peer.close();
    }

    private static String source(final Header header)
    {
        return header.context() instanceof Image image ? image.sourceIdentity() : null;
    }

    private static String sourceAddress(final Header header)
    {
        final String source = source(header);
        if (null == source)
        {
            return "unknown";
        }
        final int colon = source.lastIndexOf(':');
        return colon > 0 ? source.substring(0, colon) : source;
    }

    private void onControl(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final EdgeCounters.Reason refused = controlReader.verify(buffer, offset, length, CONTROL_STREAM_ID);
        if (null != refused)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, refused, -1, source(header));
            return;
        }
        final long sender = controlReader.senderId();
        if (controlReader.senderKind() != FrameDescriptor.HOST || sender < 0 || sender >= controlWindows.length ||
            sender == hostId)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.UNKNOWN_SENDER, sender, source(header));
            return;
        }
        final int from = (int)sender;
        final long registered = registry.applyAsLong(from);
        final ReplayWindow window = controlWindows[from];
        if (registered == HostLiveness.ANY_INCARNATION ? controlReader.senderEpoch() < window.epoch() :
            controlReader.senderEpoch() != registered)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.STALE_SENDER, sender, source(header));
            return;
        }
        if (controlReader.receiverId() != hostId || controlReader.receiverEpoch() != incarnation)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.WRONG_RECEIVER, sender, source(header));
            return;
        }
        if (!window.accept(controlReader.senderEpoch(), controlReader.sequence()))
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.REPLAYED, sender, source(header));
            return;
        }
        if (controlReader.type() != CONTROL)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.MALFORMED, sender, source(header));
            return;
        }
        final long malformedBefore = channel.malformedMessages();
        final long misattributedBefore = channel.misattributedMessages();
        final long livenessBefore = channel.livenessMessages();
        channel.deliver(from, buffer, controlReader.payloadOffset(), controlReader.payloadLength());
        if (channel.livenessMessages() != livenessBefore)
        {
            livenessFragments++;
        }
        if (channel.malformedMessages() != malformedBefore)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.MALFORMED, sender, source(header));
        }
        else if (channel.misattributedMessages() != misattributedBefore)
        {
            counters.drop(EdgeCounters.Stream.CONTROL, EdgeCounters.Reason.MISATTRIBUTED, sender, source(header));
        }
    }

    private void drop(final EdgeCounters.Reason reason, final long clientId, final Header header)
    {
        counters.drop(EdgeCounters.Stream.CLIENT, reason, clientId, source(header));
    }

    private void onRequest(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final EdgeCounters.Reason refused = gatewayReader.verify(buffer, offset, length, GATEWAY_STREAM_ID);
        if (null != refused)
        {
            drop(refused, -1, header);
            return;
        }
        final long clientId = gatewayReader.senderId();
        if (gatewayReader.senderKind() != FrameDescriptor.CLIENT)
        {
            drop(EdgeCounters.Reason.UNKNOWN_SENDER, clientId, header);
            return;
        }
        if (gatewayReader.receiverId() != hostId || gatewayReader.receiverEpoch() != incarnation)
        {
            drop(EdgeCounters.Reason.WRONG_RECEIVER, clientId, header);
            return;
        }
        final int type = gatewayReader.type();
        final int payload = gatewayReader.payloadOffset();
        final int payloadLength = gatewayReader.payloadLength();
        ClientPeer peer = clients.get(clientId);
        if (type == HELLO)
        {
            if (null == peer)
            {
                peer = newPeer(clientId, buffer, payload, payloadLength, header);
                if (null == peer)
                {
                    return;
                }
            }
            else if (gatewayReader.senderEpoch() != 0 && gatewayReader.senderEpoch() != peer.token)
            {
                drop(EdgeCounters.Reason.STALE_SENDER, clientId, header);
                return;
            }
            if (!peer.window.accept(0, gatewayReader.sequence()))
            {
                drop(EdgeCounters.Reason.REPLAYED, clientId, header);
                return;
            }
            final long now = clock.time();
            peer.lastHeardMs = now;
            peer.helloDeadlineMs = now + HELLO_ACK_RETRY_MS;
            if (!pendingHellos.contains(peer))
            {
                pendingHellos.add(peer);
            }
            return;
        }
        if (null == peer)
        {
            drop(EdgeCounters.Reason.UNKNOWN_CLIENT, clientId, header); // it introduces itself again when it notices
            return;
        }
        if (gatewayReader.senderEpoch() != peer.token)
        {
            drop(EdgeCounters.Reason.STALE_SENDER, clientId, header);
            return;
        }
        if (!peer.window.accept(0, gatewayReader.sequence()))
        {
            drop(EdgeCounters.Reason.REPLAYED, clientId, header);
            return;
        }
        peer.lastHeardMs = clock.time();
        if (type == PRODUCE && payloadLength >= PRODUCE_RECORDS_OFFSET)
        {
            onProduce(peer, buffer, payload, payloadLength);
        }
        else if (type == PRODUCE_SET)
        {
            onProduceSet(peer, buffer, payload, payloadLength, header);
        }
        else if (type == READ && payloadLength == READ_LENGTH)
        {
            onRead(peer, buffer, payload);
        }
        else if (type == GOODBYE && payloadLength == 0)
        {
            clients.remove(clientId);
            forget(peer);
        }
        else
        {
            drop(EdgeCounters.Reason.BAD_REQUEST, clientId, header);
        }
    }

    /** A client's first HELLO: check its reply address and the limits, then open its reply channel. */
    private ClientPeer newPeer(final long clientId, final DirectBuffer buffer, final int offset, final int length,
        final Header header)
    {
        final String replyEndpoint = GatewayMessages.replyEndpoint(buffer, offset, length);
        if (null == replyEndpoint)
        {
            drop(EdgeCounters.Reason.BAD_REQUEST, clientId, header);
            return null;
        }
        final String address = sourceAddress(header);
        if (clients.size() >= limits.maxClients() ||
            clientsPerAddress.getValue(address) >= limits.maxClientsPerAddress())
        {
            drop(EdgeCounters.Reason.CLIENT_LIMIT, clientId, header);
            return null;
        }
        long token;
        do
        {
            token = random.nextLong();
        }
        while (token == 0);
        final ClientPeer peer = new ClientPeer(clientId, token, address,
            aeron.addPublication(io.tidemark.aeron.UdpChannels.publication(replyEndpoint, transportMtu) +
                REPLY_CHANNEL_PARAMETERS, REPLY_STREAM_ID));
        clients.put(clientId, peer);
        clientsPerAddress.put(address, clientsPerAddress.getValue(address) + 1);
        return peer;
    }

    /** @return clients this host knows now. */
    int clientCount()
    {
        return clients.size();
    }

    private void onProduce(final ClientPeer peer, final DirectBuffer buffer, final int offset, final int length)
    {
        final int partitionId = buffer.getInt(offset + PRODUCE_PARTITION_OFFSET, ORDER);
        final long correlationId = buffer.getLong(offset + PRODUCE_CORRELATION_OFFSET, ORDER);
        final ReplicationError error = node.produceRecords(peer.session, partitionId, correlationId,
            buffer.getInt(offset + PRODUCE_ACKS_OFFSET, ORDER),
            // a client's timeout is bounded: a huge one would keep the request's acknowledgement waiting for weeks
            Math.min(buffer.getInt(offset + PRODUCE_TIMEOUT_OFFSET, ORDER), MAX_PRODUCE_TIMEOUT_MS),
            buffer.getLong(offset + PRODUCE_PRODUCER_ID_OFFSET, ORDER),
            buffer.getShort(offset + PRODUCE_EPOCH_OFFSET, ORDER),
            buffer.getInt(offset + PRODUCE_SEQUENCE_OFFSET, ORDER),
            buffer, offset + PRODUCE_RECORDS_OFFSET, length - PRODUCE_RECORDS_OFFSET);
        if (error != ReplicationError.NONE)
        {
            peer.results.send(partitionId, correlationId, -1, error);
        }
    }

    /**
     * A client's produce requests for many partitions in one frame ({@link ProduceSet}): checked whole first (a
     * damaged or forged set is refused whole, counted as a bad request, and none of it appended), then each entry
     * handled as its own PRODUCE, in order.
     */
    private void onProduceSet(final ClientPeer peer, final DirectBuffer buffer, final int offset, final int length,
        final Header header)
    {
        final ProduceSet.Fault fault = ProduceSet.check(buffer, offset, length);
        if (null != fault)
        {
            final long suppressed = produceSetFaults.shouldLog("bad produce set"); // no string per frame
            if (suppressed >= 0)
            {
                System.getLogger(HostGateway.class.getName()).log(System.Logger.Level.WARNING, "host " + hostId +
                    " refused a produce set of client " + peer.clientId + " at " + peer.sourceAddress + ": " + fault +
                    " (" + suppressed + " more since the last such line)");
            }
            drop(EdgeCounters.Reason.BAD_REQUEST, peer.clientId, header);
            return;
        }
        final int end = offset + length;
        for (int at = offset + ProduceSet.ENTRIES_OFFSET; at < end; )
        {
            final int entryLength = ProduceSet.entryLength(buffer, at);
            onProduce(peer, buffer, at, entryLength);
            at += entryLength;
        }
    }

    private void onRead(final ClientPeer peer, final DirectBuffer buffer, final int offset)
    {
        final int partitionId = buffer.getInt(offset + READ_PARTITION_OFFSET, ORDER);
        final int maxBytes = Math.max(1, Math.min(READ_MAX_BYTES_LIMIT,
            Math.min(buffer.getInt(offset + READ_MAX_BYTES_OFFSET, ORDER), peer.reply.maxMessageLength() -
            FrameDescriptor.HEADER_LENGTH - READ_RESULT_BATCHES_OFFSET)));
        final long fetchOffset = buffer.getLong(offset + READ_OFFSET_OFFSET, ORDER);
        final long correlationId = buffer.getLong(offset + READ_CORRELATION_OFFSET, ORDER);
        ReplicationError error = ReplicationError.NONE;
        readLength = 0;
        readLimit = maxBytes;
        long highWatermark = -1;
        long logStart = -1;
        final int epoch = node.leaderEpoch(partitionId);
        final LogReader reader = readers.reader(partitionId, epoch);
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
                readers.close(partitionId); // the replica closed or moved: the client asks again
                error = ReplicationError.NOT_LEADER;
                readLength = 0;
            }
        }
        readResult.putInt(RESULT_PARTITION_OFFSET, partitionId, ORDER);
        readResult.putInt(RESULT_ERROR_OFFSET, error.code(), ORDER);
        readResult.putLong(RESULT_CORRELATION_OFFSET, correlationId, ORDER);
        readResult.putLong(READ_RESULT_HW_OFFSET, highWatermark, ORDER);
        readResult.putLong(READ_RESULT_LOG_START_OFFSET, logStart, ORDER);
        readResult.putInt(READ_RESULT_EPOCH_OFFSET, epoch, ORDER);
        peer.writer.offer(peer.reply, READ_RESULT, FrameDescriptor.CLIENT_RECEIVER, peer.clientId, readResult, 0,
            READ_RESULT_BATCHES_OFFSET + readLength);
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

    @Override
    public void onClose()
    {
        readers.close();
        for (final ClientPeer peer : clients.values())
        {
            peer.close();
        }
        clients.clear();
        clientsPerAddress.clear();
        CloseHelper.closeAll(gatewayIn, controlIn);
    }

    @Override
    public String roleName()
    {
        return "tidemark-gateway-" + hostId;
    }
}
