package io.tidemark.replication;

import io.tidemark.replication.spi.Transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The {@link Transport} between replica hosts of one JVM: an Agrona {@link ManyToOneRingBuffer} per host for
 * requests and one per (follower host, leader host) pair for responses. Sending is one copy into the ring;
 * nothing is allocated per message.
 * <p>
 * For tests and fault simulation, links can be cut one way or both ({@link #cut}), which drops messages as a
 * network partition would. Thread-safe.
 */
public final class InProcessTransport implements Transport
{
    private final int maxHosts;
    private final int requestRingBytes;
    private final int responseRingBytes;
    private final RingBuffer[] requestRings;
    private final RingBuffer[] responseRings;
    private final AtomicLongArray cutLinks;
    private volatile long upMask;
    private static final int SENDER_SHIFT = 8;
    private final RequestAdapter[] requestAdapters;

    /** Splits the ring's type id into the sender and the message type. One poller per host, as the rings have. */
    private static final class RequestAdapter implements MessageHandler
    {
        RequestHandler delegate;

        @Override
        public void onMessage(final int typeId, final org.agrona.MutableDirectBuffer buffer, final int index,
            final int length)
        {
            delegate.onRequest(typeId >>> SENDER_SHIFT, typeId & ((1 << SENDER_SHIFT) - 1), buffer, index, length);
        }
    }

    /**
     * @param maxHosts          host ids are in {@code [0, maxHosts)}, at most 64.
     * @param requestRingBytes  capacity of each host's request ring (power of two).
     * @param responseRingBytes capacity of each response ring (power of two).
     */
    public InProcessTransport(final int maxHosts, final int requestRingBytes, final int responseRingBytes)
    {
        if (maxHosts < 1 || maxHosts > 64)
        {
            throw new IllegalArgumentException("maxHosts must be in [1, 64]: " + maxHosts);
        }
        this.maxHosts = maxHosts;
        this.requestRingBytes = requestRingBytes;
        this.responseRingBytes = responseRingBytes;
        this.requestRings = new RingBuffer[maxHosts];
        this.responseRings = new RingBuffer[maxHosts * maxHosts];
        this.cutLinks = new AtomicLongArray(maxHosts);
        this.requestAdapters = new RequestAdapter[maxHosts];
        for (int i = 0; i < maxHosts; i++)
        {
            requestAdapters[i] = new RequestAdapter();
        }
    }

    private static RingBuffer newRing(final int capacity)
    {
        return new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(capacity + RingBufferDescriptor.TRAILER_LENGTH)));
    }

    @Override
    public synchronized void hostUp(final int host)
    {
        requestRings[host] = newRing(requestRingBytes);
        for (int from = 0; from < maxHosts; from++)
        {
            responseRings[host * maxHosts + from] = from == host ? null : newRing(responseRingBytes);
        }
        upMask |= 1L << host;
    }

    @Override
    public synchronized void hostDown(final int host)
    {
        upMask &= ~(1L << host);
    }

    private boolean reachable(final int from, final int to)
    {
        final long mask = upMask;
        return (mask & (1L << to)) != 0 && (mask & (1L << from)) != 0 && (cutLinks.get(from) & (1L << to)) == 0;
    }

    /**
     * Drop every message from {@code from} to {@code to} until {@link #heal}.
     */
    public void cut(final int from, final int to)
    {
        long current;
        do
        {
            current = cutLinks.get(from);
        }
        while (!cutLinks.compareAndSet(from, current, current | (1L << to)));
    }

    /** Cut both directions between two hosts. */
    public void isolate(final int a, final int b)
    {
        cut(a, b);
        cut(b, a);
    }

    /** Restore every link. */
    public void heal()
    {
        for (int i = 0; i < maxHosts; i++)
        {
            cutLinks.set(i, 0);
        }
    }

    @Override
    public boolean sendRequest(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final RingBuffer ring = requestRings[toHost];
        // the sender rides in the ring's type id: above the message type's 8 bits
        return null != ring && reachable(fromHost, toHost) &&
            ring.write((fromHost << SENDER_SHIFT) | msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(
        final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer, final int offset,
        final int length)
    {
        final RingBuffer ring = responseRings[toHost * maxHosts + fromHost];
        return null != ring && reachable(fromHost, toHost) && ring.write(msgTypeId, buffer, offset, length);
    }

    @Override
    public int pollRequests(final int host, final RequestHandler handler, final int limit)
    {
        final RingBuffer ring = requestRings[host];
        if (null == ring)
        {
            return 0;
        }
        final RequestAdapter adapter = requestAdapters[host];
        adapter.delegate = handler;
        return ring.read(adapter, limit);
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        final RingBuffer ring = responseRings[host * maxHosts + fromHost];
        return null == ring ? 0 : ring.read(handler, limit);
    }

    /** @return the largest message a response ring carries. */
    public int maxResponseLength()
    {
        return responseRingBytes / 8;
    }

    /** @return the largest response a ring carries (an eighth of it); requests are short and fixed in size. */
    @Override
    public int maxMessageLength()
    {
        return maxResponseLength();
    }
}
