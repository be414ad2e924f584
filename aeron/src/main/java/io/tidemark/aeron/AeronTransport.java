package io.tidemark.aeron;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Image;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.tidemark.replication.spi.HostLiveness;
import io.tidemark.replication.spi.Transport;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;
import java.util.function.IntToLongFunction;

/**
 * The replication {@link Transport} over Aeron: the same flyweight-encoded fetch messages as the in-process ring
 * buffers, carried between replica hosts as Aeron messages (IPC between processes on one machine, UDP unicast
 * between machines). Each replica host has one Aeron channel (its endpoint); on it, stream
 * {@link #REQUEST_STREAM_ID_BASE}{@code + host} carries the requests to the host and stream
 * {@link #RESPONSE_STREAM_ID_BASE}{@code + host * MAX_HOSTS + leader} the responses its fetcher for {@code leader}
 * receives. Each message travels in a frame ({@link FrameDescriptor}): its type, the cluster id, the sending host and
 * its incarnation, the receiving host's incarnation, a sequence number and a tag keyed with the cluster secret. A
 * frame is checked before anything of it is used: its tag, its cluster, that its sender is a host of the cluster in
 * the incarnation it registered with (and, on a response stream, the leader the stream is for), that it is addressed
 * to this incarnation of the receiving host, and that its sequence number is new ({@link ReplayWindow}). A frame that
 * fails is dropped and counted ({@link EdgeCounters}); requests reach the protocol with their authenticated sender
 * ({@link Transport.RequestHandler}). A response larger than the MTU is fragmented by Aeron and reassembled by a
 * {@link FragmentAssembler} before it is checked. Batches travel as the bytes the leader read from its mapping.
 * <p>
 * Incarnations come from a registry ({@link HostLiveness#registeredIncarnation}, ZooKeeper across processes); a
 * transport without one ({@link HostLiveness#ANY_INCARNATION}, tests in one JVM) gives each host a new epoch at every
 * {@link #hostUp} and accepts a sender's newer epoch in place of an older one.
 * <p>
 * A host served by this process gets its subscriptions and its publications at {@link #hostUp} and loses them at
 * {@link #hostDown}. A send returns {@code false} on back-pressure or when nobody subscribes at the destination
 * (its host is down or unreachable), and the protocol retries: a follower whose leader is unreachable keeps
 * re-sending after its backoff, and the leader's ISR logic sees a follower that stopped fetching. A subscription
 * made at {@link #hostUp} joins each publication near its current position: unlike the in-process rings, a few
 * messages sent while the host was down (before the driver noticed it gone) can still reach its next incarnation.
 * The protocol does not depend on their absence: fetch correlation ids carry the follower's incarnation, so a late
 * response matches no request, and a late request is an ordinary fetch checked against the leader epoch.
 * <p>
 * Thread-safety: sends from any thread (Aeron's concurrent publications); each host's subscriptions are polled by
 * one thread, its host agent and its fetchers; {@link #hostUp} and {@link #hostDown} run while the host's agents
 * are stopped, as {@code ReplicationCluster} calls them. Sends to one destination stream serialize on its
 * {@link FrameWriter}. Nothing is allocated per message.
 */
public final class AeronTransport implements Transport, AutoCloseable
{
    /** Largest host id plus one. */
    public static final int MAX_HOSTS = 64;
    /** Stream id of host 0's requests; host {@code h} receives its requests on this plus {@code h}. */
    public static final int REQUEST_STREAM_ID_BASE = 1_000;
    /** Stream id of the responses host 0 receives from host 0; see the class comment. */
    public static final int RESPONSE_STREAM_ID_BASE = 10_000;
    /** Bytes ahead of each message: its frame. */
    public static final int TYPE_HEADER_LENGTH = FrameDescriptor.HEADER_LENGTH;

    private static final AtomicLong EPOCHS = new AtomicLong();

    private final Aeron aeron;
    private final boolean ownsAeron;
    private final int hostCount;
    private final IntFunction<String> channelOfHost;
    private final int clusterId;
    private final ClusterSecret secret;
    private final IntToLongFunction registry;
    private final EdgeCounters counters;
    private final long[] localEpochs;
    private final AtomicReferenceArray<Inbound> requestInbound;
    private final AtomicReferenceArray<Inbound> responseInbound;
    private final AtomicReferenceArray<Outbound> requestOut;
    private final AtomicReferenceArray<Outbound> responseOut;

    /**
     * An unauthenticated transport without an incarnation registry and cluster id 0 (tests in one JVM).
     *
     * @param aeron         a connected Aeron client.
     * @param ownsAeron     whether {@link #close} closes it.
     * @param hostCount     host ids are in {@code [0, hostCount)}, at most {@link #MAX_HOSTS}.
     * @param channelOfHost the Aeron channel of each host: {@code aeron:ipc} for hosts on one machine, or
     *                      {@code aeron:udp?endpoint=address:port} where the host listens.
     */
    public AeronTransport(
        final Aeron aeron, final boolean ownsAeron, final int hostCount, final IntFunction<String> channelOfHost)
    {
        this(aeron, ownsAeron, hostCount, channelOfHost, 0);
    }

    /**
     * An unauthenticated transport without an incarnation registry (tests).
     *
     * @param clusterId carried by every message; a message of another cluster is dropped and counted.
     */
    public AeronTransport(final Aeron aeron, final boolean ownsAeron, final int hostCount,
        final IntFunction<String> channelOfHost, final int clusterId)
    {
        this(aeron, ownsAeron, hostCount, channelOfHost, clusterId, ClusterSecret.insecure(),
            (host) -> HostLiveness.ANY_INCARNATION, new EdgeCounters("transport"));
    }

    /**
     * @param aeron         a connected Aeron client.
     * @param ownsAeron     whether {@link #close} closes it.
     * @param hostCount     host ids are in {@code [0, hostCount)}, at most {@link #MAX_HOSTS}.
     * @param channelOfHost the Aeron channel of each host.
     * @param clusterId     carried by every message; a message of another cluster (a misconfigured host of another
     *                      cluster on the same endpoints) is dropped and counted.
     * @param secret        keys the frames' tags ({@link ClusterSecret#insecure()}: none).
     * @param registry      each host's registered incarnation ({@link HostLiveness#registeredIncarnation}), this
     *                      process's hosts included.
     * @param counters      where drops are counted and logged.
     */
    public AeronTransport(final Aeron aeron, final boolean ownsAeron, final int hostCount,
        final IntFunction<String> channelOfHost, final int clusterId, final ClusterSecret secret,
        final IntToLongFunction registry, final EdgeCounters counters)
    {
        if (hostCount < 1 || hostCount > MAX_HOSTS)
        {
            throw new IllegalArgumentException("hostCount must be in [1, " + MAX_HOSTS + "]: " + hostCount);
        }
        for (int h = 0; h < hostCount; h++)
        {
            final String channel = channelOfHost.apply(h);
            if (null == channel || !channel.startsWith("aeron:"))
            {
                throw new IllegalArgumentException("host " + h + " has no Aeron channel: " + channel);
            }
        }
        this.aeron = aeron;
        this.ownsAeron = ownsAeron;
        this.hostCount = hostCount;
        this.channelOfHost = channelOfHost;
        this.clusterId = clusterId;
        this.secret = secret;
        this.registry = registry;
        this.counters = counters;
        this.localEpochs = new long[hostCount];
        this.requestInbound = new AtomicReferenceArray<>(hostCount);
        this.responseInbound = new AtomicReferenceArray<>(hostCount * hostCount);
        this.requestOut = new AtomicReferenceArray<>(hostCount * hostCount);
        this.responseOut = new AtomicReferenceArray<>(hostCount * hostCount);
    }

    /** @return a channel function that puts every host on Aeron IPC (processes of one machine, one driver). */
    public static IntFunction<String> ipc()
    {
        return (host) -> "aeron:ipc";
    }

    /**
     * @param endpoints {@code address:port} each host listens on, by host id.
     * @return a channel function for UDP unicast to those endpoints.
     */
    public static IntFunction<String> udp(final String... endpoints)
    {
        return (host) -> host < endpoints.length ? "aeron:udp?endpoint=" + endpoints[host] : null;
    }

    static int requestStreamId(final int toHost)
    {
        return REQUEST_STREAM_ID_BASE + toHost;
    }

    static int responseStreamId(final int toHost, final int fromHost)
    {
        return RESPONSE_STREAM_ID_BASE + toHost * MAX_HOSTS + fromHost;
    }

    private int pair(final int a, final int b)
    {
        return a * hostCount + b;
    }

    private void checkHost(final int host)
    {
        if (host < 0 || host >= hostCount)
        {
            throw new IllegalArgumentException("host id out of range [0, " + hostCount + "): " + host);
        }
    }

    /**
     * @return the largest message every open publication carries (Aeron's limit for its term length, less the frame
     *         header), or {@link Integer#MAX_VALUE} while none is open. {@code ReplicationCluster} checks it against
     *         {@code replica.fetch.max.bytes} when it starts.
     */
    @Override
    public int maxMessageLength()
    {
        int max = Integer.MAX_VALUE;
        for (int i = 0; i < hostCount * hostCount; i++)
        {
            max = Math.min(max, lengthLimit(requestOut.get(i)));
            max = Math.min(max, lengthLimit(responseOut.get(i)));
        }
        return max;
    }

    private static int lengthLimit(final Outbound outbound)
    {
        return null == outbound ? Integer.MAX_VALUE : outbound.publication.maxMessageLength() - TYPE_HEADER_LENGTH;
    }

    /**
     * The largest message a send from one host can carry: Aeron's limit for the publications' term length, less the
     * frame header.
     *
     * @param fromHost a host that is up in this process.
     * @return the limit in bytes, or -1 when the host has no publication here.
     */
    public int maxMessageLength(final int fromHost)
    {
        for (int to = 0; to < hostCount; to++)
        {
            final Outbound outbound = responseOut.get(pair(fromHost, to));
            if (null != outbound)
            {
                return outbound.publication.maxMessageLength() - TYPE_HEADER_LENGTH;
            }
        }
        return -1;
    }

    @Override
    public boolean sendRequest(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        return offer(requestOut.get(pair(fromHost, toHost)), toHost, msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        return offer(responseOut.get(pair(fromHost, toHost)), toHost, msgTypeId, buffer, offset, length);
    }

    private boolean offer(
        final Outbound outbound, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        if (null == outbound)
        {
            return false;
        }
        final long receiverEpoch = registry.applyAsLong(toHost);
        if (receiverEpoch == HostLiveness.NOT_REGISTERED)
        {
            return false; // not registered now: nobody to address; the protocol retries
        }
        // Positive: sent. NOT_CONNECTED, BACK_PRESSURED, ADMIN_ACTION, CLOSED, MAX_POSITION_EXCEEDED, TOO_LONG: the
        // protocol retries later, as it does for a full ring.
        return outbound.writer.offer(outbound.publication, msgTypeId, toHost,
            receiverEpoch == HostLiveness.ANY_INCARNATION ? 0 : receiverEpoch, buffer, offset, length) > 0;
    }

    @Override
    public int pollRequests(final int host, final RequestHandler handler, final int limit)
    {
        final Inbound inbound = requestInbound.get(host);
        if (null == inbound)
        {
            return 0;
        }
        inbound.requestHandler = handler;
        return inbound.subscription.poll(inbound.assembler, limit);
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        final Inbound inbound = responseInbound.get(pair(host, fromHost));
        if (null == inbound)
        {
            return 0;
        }
        inbound.responseHandler = handler;
        return inbound.subscription.poll(inbound.assembler, limit);
    }

    /**
     * A host of this process (re)starts: fresh subscriptions on its streams, and publications to every other
     * host's streams. Blocks until the media driver has answered (milliseconds).
     */
    @Override
    public synchronized void hostUp(final int host)
    {
        checkHost(host);
        hostDown(host);
        final long registered = registry.applyAsLong(host);
        localEpochs[host] = registered > 0 ? registered :
            System.currentTimeMillis() * 1_000 + EPOCHS.incrementAndGet() % 1_000; // grows across restarts
        final String own = channelOfHost.apply(host);
        requestInbound.set(host, new Inbound(aeron.addSubscription(own, requestStreamId(host)), host, -1));
        for (int other = 0; other < hostCount; other++)
        {
            if (other == host)
            {
                continue;
            }
            responseInbound.set(pair(host, other),
                new Inbound(aeron.addSubscription(own, responseStreamId(host, other)), host, other));
            final String theirs = channelOfHost.apply(other);
            requestOut.set(pair(host, other), new Outbound(aeron.addPublication(theirs, requestStreamId(other)),
                new FrameWriter(secret, clusterId, FrameDescriptor.HOST, host, localEpochs[host], 0)));
            responseOut.set(pair(host, other), new Outbound(aeron.addPublication(theirs, responseStreamId(other, host)),
                new FrameWriter(secret, clusterId, FrameDescriptor.HOST, host, localEpochs[host], 0)));
        }
    }

    /** A host of this process stopped: its subscriptions and publications close; sends to it return false. */
    @Override
    public synchronized void hostDown(final int host)
    {
        checkHost(host);
        CloseHelper.close(requestInbound.getAndSet(host, null));
        for (int other = 0; other < hostCount; other++)
        {
            CloseHelper.close(responseInbound.getAndSet(pair(host, other), null));
            CloseHelper.close(requestOut.getAndSet(pair(host, other), null));
            CloseHelper.close(responseOut.getAndSet(pair(host, other), null));
        }
    }

    /** @return messages dropped because they carried another cluster's id. */
    public long foreignMessages()
    {
        return counters.dropped(EdgeCounters.Stream.FETCH, EdgeCounters.Reason.FOREIGN_CLUSTER);
    }

    /** @return where this transport counts what it drops. */
    public EdgeCounters counters()
    {
        return counters;
    }

    /** Close every host's streams, and the Aeron client when this transport owns it. */
    @Override
    public synchronized void close()
    {
        for (int host = 0; host < hostCount; host++)
        {
            hostDown(host);
        }
        if (ownsAeron)
        {
            aeron.close();
        }
    }

    /** A publication to another host's stream with the writer of its frames. */
    private record Outbound(Publication publication, FrameWriter writer) implements AutoCloseable
    {
        @Override
        public void close()
        {
            publication.close();
        }
    }

    /**
     * One subscription with its reassembly and checks, delivering to the poller's handler: the request stream of a
     * host (from every other host, {@code leader} -1) or the response stream from one leader.
     */
    private final class Inbound implements AutoCloseable
    {
        final Subscription subscription;
        final FragmentAssembler assembler = new FragmentAssembler(this::onMessage);
        private final UnsafeBuffer copy = new UnsafeBuffer(0, 0);
        private final FrameReader reader = new FrameReader(secret, clusterId);
        private final ReplayWindow[] windows = new ReplayWindow[hostCount];
        private final int host;
        private final int leader;
        RequestHandler requestHandler;
        MessageHandler responseHandler;

        Inbound(final Subscription subscription, final int host, final int leader)
        {
            this.subscription = subscription;
            this.host = host;
            this.leader = leader;
            for (int i = 0; i < hostCount; i++)
            {
                windows[i] = new ReplayWindow();
            }
        }

        private void onMessage(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            final EdgeCounters.Reason refused = reader.verify(buffer, offset, length, subscription.streamId());
            if (null != refused)
            {
                drop(refused, -1, header);
                return;
            }
            final long sender = reader.senderId();
            if (reader.senderKind() != FrameDescriptor.HOST || sender < 0 || sender >= hostCount || sender == host ||
                (leader >= 0 && sender != leader))
            {
                drop(EdgeCounters.Reason.UNKNOWN_SENDER, sender, header);
                return;
            }
            final int from = (int)sender;
            final ReplayWindow window = windows[from];
            final long senderEpoch = reader.senderEpoch();
            final long registered = registry.applyAsLong(from);
            if (registered == HostLiveness.ANY_INCARNATION ? senderEpoch < window.epoch() : senderEpoch != registered)
            {
                drop(EdgeCounters.Reason.STALE_SENDER, sender, header);
                return;
            }
            final long own = registry.applyAsLong(host);
            if (reader.receiverId() != host || (own != HostLiveness.ANY_INCARNATION && reader.receiverEpoch() != own))
            {
                drop(EdgeCounters.Reason.WRONG_RECEIVER, sender, header);
                return;
            }
            if (!window.accept(senderEpoch, reader.sequence()))
            {
                drop(EdgeCounters.Reason.REPLAYED, sender, header);
                return;
            }
            final MutableDirectBuffer mutable;
            if (buffer instanceof MutableDirectBuffer m)
            {
                mutable = m;
            }
            else
            {
                copy.wrap(buffer, 0, buffer.capacity());
                mutable = copy;
            }
            if (leader < 0)
            {
                requestHandler.onRequest(from, reader.type(), mutable, reader.payloadOffset(), reader.payloadLength());
            }
            else
            {
                responseHandler.onMessage(reader.type(), mutable, reader.payloadOffset(), reader.payloadLength());
            }
        }

        private void drop(final EdgeCounters.Reason reason, final long sender, final Header header)
        {
            counters.drop(EdgeCounters.Stream.FETCH, reason, sender, header.context() instanceof Image image ?
                image.sourceIdentity() : null);
        }

        @Override
        public void close()
        {
            subscription.close();
        }
    }
}
