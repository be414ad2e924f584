package io.tidemark.host;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.HmacSha256;
import io.tidemark.replication.RateLimitedLog;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.security.SecureRandom;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.IntFunction;

/**
 * Tells "the process is certainly gone" apart from "the process is slow", within milliseconds of a host process's
 * exit and with no false positive on a starved machine.
 * <p>
 * <b>The rule.</b> When a process ends (SIGKILL, a crash, an exit, a clean stop) its kernel closes its TCP sockets at
 * once, and a peer holding a connection to it reads EOF or a reset; a process that is alive but starved for seconds
 * keeps its connections open. So each host listens on a small TCP port ({@code host.liveness.port} on the address of
 * its endpoint, a free port by default), bound <em>before</em> it registers in ZooKeeper, and advertises the port in
 * its registration ({@link ZooKeeperHostLiveness.Registration}). Every host connects to every other host
 * incarnation registered there, at the address {@code cluster.hosts} gives it (configuration, never an address read
 * from ZooKeeper), sends a challenge with a fresh nonce, and reads the listener's hello ({@link LivenessHello}): its
 * host id, its incarnation and an HMAC with the cluster secret over the nonce. Only a hello of the registered
 * incarnation whose tag verifies makes the connection <em>verified</em>; after that, EOF or an error on it means the
 * incarnation's process exited, and {@link #exited} says so until a new incarnation registers. Nothing is ever sent
 * on a verified connection: it costs no CPU while idle (the thread blocks in {@link Selector#select()}).
 * <p>
 * The controller's host treats such a host as down at once ({@link HostExitLiveness}: its leaderships move and it
 * leaves the ISRs as on a session's expiry, fenced by epochs as ever); every host takes the controller's exit as
 * evidence for its vote against it at once ({@link ControllerWatch}). Machine death and network partitions close no
 * connection: there the heartbeats ({@code host.session.timeout.ms}), the controller votes
 * ({@code controller.timeout.ms}) and the ZooKeeper session decide, as before.
 * <p>
 * <b>Failure cases</b> (each is why a part of the rule is there):
 * <ul>
 *   <li><b>Port reuse.</b> After a restart the old port may belong to another process, or to the host's next
 *   incarnation. A connection counts only after a hello of the exact incarnation registered, tagged over this
 *   connection's nonce; anything else (refused, no hello, another incarnation, a bad tag) counts for nothing, and the
 *   connection is tried again later (from {@link #FIRST_RETRY_MS}, doubling to {@link #MAX_RETRY_MS}). A refused
 *   connection never counts, even to an incarnation verified before: a firewall's reject looks the same.</li>
 *   <li><b>A forged hello.</b> Without the secret no tag verifies; a hello recorded from another connection carries
 *   another nonce. A forger can at most make a real exit go unseen (the heartbeats then decide), never make a live
 *   process look dead: only a verified connection's close counts, and only the real process can close it.</li>
 *   <li><b>A truncated or oversized answer.</b> A connection closed before a whole hello is a failed attempt; a
 *   byte beyond the hello, before or after it verified, closes the connection as a protocol violation and does not
 *   count as an exit.</li>
 *   <li><b>Slow-loris connections to the listener.</b> At most {@link #maxInbound} connections are served (more are
 *   closed at once), and one that has not sent a whole challenge within {@link #HELLO_TIMEOUT_MS} is closed. The
 *   listener never closes a connection it answered while the process runs, except for a protocol violation by the
 *   connecting side: a peer's verified connection is closed only by this process's end. Connections that answer and
 *   then sit idle can fill the slots; then peers fall back to heartbeats, never to a false exit.</li>
 *   <li><b>The watch thread fails.</b> Each connection's errors are its own; an unexpected error is logged (rate
 *   limited) and the loop goes on. Were the thread to die, the sockets stay open with the process (nobody closes
 *   them), so peers see no false exit; new connections then get no hello and count for nothing.</li>
 *   <li><b>The listener cannot bind</b> (the port is taken, the address is not this machine's): the host fails to
 *   start with a {@link HostStartException} naming {@code host.liveness.port}, before it registers.</li>
 *   <li><b>A ZooKeeper session lost while the process lives.</b> Its registration goes and comes back with the same
 *   incarnation and port: the connection closed on the way is not counted (the registration was gone) and the
 *   peers connect again.</li>
 *   <li><b>A clean stop</b> closes the listener last: peers see the exit after the host has unregistered.</li>
 * </ul>
 * Thread-safe: one thread of its own owns the sockets; {@link #exited} reads an atomic array and may be called from
 * any thread (the controller's and the hosts' agent threads).
 */
final class ProcessExitWatch implements Runnable, AutoCloseable
{
    /** A connection that has not completed its challenge and hello within this is closed. */
    static final long HELLO_TIMEOUT_MS = 5_000;
    /** The first retry of a failed connection to a registered incarnation comes after this; doubled at each failure. */
    static final long FIRST_RETRY_MS = 250;
    /** The longest between two attempts to connect to a registered incarnation. */
    static final long MAX_RETRY_MS = 30_000;

    private static final int NONE = 0;
    private static final int IDLE = 1;
    private static final int CONNECTING = 2;
    private static final int AWAITING_HELLO = 3;
    private static final int VERIFIED = 4;
    private static final int EXITED = 5;

    private final int hostId;
    private final long incarnation;
    private final int clusterHash;
    private final HmacSha256 mac;
    private final ServerSocketChannel server;
    private final Selector selector;
    private final int maxInbound;
    private final Peer[] peers;
    private final AtomicLongArray exited;
    private volatile Runnable onExit;
    private final SecureRandom random = new SecureRandom();
    private final ByteBuffer scratch = ByteBuffer.allocate(1);
    private final System.Logger logger = System.getLogger(ProcessExitWatch.class.getName());
    private final RateLimitedLog remoteLog = new RateLimitedLog(logger);
    private final Thread thread;
    private volatile IntFunction<ZooKeeperHostLiveness.Registration> registry;
    private volatile boolean registrationsChanged;
    private volatile boolean running = true;
    private int inbound;

    /** One peer host: the incarnation watched and the connection to its listener. */
    private static final class Peer
    {
        final int hostId;
        final String address;
        final byte[] nonce = new byte[LivenessHello.NONCE_LENGTH];
        final ByteBuffer out = ByteBuffer.allocate(LivenessHello.CHALLENGE_LENGTH);
        final ByteBuffer in = ByteBuffer.allocate(LivenessHello.HELLO_LENGTH);
        volatile int state = NONE; // written by the watch thread only; read by verified()
        long incarnation;
        int port;
        SocketChannel channel;
        long deadlineNs;
        long retryAtNs;
        int failures;

        Peer(final int hostId, final String address)
        {
            this.hostId = hostId;
            this.address = address;
        }
    }

    /** A connection to this host's listener: a challenge to read, a hello to write, then only its close. */
    private static final class Inbound
    {
        final ByteBuffer in = ByteBuffer.allocate(LivenessHello.CHALLENGE_LENGTH);
        final ByteBuffer out = ByteBuffer.allocate(LivenessHello.HELLO_LENGTH);
        final long deadlineNs;
        boolean answered;

        Inbound(final long deadlineNs)
        {
            this.deadlineNs = deadlineNs;
        }
    }

    /**
     * Bind the listener and start answering on it (the thread starts here); watching the peers begins with
     * {@link #watch}.
     *
     * @param endpoints   every host's endpoint by id ({@code address:port}): this host's address is bound, the
     *                    others' are connected to.
     * @param port        the listener's TCP port; 0 for a free one.
     * @param clusterHash the cluster's hash, in every challenge and hello.
     * @param secret      the cluster secret (its tags), or an insecure one (no tag).
     * @throws HostStartException naming {@link HostConfig#LIVENESS_PORT} when the listener cannot be bound.
     */
    ProcessExitWatch(final int hostId, final long incarnation, final Map<Integer, String> endpoints, final int port,
        final int clusterHash, final ClusterSecret secret)
    {
        this.hostId = hostId;
        this.incarnation = incarnation;
        this.clusterHash = clusterHash;
        this.mac = secret.authenticates() ? secret.newMac() : null;
        final int maxHosts = endpoints.keySet().stream().mapToInt(Integer::intValue).max().orElse(hostId) + 1;
        this.maxInbound = 2 * maxHosts + 8;
        this.peers = new Peer[maxHosts];
        this.exited = new AtomicLongArray(maxHosts);
        endpoints.forEach((id, endpoint) -> peers[id] = new Peer(id, addressOf(endpoint)));
        final String address = addressOf(endpoints.get(hostId));
        ServerSocketChannel bound = null;
        Selector opened = null;
        try
        {
            opened = Selector.open();
            bound = ServerSocketChannel.open();
            bound.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            bound.bind(new InetSocketAddress(address, port), maxInbound);
            bound.configureBlocking(false);
            bound.register(opened, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException | RuntimeException ex)
        {
            closeQuietly(bound);
            closeQuietly(opened);
            throw new HostStartException("host " + hostId + ": cannot bind the liveness listener on " + address + ":" +
                port + " (" + HostConfig.LIVENESS_PORT + "; in use, or not an address of this machine): " + ex, ex);
        }
        this.server = bound;
        this.selector = opened;
        this.thread = new Thread(this, "tidemark-liveness-" + hostId);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * @param listener run on the watch's thread after each exit is recorded (it must not block): the controller role
     *                 acts on an exit at once instead of at its next duty cycle.
     */
    void onExit(final Runnable listener)
    {
        onExit = listener;
    }

    /** @return the listener's bound port, to advertise in the registration. */
    int port()
    {
        return ((InetSocketAddress)server.socket().getLocalSocketAddress()).getPort();
    }

    /**
     * Watch every other host incarnation that {@code registrations} shows registered with a liveness port, from now
     * on and at each {@link #registrationsChanged()}.
     *
     * @param registrations each host's registration as last heard (ZooKeeper's,
     *                      {@link ZooKeeperHostLiveness#registration}), null for none; called on the watch's thread.
     */
    void watch(final IntFunction<ZooKeeperHostLiveness.Registration> registrations)
    {
        this.registry = registrations;
        registrationsChanged();
    }

    /** The registrations changed: look them up again. Returns at once (any thread). */
    void registrationsChanged()
    {
        registrationsChanged = true;
        selector.wakeup();
    }

    /**
     * @return whether the process of {@code hostId}'s incarnation {@code incarnation} was seen to exit (its verified
     *         liveness connection closed). False for an incarnation not positive (not tracked) and for a host never
     *         watched.
     */
    boolean exited(final int hostId, final long incarnation)
    {
        return incarnation > 0 && hostId >= 0 && hostId < exited.length() && exited.get(hostId) == incarnation;
    }

    /** @return whether the host's liveness connection to {@code hostId} is verified now (tests, diagnostics). */
    boolean verified(final int hostId)
    {
        final Peer peer = hostId >= 0 && hostId < peers.length ? peers[hostId] : null;
        return null != peer && peer.state == VERIFIED;
    }

    @Override
    public void run()
    {
        while (running)
        {
            try
            {
                long nowNs = System.nanoTime();
                if (registrationsChanged)
                {
                    registrationsChanged = false;
                    applyRegistrations(nowNs);
                }
                connectDue(nowNs);
                final long waitMs = waitMs(nowNs);
                if (waitMs < 0)
                {
                    selector.select(); // nothing pending: blocks until a socket or a registration change
                }
                else if (waitMs > 0)
                {
                    selector.select(waitMs);
                }
                else
                {
                    selector.selectNow();
                }
                nowNs = System.nanoTime();
                final Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                while (keys.hasNext())
                {
                    final SelectionKey key = keys.next();
                    keys.remove();
                    onReady(key, nowNs);
                }
                expire(nowNs);
            }
            catch (final IOException | RuntimeException ex)
            {
                remoteLog.log(System.Logger.Level.ERROR, "liveness watch-error", "host " + hostId +
                    ": liveness watch error (the watch goes on): " + ex, ex);
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // no spin
            }
        }
    }

    private void onReady(final SelectionKey key, final long nowNs)
    {
        if (!key.isValid())
        {
            return;
        }
        final Object attachment = key.attachment();
        if (attachment instanceof Peer peer)
        {
            onPeerReady(peer, key, nowNs);
        }
        else if (attachment instanceof Inbound connection)
        {
            onInboundReady(connection, key);
        }
        else if (key.isAcceptable())
        {
            accept(nowNs);
        }
    }

    private void applyRegistrations(final long nowNs)
    {
        final IntFunction<ZooKeeperHostLiveness.Registration> current = registry;
        if (null == current)
        {
            return;
        }
        for (final Peer peer : peers)
        {
            if (null == peer || peer.hostId == hostId)
            {
                continue;
            }
            final ZooKeeperHostLiveness.Registration registration = current.apply(peer.hostId);
            final boolean watchable = null != registration && registration.incarnation() > 0 &&
                registration.livenessPort() != ZooKeeperHostLiveness.Registration.NO_LIVENESS_PORT;
            if (watchable && peer.state != NONE && registration.incarnation() == peer.incarnation &&
                registration.livenessPort() == peer.port)
            {
                continue; // the incarnation watched already
            }
            closeChannel(peer);
            peer.failures = 0;
            if (watchable)
            {
                peer.incarnation = registration.incarnation();
                peer.port = registration.livenessPort();
                peer.retryAtNs = nowNs;
                peer.state = IDLE;
            }
            else
            {
                peer.state = NONE;
            }
        }
    }

    private void connectDue(final long nowNs)
    {
        for (final Peer peer : peers)
        {
            if (null != peer && peer.state == IDLE && nowNs - peer.retryAtNs >= 0)
            {
                connect(peer, nowNs);
            }
        }
    }

    private void connect(final Peer peer, final long nowNs)
    {
        try
        {
            final SocketChannel channel = SocketChannel.open();
            peer.channel = channel;
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            random.nextBytes(peer.nonce);
            peer.out.clear();
            LivenessHello.writeChallenge(peer.out, clusterHash, peer.nonce);
            peer.out.flip();
            peer.in.clear();
            peer.deadlineNs = nowNs + TimeUnit.MILLISECONDS.toNanos(HELLO_TIMEOUT_MS);
            peer.state = CONNECTING;
            if (channel.connect(new InetSocketAddress(peer.address, peer.port)))
            {
                sendChallenge(peer);
            }
            else
            {
                channel.register(selector, SelectionKey.OP_CONNECT, peer);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            failed(peer, nowNs, "cannot connect: " + ex);
        }
    }

    private void sendChallenge(final Peer peer) throws IOException
    {
        peer.channel.write(peer.out); // 24 bytes into an empty send buffer: whole, or the connection failed
        if (peer.out.hasRemaining())
        {
            throw new IOException("the challenge did not fit the socket's send buffer");
        }
        peer.state = AWAITING_HELLO;
        peer.channel.register(selector, SelectionKey.OP_READ, peer);
    }

    private void onPeerReady(final Peer peer, final SelectionKey key, final long nowNs)
    {
        if (peer.state == CONNECTING)
        {
            try
            {
                if (key.isConnectable() && peer.channel.finishConnect())
                {
                    sendChallenge(peer);
                }
            }
            catch (final IOException | RuntimeException ex)
            {
                failed(peer, nowNs, "cannot connect: " + ex); // refused counts for nothing, verified before or not
            }
            return;
        }
        if (peer.state == AWAITING_HELLO)
        {
            readHello(peer, nowNs);
        }
        else if (peer.state == VERIFIED)
        {
            readVerified(peer, nowNs);
        }
    }

    private void readHello(final Peer peer, final long nowNs)
    {
        try
        {
            if (peer.channel.read(peer.in) < 0)
            {
                failed(peer, nowNs, "closed after " + peer.in.position() + " of the hello's " +
                    LivenessHello.HELLO_LENGTH + " bytes");
                return;
            }
            if (peer.in.hasRemaining())
            {
                return;
            }
            final int result = LivenessHello.verifyHello(peer.in, clusterHash, peer.hostId, peer.incarnation,
                peer.nonce, mac);
            if (result != LivenessHello.VERIFIED)
            {
                failed(peer, nowNs, LivenessHello.describe(result) + " (host " + LivenessHello.helloHostId(peer.in) +
                    ", incarnation " + LivenessHello.helloIncarnation(peer.in) + ")");
                return;
            }
            peer.state = VERIFIED;
            peer.failures = 0;
            logger.log(System.Logger.Level.DEBUG, () -> "host " + hostId + " watches the process of host " +
                peer.hostId + " (incarnation " + peer.incarnation + ") by its liveness connection");
            readVerified(peer, nowNs); // a byte or an end right behind the hello
        }
        catch (final IOException ex)
        {
            failed(peer, nowNs, "before its hello: " + ex);
        }
    }

    private void readVerified(final Peer peer, final long nowNs)
    {
        scratch.clear();
        int read;
        String why;
        try
        {
            read = peer.channel.read(scratch);
            why = "its liveness connection closed";
        }
        catch (final IOException ex)
        {
            read = -1;
            why = "its liveness connection failed: " + ex.getMessage();
        }
        if (read == 0)
        {
            return;
        }
        if (read > 0)
        {
            failed(peer, nowNs, "sent bytes after its hello (a protocol violation; not counted as an exit)");
            return;
        }
        closeChannel(peer);
        peer.state = EXITED;
        exited.set(peer.hostId, peer.incarnation);
        final Runnable listener = onExit;
        if (null != listener)
        {
            listener.run();
        }
        logger.log(System.Logger.Level.INFO, "host " + hostId + ": the process of host " + peer.hostId +
            " (incarnation " + peer.incarnation + ") exited: " + why);
    }

    private void failed(final Peer peer, final long nowNs, final String why)
    {
        closeChannel(peer);
        peer.failures++;
        final long backoffMs = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS << Math.min(20, peer.failures - 1));
        peer.retryAtNs = nowNs + TimeUnit.MILLISECONDS.toNanos(backoffMs);
        peer.state = IDLE;
        remoteLog.log(System.Logger.Level.INFO, "liveness peer-unverified", "host " + hostId + ": liveness " +
            "connection to host " + peer.hostId + " (incarnation " + peer.incarnation + ", " + peer.address + ":" +
            peer.port + ") not verified: " + why + "; next attempt in " + backoffMs + " ms (until then its " +
            "heartbeats decide)");
    }

    private void accept(final long nowNs)
    {
        while (true)
        {
            final SocketChannel channel;
            try
            {
                channel = server.accept();
            }
            catch (final IOException ex)
            {
                remoteLog.log(System.Logger.Level.WARNING, "liveness accept", "host " + hostId +
                    ": liveness listener cannot accept: " + ex);
                return;
            }
            if (null == channel)
            {
                return;
            }
            if (inbound >= maxInbound)
            {
                remoteLog.log(System.Logger.Level.WARNING, "liveness inbound-limit", "host " + hostId +
                    ": liveness listener closed a connection beyond its " + maxInbound + " from " +
                    remoteAddress(channel));
                closeQuietly(channel);
                continue;
            }
            try
            {
                channel.configureBlocking(false);
                channel.register(selector, SelectionKey.OP_READ,
                    new Inbound(nowNs + TimeUnit.MILLISECONDS.toNanos(HELLO_TIMEOUT_MS)));
                inbound++;
            }
            catch (final IOException | RuntimeException ex)
            {
                closeQuietly(channel);
            }
        }
    }

    private void onInboundReady(final Inbound connection, final SelectionKey key)
    {
        final SocketChannel channel = (SocketChannel)key.channel();
        try
        {
            if (connection.answered)
            {
                scratch.clear();
                final int read = channel.read(scratch);
                if (read != 0)
                {
                    // its close (the peer stopped watching), or bytes beyond the challenge: a protocol violation
                    closeInbound(key, read > 0 ? "sent bytes after its challenge" : null);
                }
                return;
            }
            if (channel.read(connection.in) < 0)
            {
                closeInbound(key, null);
                return;
            }
            if (connection.in.hasRemaining())
            {
                return;
            }
            final byte[] nonce = new byte[LivenessHello.NONCE_LENGTH];
            if (!LivenessHello.readChallenge(connection.in, clusterHash, nonce))
            {
                closeInbound(key, "not a liveness challenge of this cluster");
                return;
            }
            LivenessHello.writeHello(connection.out, clusterHash, hostId, incarnation, nonce, mac);
            connection.out.flip();
            channel.write(connection.out); // 52 bytes into an empty send buffer
            if (connection.out.hasRemaining())
            {
                closeInbound(key, "the hello did not fit the socket's send buffer");
                return;
            }
            connection.answered = true;
        }
        catch (final IOException ex)
        {
            closeInbound(key, null);
        }
    }

    private void closeInbound(final SelectionKey key, final String violation)
    {
        if (null != violation)
        {
            remoteLog.log(System.Logger.Level.WARNING, "liveness inbound-violation", "host " + hostId +
                ": liveness listener closed a connection from " + remoteAddress((SocketChannel)key.channel()) +
                ": " + violation);
        }
        key.cancel();
        closeQuietly(key.channel());
        inbound--;
    }

    /**
     * @return how long the selector may block until the next deadline (a connection's timeout, a retry), in ms: 0
     *         for none left, -1 when nothing is pending (block until a socket or a registration change).
     */
    private long waitMs(final long nowNs)
    {
        long next = 0;
        boolean any = false;
        for (final Peer peer : peers)
        {
            if (null != peer && peer.state >= IDLE && peer.state <= AWAITING_HELLO)
            {
                final long deadline = peer.state == IDLE ? peer.retryAtNs : peer.deadlineNs;
                next = !any || deadline - next < 0 ? deadline : next;
                any = true;
            }
        }
        for (final SelectionKey key : selector.keys())
        {
            if (key.attachment() instanceof Inbound connection && !connection.answered)
            {
                next = !any || connection.deadlineNs - next < 0 ? connection.deadlineNs : next;
                any = true;
            }
        }
        if (!any)
        {
            return -1;
        }
        final long waitNs = next - nowNs;
        return waitNs <= 0 ? 0 : Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNs + 999_999));
    }

    private void expire(final long nowNs)
    {
        for (final Peer peer : peers)
        {
            if (null != peer && (peer.state == CONNECTING || peer.state == AWAITING_HELLO) &&
                nowNs - peer.deadlineNs >= 0)
            {
                failed(peer, nowNs, "no hello within " + HELLO_TIMEOUT_MS + " ms");
            }
        }
        for (final SelectionKey key : selector.keys())
        {
            if (key.isValid() && key.attachment() instanceof Inbound connection && !connection.answered &&
                nowNs - connection.deadlineNs >= 0)
            {
                closeInbound(key, "no challenge within " + HELLO_TIMEOUT_MS + " ms");
            }
        }
    }

    private void closeChannel(final Peer peer)
    {
        if (null != peer.channel)
        {
            final SelectionKey key = peer.channel.keyFor(selector);
            if (null != key)
            {
                key.cancel();
            }
            closeQuietly(peer.channel);
            peer.channel = null;
        }
    }

    private static String remoteAddress(final SocketChannel channel)
    {
        try
        {
            return String.valueOf(channel.getRemoteAddress());
        }
        catch (final IOException ex)
        {
            return "an unknown address";
        }
    }

    /** @return the address part of {@code address:port} (an IPv6 address without its brackets). */
    static String addressOf(final String endpoint)
    {
        final String address = endpoint.substring(0, endpoint.lastIndexOf(':'));
        return address.startsWith("[") && address.endsWith("]") ? address.substring(1, address.length() - 1) :
            address;
    }

    private static void closeQuietly(final java.io.Closeable closeable)
    {
        if (null != closeable)
        {
            try
            {
                closeable.close();
            }
            catch (final IOException ex)
            {
                // closing: nothing more to do
            }
        }
    }

    /** Stop watching and close every connection and the listener: the peers see this process leave. Idempotent. */
    @Override
    public synchronized void close()
    {
        if (!selector.isOpen())
        {
            return;
        }
        running = false;
        selector.wakeup();
        try
        {
            thread.join(5_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        for (final SelectionKey key : selector.keys())
        {
            closeQuietly(key.channel());
        }
        closeQuietly(selector);
        closeQuietly(server);
    }
}
