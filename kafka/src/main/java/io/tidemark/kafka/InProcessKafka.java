package io.tidemark.kafka;

import io.tidemark.client.Consumer;
import io.tidemark.client.OffsetStore;
import io.tidemark.replication.LeaderPartitions;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicaHost;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.TopicPartition;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Kafka listeners in front of an in-process {@link ReplicationCluster}: one listener (one broker, one port) per
 * replica host, so that Kafka clients see the cluster's hosts as brokers and send each partition's requests to the
 * host that leads it, as they would across machines. The listeners share one group coordinator, and groups' committed
 * offsets are the clients' offset files ({@code consumer-offsets} beside the hosts' directories), the same that
 * Tidemark's own {@link Consumer} reads and writes.
 * <pre>{@code
 * try (ReplicationCluster cluster = ReplicationCluster.start(dir, 3, new ReplicationContext());
 *      InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
 * {
 *     Properties props = new Properties();
 *     props.put("bootstrap.servers", kafka.bootstrapServers());
 *     ...
 * }
 * }</pre>
 * With a port of 0 each listener takes a free port; with a fixed port P, host h listens on P + h. A host that is
 * stopped or killed ({@link ReplicationCluster#stopHost}) answers NOT_LEADER_OR_FOLLOWER and leaves the metadata
 * until it runs again; {@link #stopBroker}/{@link #startBroker} also close and reopen its port. Thread-safe.
 */
public final class InProcessKafka implements AutoCloseable
{
    private final ReplicationCluster cluster;
    private final KafkaContext ctx;
    private final AtomicReferenceArray<KafkaListener> listeners;
    private final int[] ports;
    private final GroupCoordinator coordinator;
    private final Metadata metadata;
    private final Admin admin;
    private final ErrorHandler errorHandler;
    private final System.Logger logger = System.getLogger(InProcessKafka.class.getName());

    private InProcessKafka(final ReplicationCluster cluster, final KafkaContext ctx)
    {
        this.cluster = cluster;
        this.ctx = ctx.clone().validate();
        this.listeners = new AtomicReferenceArray<>(cluster.hostCount());
        this.ports = new int[cluster.hostCount()];
        this.metadata = new Metadata();
        this.admin = new Admin();
        this.coordinator = new GroupCoordinator(this.ctx, new OffsetFiles(Consumer.defaultOffsetsDir(cluster)), true);
        this.errorHandler = (t) -> logger.log(System.Logger.Level.ERROR, "kafka listener", t);
        try
        {
            for (int id = 0; id < cluster.hostCount(); id++)
            {
                ports[id] = this.ctx.port() == 0 ? 0 : this.ctx.port() + id;
                startBroker(id);
            }
        }
        catch (final RuntimeException ex)
        {
            close();
            throw ex;
        }
    }

    /**
     * Open a Kafka listener for every host of the cluster.
     *
     * @param cluster the cluster.
     * @param ctx     listener configuration (its port is host 0's, or 0 for free ports).
     * @return the listeners, running.
     */
    public static InProcessKafka start(final ReplicationCluster cluster, final KafkaContext ctx)
    {
        return new InProcessKafka(cluster, ctx);
    }

    /** @return {@code host:port,host:port,...} of the open listeners, for {@code bootstrap.servers}. */
    public String bootstrapServers()
    {
        final List<String> servers = new ArrayList<>();
        for (final KafkaBroker broker : metadata.brokers())
        {
            servers.add(broker.host() + ":" + broker.port());
        }
        return String.join(",", servers);
    }

    /** @return the listener of a host, or null while it is stopped. */
    public KafkaListener listener(final int hostId)
    {
        return listeners.get(hostId);
    }

    /** Close a host's listener (as if its process died): clients' connections to it break. */
    public synchronized void stopBroker(final int hostId)
    {
        final KafkaListener listener = listeners.getAndSet(hostId, null);
        CloseHelper.quietClose(listener);
    }

    /** Open a host's listener again, on the port it had. */
    public synchronized void startBroker(final int hostId)
    {
        if (null != listeners.get(hostId))
        {
            return;
        }
        final KafkaContext hostCtx = ctx.clone().listener(ctx.host() + ":" + ports[hostId]);
        final KafkaListener listener = KafkaListener.start(hostCtx, hostId, metadata, () -> partitionsOf(hostId),
            cluster.sessions(), coordinator, admin, errorHandler);
        ports[hostId] = listener.port();
        listeners.set(hostId, listener);
    }

    private LeaderPartitions partitionsOf(final int hostId)
    {
        final ReplicaHost host = cluster.host(hostId);
        return null == host ? null : host.leaderPartitions();
    }

    @Override
    public synchronized void close()
    {
        for (int id = 0; id < listeners.length(); id++)
        {
            stopBroker(id);
        }
    }

    /** The cluster as Kafka clients see it: hosts that run and have an open listener are the brokers. */
    private final class Metadata implements ClusterMetadata
    {
        private final String clusterId = "tidemark-in-process";

        @Override
        public String clusterId()
        {
            return clusterId;
        }

        @Override
        public List<KafkaBroker> brokers()
        {
            final List<KafkaBroker> brokers = new ArrayList<>();
            for (int id = 0; id < listeners.length(); id++)
            {
                final KafkaListener listener = listeners.get(id);
                if (null != listener && null != cluster.host(id))
                {
                    brokers.add(listener.advertised());
                }
            }
            return brokers;
        }

        @Override
        public int controllerId()
        {
            return coordinatorId();
        }

        @Override
        public int coordinatorId()
        {
            final List<KafkaBroker> brokers = brokers();
            return brokers.isEmpty() ? -1 : brokers.get(0).id();
        }

        @Override
        public Collection<PartitionState> partitions()
        {
            return Arrays.asList(cluster.controller().partitions());
        }

        @Override
        public Map<String, String> topicConfigs()
        {
            return ClusterMetadata.topicConfigsOf(cluster.context());
        }
    }

    /** Topic creation by the in-process controller; producer ids from it. */
    private final class Admin implements TopicAdmin
    {
        @Override
        public void createTopic(final String topic, final int partitions, final int replicationFactor,
            final long timeoutMs)
        {
            synchronized (InProcessKafka.this)
            {
                if (KafkaTopics.exists(metadata.partitions(), topic))
                {
                    throw new IllegalArgumentException("topic exists: " + topic);
                }
                cluster.createTopic(topic, partitions, replicationFactor);
            }
            if (!cluster.awaitLeaders(topic, timeoutMs))
            {
                throw new IllegalStateException("topic " + topic + " has no leader for every partition after " +
                    timeoutMs + " ms");
            }
        }

        @Override
        public int hostCount()
        {
            return cluster.hostCount();
        }

        @Override
        public long allocateProducerId()
        {
            return cluster.allocateProducerId();
        }
    }

    /** Groups' committed offsets in the clients' offset files. */
    private static final class OffsetFiles implements GroupOffsetStore
    {
        private final Path dir;
        private final Map<String, OffsetStore> stores = new ConcurrentHashMap<>();

        OffsetFiles(final Path dir)
        {
            this.dir = dir;
        }

        private OffsetStore store(final String group)
        {
            if (!KafkaTopics.validName(group))
            {
                throw new IllegalArgumentException("group ids are 1 to 200 of A-Z a-z 0-9 . _ - here: " + group);
            }
            return stores.computeIfAbsent(group, (g) -> new OffsetStore(dir, g));
        }

        @Override
        public void commit(final String group, final TopicPartition partition, final long offset,
            final int leaderEpoch)
        {
            try
            {
                store(group).write(partition, offset, leaderEpoch);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }

        @Override
        public Committed fetch(final String group, final TopicPartition partition)
        {
            try
            {
                final OffsetStore.Committed committed = store(group).read(partition);
                return null == committed ? null : new Committed(committed.offset(), committed.leaderEpoch());
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }
    }
}
