package io.tidemark.cli;

import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.ConfigException;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The {@code --config} of the commands that work on a cluster of host processes (topic, send, read): a client
 * configuration file ({@link ClientConfig}), and the connection made from it.
 */
final class ClientOptions
{
    @Option(names = "--config", paramLabel = "FILE", required = true,
        description = "Client configuration (properties: cluster.id, zookeeper.connect, zookeeper.root, " +
            "zookeeper.user, zookeeper.password, client.endpoint, ...).")
    Path config;

    /**
     * @return a client connected to the cluster; the caller closes it.
     * @throws CliException IO when the file is missing or ZooKeeper cannot be reached, USAGE for a bad value (the
     *                      message names the file and the key).
     */
    TidemarkClient connect()
    {
        if (!Files.isRegularFile(config))
        {
            throw new CliException(ExitCodes.IO, (Files.exists(config) ? "not a file: " : "no such file: ") + config);
        }
        try
        {
            return TidemarkClient.connect(ClientConfig.load(config));
        }
        catch (final ConfigException ex)
        {
            throw new CliException(ExitCodes.USAGE, "invalid client configuration " + config + ": " +
                ex.getMessage(), ex);
        }
    }

    /** @return no topic: an error naming the cluster (exit code 3, as tail for a topic that is not there). */
    static CliException noTopic(final String topic)
    {
        return new CliException(ExitCodes.IO, "no topic " + topic + " in the cluster (create it with " +
            "`tidemark topic create`)");
    }

    /** @return one partition for people and scripts: {@code orders-0 leader=1 epoch=3 replicas=[1,2,0] isr=[1,2]}. */
    static String describe(final PartitionState state)
    {
        return state.topicPartition().topic() + "-" + state.topicPartition().partition() +
            " leader=" + (state.leader() == PartitionState.NO_LEADER ? "none" : Integer.toString(state.leader())) +
            " epoch=" + state.leaderEpoch() +
            " replicas=" + hosts(state.assignedReplicas()) +
            " isr=" + hosts(state.isr()) +
            (state.eligible().length == 0 ? "" : " elr=" + hosts(state.eligible())) +
            (state.recovering().length == 0 ? "" : " recovering=" + hosts(state.recovering()));
    }

    private static String hosts(final int[] ids)
    {
        return Arrays.stream(ids).mapToObj(Integer::toString).collect(Collectors.joining(",", "[", "]"));
    }
}
