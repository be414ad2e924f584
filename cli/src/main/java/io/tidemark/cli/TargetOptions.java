package io.tidemark.cli;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Model.CommandSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Stream;

/** Where produce and tail work: a local log directory, or a topic partition of an embedded replicated cluster. */
final class TargetOptions
{
    @Parameters(index = "0", arity = "0..1", paramLabel = "<log dir>",
        description = "A local log directory (or use --cluster).")
    Path logDir;

    @Option(names = "--cluster", paramLabel = "ROOT",
        description = "Root directory of an embedded replicated cluster (host-<id>/ and controller/ under it), " +
            "started in this process for the command.")
    Path cluster;

    @Option(names = "--hosts", paramLabel = "N",
        description = "Replica hosts of the cluster (default: as many host-<id> directories as the root holds, " +
            "else 3).")
    Integer hosts;

    @Option(names = "--topic", paramLabel = "TOPIC", description = "Topic (with --cluster).")
    String topic;

    @Option(names = "--partition", paramLabel = "P", description = "Partition (with --cluster).")
    Integer partition;

    @Option(names = "--replication-config", paramLabel = "KEY=VALUE",
        description = "A replication configuration key (min.insync.replicas, replica.lag.time.max.ms, ...); " +
            "repeatable.")
    Map<String, String> replicationConfig = new LinkedHashMap<>();

    @Option(names = "--await-leaders-ms", paramLabel = "MS", defaultValue = "15000",
        description = "How long to wait for the topic's partitions to have leaders (default: ${DEFAULT-VALUE}).")
    long awaitLeadersMs;

    boolean isCluster()
    {
        return null != cluster;
    }

    void validate(final CommandSpec spec, final boolean partitionRequired)
    {
        if ((null == logDir) == (null == cluster))
        {
            throw new ParameterException(spec.commandLine(),
                "give either a <log dir> or --cluster <root> (with --topic), not both or neither");
        }
        if (null != cluster)
        {
            if (null == topic)
            {
                throw new ParameterException(spec.commandLine(), "--cluster needs --topic");
            }
            if (partitionRequired && null == partition)
            {
                throw new ParameterException(spec.commandLine(), "--cluster needs --partition");
            }
            if (null != partition && partition < 0)
            {
                throw new ParameterException(spec.commandLine(), "--partition must be >= 0");
            }
            if (null != hosts && hosts < 1)
            {
                throw new ParameterException(spec.commandLine(), "--hosts must be >= 1");
            }
            io.tidemark.store.LogNames.validate(topic + "-0");
        }
        else if (null != topic || null != partition || null != hosts || !replicationConfig.isEmpty())
        {
            throw new ParameterException(spec.commandLine(),
                "--topic, --partition, --hosts and --replication-config go with --cluster");
        }
    }

    /** @return whether no cluster-only producer option was given (they make no sense for a local log). */
    boolean producerOptionsUnset(final ProduceCommand command)
    {
        return "all".equals(command.acks) && null == command.partitions && null == command.replicationFactor &&
            command.producerConfig.isEmpty();
    }

    int hostCount()
    {
        if (null != hosts)
        {
            return hosts;
        }
        if (Files.isDirectory(cluster))
        {
            try (Stream<Path> children = Files.list(cluster))
            {
                final long existing = children.filter((p) -> Files.isDirectory(p) &&
                    p.getFileName().toString().matches("host-[0-9]+")).count();
                if (existing > 0)
                {
                    return (int)existing;
                }
            }
            catch (final IOException ex)
            {
                throw new CliException(ExitCodes.IO, "cannot list " + cluster + ": " + ex.getMessage(), ex);
            }
        }
        return 3;
    }

    ReplicationCluster startCluster(final LogOptions logOptions)
    {
        final ReplicationContext ctx = ReplicationContext.fromProperties(replicationConfig)
            .logContextFactory(logOptions::context);
        return ReplicationCluster.start(cluster, hostCount(), ctx);
    }

    void awaitLeaders(final ReplicationCluster started)
    {
        if (!started.awaitLeaders(topic, awaitLeadersMs))
        {
            throw new CliException(ExitCodes.UNAVAILABLE, "topic " + topic + " has a partition without a leader " +
                "after " + awaitLeadersMs + " ms (are enough hosts up? see --hosts)");
        }
    }
}
