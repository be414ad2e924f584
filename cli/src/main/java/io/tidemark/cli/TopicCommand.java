package io.tidemark.cli;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.protocol.PartitionState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark topic create|list}: topics of a cluster of host processes. */
@Command(
    name = "topic",
    mixinStandardHelpOptions = true,
    description = {
        "Create and list the topics of a cluster of host processes (`tidemark host`), through ZooKeeper and the " +
            "cluster's controller.",
        "Exit code: as the subcommand's."},
    subcommands = {TopicCommand.Create.class, TopicCommand.ListTopics.class})
final class TopicCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Override
    public Integer call()
    {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (create or list)");
    }

    /** {@code tidemark topic create}. */
    @Command(
        name = "create",
        mixinStandardHelpOptions = true,
        description = {
            "Ask the cluster's controller for a topic, wait until every partition has a leader, and print each " +
                "partition: leader, leader epoch, assigned replicas and ISR (host ids).",
            "Exit code: 0 when created, 2 when refused (the topic exists, the replication factor is more than " +
                "the registered hosts, a bad name) or for a bad configuration, 3 when FILE is missing or " +
                "ZooKeeper cannot be reached, 6 when no controller created it within --timeout-ms."},
        sortOptions = false)
    static final class Create implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "Topic name.")
        String topic;

        @Option(names = "--partitions", paramLabel = "N", defaultValue = "1",
            description = "Partitions (default: ${DEFAULT-VALUE}).")
        int partitions;

        @Option(names = "--replication-factor", paramLabel = "R", defaultValue = "1",
            description = "Replicas of each partition, at most the registered hosts (default: ${DEFAULT-VALUE}).")
        int replicationFactor;

        @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "30000",
            description = "How long to wait for the controller (default: ${DEFAULT-VALUE}).")
        long timeoutMs;

        @Override
        public Integer call()
        {
            if (partitions < 1 || replicationFactor < 1 || timeoutMs < 1)
            {
                throw new ParameterException(spec.commandLine(),
                    "--partitions, --replication-factor and --timeout-ms must be >= 1");
            }
            final PrintWriter out = spec.commandLine().getOut();
            try (TidemarkClient connection = client.connect())
            {
                if (replicationFactor > connection.hosts().size())
                {
                    throw new CliException(ExitCodes.USAGE, "replication factor " + replicationFactor + " is more " +
                        "than the " + connection.hosts().size() + " registered host(s) " + connection.hosts().keySet() +
                        " (start more hosts, or lower --replication-factor)");
                }
                if (!connection.knownPartitions(topic).isEmpty())
                {
                    throw new CliException(ExitCodes.USAGE, "topic " + topic + " exists, with " +
                        connection.knownPartitions(topic).size() + " partition(s) (see `tidemark topic list`)");
                }
                final List<PartitionState> created;
                try
                {
                    created = connection.createTopic(topic, partitions, replicationFactor, timeoutMs);
                }
                catch (final IllegalStateException ex)
                {
                    throw new CliException(ExitCodes.UNAVAILABLE, ex.getMessage(), ex);
                }
                out.println("created topic " + topic + " (" + partitions + " partition(s), replication factor " +
                    replicationFactor + ")");
                for (final PartitionState state : created)
                {
                    out.println("  " + ClientOptions.describe(state));
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }

    /** {@code tidemark topic list}. */
    @Command(
        name = "list",
        mixinStandardHelpOptions = true,
        description = {
            "Print the hosts registered in ZooKeeper (id, endpoint, incarnation) and every topic's partitions: " +
                "leader, leader epoch, assigned replicas and ISR (host ids).",
            "Exit code: 0, 2 for a bad configuration, 3 when FILE is missing or ZooKeeper cannot be reached."},
        sortOptions = false)
    static final class ListTopics implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @Override
        public Integer call()
        {
            final PrintWriter out = spec.commandLine().getOut();
            try (TidemarkClient connection = client.connect())
            {
                final Map<Integer, String> hosts = connection.hosts();
                final Map<Integer, String> kafka = connection.kafkaListeners();
                out.println(hosts.size() + " host(s) registered");
                for (final Map.Entry<Integer, String> host : hosts.entrySet())
                {
                    out.println("  host " + host.getKey() + " at " + host.getValue() + " (incarnation " +
                        connection.incarnationOf(host.getKey()) + ")" + (kafka.containsKey(host.getKey()) ?
                        ", Kafka listener " + kafka.get(host.getKey()) : ""));
                }
                final List<String> topics = connection.topics();
                out.println(topics.size() + " topic(s)");
                for (final String topic : topics)
                {
                    final List<PartitionState> states = connection.knownPartitions(topic);
                    out.println("  topic " + topic + " (" + states.size() + " partition(s))");
                    for (final PartitionState state : states)
                    {
                        out.println("    " + ClientOptions.describe(state));
                    }
                }
                final Map<Integer, String> damaged = connection.damagedPartitions();
                if (!damaged.isEmpty())
                {
                    out.println(damaged.size() + " damaged partition state(s) in ZooKeeper (their topics are refused " +
                        "until repaired: tidemark partition repair)");
                    damaged.forEach((id, why) -> out.println("  partition id " + id + ": " + why));
                }
            }
            out.flush();
            return ExitCodes.OK;
        }
    }
}
