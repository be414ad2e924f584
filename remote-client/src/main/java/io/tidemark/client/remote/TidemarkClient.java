package io.tidemark.client.remote;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.client.ClusterConnection;
import io.tidemark.client.ProducerException;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.DamagedZnodeException;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperCounters;
import io.tidemark.zookeeper.ZooKeeperGroupOffsets;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.SystemEpochClock;
import org.apache.curator.framework.CuratorFramework;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A client of replica hosts running in other processes ({@code io.tidemark.host.TidemarkHost}): it learns the
 * partitions (leader, epoch, ISR) and the hosts' endpoints and incarnations from ZooKeeper, sends produce and read
 * requests to the leaders over Aeron UDP, and hears the answers on an endpoint of its own. It is the
 * {@link ClusterConnection} of a {@link io.tidemark.client.Producer}, so sync, async, one-way and idempotent producing
 * work across processes as in one JVM; {@link #openReader} reads committed records, and {@link #commitOffset} /
 * {@link #committedOffset} keep a consumer group's position in ZooKeeper; {@link #createTopic} asks the controller for
 * a topic.
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
 * <p>
 * A façade over one part per concern: {@link ClusterMetadata} (the cluster as ZooKeeper shows it), {@link HostLinks}
 * (a link to each host's incarnation), {@link RemoteProduce}, {@link RemoteReads}, {@link TopicAdmin}, consumer
 * groups' offsets ({@link ZooKeeperGroupOffsets}), and the Aeron side: {@link ClientTransport} with the
 * {@link ReplyAgent} that runs its duty cycle.
 */
public final class TidemarkClient implements ClusterConnection, AutoCloseable
{
    /**
     * Embedded media drivers of clients live in {@code /dev/shm/tidemark-aeron-client-<pid>-<client id>} (the
     * temporary directory where there is no /dev/shm): about 47 MB each while the client runs, removed by its
     * close, and by the next client's start when a client was killed.
     */
    public static final String EMBEDDED_DIR_PREFIX = "tidemark-aeron-client-";

    private final ClientConfig config;
    private final String root;
    private final CuratorFramework zk;
    private final ZooKeeperGroupOffsets groupOffsets;
    private final EdgeCounters counters = new EdgeCounters("client");
    // the parts, package-private so that tests' fault drills (FaultDrills, in test sources) can build on them
    final ClusterMetadata metadata;
    final ClientTransport transport;
    final HostLinks links;
    final RemoteProduce produce;
    final RemoteReads reads;
    private final TopicAdmin topics;
    private volatile boolean closed;

    private TidemarkClient(final ClientConfig config)
    {
        this.config = config.validate();
        this.root = config.zooKeeper().rootPath();
        final long clientId = new SecureRandom().nextLong();
        final int clusterHash = GatewayMessages.clusterHash(config.clusterId());
        final ClusterSecret secret = config.secret();
        final System.Logger logger = System.getLogger(TidemarkClient.class.getName());
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
            ClusterRoot.checkClusterId(zk, root, config.clusterId());
            this.metadata = new ClusterMetadata(zk, root, config.zooKeeper().connectionTimeoutMs());
            opened.add(metadata);
            this.transport = new ClientTransport(config, clientId);
            opened.add(transport);
            this.links = new HostLinks(metadata, transport, config.transportMtu(), secret, clusterHash, clientId);
            this.produce = new RemoteProduce(metadata, links, config.requestMaxBytes());
            this.reads = new RemoteReads(metadata, links, config.requestTimeoutMs());
            this.topics = new TopicAdmin(zk, root, metadata);
            final ReplyAgent replyAgent = new ReplyAgent(transport, links, produce, reads, counters, secret,
                clusterHash, clientId);
            transport.start(replyAgent, replyAgent::onReply,
                (t) -> logger.log(System.Logger.Level.ERROR, "client", t));
        }
        catch (final RuntimeException ex)
        {
            for (int i = opened.size() - 1; i >= 0; i--)
            {
                CloseHelper.quietClose(opened.get(i));
            }
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

    @Override
    public int register(final ProduceListener listener)
    {
        return produce.register(listener);
    }

    @Override
    public void unregister(final int session)
    {
        produce.unregister(session);
    }

    @Override
    public ReplicationError send(final int session, final TopicPartition tp, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId,
        final short producerEpoch, final int baseSequence, final DirectBuffer records, final int length)
    {
        return produce.send(session, partitionId, correlationId, acks, timeoutMs, producerId, producerEpoch,
            baseSequence, records, length);
    }

    /** Gathers this thread's produce requests per host until {@link #flushSends} (see {@code RemoteProduce}). */
    @Override
    public void gatherSends()
    {
        produce.gatherSends();
    }

    @Override
    public void flushSends()
    {
        produce.flushSends();
    }

    /**
     * The embedded driver runs in this client's duty cycle (Aeron's INVOKER mode): on the reply agent's thread, and on
     * any thread that waits on the cluster, e.g. a producer in {@code AgentMode.INVOKER} waiting for a synchronous
     * send. Such a thread sends its request, then reads the answer off the socket itself: no thread hands the record
     * or its acknowledgement to another on this side (the synchronous one-record path). With nothing to do, it waits
     * in the kernel for the next datagram on the driver's sockets instead of spinning (see {@link ClientTransport}).
     *
     * @return one step of progress: run the driver and read the replies, or wait for them.
     */
    @Override
    public Runnable waitAction()
    {
        return new Runnable()
        {
            private long seenReplies;

            @Override
            public void run()
            {
                seenReplies = transport.progressOrWait(seenReplies);
            }
        };
    }

    @Override
    public long leaderInstance(final int partitionId)
    {
        return metadata.leaderInstance(partitionId);
    }

    @Override
    public boolean isGone(final long leaderInstance)
    {
        return metadata.isGone(leaderInstance);
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
        return metadata.partitions(topic);
    }

    /** @return the readable partitions of a topic, by partition number (damaged ones left out). */
    public List<PartitionState> knownPartitions(final String topic)
    {
        return metadata.knownPartitions(topic);
    }

    /** @return the partitions whose state in ZooKeeper is damaged, by id, with why. */
    public Map<Integer, String> damagedPartitions()
    {
        return metadata.damagedPartitions();
    }

    /** @return the names of every topic (with a readable partition, or recorded by the controller). */
    public List<String> topics()
    {
        return metadata.topics();
    }

    /** @return the registered hosts: id to endpoint. */
    public Map<Integer, String> hosts()
    {
        return metadata.hosts();
    }

    /**
     * @return the Kafka listeners the hosts registered ({@code kafka.listener}): host id to advertised
     *         {@code host:port}; hosts without one are absent.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public Map<Integer, String> kafkaListeners()
    {
        return ClusterRoot.kafkaListeners(zk, root);
    }

    /** @return the incarnation a host is registered with, or -1 when it is not registered. */
    public long incarnationOf(final int hostId)
    {
        final ClusterMetadata.HostInfo info = metadata.host(hostId);
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
        return topics.createTopic(topic, partitionCount, replicationFactor, timeoutMs);
    }

    /**
     * @return a reader of a partition's committed records, from its leader; one per thread.
     * @throws IllegalArgumentException for an unknown partition.
     */
    public RemoteReader openReader(final String topic, final int partition)
    {
        return reads.open(topic, partition);
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
        return metadata.partition(partitionId);
    }

    /** @return what this client dropped of the hosts' answers, by reason. */
    public EdgeCounters droppedMessages()
    {
        return counters;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        transport.stop();
        links.close();
        CloseHelper.quietCloseAll(transport, metadata, zk);
    }
}
