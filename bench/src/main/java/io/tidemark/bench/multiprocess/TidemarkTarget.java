package io.tidemark.bench.multiprocess;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.SendCallback;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import org.agrona.DirectBuffer;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Tidemark as the multiprocess bench runs it: three host JVMs and a ZooKeeper JVM on this machine
 * ({@link LoopbackCluster}), produced to through Tidemark's {@link Producer} over a {@link TidemarkClient} in the
 * bench's JVM, or, in the {@code kafka-clients} mode, through Kafka's own KafkaProducer ({@link KafkaLoadProducer})
 * to the hosts' Kafka listeners ({@value #KAFKA_LISTENER} in every host's file). Topic creation, the ISR watch and
 * the read-back go through the TidemarkClient either way. Not thread-safe, except {@link #close()}.
 */
final class TidemarkTarget implements LoadTarget
{
    /** The host key that opens a host's Kafka listener ({@code KafkaContext.LISTENER}). */
    static final String KAFKA_LISTENER = "kafka.listener";

    private final MultiProcessPlan plan;
    private final Path dir;
    private final Path logCopies;
    private final boolean kafkaClients;
    private LoopbackCluster cluster;
    private String bootstrapServers;
    private final StopRecord stops = new StopRecord();

    /**
     * @param plan      the run's settings.
     * @param dir       the cluster's directory (created).
     * @param logCopies where the host logs are copied at close.
     */
    TidemarkTarget(final MultiProcessPlan plan, final Path dir, final Path logCopies)
    {
        this(plan, dir, logCopies, false);
    }

    /**
     * @param plan         the run's settings; with {@code kafkaClients} its host properties must hold
     *                     {@value #KAFKA_LISTENER}.
     * @param dir          the cluster's directory (created).
     * @param logCopies    where the host logs are copied at close.
     * @param kafkaClients produce with KafkaProducer through the hosts' Kafka listeners instead of Tidemark's
     *                     Producer.
     */
    TidemarkTarget(final MultiProcessPlan plan, final Path dir, final Path logCopies, final boolean kafkaClients)
    {
        if (kafkaClients && !plan.hostProperties().containsKey(KAFKA_LISTENER))
        {
            throw new IllegalArgumentException("Kafka clients need " + KAFKA_LISTENER + " among the host properties");
        }
        this.plan = plan;
        this.dir = dir;
        this.logCopies = logCopies;
        this.kafkaClients = kafkaClients;
    }

    @Override
    public String name()
    {
        return "tidemark";
    }

    @Override
    public String describe()
    {
        final String hosts = "Tidemark: " + LoopbackCluster.HOSTS + " host JVMs (`" + HostProcess.MAIN_CLASS +
            "`, embedded media driver, default settings) and one ZooKeeper JVM; ";
        return kafkaClients ? hosts + "each host's Kafka listener on (" + KAFKA_LISTENER + "=" +
            plan.hostProperties().get(KAFKA_LISTENER) + (null == bootstrapServers ? "" : ": " + bootstrapServers) +
            "); Kafka's KafkaProducer " + org.apache.kafka.common.utils.AppInfoParser.getVersion() + " in the bench " +
            "JVM" : hosts + "Tidemark's Producer over TidemarkClient in the bench JVM";
    }

    @Override
    public void start(final PrintWriter out) throws Exception
    {
        cluster = LoopbackCluster.create(dir, plan, logCopies);
        cluster.start(out);
        if (kafkaClients)
        {
            bootstrapServers = awaitKafkaListeners();
            out.println("tidemark-bench: the hosts' Kafka listeners: " + bootstrapServers);
            out.flush();
        }
    }

    /** Every host registers its listener in ZooKeeper once it serves; the producer needs all three. */
    private String awaitKafkaListeners() throws InterruptedException
    {
        final long deadline = System.nanoTime() + plan.startTimeoutMs() * 1_000_000L;
        while (true)
        {
            final java.util.Map<Integer, String> listeners = cluster.client().kafkaListeners();
            if (listeners.size() >= LoopbackCluster.HOSTS)
            {
                return String.join(",", listeners.values());
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("only hosts " + listeners.keySet() + " registered a Kafka listener " +
                    "within " + plan.startTimeoutMs() + " ms");
            }
            cluster.checkHostsAlive("Kafka listeners");
            Thread.sleep(50);
        }
    }

    /** @return the cluster (fault drills, profiles). */
    LoopbackCluster cluster()
    {
        return cluster;
    }

    @Override
    public void createTopic(final String topic, final int partitions)
    {
        cluster.client().createTopic(topic, partitions, LoopbackCluster.HOSTS, plan.startTimeoutMs());
        if (!cluster.awaitFullIsr(topic, partitions, plan.startTimeoutMs()))
        {
            throw new IllegalStateException("the ISR of topic " + topic + " did not reach " + LoopbackCluster.HOSTS +
                " replicas within " + plan.startTimeoutMs() + " ms: " + cluster.client().partitions(topic));
        }
    }

    @Override
    public boolean awaitFullIsr(final String topic, final long timeoutMs)
    {
        return cluster.awaitFullIsr(topic, cluster.client().partitions(topic).size(), timeoutMs);
    }

    @Override
    public LoadProducer producer(final String topic, final ProducerSettings settings)
    {
        return kafkaClients ? new KafkaLoadProducer(bootstrapServers, topic, settings) :
            new TidemarkLoad(cluster.client(), topic, settings);
    }

    @Override
    public List<Server> servers()
    {
        final List<Server> servers = new ArrayList<>();
        for (final HostProcess host : cluster.hosts())
        {
            if (null != host)
            {
                servers.add(new Server("host-" + host.hostId(), host.pid()));
            }
        }
        servers.add(new Server("zookeeper", cluster.zooKeeper().pid()));
        return servers;
    }

    @Override
    public ClusterWatch watch(final String topic)
    {
        return new ClusterWatch(ClusterWatch.Source.of(cluster::checkHostsAlive, () -> isrSample(topic)), 100, true);
    }

    /** @return per partition {@code {isr size, leader epoch}}, from ZooKeeper through the client. */
    private int[][] isrSample(final String topic)
    {
        final List<PartitionState> states = cluster.client().partitions(topic);
        final int[][] rows = new int[states.size()][];
        for (int i = 0; i < rows.length; i++)
        {
            final PartitionState state = states.get(i);
            rows[i] = new int[]{ state.leader() == PartitionState.NO_LEADER ? 0 : state.isr().length,
                state.leaderEpoch() };
        }
        return rows;
    }

    @Override
    public ReadBack.Outcome readBack(final String topic, final int partitions, final int recordSize, final int tag,
        final long[] offsets, final int[] partitionOf)
    {
        return ReadBack.verify(cluster.client(), topic, partitions, recordSize, tag, offsets, partitionOf, 60_000);
    }

    @Override
    public StopRecord stops()
    {
        return stops;
    }

    @Override
    public void close()
    {
        if (null == cluster)
        {
            return;
        }
        cluster.close();
        final List<HostProcess.Stop> all = cluster.stops();
        for (int id = 0; id < all.size(); id++)
        {
            final HostProcess.Stop stop = all.get(id);
            if (null != stop)
            {
                if (stop.forced() || stop.exitedEarlier())
                {
                    stops.problem("host " + id + ": " + stop.describe());
                }
                else
                {
                    stops.note("host " + id + ": " + stop.describe());
                }
            }
        }
        final List<HostProcess.LogSummary> logs = cluster.logSummaries();
        for (int id = 0; id < logs.size(); id++)
        {
            final HostProcess.LogSummary log = logs.get(id);
            if (null != log && (log.severe() > 0 || log.warnings() > 0))
            {
                stops.note("host " + id + " log: " + log.severe() + " SEVERE, " + log.warnings() + " WARNING; " +
                    "first: " + String.join(" | ", log.first()));
            }
        }
    }

    /** Tidemark's producer, configured as the plan says. */
    private static final class TidemarkLoad implements LoadProducer
    {
        private final Producer producer;
        private final ProducerRecord record;
        private final ProducerRecord syncRecord;

        TidemarkLoad(final TidemarkClient client, final String topic, final ProducerSettings settings)
        {
            // one at a time: the sending thread runs the producer's agent and the client's driver while it waits
            this.producer = new Producer(client, new ProducerContext()
                .acks(settings.acks())
                .batchSize(settings.batchSize())
                .lingerMs(settings.lingerMs())
                .bufferMemory(settings.bufferMemory())
                .agentMode(settings.oneAtATime() ? ProducerContext.AgentMode.INVOKER :
                    ProducerContext.AgentMode.DEDICATED));
            this.record = new ProducerRecord().topic(topic);
            this.syncRecord = new ProducerRecord().topic(topic);
        }

        @Override
        public void send(final DirectBuffer value, final int length, final Completion completion)
        {
            final ProducerRecord r = record;
            synchronized (r)
            {
                r.value(value, 0, length);
                SendCallback callback = (SendCallback)completion.targetCallback;
                if (null == callback)
                {
                    callback = new Adapter(completion);
                    completion.targetCallback = callback;
                }
                producer.sendAsync(r, callback);
            }
        }

        @Override
        public long sendAndWait(final DirectBuffer value, final int length)
        {
            syncRecord.value(value, 0, length);
            return producer.send(syncRecord);
        }

        @Override
        public void close(final long drainMs)
        {
            producer.close(drainMs);
        }
    }

    /** A completion as Tidemark's callback (one per completion: see {@link LoadProducer.Completion}). */
    private record Adapter(LoadProducer.Completion completion) implements SendCallback
    {
        @Override
        public void onCompletion(final TopicPartition partition, final long offset, final ProducerException error)
        {
            if (null == error)
            {
                completion.onCompletion(null == partition ? -1 : partition.partition(), offset, null, null);
            }
            else
            {
                completion.onCompletion(null == partition ? -1 : partition.partition(), -1, error.code().name(),
                    error.code() + " (" + error.replicationError() + "): " + error.getMessage());
            }
        }
    }
}
