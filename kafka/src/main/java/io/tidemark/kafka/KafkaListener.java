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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
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
 * The listener is a façade over parts that each own their state: {@link ConnectionIo} (the sockets, framing and
 * connection lifetimes), {@link RequestBudget} (request memory), {@link ListenerFaults} (counters and the rate-limited
 * log of what peers did wrong), {@link ProduceCompletions} (outcomes from the leader's thread) and {@link KafkaApis}
 * (request dispatch); it keeps the agent's duty cycle, the hand-offs between threads, and what the APIs ask of the
 * broker (metadata, partitions, topic ids).
 * <p>
 * Thread-safe: {@link #close()} and the counters from any thread; everything else on the agent's thread.
 */
public final class KafkaListener implements Agent, AutoCloseable
{
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
    private final ConnectionIo connections;
    private final RequestBudget budget;
    private final ListenerFaults faults;
    private final ProduceCompletions completions;
    private final ManyToOneConcurrentLinkedQueue<Runnable> tasks = new ManyToOneConcurrentLinkedQueue<>();
    private final ExecutorService io;
    private final int session;
    private final KafkaApis apis;
    private final String advertisedHost;
    private final int advertisedPort;
    private final SelectorIdleStrategy idleStrategy = new SelectorIdleStrategy();
    private final TopicIds topicIds;
    private long nextHousekeepingMs;
    private volatile boolean parked;
    private AgentRunner runner;
    private boolean closed;

    private KafkaListener(final KafkaContext ctx, final int brokerId, final ClusterMetadata metadata,
        final Supplier<LeaderPartitions> partitions, final ProducerSessions sessions, final GroupCoordinator groups,
        final TopicAdmin admin, final ErrorHandler errorHandler)
    {
        this.ctx = ctx.clone().validate();
        final KafkaSecurity security = KafkaSecurity.create(this.ctx);
        this.brokerId = brokerId;
        this.metadata = metadata;
        this.partitions = partitions;
        this.sessions = sessions;
        this.errorHandler = errorHandler;
        this.budget = new RequestBudget(this.ctx.queuedMaxRequestBytes());
        this.faults = new ListenerFaults(brokerId, this.ctx.errorLogIntervalMs());
        this.connections = new ConnectionIo(this.ctx, security, faults, budget, errorHandler);
        this.advertisedHost = null != this.ctx.advertisedHost() ? this.ctx.advertisedHost() : this.ctx.host();
        this.advertisedPort = this.ctx.advertisedPort() > 0 ? this.ctx.advertisedPort() : connections.port();
        this.completions = new ProduceCompletions(this::onCompletion, this::wakeIfParked);
        this.session = sessions.register(this::onProduceComplete);
        this.io = Executors.newSingleThreadExecutor((r) ->
        {
            final Thread thread = new Thread(r, "tidemark-kafka-io-" + brokerId);
            thread.setDaemon(true);
            return thread;
        });
        this.topicIds = new TopicIds(metadata.clusterId());
        this.apis = new KafkaApis(this, groups, admin, security.users());
        connections.serve(apis);
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
        return connections.port();
    }

    /** @return this listener as clients are told to reach it. */
    public KafkaBroker advertised()
    {
        return new KafkaBroker(brokerId, advertisedHost, advertisedPort);
    }

    /** @return connections closed for bad frames (sizes out of bounds, unknown API keys, unparseable requests). */
    public long badFrames()
    {
        return faults.badFrames();
    }

    /** @return connections refused because {@code kafka.max.connections} were open. */
    public long refusedConnections()
    {
        return faults.refusedConnections();
    }

    /**
     * @return connections closed for failing to authenticate: a TLS handshake that failed or did not finish within
     *         {@code kafka.authentication.timeout.ms}, a SASL authentication that failed, a request before
     *         authentication.
     */
    public long failedAuthentications()
    {
        return faults.failedAuthentications();
    }

    /** @return bytes of requests read (or being read) and not yet answered, over all connections. */
    public long queuedRequestBytes()
    {
        return budget.queued();
    }

    /** @return the most {@link #queuedRequestBytes()} have been since the listener started. */
    public long maxQueuedRequestBytes()
    {
        return budget.maxQueued();
    }

    /** @return times a connection stopped reading because {@code kafka.queued.max.request.bytes} were taken. */
    public long memoryMutes()
    {
        return budget.mutes();
    }

    /**
     * @return connections closed because a request's bytes did not all arrive within
     *         {@code kafka.request.read.timeout.ms} of its first byte.
     */
    public long slowRequests()
    {
        return faults.slowRequests();
    }

    /** @return connections waiting for request budget now. */
    public int memoryWaiters()
    {
        return budget.waiters();
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
        return completions.lost();
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
        wakeIfParked();
    }

    private void wakeIfParked()
    {
        if (parked)
        {
            connections.wakeup();
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
        completions.offer(correlationId, baseOffset, error);
    }

    private void onCompletion(final long correlationId, final long baseOffset, final int errorCode)
    {
        apis.produce().onComplete(correlationId, baseOffset, errorCode);
    }

    @Override
    public int doWork() throws IOException
    {
        int work = connections.poll();
        work += completions.drain(1024);
        Runnable task;
        while (null != (task = tasks.poll()))
        {
            task.run();
            work++;
        }
        final long now = System.currentTimeMillis();
        work += apis.produce().retryBlocked(connections.connections(), now);
        work += apis.fetch().pollParked(now);
        apis.groups().poll(now);
        if (now >= nextHousekeepingMs)
        {
            nextHousekeepingMs = now + 1_000;
            connections.closeIdle(now);
        }
        work += connections.flushAll();
        connections.rearmReads();
        work += connections.resumeMemoryWaiters();
        return work;
    }

    /** A connection failed to authenticate: count it and log (rate-limited); the caller closes it. */
    void authenticationFailed(final KafkaConnection connection, final String why)
    {
        connections.authenticationFailed(connection, why);
    }

    /** A connection sent something that is not a Kafka request: close it, count it, log (rate-limited). */
    void badFrame(final KafkaConnection connection, final String why)
    {
        connections.badFrame(connection, why);
    }

    /** Close a connection (idempotent). */
    void close(final KafkaConnection connection)
    {
        connections.close(connection);
    }

    /** @return connections open now. */
    int connectionCount()
    {
        return connections.connections().size();
    }

    @Override
    public void onClose()
    {
        connections.closeAll();
        apis.close();
        sessions.unregister(session);
        connections.release();
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
            connections.wakeup();
            CloseHelper.quietClose(runner);
        }
        else
        {
            onClose();
        }
    }

    /**
     * Idles in {@link java.nio.channels.Selector#select(long)}: the thread sleeps until a socket is ready, a produce
     * outcome or a task arrives (they wake the selector), or, while fetches are parked, for at most
     * {@value #PARKED_FETCH_POLL_MS} ms (a parked fetch waits for a high watermark to move, which nothing signals to
     * the listener).
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
                if (completions.isEmpty() && tasks.isEmpty())
                {
                    connections.select(apis.fetch().hasParked() || apis.produce().hasBlocked() ?
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
