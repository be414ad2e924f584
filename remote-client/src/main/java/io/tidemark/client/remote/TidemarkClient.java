package io.tidemark.client.remote;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.logbuffer.Header;
import io.tidemark.aeron.AeronMedia;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameReader;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.aeron.ReplayWindow;
import io.tidemark.client.ClusterConnection;
import io.tidemark.client.ProducerErrorCode;
import io.tidemark.client.ProducerException;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.DamagedZnodeException;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperCounters;
import io.tidemark.zookeeper.ZooKeeperGroupOffsets;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.zookeeper.KeeperException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A client of replica hosts running in other processes (io.tidemark.host.TidemarkHost): it learns the partitions (leader,
 * epoch, ISR) and the hosts' endpoints and incarnations from ZooKeeper, sends produce and read requests to the
 * leaders over Aeron UDP, and hears the answers on an endpoint of its own. It is the {@link ClusterConnection} of a
 * {@link io.tidemark.client.Producer}, so sync, async, one-way and idempotent producing work across processes as
 * in one JVM; {@link #openReader} reads committed records, and {@link #commitOffset} / {@link #committedOffset} keep a
 * consumer group's position in ZooKeeper; {@link #createTopic} asks the controller for a topic.
 * <pre>{@code
 * try (TidemarkClient client = TidemarkClient.connect(ClientConfig.load(Path.of("client.properties")));
 *      Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL).idempotent(true)))
 * {
 *     producer.send(new ProducerRecord("orders", key, value));
 * }
 * }</pre>
 * The client introduces itself to every registered host (each incarnation of it) and waits for the host's answer, so
 * that a failover finds the new leader ready; a send to a host that has not answered yet returns BACK_PRESSURED,
 * which the producer retries. Thread-safe.
 */
public final class TidemarkClient implements ClusterConnection, AutoCloseable
{
    private static final long HELLO_INTERVAL_MS = 50;
    /**
     * Embedded media drivers of clients live in {@code /dev/shm/tidemark-aeron-client-<pid>-<client id>} (the
     * temporary directory where there is no /dev/shm): about 47 MB each while the client runs, removed by its
     * close, and by the next client's start when a client was killed.
     */
    public static final String EMBEDDED_DIR_PREFIX = "tidemark-aeron-client-";
    /** How often a client repeats its HELLO to a host that knows it, so that the host does not forget it. */
    static final long KEEPALIVE_MS = 5_000;

    private final ClientConfig config;
    private final String root;
    private final int clusterHash;
    private final long clientId = new SecureRandom().nextLong();
    private final CuratorFramework zk;
    private final ZooKeeperGroupOffsets groupOffsets;
    private final CuratorCache cache;
    private final AeronMedia media;
    private final Aeron aeron;
    private final Subscription replies;
    private final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH]);
    private final ClusterSecret secret;
    private final EdgeCounters counters = new EdgeCounters("client");
    private final AgentRunner runner;
    private final Map<Integer, PartitionState> partitions = new ConcurrentHashMap<>();
    /** Partitions whose znode could not be read, with why: their topic is refused. */
    private final Map<Integer, String> damaged = new ConcurrentHashMap<>();
    /** Each topic's partition ids as the controller recorded them: first id and count. */
    private final Map<String, int[]> topicIds = new ConcurrentHashMap<>();
    /** Topics whose creation request waits for the controller (not refused): their partitions are being created. */
    private final java.util.Set<String> creating = ConcurrentHashMap.newKeySet();
    /** The bounds the controller published: topic.partitions.max, host.replicas.max. */
    private volatile int[] limits = { DEFAULT_TOPIC_PARTITIONS_MAX, DEFAULT_HOST_REPLICAS_MAX };
    private static final int DEFAULT_TOPIC_PARTITIONS_MAX = new ReplicationContext().topicPartitionsMax();
    private static final int DEFAULT_HOST_REPLICAS_MAX = new ReplicationContext().hostReplicasMax();
    private static final int MAX_PARTITION_ID = 1 << 24;
    private final io.tidemark.replication.RateLimitedLog remoteLog =
        new io.tidemark.replication.RateLimitedLog(System.getLogger(TidemarkClient.class.getName()));
    private volatile PartitionState[] partitionsById = new PartitionState[0];
    private final Map<Integer, HostInfo> hosts = new ConcurrentHashMap<>();
    private final Map<Integer, HostLink> links = new ConcurrentHashMap<>();
    private final Map<Integer, ProduceListener> listeners = new ConcurrentHashMap<>();
    private final Long2ObjectHashMap<RemoteReader> pendingReads = new Long2ObjectHashMap<>();
    /** Held to run the embedded driver and poll the replies: by the reply agent, or by a thread that waits. */
    private final ReentrantLock progressLock = new ReentrantLock();
    private final FragmentAssembler replyAssembler;
    private final AtomicInteger nextSession = new AtomicInteger(1);
    private final ThreadLocal<UnsafeBuffer> produceHeader =
        ThreadLocal.withInitial(() -> new UnsafeBuffer(new byte[GatewayMessages.PRODUCE_RECORDS_OFFSET]));
    private final System.Logger logger = System.getLogger(TidemarkClient.class.getName());
    private volatile boolean closed;

    /** A host as registered in ZooKeeper. */
    private record HostInfo(long incarnation, String endpoint)
    {
    }

    /** This client's connection to one incarnation of a host. */
    private final class HostLink
    {
        final int hostId;
        final HostInfo info;
        final Publication gateway;
        final FrameWriter writer;
        /** Replay window of the host's answers; used by the reply agent only. */
        final ReplayWindow window = new ReplayWindow();
        volatile boolean ready;
        volatile long lastHelloMs;

        HostLink(final int hostId, final HostInfo info)
        {
            this.hostId = hostId;
            this.info = info;
            this.gateway = aeron.addPublication(io.tidemark.aeron.UdpChannels.publication(info.endpoint(),
                config.transportMtu()), GatewayMessages.GATEWAY_STREAM_ID);
            this.writer = new FrameWriter(secret, clusterHash, FrameDescriptor.CLIENT, clientId, 0,
                GatewayMessages.MAX_PREFIX_LENGTH);
        }

        /** Introduce this client: until the host answers, and every {@link #KEEPALIVE_MS} after (it forgets the idle). */
        void helloIfDue(final long now)
        {
            if (now - lastHelloMs >= (ready ? KEEPALIVE_MS : HELLO_INTERVAL_MS))
            {
                lastHelloMs = now;
                writer.offer(gateway, GatewayMessages.HELLO, hostId, info.incarnation(), hello, 0,
                    GatewayMessages.HELLO_LENGTH);
            }
        }

        void close()
        {
            if (ready)
            {
                writer.offer(gateway, GatewayMessages.GOODBYE, hostId, info.incarnation(), hello, 0, 0);
            }
            CloseHelper.quietClose(gateway);
        }
    }

    private TidemarkClient(final ClientConfig config)
    {
        this.config = config.validate();
        this.root = config.zooKeeper().rootPath();
        this.clusterHash = GatewayMessages.clusterHash(config.clusterId());
        this.secret = config.secret();
        if (!secret.authenticates())
        {
            logger.log(System.Logger.Level.WARNING, ClusterSettings.insecureWarning("this client"));
        }
        final List<AutoCloseable> opened = new ArrayList<>();
        try
        {
            this.zk = config.zooKeeper().connectClient();
            opened.add(zk);
            this.groupOffsets = new ZooKeeperGroupOffsets(zk, root);
            checkClusterId();
            this.cache = CuratorCache.build(zk, root);
            final CountDownLatch initialized = new CountDownLatch(1);
            cache.listenable().addListener(CuratorCacheListener.builder()
                .forCreatesAndChanges((before, node) -> onNode(node, true))
                .forDeletes((node) -> onNode(node, false))
                .forInitialized(initialized::countDown)
                .build());
            cache.start();
            opened.add(cache);
            if (!initialized.await(config.zooKeeper().connectionTimeoutMs(), TimeUnit.MILLISECONDS))
            {
                throw new ZooKeeperStoreException("cannot read the cluster state under " + root, null);
            }
            this.media = null == config.aeronDir() ?
                AeronMedia.launchEmbedded(embeddedDir(), AeronMedia.Profile.SHARED, null, true) :
                AeronMedia.connectExternal(config.aeronDir());
            opened.add(media);
            this.aeron = media.aeron();
            this.replies = aeron.addSubscription(io.tidemark.aeron.UdpChannels.subscription(config.endpoint(),
                config.transportMtu()), GatewayMessages.REPLY_STREAM_ID);
            opened.add(replies);
            encodeReplyAddress(resolveReplyChannel(replies));
            final ErrorHandler errorHandler = (t) -> logger.log(System.Logger.Level.ERROR, "client", t);
            final ReplyAgent replyAgent = new ReplyAgent();
            this.replyAssembler = new FragmentAssembler(replyAgent::onReply);
            // with the driver invoked, every empty cycle reads the sockets: spin little, park soon
            this.runner = new AgentRunner(media.invoked() ? new BackoffIdleStrategy(1, 1, 1_000, 100_000) :
                new BackoffIdleStrategy(100, 10, 1_000, 100_000), errorHandler, null, replyAgent);
            AgentRunner.startOnThread(runner);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            closeAll(opened);
            throw new ZooKeeperStoreException("interrupted while connecting", ex);
        }
        catch (final RuntimeException ex)
        {
            closeAll(opened);
            throw ex;
        }
    }

    /**
     * Connect to a cluster.
     *
     * @return the client.
     * @throws ConfigException         for a bad value, a cluster id other than the cluster's, or credentials
     *                                 ZooKeeper refuses.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be reached.
     */
    public static TidemarkClient connect(final ClientConfig config)
    {
        return new TidemarkClient(config);
    }

    private static void closeAll(final List<AutoCloseable> opened)
    {
        for (int i = opened.size() - 1; i >= 0; i--)
        {
            CloseHelper.quietClose(opened.get(i));
        }
    }

    /** The directory of this client's embedded media driver; those of killed clients are removed first. */
    private Path embeddedDir()
    {
        ClusterSettings.removeStaleAeronDirs(EMBEDDED_DIR_PREFIX);
        return ClusterSettings.embeddedAeronDir(EMBEDDED_DIR_PREFIX + ProcessHandle.current().pid() + "-" +
            Long.toHexString(clientId));
    }

    private String resolveReplyChannel(final Subscription subscription)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline)
        {
            final String resolved = subscription.tryResolveChannelEndpointPort();
            if (null != resolved)
            {
                return resolved;
            }
            if (media.invoke() == 0)
            {
                Thread.onSpinWait();
            }
        }
        throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "cannot bind " + config.endpoint());
    }

    /** Where the hosts answer, as a HELLO states it: the resolved address and port, never a channel string. */
    private void encodeReplyAddress(final String resolvedChannel)
    {
        final String endpoint = resolvedChannel.substring(resolvedChannel.indexOf("endpoint=") + 9).split("\\|")[0];
        final int colon = endpoint.lastIndexOf(':');
        final String host = endpoint.substring(0, colon).replace("[", "").replace("]", "");
        final java.net.InetAddress address;
        try
        {
            address = java.net.InetAddress.getByName(host); // a literal address: Aeron resolved it
        }
        catch (final java.net.UnknownHostException ex)
        {
            throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "cannot use " + endpoint + ": " + ex.getMessage());
        }
        if (address.isAnyLocalAddress() || address.isMulticastAddress())
        {
            throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "needs the address hosts can answer to, not " +
                address.getHostAddress());
        }
        GatewayMessages.encodeHello(address, Integer.parseInt(endpoint.substring(colon + 1)), hello);
    }

    private void checkClusterId()
    {
        final String path = root + "/" + ClusterZNodes.CLUSTER_ID;
        try
        {
            final String existing = new String(zk.getData().forPath(path), StandardCharsets.UTF_8);
            if (!existing.equals(config.clusterId()))
            {
                throw new ConfigException(ClientConfig.CLUSTER_ID, "ZooKeeper root " + root + " belongs to cluster '" +
                    existing + "', not '" + config.clusterId() + "'");
            }
        }
        catch (final KeeperException.NoNodeException ex)
        {
            throw new ConfigException(ClientConfig.CLUSTER_ID, "no cluster under ZooKeeper root " + root +
                " (no host has started there)");
        }
        catch (final KeeperException.NoAuthException ex)
        {
            throw new ConfigException(io.tidemark.zookeeper.ZooKeeperSettings.PASSWORD, "ZooKeeper refused access " +
                "to " + root + " for these credentials");
        }
        catch (final ConfigException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read " + path, ex);
        }
    }

    private void onNode(final ChildData node, final boolean present)
    {
        final String path = node.getPath();
        final String partitionsDir = root + "/" + ZooKeeperControllerStore.PARTITIONS + "/";
        final String hostsDir = root + "/" + ZooKeeperHostLiveness.HOSTS + "/";
        final String topicsDir = root + "/" + ClusterZNodes.TOPICS + "/";
        final String requestsDir = root + "/" + ClusterZNodes.CREATE_TOPIC + "/";
        try
        {
            if (path.startsWith(requestsDir) && path.indexOf('/', requestsDir.length()) < 0)
            {
                final String topic = path.substring(requestsDir.length());
                if (present && (null == node.getData() || !new String(node.getData(), StandardCharsets.UTF_8)
                    .startsWith(ClusterZNodes.REFUSED)))
                {
                    creating.add(topic);
                }
                else
                {
                    creating.remove(topic);
                }
                return;
            }
            if (path.startsWith(partitionsDir) && path.indexOf('/', partitionsDir.length()) < 0)
            {
                final int id = Integer.parseInt(path.substring(partitionsDir.length()));
                if (id < 0 || id > MAX_PARTITION_ID)
                {
                    throw new IllegalArgumentException("not a partition id");
                }
                if (present)
                {
                    try
                    {
                        final ByteBuffer in = ByteBuffer.wrap(null == node.getData() ? new byte[0] : node.getData());
                        final PartitionState decoded = PartitionStateCodec.decode(in);
                        if (decoded.partitionId() != id || in.hasRemaining())
                        {
                            throw new IllegalArgumentException("claims partition " + decoded.partitionId() +
                                (in.hasRemaining() ? ", with trailing bytes" : ""));
                        }
                        final PartitionState state = new PartitionState(decoded.partitionId(),
                            decoded.topicPartition(), decoded.assignedReplicas(), decoded.isr(), decoded.eligible(),
                            decoded.recovering(), decoded.leader(), decoded.leaderEpoch(), node.getStat().getVersion());
                        damaged.remove(id);
                        partitions.put(id, state);
                    }
                    catch (final RuntimeException ex)
                    {
                        // damaged: the partition's topic is refused (partitions(topic)) until it is repaired
                        damaged.put(id, ex.getMessage());
                        partitions.remove(id);
                        remoteLog.log(System.Logger.Level.WARNING, "client damaged-partition", "partition state " +
                            path + " is damaged (" + ex.getMessage() + "): its topic is refused until it is repaired");
                    }
                    publishPartitions();
                }
                else
                {
                    damaged.remove(id);
                    partitions.remove(id);
                    publishPartitions();
                }
            }
            else if (path.startsWith(topicsDir) && path.indexOf('/', topicsDir.length()) < 0)
            {
                final String topic = path.substring(topicsDir.length());
                if (present && null != node.getData())
                {
                    final String[] parts = new String(node.getData(), StandardCharsets.UTF_8).trim().split(":");
                    topicIds.put(topic, new int[]{ Integer.parseInt(parts[0]), Integer.parseInt(parts[1]) });
                }
                else if (!present)
                {
                    topicIds.remove(topic);
                }
            }
            else if (path.equals(root + "/" + ClusterZNodes.LIMITS) && present && null != node.getData())
            {
                final java.util.Properties published = new java.util.Properties();
                published.load(new java.io.StringReader(new String(node.getData(), StandardCharsets.UTF_8)));
                limits = new int[]{
                    Integer.parseInt(published.getProperty(ReplicationContext.TOPIC_PARTITIONS_MAX,
                        Integer.toString(limits[0])).trim()),
                    Integer.parseInt(published.getProperty(ReplicationContext.HOST_REPLICAS_MAX,
                        Integer.toString(limits[1])).trim())};
            }
            else if (path.startsWith(hostsDir) && path.indexOf('/', hostsDir.length()) < 0)
            {
                final int id = Integer.parseInt(path.substring(hostsDir.length()));
                if (id < 0 || id >= PartitionState.MAX_HOSTS)
                {
                    throw new IllegalArgumentException("host id outside [0, " + PartitionState.MAX_HOSTS + ")");
                }
                final ZooKeeperHostLiveness.Registration registration = present ?
                    ZooKeeperHostLiveness.Registration.parse(node.getData()) : null;
                if (null != registration)
                {
                    hosts.put(id, new HostInfo(registration.incarnation(), registration.endpoint()));
                }
                else if (!present)
                {
                    hosts.remove(id);
                }
            }
        }
        catch (final RuntimeException | java.io.IOException ex)
        {
            remoteLog.log(System.Logger.Level.WARNING, "client unreadable-znode", "ignoring unreadable znode " + path +
                ": " + ex);
        }
    }

    /** Rebuild the by-id array from the map (on a ZooKeeper change: rare), so that lookups do not box. */
    private synchronized void publishPartitions()
    {
        final int size = partitions.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
        final PartitionState[] next = new PartitionState[size];
        partitions.forEach((id, state) -> next[id] = state);
        partitionsById = next;
    }

    /** @return the partition state last seen, or null; allocation-free (the producer's path). */
    private PartitionState partition(final int partitionId)
    {
        final PartitionState[] current = partitionsById;
        return partitionId >= 0 && partitionId < current.length ? current[partitionId] : null;
    }

    /** @return the link to the current incarnation of a host, or null when it is not registered. */
    private HostLink linkTo(final int hostId)
    {
        final HostInfo info = hosts.get(hostId);
        HostLink link = links.get(hostId);
        if (null == info)
        {
            return null;
        }
        if (null == link || !link.info.equals(info))
        {
            synchronized (links)
            {
                link = links.get(hostId);
                if (null == link || !link.info.equals(info))
                {
                    if (null != link)
                    {
                        link.close();
                    }
                    link = new HostLink(hostId, info);
                    links.put(hostId, link);
                }
            }
        }
        return link;
    }

    @Override
    public int register(final ProduceListener listener)
    {
        final int session = nextSession.getAndIncrement();
        if (session >= 1 << 15)
        {
            throw new IllegalStateException("more than 32767 producer sessions on one client");
        }
        listeners.put(session, listener);
        return session;
    }

    @Override
    public void unregister(final int session)
    {
        listeners.remove(session);
    }

    @Override
    public ReplicationError send(final int session, final TopicPartition tp, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int length)
    {
        if (length > config.requestMaxBytes())
        {
            return ReplicationError.INVALID_RECORDS;
        }
        final PartitionState state = partition(partitionId);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        return sendVia(linkTo(state.leader()), session, partitionId, correlationId, acks, timeoutMs, producerId,
            producerEpoch, baseSequence, records, length);
    }

    /**
     * Send a produce request to a given host, whatever the partition state says (fault drills: a request to a
     * deposed leader).
     */
    ReplicationError sendTo(final int hostId, final int session, final int partitionId, final long correlationId,
        final int acks, final int timeoutMs, final DirectBuffer records, final int length)
    {
        return sendVia(linkTo(hostId), session, partitionId, correlationId, acks, timeoutMs, -1, (short)-1, -1,
            records, length);
    }

    private ReplicationError sendVia(final HostLink link, final int session, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int length)
    {
        if (null == link)
        {
            return ReplicationError.LEADER_NOT_AVAILABLE;
        }
        if (!link.ready)
        {
            link.helloIfDue(System.currentTimeMillis());
            return ReplicationError.BACK_PRESSURED;
        }
        final UnsafeBuffer header = produceHeader.get();
        header.putInt(GatewayMessages.PRODUCE_PARTITION_OFFSET, partitionId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_ACKS_OFFSET, acks, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_TIMEOUT_OFFSET, timeoutMs, GatewayMessages.ORDER);
        header.putShort(GatewayMessages.PRODUCE_EPOCH_OFFSET, producerEpoch, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_PRODUCER_ID_OFFSET, producerId, GatewayMessages.ORDER);
        header.putInt(GatewayMessages.PRODUCE_SEQUENCE_OFFSET, baseSequence, GatewayMessages.ORDER);
        header.putLong(GatewayMessages.PRODUCE_CORRELATION_OFFSET,
            GatewayMessages.wireCorrelation(session, correlationId), GatewayMessages.ORDER);
        final long result = link.writer.offer(link.gateway, GatewayMessages.PRODUCE, link.hostId,
            link.info.incarnation(), header, 0, GatewayMessages.PRODUCE_RECORDS_OFFSET, records, 0, length);
        if (result > 0)
        {
            return ReplicationError.NONE;
        }
        if (result == FrameWriter.TOO_LONG)
        {
            return ReplicationError.INVALID_RECORDS;
        }
        return result == Publication.NOT_CONNECTED ? ReplicationError.LEADER_NOT_AVAILABLE :
            ReplicationError.BACK_PRESSURED;
    }

    /**
     * The embedded driver runs in this client's duty cycle (Aeron's INVOKER mode): on the reply agent's thread, and on
     * any thread that waits on the cluster, e.g. a producer in {@code AgentMode.INVOKER} waiting for a synchronous
     * send. Such a thread sends its request, then reads the answer off the socket itself: no thread hands the record
     * or its acknowledgement to another on this side (the synchronous one-record path).
     *
     * @return one step of progress: run the driver and read the replies, unless another thread is doing it.
     */
    @Override
    public Runnable waitAction()
    {
        return this::progress;
    }

    /** @return work done: the driver's and the replies read (0 when another thread is making progress). */
    private int progress()
    {
        if (!progressLock.tryLock())
        {
            Thread.onSpinWait();
            return 0;
        }
        try
        {
            return media.invoke() + replies.poll(replyAssembler, 64);
        }
        finally
        {
            progressLock.unlock();
        }
    }

    @Override
    public long leaderInstance(final int partitionId)
    {
        final PartitionState state = partition(partitionId);
        if (null == state || state.leader() == PartitionState.NO_LEADER)
        {
            return NO_LEADER;
        }
        final HostInfo info = hosts.get(state.leader());
        return null == info ? NO_LEADER : instanceOf(state.leader(), info.incarnation());
    }

    private static long instanceOf(final int hostId, final long incarnation)
    {
        return ((long)hostId << 48) | (incarnation & 0xFFFF_FFFF_FFFFL);
    }

    @Override
    public boolean isGone(final long leaderInstance)
    {
        if (leaderInstance == NO_LEADER)
        {
            return false;
        }
        final int hostId = (int)(leaderInstance >>> 48);
        final HostInfo info = hosts.get(hostId);
        return null == info || instanceOf(hostId, info.incarnation()) != leaderInstance;
    }

    /**
     * {@inheritDoc}
     *
     * @throws ProducerException DAMAGED_METADATA when a partition of the topic has a damaged state in ZooKeeper (or is
     *                           missing): the topic is refused rather than served with fewer partitions, which would
     *                           send keyed records to other partitions than before.
     */
    @Override
    public List<PartitionState> partitions(final String topic)
    {
        final List<PartitionState> states = knownPartitions(topic);
        final String damage = damage(topic, states);
        if (null != damage)
        {
            if (inCreation(topic))
            {
                return List.of(); // not there yet: as for a topic that does not exist
            }
            throw new ProducerException(ProducerErrorCode.DAMAGED_METADATA, ReplicationError.NONE, null, false, "topic " +
                topic + " is refused: " +
                damage + " (repair: tidemark partition repair)");
        }
        return states;
    }

    /**
     * @return whether the topic's recorded partitions are only missing, none damaged, because they are being
     *         created: its creation request still waits, or the missing znodes exist in ZooKeeper and this client's
     *         view has not caught up with them (the controller records a topic's ids before it creates them and
     *         deletes the request after).
     */
    private boolean inCreation(final String topic)
    {
        final int[] ids = topicIds.get(topic);
        if (null == ids)
        {
            return false;
        }
        for (int id = ids[0]; id < ids[0] + ids[1]; id++)
        {
            if (damaged.containsKey(id))
            {
                return false;
            }
        }
        if (creating.contains(topic))
        {
            return true;
        }
        try
        {
            for (int id = ids[0]; id < ids[0] + ids[1]; id++)
            {
                if (null == partition(id) &&
                    null == zk.checkExists().forPath(root + "/" + ZooKeeperControllerStore.PARTITIONS + "/" + id))
                {
                    return false;
                }
            }
            return true;
        }
        catch (final Exception ex)
        {
            return false;
        }
    }

    /** @return the readable partitions of a topic, by partition number (damaged ones left out). */
    public List<PartitionState> knownPartitions(final String topic)
    {
        return partitions.values().stream().filter((s) -> s.topicPartition().topic().equals(topic))
            .sorted(Comparator.comparingInt((PartitionState s) -> s.topicPartition().partition())).toList();
    }

    /** @return the partitions whose state in ZooKeeper is damaged, by id, with why. */
    public Map<Integer, String> damagedPartitions()
    {
        return new java.util.TreeMap<>(damaged);
    }

    /**
     * @return why a topic is damaged (a partition of its recorded ids damaged or missing, a gap in its partition
     *         numbers, a damaged partition beside its ids), or null when it is whole.
     */
    private String damage(final String topic, final List<PartitionState> states)
    {
        final int[] ids = topicIds.get(topic);
        if (null != ids)
        {
            for (int id = ids[0]; id < ids[0] + ids[1]; id++)
            {
                final PartitionState state = partition(id);
                if (damaged.containsKey(id) || null == state || !state.topicPartition().topic().equals(topic))
                {
                    return "partition id " + id + " of its " + ids[1] + " is " + (damaged.containsKey(id) ?
                        "damaged (" + damaged.get(id) + ")" : "missing");
                }
            }
            return null;
        }
        // a topic from before ids were recorded: its ids are contiguous and its numbers 0..n-1
        for (int i = 0; i < states.size(); i++)
        {
            if (states.get(i).topicPartition().partition() != i)
            {
                return "partition " + i + " is missing";
            }
        }
        for (final PartitionState state : states)
        {
            for (final int id : new int[]{ state.partitionId() - 1, state.partitionId() + 1 })
            {
                if (damaged.containsKey(id) && !recorded(id))
                {
                    return "partition id " + id + " beside its ids is damaged and may be one of its partitions";
                }
            }
        }
        return null;
    }

    /** @return whether a partition id belongs to a topic whose ids the controller recorded. */
    private boolean recorded(final int partitionId)
    {
        for (final int[] ids : topicIds.values())
        {
            if (partitionId >= ids[0] && partitionId < ids[0] + ids[1])
            {
                return true;
            }
        }
        return false;
    }

    /** @return the names of every topic (with a readable partition, or recorded by the controller). */
    public List<String> topics()
    {
        return java.util.stream.Stream.concat(partitions.values().stream().map((s) -> s.topicPartition().topic()),
            topicIds.keySet().stream()).distinct().sorted().toList();
    }

    /** @return the registered hosts: id to endpoint. */
    public Map<Integer, String> hosts()
    {
        final Map<Integer, String> endpoints = new java.util.TreeMap<>();
        hosts.forEach((id, info) -> endpoints.put(id, info.endpoint()));
        return endpoints;
    }

    /**
     * @return the Kafka listeners the hosts registered ({@code kafka.listener}): host id to advertised
     *         {@code host:port}; hosts without one are absent.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public Map<Integer, String> kafkaListeners()
    {
        final Map<Integer, String> listeners = new java.util.TreeMap<>();
        final String dir = root + "/" + ClusterZNodes.KAFKA_BROKERS;
        try
        {
            for (final String child : zk.getChildren().forPath(dir))
            {
                try
                {
                    listeners.put(Integer.parseInt(child), new String(zk.getData().forPath(dir + "/" + child),
                        StandardCharsets.UTF_8));
                }
                catch (final KeeperException.NoNodeException | NumberFormatException ex)
                {
                    // gone meanwhile, or not a host's node
                }
            }
        }
        catch (final KeeperException.NoNodeException ex)
        {
            return listeners;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the Kafka listeners under " + dir, ex);
        }
        return listeners;
    }

    /** @return the incarnation a host is registered with, or -1 when it is not registered. */
    public long incarnationOf(final int hostId)
    {
        final HostInfo info = hosts.get(hostId);
        return null == info ? -1 : info.incarnation();
    }

    @Override
    public long allocateProducerId()
    {
        return ZooKeeperCounters.incrementAndGet(zk, root + "/" + ZooKeeperControllerStore.PRODUCER_IDS) - 1;
    }

    @Override
    public int maxRequestBytes()
    {
        return config.requestMaxBytes();
    }

    @Override
    public EpochClock epochClock()
    {
        return SystemEpochClock.INSTANCE;
    }

    /**
     * Ask the controller for a topic and wait until every partition has a leader.
     *
     * @param topic             its name.
     * @param partitionCount    number of partitions.
     * @param replicationFactor replicas of each partition, at most the number of registered hosts.
     * @param timeoutMs         how long to wait.
     * @return the partitions' states.
     * @throws IllegalArgumentException when the topic exists or the controller refused the request (the reason).
     * @throws IllegalStateException    when no controller carried it out in time.
     */
    public List<PartitionState> createTopic(final String topic, final int partitionCount,
        final int replicationFactor, final long timeoutMs)
    {
        if (null == topic || !topic.matches("[A-Za-z0-9._-]{1,200}"))
        {
            throw new IllegalArgumentException("topic names are 1 to 200 of A-Z a-z 0-9 . _ -: '" + topic + "'");
        }
        if (partitionCount < 1 || replicationFactor < 1)
        {
            throw new IllegalArgumentException("need at least one partition and one replica");
        }
        if (timeoutMs < 1 || timeoutMs > ReplicationContext.MAX_TIMEOUT_MS)
        {
            throw new IllegalArgumentException("timeout must be in [1, " + ReplicationContext.MAX_TIMEOUT_MS + "] ms: " +
                timeoutMs);
        }
        if (!knownPartitions(topic).isEmpty() || topicIds.containsKey(topic))
        {
            throw new IllegalArgumentException("topic exists: " + topic);
        }
        checkBounds(partitionCount, replicationFactor);
        final String path = ClusterZNodes.requestTopic(zk, root, topic, partitionCount, replicationFactor);
        final long deadline = System.currentTimeMillis() + timeoutMs;
        while (System.currentTimeMillis() < deadline)
        {
            final List<PartitionState> states = partitions(topic);
            if (states.size() == partitionCount &&
                states.stream().allMatch((s) -> s.leader() != PartitionState.NO_LEADER))
            {
                return states;
            }
            final String refusal = ClusterZNodes.takeRefusal(zk, path);
            if (null != refusal)
            {
                throw new IllegalArgumentException("the controller refused topic " + topic + ": " + refusal);
            }
            sleep(20);
        }
        throw new IllegalStateException("topic " + topic + " was not created within " + timeoutMs + " ms (is a " +
            "controller running?)");
    }

    /**
     * The bounds the controller enforces, checked here first (the controller checks again): at most
     * {@code topic.partitions.max} partitions, and no registered host above {@code host.replicas.max} replicas once
     * the topic's are spread over them.
     */
    private void checkBounds(final int partitionCount, final int replicationFactor)
    {
        final int[] bounds = limits;
        if (partitionCount > bounds[0])
        {
            throw new IllegalArgumentException(partitionCount + " partitions is more than the cluster's " +
                ReplicationContext.TOPIC_PARTITIONS_MAX + "=" + bounds[0]);
        }
        final int hostCount = hosts.size();
        if (hostCount > 0 && replicationFactor <= hostCount)
        {
            final Map<Integer, Integer> held = new java.util.HashMap<>();
            partitions.values().forEach((s) -> Arrays.stream(s.assignedReplicas()).forEach((h) -> held.merge(h, 1,
                Integer::sum)));
            final long added = (long)partitionCount * replicationFactor;
            final long most = held.values().stream().mapToLong(Integer::longValue).max().orElse(0) +
                (added + hostCount - 1) / hostCount;
            if (most > bounds[1])
            {
                throw new IllegalArgumentException("the topic's " + added + " replicas would put more than the " +
                    "cluster's " + ReplicationContext.HOST_REPLICAS_MAX + "=" + bounds[1] + " replicas on a host");
            }
        }
    }

    /**
     * @return a reader of a partition's committed records, from its leader; one per thread.
     * @throws IllegalArgumentException for an unknown partition.
     */
    public RemoteReader openReader(final String topic, final int partition)
    {
        for (final PartitionState state : knownPartitions(topic))
        {
            if (state.topicPartition().partition() == partition)
            {
                return new RemoteReader(this, state.partitionId(), state.topicPartition(),
                    config.requestTimeoutMs());
            }
        }
        throw new IllegalArgumentException("unknown partition " + topic + "-" + partition);
    }

    /**
     * Commit a consumer group's position in a partition: the next offset the group will read. Stored durably in
     * ZooKeeper under {@code <root>/consumer-offsets/<group>/<topic>-<partition>} (protected by the cluster's
     * digest ACL); the last commit wins.
     *
     * @throws IllegalArgumentException for a group name outside 1 to 200 of A-Z a-z 0-9 . _ -, or a negative offset.
     * @throws ZooKeeperStoreException  when ZooKeeper cannot be written.
     */
    public void commitOffset(final String group, final String topic, final int partition, final long offset)
    {
        groupOffsets.commit(group, new TopicPartition(topic, partition), offset, -1);
    }

    /**
     * @return the consumer group's committed position in the partition, or -1 when it has committed none.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read, or (a {@link DamagedZnodeException}) the stored
     *                                 value is not an offset.
     */
    public long committedOffset(final String group, final String topic, final int partition)
    {
        final ZooKeeperGroupOffsets.Committed committed =
            groupOffsets.read(group, new TopicPartition(topic, partition));
        return null == committed ? -1 : committed.offset();
    }

    /** @return the partition state last seen in ZooKeeper, or null. */
    public PartitionState state(final int partitionId)
    {
        return partition(partitionId);
    }

    /** Send a read request to a partition's leader; the answer goes to {@code reader}. */
    boolean sendRead(final RemoteReader reader, final int partitionId, final long offset, final int maxBytes,
        final long correlationId)
    {
        final PartitionState state = partition(partitionId);
        final HostLink link = null == state || state.leader() == PartitionState.NO_LEADER ? null :
            linkTo(state.leader());
        if (null == link)
        {
            return false;
        }
        if (!link.ready)
        {
            link.helloIfDue(System.currentTimeMillis());
            return false;
        }
        final UnsafeBuffer request = new UnsafeBuffer(new byte[GatewayMessages.READ_LENGTH]);
        request.putInt(GatewayMessages.READ_PARTITION_OFFSET, partitionId, GatewayMessages.ORDER);
        request.putInt(GatewayMessages.READ_MAX_BYTES_OFFSET, maxBytes, GatewayMessages.ORDER);
        request.putLong(GatewayMessages.READ_OFFSET_OFFSET, offset, GatewayMessages.ORDER);
        request.putLong(GatewayMessages.READ_CORRELATION_OFFSET, correlationId, GatewayMessages.ORDER);
        synchronized (pendingReads)
        {
            pendingReads.put(correlationId, reader);
        }
        if (link.writer.offer(link.gateway, GatewayMessages.READ, link.hostId, link.info.incarnation(), request, 0,
            GatewayMessages.READ_LENGTH) > 0)
        {
            return true;
        }
        forgetRead(correlationId);
        return false;
    }

    void forgetRead(final long correlationId)
    {
        synchronized (pendingReads)
        {
            pendingReads.remove(correlationId);
        }
    }

    private static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", ex);
        }
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        CloseHelper.quietClose(runner);
        for (final HostLink link : links.values())
        {
            link.close();
        }
        for (int i = 0; i < 10; i++)
        {
            media.invoke(); // an invoked driver sends the goodbyes now: no thread of its own would
        }
        CloseHelper.quietCloseAll(replies, media, cache, zk);
    }

    /**
     * Hears the hosts' answers, each checked as a frame from the host's registered incarnation to this client, new
     * in its sequence; introduces this client to hosts that have not answered yet and repeats the introduction to the
     * others every {@link #KEEPALIVE_MS}.
     */
    private final class ReplyAgent implements Agent
    {
        // used under the progress lock only (onReply runs inside progress())
        private final FrameReader reader = new FrameReader(secret, clusterHash);
        private long nextHelloCheckMs;

        @Override
        public int doWork()
        {
            int work = progress();
            final long now = System.currentTimeMillis();
            if (now >= nextHelloCheckMs)
            {
                nextHelloCheckMs = now + HELLO_INTERVAL_MS;
                // every registered host, not only today's leaders: a failover then finds the link ready
                for (final Integer hostId : hosts.keySet())
                {
                    final HostLink link = linkTo(hostId);
                    if (null != link)
                    {
                        final long before = link.lastHelloMs;
                        link.helloIfDue(now);
                        work += link.lastHelloMs != before ? 1 : 0;
                    }
                }
            }
            return work;
        }

        private void drop(final EdgeCounters.Reason reason, final long sender)
        {
            counters.drop(EdgeCounters.Stream.REPLY, reason, sender, null);
        }

        private void onReply(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            final EdgeCounters.Reason refused = reader.verify(buffer, offset, length,
                GatewayMessages.REPLY_STREAM_ID);
            if (null != refused)
            {
                drop(refused, -1);
                return;
            }
            final long sender = reader.senderId();
            final HostLink link = reader.senderKind() == FrameDescriptor.HOST && sender >= 0 &&
                sender < PartitionState.MAX_HOSTS ? links.get((int)sender) : null;
            if (null == link)
            {
                drop(EdgeCounters.Reason.UNKNOWN_SENDER, sender);
                return;
            }
            if (reader.senderEpoch() != link.info.incarnation())
            {
                drop(EdgeCounters.Reason.STALE_SENDER, sender);
                return;
            }
            if (reader.receiverId() != FrameDescriptor.CLIENT_RECEIVER || reader.receiverEpoch() != clientId)
            {
                drop(EdgeCounters.Reason.WRONG_RECEIVER, sender);
                return;
            }
            if (!link.window.accept(reader.senderEpoch(), reader.sequence()))
            {
                drop(EdgeCounters.Reason.REPLAYED, sender);
                return;
            }
            final int type = reader.type();
            final int at = reader.payloadOffset();
            final int payloadLength = reader.payloadLength();
            if (type == GatewayMessages.PRODUCE_RESULT && payloadLength == GatewayMessages.PRODUCE_RESULT_LENGTH)
            {
                final long wire = buffer.getLong(at + GatewayMessages.RESULT_CORRELATION_OFFSET,
                    GatewayMessages.ORDER);
                final ProduceListener listener = listeners.get(GatewayMessages.sessionOf(wire));
                final PartitionState state = partition(buffer.getInt(
                    at + GatewayMessages.RESULT_PARTITION_OFFSET, GatewayMessages.ORDER));
                final ReplicationError error = ReplicationError.fromCode(
                    buffer.getInt(at + GatewayMessages.RESULT_ERROR_OFFSET, GatewayMessages.ORDER));
                if (null != listener && null != error)
                {
                    listener.onComplete(null == state ? null : state.topicPartition(),
                        GatewayMessages.correlationOf(wire),
                        buffer.getLong(at + GatewayMessages.PRODUCE_RESULT_BASE_OFFSET, GatewayMessages.ORDER),
                        error);
                }
            }
            else if (type == GatewayMessages.READ_RESULT && payloadLength >= GatewayMessages.READ_RESULT_BATCHES_OFFSET)
            {
                final long correlationId = buffer.getLong(at + GatewayMessages.RESULT_CORRELATION_OFFSET,
                    GatewayMessages.ORDER);
                final RemoteReader remote;
                synchronized (pendingReads)
                {
                    remote = pendingReads.remove(correlationId);
                }
                if (null != remote)
                {
                    remote.onResult(correlationId, buffer, at, payloadLength);
                }
            }
            else if (type == GatewayMessages.HELLO_ACK && payloadLength == GatewayMessages.HELLO_ACK_LENGTH)
            {
                link.writer.senderEpoch(buffer.getLong(at + GatewayMessages.HELLO_ACK_TOKEN_OFFSET,
                    GatewayMessages.ORDER));
                link.ready = true;
            }
            else
            {
                drop(EdgeCounters.Reason.MALFORMED, sender);
            }
        }

        @Override
        public String roleName()
        {
            return "tidemark-client";
        }
    }

    /** @return what this client dropped of the hosts' answers, by reason. */
    public EdgeCounters droppedMessages()
    {
        return counters;
    }

}
