package io.tidemark.kafka;

import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The listener's sockets: the server socket, the selector and the open {@link KafkaConnection}s, with accepting,
 * reading size-prefixed frames (within the {@link RequestBudget} and, before authentication,
 * {@link KafkaListener#MAX_UNAUTHENTICATED_REQUEST_BYTES}), writing answers in order, and closing connections that
 * are idle, too slow or unauthenticated too long. Each whole frame goes to {@link KafkaApis#handle}.
 * <p>
 * Owned by the listener's agent thread, except {@link #wakeup()}, which any thread may call.
 */
final class ConnectionIo
{
    private final KafkaContext ctx;
    private final KafkaSecurity security;
    private final ListenerFaults faults;
    private final RequestBudget budget;
    private final ErrorHandler errorHandler;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final List<KafkaConnection> connections = new ArrayList<>();
    private final FrameBuffers frameBuffers = new FrameBuffers();
    private KafkaApis apis;
    private long nextConnectionId;

    /**
     * Bind the server socket.
     *
     * @throws UncheckedIOException when the address cannot be bound.
     */
    ConnectionIo(final KafkaContext ctx, final KafkaSecurity security, final ListenerFaults faults,
        final RequestBudget budget, final ErrorHandler errorHandler)
    {
        this.ctx = ctx;
        this.security = security;
        this.faults = faults;
        this.budget = budget;
        this.errorHandler = errorHandler;
        try
        {
            this.selector = Selector.open();
            this.server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(ctx.host(), ctx.port()), 128);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot listen on " + ctx.host() + ":" + ctx.port(), ex);
        }
    }

    /** @param apis where whole frames go; set once, before the first {@link #poll()}. */
    void serve(final KafkaApis apis)
    {
        this.apis = apis;
    }

    /** @return the port bound. */
    int port()
    {
        return ((InetSocketAddress)server.socket().getLocalSocketAddress()).getPort();
    }

    /** @return the connections open now (the agent thread's list). */
    List<KafkaConnection> connections()
    {
        return connections;
    }

    /** Wake the thread blocked in {@link #select(long)} (any thread). */
    void wakeup()
    {
        selector.wakeup();
    }

    /** Block until a socket is ready, {@link #wakeup()} or {@code timeoutMs}. */
    void select(final long timeoutMs) throws IOException
    {
        selector.select(timeoutMs);
    }

    /** Accept, read and write whatever the sockets are ready for, then what TLS holds decrypted. @return work done. */
    int poll() throws IOException
    {
        int work = 0;
        if (selector.selectNow() > 0 || !selector.selectedKeys().isEmpty())
        {
            work += onSelected();
        }
        return work + readBuffered();
    }

    /**
     * TLS connections may hold decrypted bytes the socket will not signal again (a read stopped at a frame, the
     * in-flight limit, back-pressure): read them when the connection may read.
     */
    private int readBuffered()
    {
        if (!security.tls())
        {
            return 0;
        }
        int work = 0;
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            final KafkaConnection connection = connections.get(i);
            if (connection.mayRead() && connection.transport.hasBufferedInput())
            {
                work += read(connection);
            }
        }
        return work;
    }

    /** Give the request budget freed to waiting connections, first come first served, and read on. */
    int resumeMemoryWaiters()
    {
        if (!budget.takeFreed())
        {
            return 0;
        }
        int work = 0;
        KafkaConnection head;
        while (null != (head = budget.admitWaiter()))
        {
            head.requestStartedMs = System.currentTimeMillis(); // the wait was ours: the peer's clock starts now
            head.startFrame(frameBuffers);
            work++;
            read(head);
            if (!head.closed && head.mayRead())
            {
                head.key.interestOps(head.key.interestOps() | SelectionKey.OP_READ);
            }
        }
        return work;
    }

    private int onSelected() throws IOException
    {
        int work = 0;
        final Iterator<SelectionKey> it = selector.selectedKeys().iterator();
        while (it.hasNext())
        {
            final SelectionKey key = it.next();
            it.remove();
            if (!key.isValid())
            {
                continue;
            }
            if (key.isAcceptable())
            {
                work += accept();
                continue;
            }
            final KafkaConnection connection = (KafkaConnection)key.attachment();
            if (key.isWritable())
            {
                if (connection.transport.ready())
                {
                    flush(connection);
                }
                else
                {
                    work += read(connection); // the TLS handshake goes on
                }
            }
            if (key.isReadable() && !connection.closed)
            {
                work += read(connection);
            }
        }
        return work;
    }

    /**
     * Connections that stopped reading (in flight full, back-pressure) read again once they may: their next frames
     * may already wait in the socket, which the selector reports only while OP_READ is set.
     */
    void rearmReads()
    {
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            final KafkaConnection connection = connections.get(i);
            if (connection.mayRead() && (connection.key.interestOps() & SelectionKey.OP_READ) == 0)
            {
                connection.key.interestOps(connection.key.interestOps() | SelectionKey.OP_READ);
            }
        }
    }

    private int accept() throws IOException
    {
        int accepted = 0;
        SocketChannel channel;
        while (null != (channel = server.accept()))
        {
            if (connections.size() >= ctx.maxConnections())
            {
                faults.refusedConnection("refused a connection from " + channel.getRemoteAddress() + ": " +
                    ctx.maxConnections() + " connections open (" + KafkaContext.MAX_CONNECTIONS + ")");
                CloseHelper.quietClose(channel);
                continue;
            }
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final InetSocketAddress peer = (InetSocketAddress)channel.getRemoteAddress();
            final Transport transport;
            try
            {
                transport = security.tls() ? new TlsTransport(channel, security.newEngine(peer.getHostString(),
                    peer.getPort())) : new PlainTransport(channel);
            }
            catch (final IOException | RuntimeException ex)
            {
                errorHandler.onError(ex);
                CloseHelper.quietClose(channel);
                continue;
            }
            final KafkaConnection connection = new KafkaConnection(nextConnectionId++, channel, transport,
                String.valueOf(peer), System.currentTimeMillis(), budget::release);
            if (null != security.users())
            {
                connection.sasl = apis.sasl().newState();
            }
            connection.key = channel.register(selector, SelectionKey.OP_READ, connection);
            connections.add(connection);
            accepted++;
        }
        return accepted;
    }

    private int read(final KafkaConnection connection)
    {
        int requests = 0;
        try
        {
            while (connection.mayRead() && requests < 16)
            {
                final KafkaConnection.Read read = connection.readFrame(ctx.maxRequestBytes());
                if (read != KafkaConnection.Read.FRAME)
                {
                    connection.noteRequestStarted(System.currentTimeMillis());
                }
                if (read == KafkaConnection.Read.NONE)
                {
                    break;
                }
                if (read == KafkaConnection.Read.SIZED)
                {
                    if (!admit(connection))
                    {
                        return requests;
                    }
                    continue;
                }
                if (read == KafkaConnection.Read.EOF)
                {
                    close(connection);
                    return requests;
                }
                if (read == KafkaConnection.Read.BAD_SIZE)
                {
                    badFrame(connection, "request size " + connection.badSize() + " outside [1, " +
                        ctx.maxRequestBytes() + "] (" + KafkaContext.MAX_REQUEST_BYTES + ")");
                    return requests;
                }
                connection.lastActiveMs = System.currentTimeMillis();
                requests++;
                final ByteBuffer frame = connection.takeFrame();
                final boolean open = apis.handle(connection, frame);
                frameBuffers.give(frame); // parsed, and nothing kept points into it (FrameBuffers says why)
                if (!open)
                {
                    return requests;
                }
            }
            if (!connection.mayRead() && !connection.closed)
            {
                connection.key.interestOps(connection.key.interestOps() & ~SelectionKey.OP_READ);
            }
            if (!connection.closed && !connection.transport.ready() && connection.transport.wantsWrite())
            {
                connection.key.interestOps(connection.key.interestOps() | SelectionKey.OP_WRITE);
            }
        }
        catch (final javax.net.ssl.SSLException ex)
        {
            if (connection.transport.ready())
            {
                badFrame(connection, "TLS failed: " + ex.getMessage());
            }
            else
            {
                authenticationFailed(connection, "TLS handshake failed: " + ex.getMessage());
                close(connection);
            }
        }
        catch (final IOException | java.nio.channels.CancelledKeyException ex)
        {
            close(connection);
        }
        return requests;
    }

    /**
     * A frame's size is known: take its bytes from the budget and start reading it, or stop reading this
     * connection (it waits for budget, or is closed).
     *
     * @return whether the connection reads on.
     */
    private boolean admit(final KafkaConnection connection)
    {
        final int length = connection.pendingSize();
        if (length > KafkaListener.MAX_UNAUTHENTICATED_REQUEST_BYTES && !connection.authenticated())
        {
            authenticationFailed(connection, "a request of " + length + " bytes before authentication (at most " +
                KafkaListener.MAX_UNAUTHENTICATED_REQUEST_BYTES + ")");
            close(connection);
            return false;
        }
        if (length > budget.limit())
        {
            badFrame(connection, "request size " + length + " above the listener's request budget " +
                budget.limit() + " (" + KafkaContext.QUEUED_MAX_REQUEST_BYTES + ")");
            return false;
        }
        if (!budget.reserve(length))
        {
            budget.mute(connection);
            return false;
        }
        connection.startFrame(frameBuffers);
        return true;
    }

    /** A connection failed to authenticate: count it and log (rate-limited); the caller closes it. */
    void authenticationFailed(final KafkaConnection connection, final String why)
    {
        faults.failedAuthentication(connection, why);
    }

    /** A connection sent something that is not a Kafka request: close it, count it, log (rate-limited). */
    void badFrame(final KafkaConnection connection, final String why)
    {
        faults.badFrame(connection, why);
        close(connection);
    }

    /** Write the answers that are ready, in each connection's order. @return connections written to. */
    int flushAll()
    {
        int work = 0;
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            final KafkaConnection connection = connections.get(i);
            final InFlight head = connection.inFlight.peekFirst();
            if (null != head && head.isDone())
            {
                work++;
                flush(connection);
            }
        }
        return work;
    }

    private void flush(final KafkaConnection connection)
    {
        try
        {
            if (!connection.flush())
            {
                close(connection);
            }
        }
        catch (final IOException | java.nio.channels.CancelledKeyException ex)
        {
            close(connection);
        }
    }

    /** Close the connections whose request stalled, that are idle, or that did not authenticate in time. */
    void closeIdle(final long now)
    {
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            final KafkaConnection connection = connections.get(i);
            if (!connection.memoryMuted && connection.requestStartedMs >= 0 &&
                now - connection.requestStartedMs > ctx.requestReadTimeoutMs())
            {
                // a peer that sends part of a request and stalls would hold its reservation until the idle timeout
                faults.slowRequest(connection, ctx.requestReadTimeoutMs());
                close(connection);
            }
            else if (connection.idle() && now - connection.lastActiveMs > ctx.connectionsMaxIdleMs())
            {
                close(connection);
            }
            else if (!connection.authenticated() && now - connection.openedMs > ctx.authenticationTimeoutMs())
            {
                authenticationFailed(connection, "not authenticated within " + ctx.authenticationTimeoutMs() +
                    " ms (" + KafkaContext.AUTHENTICATION_TIMEOUT_MS + ")");
                close(connection);
            }
        }
    }

    /** Close a connection: its requests are forgotten, its budget given back. Idempotent. */
    void close(final KafkaConnection connection)
    {
        if (connection.closed)
        {
            return;
        }
        connection.closed = true;
        connections.remove(connection);
        apis.onClose(connection);
        budget.forget(connection);
        if (null != connection.key)
        {
            connection.key.cancel();
        }
        connection.transport.close();
    }

    /** Close every connection. */
    void closeAll()
    {
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            close(connections.get(i));
        }
    }

    /** Release the server socket and the selector (after {@link #closeAll()} and the APIs' close). */
    void release()
    {
        CloseHelper.quietCloseAll(server, selector);
    }
}
