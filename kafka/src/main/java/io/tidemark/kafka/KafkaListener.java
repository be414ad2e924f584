package io.tidemark.kafka;

import io.tidemark.replication.LeaderPartitions;
import io.tidemark.replication.ProducerSessions;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * A Kafka wire protocol listener for one broker (one replica host): a TCP server on NIO, run as an Agrona
 * {@link Agent} on one thread, that answers Kafka clients with the partitions this host leads, the cluster's
 * metadata, and (when this broker is the coordinator) consumer groups.
 * <pre>{@code
 * KafkaListener listener = KafkaListener.start(new KafkaContext().listener("127.0.0.1:9092"), hostId, metadata,
 *     node::leaderPartitions, sessions, groups, admin, errorHandler);
 * }</pre>
 * Requests are parsed and responses written with kafka-clients' generated message classes. A connection's
 * requests are worked on as they arrive (up to {@link KafkaConnection#MAX_IN_FLIGHT}) and answered in their order.
 * Produce outcomes come from the leader's agent thread through a ring buffer, and blocking work (group offset
 * commits, topic creation, producer ids) runs on one I/O thread of the listener; neither blocks the agent.
 * <p>
 * Bad input (a frame size out of bounds, an unknown API key, a request that does not parse) closes that
 * connection, counts it ({@link #badFrames()}) and logs at most one line per {@code kafka.error.log.interval.ms};
 * the listener keeps serving everyone else.
 * <p>
 * Security ({@code kafka.security.protocol}): connections speak TLS through {@link TlsTransport} (SSL, SASL_SSL) and
 * authenticate with SASL ({@link SaslRequests}: PLAIN, SCRAM-SHA-256) before any other request is served; a failed
 * or unfinished authentication closes the connection ({@link #failedAuthentications()}). Memory: the bytes of
 * requests read and not yet answered stay within {@code kafka.queued.max.request.bytes}; a connection whose next
 * request does not fit is not read until answers give bytes back ({@link #memoryMutes()}); a request that does not
 * arrive whole within {@code kafka.request.read.timeout.ms} of its first byte closes its connection and gives its
 * bytes back ({@link #slowRequests()}).
 * <p>
 * Thread-safe: {@link #close()} and the counters from any thread; everything else on the agent's thread.
 */
public final class KafkaListener implements Agent, AutoCloseable
{
    private static final int COMPLETION = 1;
    private static final int COMPLETION_LENGTH = 20;
    private static final long PARKED_FETCH_POLL_MS = 1;
    /**
     * Largest request of a connection that has not authenticated yet (SASL's requests are small): Kafka's
     * {@code sasl.server.max.receive.size} default, so that unauthenticated peers cannot hold the request budget.
     */
    static final int MAX_UNAUTHENTICATED_REQUEST_BYTES = 512 * 1024;

    private final KafkaContext ctx;
    private final int brokerId;
    private final ClusterMetadata metadata;
    private final Supplier<LeaderPartitions> partitions;
    private final ProducerSessions sessions;
    private final ErrorHandler errorHandler;
    private final System.Logger logger = System.getLogger(KafkaListener.class.getName());
    private final ServerSocketChannel server;
    private final Selector selector;
    private final List<KafkaConnection> connections = new ArrayList<>();
    private final ManyToOneRingBuffer completions;
    private final ManyToOneConcurrentLinkedQueue<Runnable> tasks = new ManyToOneConcurrentLinkedQueue<>();
    private final ExecutorService io;
    private final int session;
    private final KafkaApis apis;
    private final FrameBuffers frameBuffers = new FrameBuffers();
    private final String advertisedHost;
    private final int advertisedPort;
    private final AtomicLong badFrames = new AtomicLong();
    private final AtomicLong refusedConnections = new AtomicLong();
    private final AtomicLong lostCompletions = new AtomicLong();
    private final AtomicLong failedAuthentications = new AtomicLong();
    private final AtomicLong memoryMutes = new AtomicLong();
    private final AtomicLong slowRequests = new AtomicLong();
    private final KafkaSecurity security;
    /** Connections waiting for request budget, first come first served. */
    private final ArrayDeque<KafkaConnection> memoryWaiters = new ArrayDeque<>();
    private volatile long queuedRequestBytes;
    private volatile long maxQueuedRequestBytes;
    private boolean memoryFreed;
    private volatile int memoryWaiterCount;
    private final SelectorIdleStrategy idleStrategy = new SelectorIdleStrategy();
    private final TopicIds topicIds;
    private final org.agrona.concurrent.MessageHandler completionHandler = this::onCompletion;
    private long nextConnectionId;
    private long nextErrorLogMs;
    private long suppressedErrorLogs;
    private long nextHousekeepingMs;
    private volatile boolean parked;
    private AgentRunner runner;
    private boolean closed;

    private KafkaListener(final KafkaContext ctx, final int brokerId, final ClusterMetadata metadata,
        final Supplier<LeaderPartitions> partitions, final ProducerSessions sessions, final GroupCoordinator groups,
        final TopicAdmin admin, final ErrorHandler errorHandler)
    {
        this.ctx = ctx.clone().validate();
        this.security = KafkaSecurity.create(this.ctx);
        this.brokerId = brokerId;
        this.metadata = metadata;
        this.partitions = partitions;
        this.sessions = sessions;
        this.errorHandler = errorHandler;
        try
        {
            this.selector = Selector.open();
            this.server = ServerSocketChannel.open();
            server.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            server.bind(new InetSocketAddress(this.ctx.host(), this.ctx.port()), 128);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot listen on " + this.ctx.host() + ":" + this.ctx.port(), ex);
        }
        final int boundPort = ((InetSocketAddress)server.socket().getLocalSocketAddress()).getPort();
        this.advertisedHost = null != this.ctx.advertisedHost() ? this.ctx.advertisedHost() : this.ctx.host();
        this.advertisedPort = this.ctx.advertisedPort() > 0 ? this.ctx.advertisedPort() : boundPort;
        this.completions = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect((1 << 20) + RingBufferDescriptor.TRAILER_LENGTH)));
        this.session = sessions.register(this::onProduceComplete);
        this.io = Executors.newSingleThreadExecutor((r) ->
        {
            final Thread thread = new Thread(r, "tidemark-kafka-io-" + brokerId);
            thread.setDaemon(true);
            return thread;
        });
        this.topicIds = new TopicIds(metadata.clusterId());
        this.apis = new KafkaApis(this, groups, admin, security.users());
    }

    /**
     * Bind and start serving on a thread of its own.
     *
     * @param ctx          listener configuration.
     * @param brokerId     the host id this listener answers for.
     * @param metadata     the cluster as clients see it.
     * @param partitions   the partitions this host leads now (null while the host is down).
     * @param sessions     the host's producer sessions (the listener registers one).
     * @param groups       the group coordinator (shared by the listeners of one process).
     * @param admin        topic creation and producer ids.
     * @param errorHandler agent errors.
     * @return the running listener.
     * @throws UncheckedIOException when the address cannot be bound.
     */
    public static KafkaListener start(final KafkaContext ctx, final int brokerId, final ClusterMetadata metadata,
        final Supplier<LeaderPartitions> partitions, final ProducerSessions sessions, final GroupCoordinator groups,
        final TopicAdmin admin, final ErrorHandler errorHandler)
    {
        final KafkaListener listener = new KafkaListener(ctx, brokerId, metadata, partitions, sessions, groups, admin,
            errorHandler);
        listener.runner = new AgentRunner(listener.idleStrategy, errorHandler, null, listener);
        AgentRunner.startOnThread(listener.runner);
        return listener;
    }

    /** @return this broker's id (its host id). */
    public int brokerId()
    {
        return brokerId;
    }

    /** @return the port bound. */
    public int port()
    {
        return ((InetSocketAddress)server.socket().getLocalSocketAddress()).getPort();
    }

    /** @return this listener as clients are told to reach it. */
    public KafkaBroker advertised()
    {
        return new KafkaBroker(brokerId, advertisedHost, advertisedPort);
    }

    /** @return connections closed for bad frames (sizes out of bounds, unknown API keys, unparseable requests). */
    public long badFrames()
    {
        return badFrames.get();
    }

    /** @return connections refused because {@code kafka.max.connections} were open. */
    public long refusedConnections()
    {
        return refusedConnections.get();
    }

    /**
     * @return connections closed for failing to authenticate: a TLS handshake that failed or did not finish within
     *         {@code kafka.authentication.timeout.ms}, a SASL authentication that failed, a request before
     *         authentication.
     */
    public long failedAuthentications()
    {
        return failedAuthentications.get();
    }

    /** @return bytes of requests read (or being read) and not yet answered, over all connections. */
    public long queuedRequestBytes()
    {
        return queuedRequestBytes;
    }

    /** @return the most {@link #queuedRequestBytes()} have been since the listener started. */
    public long maxQueuedRequestBytes()
    {
        return maxQueuedRequestBytes;
    }

    /** @return times a connection stopped reading because {@code kafka.queued.max.request.bytes} were taken. */
    public long memoryMutes()
    {
        return memoryMutes.get();
    }

    /**
     * @return connections closed because a request's bytes did not all arrive within
     *         {@code kafka.request.read.timeout.ms} of its first byte.
     */
    public long slowRequests()
    {
        return slowRequests.get();
    }

    /** @return connections waiting for request budget now. */
    public int memoryWaiters()
    {
        return memoryWaiterCount;
    }

    /** @return the listener's security protocol. */
    public org.apache.kafka.common.security.auth.SecurityProtocol securityProtocol()
    {
        return ctx.securityProtocol();
    }

    /** @return the security protocol and what it uses (mechanisms, TLS versions, files; never a password). */
    public String securityDescription()
    {
        return ctx.describeSecurity();
    }

    /** @return produce outcomes dropped because the listener fell behind (the clients time out and retry). */
    public long lostCompletions()
    {
        return lostCompletions.get();
    }

    TopicIds topicIds()
    {
        return topicIds;
    }

    KafkaContext context()
    {
        return ctx;
    }

    ClusterMetadata metadata()
    {
        return metadata;
    }

    /** @return the partitions this host leads now, or null while it is down. */
    LeaderPartitions partitions()
    {
        return partitions.get();
    }

    int session()
    {
        return session;
    }

    /** Run blocking work off the agent thread. */
    void runBlocking(final Runnable work)
    {
        io.execute(() ->
        {
            try
            {
                work.run();
            }
            catch (final RuntimeException ex)
            {
                errorHandler.onError(ex);
            }
        });
    }

    /** Hand work to the agent thread (from any thread). */
    void onAgentThread(final Runnable task)
    {
        tasks.offer(task);
        if (parked)
        {
            selector.wakeup();
        }
    }

    /** Complete a request from any thread: the response is written on the agent thread. */
    void complete(final InFlight request, final org.apache.kafka.common.protocol.ApiMessage body)
    {
        onAgentThread(() ->
        {
            if (!request.connection.closed)
            {
                request.respond(body);
            }
        });
    }

    /** On the leader host's agent thread: the outcome of a produce request queued by this listener. */
    private void onProduceComplete(final TopicPartition tp, final long correlationId, final long baseOffset,
        final ReplicationError error)
    {
        final int index = completions.tryClaim(COMPLETION, COMPLETION_LENGTH);
        if (index <= 0)
        {
            lostCompletions.incrementAndGet();
            return;
        }
        final UnsafeBuffer buffer = (UnsafeBuffer)completions.buffer();
        buffer.putLong(index, correlationId);
        buffer.putLong(index + 8, baseOffset);
        buffer.putInt(index + 16, error.code());
        completions.commit(index);
        if (parked)
        {
            selector.wakeup();
        }
    }

    private void onCompletion(final int type, final org.agrona.MutableDirectBuffer buffer, final int index,
        final int length)
    {
        apis.produce().onComplete(buffer.getLong(index), buffer.getLong(index + 8), buffer.getInt(index + 16));
    }

    @Override
    public int doWork() throws IOException
    {
        int work = 0;
        if (selector.selectNow() > 0 || !selector.selectedKeys().isEmpty())
        {
            work += onSelected();
        }
        work += readBuffered();
        work += completions.read(completionHandler, 1024);
        Runnable task;
        while (null != (task = tasks.poll()))
        {
            task.run();
            work++;
        }
        final long now = System.currentTimeMillis();
        work += apis.produce().retryBlocked(connections, now);
        work += apis.fetch().pollParked(now);
        apis.groups().poll(now);
        if (now >= nextHousekeepingMs)
        {
            nextHousekeepingMs = now + 1_000;
            closeIdle(now);
        }
        work += flushAll();
        rearmReads();
        if (memoryFreed)
        {
            memoryFreed = false;
            work += resumeMemoryWaiters();
        }
        return work;
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

    /** Take {@code bytes} of the request budget for a connection that is not waiting, or refuse. */
    private boolean reserve(final int bytes)
    {
        if (!memoryWaiters.isEmpty() || queuedRequestBytes + bytes > ctx.queuedMaxRequestBytes())
        {
            return false;
        }
        queuedRequestBytes += bytes;
        if (queuedRequestBytes > maxQueuedRequestBytes)
        {
            maxQueuedRequestBytes = queuedRequestBytes;
        }
        return true;
    }

    /** Answers (or a closed connection) gave budget back. */
    private void release(final long bytes)
    {
        queuedRequestBytes -= bytes;
        memoryFreed = true;
    }

    private void muteForMemory(final KafkaConnection connection)
    {
        connection.memoryMuted = true;
        memoryWaiters.addLast(connection);
        memoryWaiterCount = memoryWaiters.size();
        memoryMutes.incrementAndGet();
        connection.key.interestOps(connection.key.interestOps() & ~SelectionKey.OP_READ);
    }

    /** Give the budget freed to waiting connections, first come first served, and read on. */
    private int resumeMemoryWaiters()
    {
        int work = 0;
        KafkaConnection head;
        while (null != (head = memoryWaiters.peekFirst()))
        {
            final int bytes = head.pendingSize();
            if (queuedRequestBytes + bytes > ctx.queuedMaxRequestBytes())
            {
                break;
            }
            memoryWaiters.pollFirst();
            memoryWaiterCount = memoryWaiters.size();
            queuedRequestBytes += bytes;
            if (queuedRequestBytes > maxQueuedRequestBytes)
            {
                maxQueuedRequestBytes = queuedRequestBytes;
            }
            head.memoryMuted = false;
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
    private void rearmReads()
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
                refusedConnections.incrementAndGet();
                logLimited("refused a connection from " + channel.getRemoteAddress() + ": " + ctx.maxConnections() +
                    " connections open (" + KafkaContext.MAX_CONNECTIONS + ")");
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
                String.valueOf(peer), System.currentTimeMillis(), this::release);
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
                    final int length = connection.pendingSize();
                    if (length > MAX_UNAUTHENTICATED_REQUEST_BYTES && !connection.authenticated())
                    {
                        authenticationFailed(connection, "a request of " + length + " bytes before " +
                            "authentication (at most " + MAX_UNAUTHENTICATED_REQUEST_BYTES + ")");
                        close(connection);
                        return requests;
                    }
                    if (length > ctx.queuedMaxRequestBytes())
                    {
                        badFrame(connection, "request size " + length + " above the listener's request budget " +
                            ctx.queuedMaxRequestBytes() + " (" + KafkaContext.QUEUED_MAX_REQUEST_BYTES + ")");
                        return requests;
                    }
                    if (!reserve(length))
                    {
                        muteForMemory(connection);
                        return requests;
                    }
                    connection.startFrame(frameBuffers);
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

    /** A connection failed to authenticate: count it and log (rate-limited); the caller closes it. */
    void authenticationFailed(final KafkaConnection connection, final String why)
    {
        failedAuthentications.incrementAndGet();
        logLimited("authentication of connection " + connection.remote + " to broker " + brokerId + " failed: " +
            why);
    }

    /** A connection sent something that is not a Kafka request: close it, count it, log (rate-limited). */
    void badFrame(final KafkaConnection connection, final String why)
    {
        badFrames.incrementAndGet();
        logLimited("closed connection " + connection.remote + " to broker " + brokerId + ": " + why);
        close(connection);
    }

    private void logLimited(final String line)
    {
        final long now = System.currentTimeMillis();
        if (now >= nextErrorLogMs)
        {
            nextErrorLogMs = now + ctx.errorLogIntervalMs();
            final String suppressed = suppressedErrorLogs > 0 ? " (" + suppressedErrorLogs + " similar lines " +
                "suppressed)" : "";
            suppressedErrorLogs = 0;
            logger.log(System.Logger.Level.WARNING, line + suppressed);
        }
        else
        {
            suppressedErrorLogs++;
        }
    }

    private int flushAll()
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

    private void closeIdle(final long now)
    {
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            final KafkaConnection connection = connections.get(i);
            if (!connection.memoryMuted && connection.requestStartedMs >= 0 &&
                now - connection.requestStartedMs > ctx.requestReadTimeoutMs())
            {
                // a peer that sends part of a request and stalls would hold its reservation until the idle timeout
                slowRequests.incrementAndGet();
                logLimited("closed connection " + connection.remote + " to broker " + brokerId + ": a request's " +
                    "bytes did not all arrive within " + ctx.requestReadTimeoutMs() + " ms (" +
                    KafkaContext.REQUEST_READ_TIMEOUT_MS + "), holding " + connection.reservedBytes + " bytes");
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

    void close(final KafkaConnection connection)
    {
        if (connection.closed)
        {
            return;
        }
        connection.closed = true;
        connections.remove(connection);
        apis.onClose(connection);
        if (connection.memoryMuted)
        {
            memoryWaiters.remove(connection);
            memoryWaiterCount = memoryWaiters.size();
        }
        if (connection.reservedBytes > 0)
        {
            release(connection.reservedBytes);
            connection.reservedBytes = 0;
        }
        if (null != connection.key)
        {
            connection.key.cancel();
        }
        connection.transport.close();
    }

    /** @return connections open now. */
    int connectionCount()
    {
        return connections.size();
    }

    @Override
    public void onClose()
    {
        for (int i = connections.size() - 1; i >= 0; i--)
        {
            close(connections.get(i));
        }
        apis.close();
        sessions.unregister(session);
        CloseHelper.quietCloseAll(server, selector);
        io.shutdownNow();
    }

    @Override
    public String roleName()
    {
        return "tidemark-kafka-" + brokerId;
    }

    /** Stop serving: connections close, the port is released. Idempotent. */
    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (null != runner)
        {
            selector.wakeup();
            CloseHelper.quietClose(runner);
        }
        else
        {
            onClose();
        }
    }

    /**
     * Idles in {@link Selector#select(long)}: the thread sleeps until a socket is ready, a produce outcome or a task
     * arrives (they wake the selector), or, while fetches are parked, for at most {@value #PARKED_FETCH_POLL_MS} ms
     * (a parked fetch waits for a high watermark to move, which nothing signals to the listener).
     */
    private final class SelectorIdleStrategy implements IdleStrategy
    {
        private int idleCycles;

        @Override
        public void idle(final int workCount)
        {
            if (workCount > 0)
            {
                idleCycles = 0;
                return;
            }
            idle();
        }

        @Override
        public void idle()
        {
            if (++idleCycles < 20)
            {
                Thread.onSpinWait();
                return;
            }
            parked = true;
            try
            {
                if (completions.size() == 0 && tasks.isEmpty())
                {
                    selector.select(apis.fetch().hasParked() || apis.produce().hasBlocked() ?
                        PARKED_FETCH_POLL_MS : 100);
                }
            }
            catch (final IOException | java.nio.channels.ClosedSelectorException ex)
            {
                // closing
            }
            finally
            {
                parked = false;
            }
        }

        @Override
        public void reset()
        {
            idleCycles = 0;
        }

        @Override
        public String alias()
        {
            return "selector";
        }
    }
}
