package io.tidemark.bench.multiprocess;

import io.tidemark.bench.kafka.KafkaLib;
import io.tidemark.bench.kafka.KafkaPeerCluster;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A real Apache Kafka as the multiprocess bench runs it: three KRaft nodes (broker and controller each) in JVMs of
 * their own on this machine ({@link KafkaPeerCluster}), produced to through Kafka's own KafkaProducer
 * ({@link KafkaLoadProducer}) in the bench's JVM with the settings Tidemark's producer gets. Not thread-safe, except
 * {@link #close()}.
 */
final class KafkaTarget implements LoadTarget
{
    private final MultiProcessPlan plan;
    private final Path dir;
    private final Path logCopies;
    private KafkaPeerCluster cluster;
    private final StopRecord stops = new StopRecord();

    /**
     * @param plan      the run's settings.
     * @param dir       the cluster's directory (created).
     * @param logCopies where the broker logs are copied at close.
     */
    KafkaTarget(final MultiProcessPlan plan, final Path dir, final Path logCopies)
    {
        this.plan = plan;
        this.dir = dir;
        this.logCopies = logCopies;
    }

    @Override
    public String name()
    {
        return "kafka";
    }

    @Override
    public String describe()
    {
        final String version = null == cluster ? "" : " " + cluster.version();
        return "Apache Kafka" + version + ": " + LoopbackCluster.HOSTS + " KRaft nodes (broker and controller each, " +
            "`kafka.Kafka` with the JVM settings of kafka-server-start.sh: " +
            String.join(" ", KafkaPeerCluster.KAFKA_JVM_ARGS) + "); KafkaProducer in the bench JVM";
    }

    @Override
    public void start(final PrintWriter out)
    {
        final Path lib = KafkaLib.find(plan.kafkaLib());
        out.println("tidemark-bench: starting Kafka " + KafkaLib.version(lib) + " (" + LoopbackCluster.HOSTS +
            " KRaft nodes) from " + lib);
        out.flush();
        try
        {
            cluster = startCluster(lib, dir);
        }
        catch (final RuntimeException first)
        {
            if (Thread.currentThread().isInterrupted())
            {
                throw first;
            }
            // A broker JVM once exited at start-up with exit code 1 and an empty log, on a busy machine: one retry,
            // in a fresh directory (the failed attempt's may be kept, formatted, with keepData).
            final Path retryDir = dir.resolveSibling(dir.getFileName() + "-retry");
            final String why = String.valueOf(first.getMessage()).lines().findFirst().orElse("");
            out.println("tidemark-bench: Kafka did not start (" + why + "); retrying the start once, in " +
                retryDir);
            out.flush();
            try
            {
                cluster = startCluster(lib, retryDir);
            }
            catch (final RuntimeException second)
            {
                second.addSuppressed(first);
                throw second;
            }
            stops.note("start: the first attempt failed (" + why + "); the second started");
        }
    }

    private KafkaPeerCluster startCluster(final Path lib, final Path clusterDir)
    {
        return KafkaPeerCluster.start(new KafkaPeerCluster.Settings(clusterDir, lib, LoopbackCluster.HOSTS,
            Map.of("min.insync.replicas", Integer.toString(plan.minInsync())), plan.startTimeoutMs(),
            plan.stopTimeoutMs(), logCopies, plan.keepData()));
    }

    /** @return the cluster (profiles, fault drills). */
    KafkaPeerCluster cluster()
    {
        return cluster;
    }

    @Override
    public void createTopic(final String topic, final int partitions)
    {
        cluster.createTopic(topic, partitions, LoopbackCluster.HOSTS, plan.minInsync(), plan.startTimeoutMs());
    }

    @Override
    public boolean awaitFullIsr(final String topic, final long timeoutMs)
    {
        return cluster.awaitFullIsr(topic, LoopbackCluster.HOSTS, timeoutMs);
    }

    @Override
    public LoadProducer producer(final String topic, final ProducerSettings settings)
    {
        return new KafkaLoadProducer(cluster.bootstrapServers(), topic, settings);
    }

    @Override
    public List<Server> servers()
    {
        final List<Server> servers = new ArrayList<>();
        final List<Long> pids = cluster.pids();
        for (int id = 0; id < pids.size(); id++)
        {
            servers.add(new Server("broker-" + id, pids.get(id)));
        }
        return servers;
    }

    @Override
    public ClusterWatch watch(final String topic)
    {
        return new ClusterWatch(ClusterWatch.Source.of(cluster::checkAlive, () -> isrSample(topic)), 1_000, false);
    }

    /** @return per partition {@code {isr size, leader id}}, or null when Kafka does not answer in time. */
    private int[][] isrSample(final String topic)
    {
        try
        {
            final TopicDescription description = cluster.admin().describeTopics(Set.of(topic))
                .allTopicNames().get(5, TimeUnit.SECONDS).get(topic);
            final int[][] rows = new int[description.partitions().size()][];
            for (final TopicPartitionInfo info : description.partitions())
            {
                rows[info.partition()] = null == info.leader() ? new int[]{ 0, -1 } :
                    new int[]{ info.isr().size(), info.leader().id() };
            }
            return rows;
        }
        catch (final ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    @Override
    public ReadBack.Outcome readBack(final String topic, final int partitions, final int recordSize, final int tag,
        final long[] offsets, final int[] partitionOf)
    {
        return ReadBack.Outcome.notApplicable("Kafka: not read back by this bench");
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
        for (final KafkaPeerCluster.Stop stop : cluster.stops())
        {
            final String text = "broker " + stop.nodeId() + ": " + (stop.exitedEarlier() ? "had exited before the " +
                "stop" : stop.forced() ? "killed (SIGKILL) after no exit within the stop timeout" : "exited " +
                stop.millis() + " ms after SIGTERM") + ", exit code " + stop.exitCode();
            if (stop.forced() || stop.exitedEarlier())
            {
                stops.problem(text);
            }
            else
            {
                stops.note(text);
            }
        }
    }
}
