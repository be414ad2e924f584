package io.tidemark.aeron;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.tidemark.replication.Transport;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;

/**
 * The replication {@link Transport} over Aeron: the same flyweight-encoded fetch messages as the in-process ring
 * buffers, carried between replica hosts as Aeron messages (IPC between processes on one machine, UDP unicast
 * between machines). Each replica host has one Aeron channel (its endpoint); on it, stream
 * {@link #REQUEST_STREAM_ID_BASE}{@code + host} carries the requests to the host and stream
 * {@link #RESPONSE_STREAM_ID_BASE}{@code + host * MAX_HOSTS + leader} the responses its fetcher for {@code leader}
 * receives. Each message is prefixed with its 4-byte type and the 4-byte cluster id (a message of another cluster
 * is dropped); a response larger than the MTU is fragmented by Aeron and reassembled by a {@link FragmentAssembler}
 * before the protocol sees it. Batches travel as the bytes the leader read from its mapping.
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
 * are stopped, as {@code ReplicationCluster} calls them. Nothing is allocated per message after a thread's first
 * send.
 */
public final class AeronTransport implements Transport, AutoCloseable
{
    /** Largest host id plus one. */
    public static final int MAX_HOSTS = 64;
    /** Stream id of host 0's requests; host {@code h} receives its requests on this plus {@code h}. */
    public static final int REQUEST_STREAM_ID_BASE = 1_000;
    /** Stream id of the responses host 0 receives from host 0; see the class comment. */
    public static final int RESPONSE_STREAM_ID_BASE = 10_000;
    /** Bytes ahead of each message: its type, then the cluster id. */
    public static final int TYPE_HEADER_LENGTH = 8;

    private final Aeron aeron;
    private final boolean ownsAeron;
    private final int hostCount;
    private final IntFunction<String> channelOfHost;
    private final AtomicReferenceArray<Inbound> requestInbound;
    private final AtomicReferenceArray<Inbound> responseInbound;
    private final AtomicReferenceArray<Publication> requestOut;
    private final AtomicReferenceArray<Publication> responseOut;
    private static final System.Logger LOGGER = System.getLogger(AeronTransport.class.getName());

    private final int clusterId;
    private volatile long lastForeignLogMs = Long.MIN_VALUE / 2;
    private final java.util.concurrent.atomic.AtomicLong foreignMessages = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean isolated;
    private final ThreadLocal<UnsafeBuffer> typeHeader =
        ThreadLocal.withInitial(() -> new UnsafeBuffer(new byte[TYPE_HEADER_LENGTH]));

    /**
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
     * @param aeron         a connected Aeron client.
     * @param ownsAeron     whether {@link #close} closes it.
     * @param hostCount     host ids are in {@code [0, hostCount)}, at most {@link #MAX_HOSTS}.
     * @param channelOfHost the Aeron channel of each host.
     * @param clusterId     carried by every message; a message of another cluster that reaches these streams (a
     *                      misconfigured host of another cluster on the same endpoints) is dropped and counted
     *                      ({@link #foreignMessages()}).
     */
    public AeronTransport(final Aeron aeron, final boolean ownsAeron, final int hostCount,
        final IntFunction<String> channelOfHost, final int clusterId)
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
     * @return the largest message every open publication carries (Aeron's limit for its term length, less the type
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

    private static int lengthLimit(final Publication publication)
    {
        return null == publication ? Integer.MAX_VALUE : publication.maxMessageLength() - TYPE_HEADER_LENGTH;
    }

    /**
     * The largest message a send from one host can carry: Aeron's limit for the publications' term length, less the
     * type header.
     *
     * @param fromHost a host that is up in this process.
     * @return the limit in bytes, or -1 when the host has no publication here.
     */
    public int maxMessageLength(final int fromHost)
    {
        for (int to = 0; to < hostCount; to++)
        {
            final Publication publication = responseOut.get(pair(fromHost, to));
            if (null != publication)
            {
                return publication.maxMessageLength() - TYPE_HEADER_LENGTH;
            }
        }
        return -1;
    }

    @Override
    public boolean sendRequest(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        return offer(requestOut.get(pair(fromHost, toHost)), msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        return offer(responseOut.get(pair(fromHost, toHost)), msgTypeId, buffer, offset, length);
    }

    private boolean offer(
        final Publication publication, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        if (null == publication || length + TYPE_HEADER_LENGTH > publication.maxMessageLength())
        {
            return false;
        }
        if (isolated)
        {
            return false;
        }
        final UnsafeBuffer header = typeHeader.get();
        header.putInt(0, msgTypeId);
        header.putInt(4, clusterId);
        // Positive: sent. NOT_CONNECTED, BACK_PRESSURED, ADMIN_ACTION, CLOSED, MAX_POSITION_EXCEEDED: the
        // protocol retries later, as it does for a full ring.
        return publication.offer(header, 0, TYPE_HEADER_LENGTH, buffer, offset, length) > 0;
    }

    @Override
    public int pollRequests(final int host, final MessageHandler handler, final int limit)
    {
        final Inbound inbound = requestInbound.get(host);
        return null == inbound ? 0 : inbound.poll(handler, limit);
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        final Inbound inbound = responseInbound.get(pair(host, fromHost));
        return null == inbound ? 0 : inbound.poll(handler, limit);
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
        final String own = channelOfHost.apply(host);
        requestInbound.set(host, new Inbound(aeron.addSubscription(own, requestStreamId(host)), this));
        for (int other = 0; other < hostCount; other++)
        {
            if (other == host)
            {
                continue;
            }
            responseInbound.set(pair(host, other),
                new Inbound(aeron.addSubscription(own, responseStreamId(host, other)), this));
            final String theirs = channelOfHost.apply(other);
            requestOut.set(pair(host, other), aeron.addPublication(theirs, requestStreamId(other)));
            responseOut.set(pair(host, other), aeron.addPublication(theirs, responseStreamId(other, host)));
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

    /**
     * Fault injection and operations: while isolated, every send fails and every message received is dropped, as
     * if this process's network were cut (its ZooKeeper session is not affected).
     */
    public void isolate(final boolean isolated)
    {
        this.isolated = isolated;
    }

    /** @return whether {@link #isolate} cut this process off. */
    public boolean isolated()
    {
        return isolated;
    }

    private void onForeignMessage(final int otherClusterId, final int streamId)
    {
        foreignMessages.incrementAndGet();
        final long now = System.currentTimeMillis();
        if (now - lastForeignLogMs > 10_000)
        {
            lastForeignLogMs = now;
            LOGGER.log(System.Logger.Level.WARNING, "dropping messages of another cluster (id " + otherClusterId +
                ", ours " + clusterId + ") on stream " + streamId + ": two clusters share endpoints; " +
                foreignMessages.get() + " dropped so far");
        }
    }

    /** @return messages dropped because they carried another cluster's id. */
    public long foreignMessages()
    {
        return foreignMessages.get();
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

    /** One subscription with its reassembly, delivering to the poller's handler. */
    private static final class Inbound implements AutoCloseable
    {
        private final Subscription subscription;
        private final FragmentAssembler assembler = new FragmentAssembler(this::onMessage);
        private final UnsafeBuffer copy = new UnsafeBuffer(0, 0);
        private final AeronTransport transport;
        private MessageHandler handler;

        Inbound(final Subscription subscription, final AeronTransport transport)
        {
            this.subscription = subscription;
            this.transport = transport;
        }

        int poll(final MessageHandler handler, final int limit)
        {
            this.handler = handler;
            return subscription.poll(assembler, limit);
        }

        private void onMessage(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            if (length < TYPE_HEADER_LENGTH)
            {
                return; // not ours: every message of this transport carries its type
            }
            if (transport.isolated)
            {
                return;
            }
            if (buffer.getInt(offset + 4) != transport.clusterId)
            {
                transport.onForeignMessage(buffer.getInt(offset + 4), subscription.streamId());
                return;
            }
            final int msgTypeId = buffer.getInt(offset);
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
            handler.onMessage(msgTypeId, mutable, offset + TYPE_HEADER_LENGTH, length - TYPE_HEADER_LENGTH);
        }

        @Override
        public void close()
        {
            subscription.close();
        }
    }
}
