package io.tidemark.kafka;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

/**
 * One client connection of a {@link KafkaListener}: reads size-prefixed request frames (bounded by
 * {@code kafka.max.request.bytes}), keeps its requests in arrival order until each is answered, and writes the
 * answers in that order. Owned by the listener's agent thread.
 */
final class KafkaConnection
{
    /** Most requests of one connection being worked on at once; further frames wait in the socket. */
    static final int MAX_IN_FLIGHT = 64;

    /** Result of {@link #readFrame}. */
    enum Read
    {
        /** A whole frame is available in {@link #frame()}. */
        FRAME,
        /** Nothing more to read now. */
        NONE,
        /** The peer closed the connection. */
        EOF,
        /** The size prefix is out of bounds. */
        BAD_SIZE
    }

    final long id;
    final SocketChannel channel;
    final String remote;
    SelectionKey key;
    final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final ByteBuffer size = ByteBuffer.allocate(4);
    private ByteBuffer frame;
    private ByteBuffer writing;
    private int badSize;
    long lastActiveMs;
    /** A request whose partitions could not all be queued yet (back-pressure): no later request is processed. */
    ProduceRequests.Pending blockedProduce;
    boolean closed;
    /** Authentication state, when SASL is on; null otherwise. */
    Object sasl;

    KafkaConnection(final long id, final SocketChannel channel, final String remote, final long nowMs)
    {
        this.id = id;
        this.channel = channel;
        this.remote = remote;
        this.lastActiveMs = nowMs;
    }

    /** @return whether this connection may read and start another request now. */
    boolean mayRead()
    {
        return !closed && null == blockedProduce && inFlight.size() < MAX_IN_FLIGHT;
    }

    /**
     * Read towards the next frame.
     *
     * @param maxRequestBytes largest frame accepted.
     */
    Read readFrame(final int maxRequestBytes) throws IOException
    {
        if (null == frame)
        {
            if (channel.read(size) < 0)
            {
                return Read.EOF;
            }
            if (size.hasRemaining())
            {
                return Read.NONE;
            }
            final int length = size.getInt(0);
            if (length <= 0 || length > maxRequestBytes)
            {
                badSize = length;
                return Read.BAD_SIZE;
            }
            frame = ByteBuffer.allocate(length);
        }
        if (channel.read(frame) < 0)
        {
            return Read.EOF;
        }
        if (frame.hasRemaining())
        {
            return Read.NONE;
        }
        return Read.FRAME;
    }

    /** @return the frame just read (flipped), handing it over: the next read starts a new frame. */
    ByteBuffer takeFrame()
    {
        final ByteBuffer complete = frame;
        complete.flip();
        frame = null;
        size.clear();
        return complete;
    }

    /** @return the size prefix of the last rejected frame. */
    int badSize()
    {
        return badSize;
    }

    /**
     * Write answered requests, in request order, as far as the socket takes them.
     *
     * @return false when the connection must close (a request asked for it, or the write failed).
     */
    boolean flush() throws IOException
    {
        while (true)
        {
            if (null != writing)
            {
                channel.write(writing);
                if (writing.hasRemaining())
                {
                    key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
                    return true;
                }
                writing = null;
            }
            final InFlight head = inFlight.peekFirst();
            if (null == head || !head.isDone())
            {
                key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
                return true;
            }
            inFlight.pollFirst();
            if (head.closeAfter())
            {
                return false;
            }
            writing = head.response();
        }
    }

    /** @return whether the connection has nothing waiting to be written. */
    boolean idle()
    {
        return null == writing && inFlight.isEmpty();
    }
}
