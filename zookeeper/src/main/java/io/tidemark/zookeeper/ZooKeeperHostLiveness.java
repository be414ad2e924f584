package io.tidemark.zookeeper;

import io.tidemark.replication.spi.HostLiveness;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Host liveness by ZooKeeper session, as the seed design has it: each replica host registers an ephemeral node
 * {@code <root>/hosts/<id>} with its own session ({@link #register}); the controller's side watches those nodes
 * (a {@link CuratorCache}) and reports a host down once its node, having been seen, is gone: its process died, or
 * it was cut off from ZooKeeper for longer than its session timeout. Answers come from memory (the cache's
 * events), so the controller's duty cycle never waits on ZooKeeper. A host never seen registered is not reported
 * down (the heartbeats' grace covers a start-up).
 * <p>
 * A host's node data that starts with its incarnation ({@link Registration}: {@code "<incarnation> <endpoint>
 * <directory token> <liveness port>"}, as a host process registers) is its {@link #registeredIncarnation}; a node
 * with other data states none ({@link HostLiveness#ANY_INCARNATION}). The whole registration, when the data holds
 * one, is {@link #registration}: the host process's liveness listener watches its peers' processes by it.
 * Host ids outside {@code [0, 64)} are ignored.
 */
public final class ZooKeeperHostLiveness implements HostLiveness, AutoCloseable
{
    /** Child of the root under which the hosts' ephemeral nodes live. */
    public static final String HOSTS = "hosts";

    /**
     * What a host process registers as its node's data: {@code "<incarnation> <endpoint> <directory token>
     * <liveness port>"}. Builds before the liveness listener wrote the first three words, builds before the directory
     * token the first two; a registration without a liveness port has {@link #NO_LIVENESS_PORT}.
     *
     * @param incarnation  this start's incarnation (positive).
     * @param endpoint     the host's Aeron endpoint, {@code host:port}.
     * @param token        the host directory's token, or null.
     * @param livenessPort the TCP port of the host's liveness listener (on the address of its endpoint), or
     *                     {@link #NO_LIVENESS_PORT}.
     */
    public record Registration(long incarnation, String endpoint, String token, int livenessPort)
    {
        /** {@link #livenessPort} of a registration that states none. */
        public static final int NO_LIVENESS_PORT = 0;
        /** Most bytes of a node's data that {@link #parse} reads: a longer one is damaged or forged. */
        public static final int MAX_LENGTH = 1024;

        /**
         * A registration without a liveness port.
         *
         * @param incarnation this start's incarnation (positive).
         * @param endpoint    the host's Aeron endpoint, {@code host:port}.
         * @param token       the host directory's token, or null.
         */
        public Registration(final long incarnation, final String endpoint, final String token)
        {
            this(incarnation, endpoint, token, NO_LIVENESS_PORT);
        }

        /**
         * @return the node's data.
         * @throws IllegalArgumentException for a liveness port without a token (the words are positional), or one
         *                                  outside [1, 65535].
         */
        public byte[] encode()
        {
            if (livenessPort != NO_LIVENESS_PORT && (null == token || livenessPort < 1 || livenessPort > 65535))
            {
                throw new IllegalArgumentException("a liveness port needs a token and must be in [1, 65535]: " +
                    livenessPort);
            }
            return (incarnation + " " + endpoint + (null == token ? "" : " " + token) +
                (livenessPort == NO_LIVENESS_PORT ? "" : " " + livenessPort)).getBytes(StandardCharsets.UTF_8);
        }

        /**
         * @param data a node's data, as read from ZooKeeper (untrusted).
         * @return the registration it holds, or null when it holds none (a node written by hand, damaged or forged:
         *         longer than {@link #MAX_LENGTH}, not two to four words, an incarnation or a liveness port that is
         *         not a number, or a port outside [1, 65535]).
         */
        public static Registration parse(final byte[] data)
        {
            if (null == data || data.length > MAX_LENGTH)
            {
                return null;
            }
            final String[] words = new String(data, StandardCharsets.UTF_8).trim().split(" ");
            if (words.length < 2 || words.length > 4)
            {
                return null;
            }
            try
            {
                final int port = words.length == 4 ? Integer.parseInt(words[3]) : NO_LIVENESS_PORT;
                if (words.length == 4 && (port < 1 || port > 65535))
                {
                    return null;
                }
                return new Registration(Long.parseLong(words[0]), words[1], words.length >= 3 ? words[2] : null, port);
            }
            catch (final NumberFormatException ex)
            {
                return null;
            }
        }
    }

    private final String hostsPath;
    private final CuratorCache cache;
    private final ConcurrentHashMap<Integer, Boolean> registered = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLongArray incarnations =
        new java.util.concurrent.atomic.AtomicLongArray(io.tidemark.replication.protocol.PartitionState.MAX_HOSTS);
    private final java.util.concurrent.atomic.AtomicReferenceArray<Registration> registrations =
        new java.util.concurrent.atomic.AtomicReferenceArray<>(io.tidemark.replication.protocol.PartitionState.MAX_HOSTS);
    private final java.util.concurrent.CopyOnWriteArrayList<Runnable> listeners =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    private final java.util.concurrent.CountDownLatch initialized = new java.util.concurrent.CountDownLatch(1);

    /**
     * Start watching the hosts' nodes.
     *
     * @param client   a started Curator client (the controller's).
     * @param rootPath the cluster's root znode.
     */
    public ZooKeeperHostLiveness(final CuratorFramework client, final String rootPath)
    {
        this.hostsPath = rootPath + "/" + HOSTS;
        this.cache = CuratorCache.build(client, hostsPath);
        cache.listenable().addListener(CuratorCacheListener.builder()
            .forCreates((node) -> update(node, true))
            .forChanges((before, node) -> update(node, true))
            .forDeletes((node) -> update(node, false))
            .forInitialized(initialized::countDown)
            .build());
        for (int i = 0; i < incarnations.length(); i++)
        {
            incarnations.set(i, NOT_REGISTERED);
        }
        cache.start();
    }

    private void update(final ChildData node, final boolean up)
    {
        final String path = node.getPath();
        if (path.length() <= hostsPath.length() + 1 || !path.startsWith(hostsPath + "/"))
        {
            return; // the parent itself
        }
        try
        {
            final int hostId = Integer.parseInt(path.substring(hostsPath.length() + 1));
            if (hostId < 0 || hostId >= incarnations.length())
            {
                return;
            }
            registrations.set(hostId, up ? Registration.parse(node.getData()) : null);
            incarnations.set(hostId, up ? incarnationIn(node.getData()) : NOT_REGISTERED);
            registered.put(hostId, up);
            for (final Runnable listener : listeners)
            {
                listener.run();
            }
        }
        catch (final NumberFormatException ex)
        {
            // not a host node
        }
    }

    private static long incarnationIn(final byte[] data)
    {
        if (null == data)
        {
            return ANY_INCARNATION;
        }
        final String text = new String(data, StandardCharsets.UTF_8).trim();
        final int space = text.indexOf(' ');
        try
        {
            final long incarnation = Long.parseLong(space < 0 ? text : text.substring(0, space));
            return incarnation > 0 ? incarnation : ANY_INCARNATION;
        }
        catch (final NumberFormatException ex)
        {
            return ANY_INCARNATION; // a registration that states no incarnation
        }
    }

    /**
     * @return the incarnation the host's node states, {@link HostLiveness#NOT_REGISTERED} when it has no node (as
     *         last heard), or {@link HostLiveness#ANY_INCARNATION} when its node states none.
     */
    @Override
    public long registeredIncarnation(final int hostId)
    {
        return hostId >= 0 && hostId < incarnations.length() ? incarnations.get(hostId) : NOT_REGISTERED;
    }

    /**
     * @return what the host's node holds (as last heard), or null when it has no node or one that holds no
     *         registration ({@link Registration#parse}).
     */
    public Registration registration(final int hostId)
    {
        return hostId >= 0 && hostId < registrations.length() ? registrations.get(hostId) : null;
    }

    /**
     * Be told of every change to a host's node, after {@link #registration} and {@link #registeredIncarnation}
     * show it. Runs on the cache's thread: the listener must return at once (set a flag, wake a thread).
     *
     * @param listener called with no argument; look the hosts up again.
     */
    public void onChange(final Runnable listener)
    {
        listeners.add(listener);
    }

    /**
     * Wait until the hosts' nodes as they were at the start have been read.
     *
     * @return whether they were within the timeout.
     */
    public boolean awaitInitialized(final long timeoutMs)
    {
        try
        {
            return initialized.await(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public boolean isDown(final int hostId)
    {
        return Boolean.FALSE.equals(registered.get(hostId));
    }

    /** @return whether the host's node is there now (as last heard). */
    public boolean isRegistered(final int hostId)
    {
        return Boolean.TRUE.equals(registered.get(hostId));
    }

    /**
     * Register a host: an ephemeral node that lives as long as {@code hostClient}'s session, holding
     * {@code "host <id>"}. A node left by the host's previous session (a process killed moments ago) is waited out,
     * up to {@code timeoutMs}.
     *
     * @param hostClient the host's own started Curator client.
     * @param rootPath   the cluster's root znode.
     * @param hostId     the host's id.
     * @param timeoutMs  how long to wait for a previous session's node to go.
     * @throws ZooKeeperStoreException when the node could not be created in time.
     */
    public static void register(
        final CuratorFramework hostClient, final String rootPath, final int hostId, final long timeoutMs)
    {
        register(hostClient, rootPath, hostId, ("host " + hostId).getBytes(StandardCharsets.UTF_8), timeoutMs);
    }

    /**
     * Register a host: an ephemeral node that lives as long as {@code hostClient}'s session, holding {@code data}
     * (what others need to reach this incarnation of the host: its endpoint, its incarnation number), readable
     * with {@link #hostData}. The node gets the client's ACL (see {@link ZooKeeperSettings#newClient()}). A node
     * left by the host's previous session (a process killed moments ago) is waited out, up to {@code timeoutMs}.
     *
     * @param hostClient the host's own started Curator client.
     * @param rootPath   the cluster's root znode.
     * @param hostId     the host's id.
     * @param data       the node's data (ZooKeeper limits it to about 1 MB).
     * @param timeoutMs  how long to wait for a previous session's node to go.
     * @throws ZooKeeperStoreException when the node could not be created in time.
     */
    public static void register(
        final CuratorFramework hostClient,
        final String rootPath,
        final int hostId,
        final byte[] data,
        final long timeoutMs)
    {
        register(hostClient, rootPath, hostId, data, null, timeoutMs);
    }

    /**
     * Register a host as {@link #register(CuratorFramework, String, int, byte[], long)} does, taking over at once a
     * node that a dead predecessor left: when the node that is in the way ends with {@code takeOverToken} (its last
     * space-separated word), it was registered by a process that worked in the same host directory, and the caller,
     * holding that directory's lock, knows that process is gone; the node is deleted (at the version read, so a node
     * that changed in between is looked at again) and this host's created. A node with another last word (or none)
     * is waited out as before: it may be a live process of the same host id elsewhere. A node this client's own
     * session holds counts as registered.
     *
     * @param takeOverToken the host directory's token, also the last word of {@code data}; null to never take over.
     * @throws ZooKeeperStoreException when the node could not be created in time.
     */
    public static void register(
        final CuratorFramework hostClient,
        final String rootPath,
        final int hostId,
        final byte[] data,
        final String takeOverToken,
        final long timeoutMs)
    {
        final String path = hostPath(rootPath, hostId);
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (true)
        {
            try
            {
                hostClient.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL)
                    .forPath(path, data);
                return;
            }
            catch (final KeeperException.NodeExistsException ex)
            {
                final int next;
                try
                {
                    next = takeOver(hostClient, path, takeOverToken);
                }
                catch (final Exception readOrDelete)
                {
                    throw new ZooKeeperStoreException("cannot register host " + hostId + " at " + path, readOrDelete);
                }
                if (next == OURS)
                {
                    return;
                }
                if (next == CREATE_AGAIN)
                {
                    continue;
                }
                if (System.nanoTime() > deadline)
                {
                    throw new ZooKeeperStoreException("host " + hostId + " is still registered at " + path +
                        " by another session after " + timeoutMs + " ms", ex);
                }
                try
                {
                    Thread.sleep(50);
                }
                catch (final InterruptedException interrupted)
                {
                    Thread.currentThread().interrupt();
                    throw new ZooKeeperStoreException("interrupted while registering host " + hostId, interrupted);
                }
            }
            catch (final Exception ex)
            {
                throw new ZooKeeperStoreException("cannot register host " + hostId + " at " + path, ex);
            }
        }
    }

    private static final int WAIT = 0;
    private static final int CREATE_AGAIN = 1;
    private static final int OURS = 2;

    /**
     * @return {@link #OURS} when this client's session holds the node already, {@link #CREATE_AGAIN} when it is gone
     *         (left by a predecessor in the same host directory and deleted now, or vanished meanwhile),
     *         {@link #WAIT} when it belongs to another process.
     */
    private static int takeOver(final CuratorFramework client, final String path, final String token)
        throws Exception
    {
        final Stat stat = new Stat();
        final byte[] existing;
        try
        {
            existing = client.getData().storingStatIn(stat).forPath(path);
        }
        catch (final KeeperException.NoNodeException gone)
        {
            return CREATE_AGAIN;
        }
        if (stat.getEphemeralOwner() == client.getZookeeperClient().getZooKeeper().getSessionId())
        {
            return OURS; // a create whose answer was lost with a connection, retried by Curator
        }
        final Registration left = Registration.parse(existing);
        if (null == token || token.isEmpty() || null == left || !token.equals(left.token()))
        {
            return WAIT;
        }
        try
        {
            client.delete().withVersion(stat.getVersion()).forPath(path);
        }
        catch (final KeeperException.NoNodeException | KeeperException.BadVersionException raced)
        {
            // gone or changed meanwhile: looked at again
        }
        return CREATE_AGAIN;
    }

    /**
     * Read what a host registered (see {@link #register(CuratorFramework, String, int, byte[], long)}), from
     * ZooKeeper now (not from a cache).
     *
     * @param client   a started Curator client (with the credentials the node's ACL asks for).
     * @param rootPath the cluster's root znode.
     * @param hostId   the host's id.
     * @return the data of the host's node, or null when the host is not registered.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read (or refuses these credentials).
     */
    public static byte[] hostData(final CuratorFramework client, final String rootPath, final int hostId)
    {
        final String path = hostPath(rootPath, hostId);
        try
        {
            return client.getData().forPath(path);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            return null;
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot read host " + hostId + " at " + path, ex);
        }
    }

    private static String hostPath(final String rootPath, final int hostId)
    {
        return rootPath + "/" + HOSTS + "/" + hostId;
    }

    @Override
    public void close()
    {
        cache.close();
    }
}
