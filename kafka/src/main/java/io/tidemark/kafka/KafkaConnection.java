package io.tidemark.kafka;


import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.function.LongConsumer;

/**
 * One client connection of a {@link KafkaListener}: reads size-prefixed request frames (bounded by
 * {@code kafka.max.request.bytes}) through its {@link Transport} (the socket, or TLS over it), keeps its requests in
 * arrival order until each is answered, and writes the answers in that order. The bytes of a request count against
 * the listener's {@code kafka.queued.max.request.bytes} from the moment its size is known (before its buffer is
 * allocated) until its answer is taken for writing. A request must arrive whole within
 * {@code kafka.request.read.timeout.ms} of its first byte ({@link #requestStartedMs}), so that a peer that stalls
 * half-way cannot keep its reservation. Owned by the listener's agent thread.
 */
final class KafkaConnection
{
    /** Most requests of one connection being worked on at once; further frames wait in the socket. */
    static final int MAX_IN_FLIGHT = 64;

    /** Result of {@link #readFrame}. */
    enum Read
    {
        /** A whole frame is available in {@link #takeFrame()}. */
        FRAME,
        /** A frame's size is known ({@link #pendingSize()}): reserve its bytes, then {@link #startFrame()}. */
        SIZED,
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
    final long openedMs;
    final Transport transport;
    SelectionKey key;
    final ArrayDeque<InFlight> inFlight = new ArrayDeque<>();
    private final ByteBuffer size = ByteBuffer.allocate(4);
    private final LongConsumer release;
    private ByteBuffer frame;
    private ByteBuffer writing;
    private boolean closeAfterWriting;
    private int badSize;
    /** Bytes of the request budget this connection holds: the frame being read and the requests not answered. */
    long reservedBytes;
    /** Waiting for request budget (in the listener's queue of waiters): not reading. */
    boolean memoryMuted;
    long lastActiveMs;
    /**
     * When the first byte of the request being read arrived (or, after waiting for request budget, when reading it
     * resumed: that wait is the listener's, not the peer's); -1 between requests.
     */
    long requestStartedMs = -1;
    /** A request whose partitions could not all be queued yet (back-pressure): no later request is processed. */
    ProduceRequests.Pending blockedProduce;
    boolean closed;
    /** SASL authentication state, when the listener uses SASL; null otherwise. */
    SaslRequests.State sasl;

    KafkaConnection(final long id, final SocketChannel channel, final Transport transport, final String remote,
        final long nowMs, final LongConsumer release)
    {
        this.id = id;
        this.channel = channel;
        this.transport = transport;
        this.remote = remote;
        this.openedMs = nowMs;
        this.lastActiveMs = nowMs;
        this.release = release;
    }

    /** @return whether this connection may read and start another request now. */
    boolean mayRead()
    {
        return !closed && !memoryMuted && null == blockedProduce && inFlight.size() < MAX_IN_FLIGHT;
    }

    /** @return whether the connection has authenticated as its listener requires (TLS handshake, SASL). */
    boolean authenticated()
    {
        return transport.ready() && (null == sasl || sasl.authenticated());
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
            if (size.hasRemaining())
            {
                if (transport.read(size) < 0)
                {
                    return Read.EOF;
                }
                if (size.hasRemaining())
                {
                    return Read.NONE;
                }
            }
            final int length = size.getInt(0);
            if (length <= 0 || length > maxRequestBytes)
            {
                badSize = length;
                return Read.BAD_SIZE;
            }
            return Read.SIZED;
        }
        if (transport.read(frame) < 0)
        {
            return Read.EOF;
        }
        if (frame.hasRemaining())
        {
            return Read.NONE;
        }
        return Read.FRAME;
    }

    /** After a read that did not end a frame: start the request's clock if it got its first bytes. */
    void noteRequestStarted(final long nowMs)
    {
        if (requestStartedMs < 0 && (null != frame || size.position() > 0))
        {
            requestStartedMs = nowMs;
        }
    }

    /** @return the size of the frame whose prefix was read, before {@link #startFrame()}. */
    int pendingSize()
    {
        return size.getInt(0);
    }

    /**
     * The frame's bytes were reserved: take its buffer and read on.
     *
     * @param buffers the listener's frame buffers.
     */
    void startFrame(final FrameBuffers buffers)
    {
        final int length = size.getInt(0);
        reservedBytes += length;
        frame = buffers.take(length);
    }

    /**
     * @return the frame just read (flipped: its limit is the frame's length), handing it over: the next read starts
     *         a new frame.
     */
    ByteBuffer takeFrame()
    {
        final ByteBuffer complete = frame;
        complete.flip();
        frame = null;
        size.clear();
        requestStartedMs = -1;
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
            if (!transport.flush())
            {
                key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
                return true;
            }
            if (null != writing)
            {
                transport.write(writing);
                if (writing.hasRemaining() || !transport.flush())
                {
                    key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
                    return true;
                }
                writing = null;
                if (closeAfterWriting)
                {
                    return false;
                }
            }
            final InFlight head = inFlight.peekFirst();
            if (null == head || !head.isDone())
            {
                key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
                return true;
            }
            inFlight.pollFirst();
            if (head.reserved > 0)
            {
                reservedBytes -= head.reserved;
                release.accept(head.reserved);
            }
            if (head.closeAfter())
            {
                if (null == head.response())
                {
                    return false;
                }
                closeAfterWriting = true;
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
