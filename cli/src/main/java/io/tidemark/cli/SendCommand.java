package io.tidemark.cli;

import io.tidemark.client.ProducerContext;
import io.tidemark.client.remote.TidemarkClient;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark send}: records from stdin (one per line) to a topic of a cluster of host processes. */
@Command(
    name = "send",
    mixinStandardHelpOptions = true,
    description = {
        "Send records read one per line (UTF-8) from stdin or --input to a topic of a cluster of host processes " +
            "(`tidemark host`), through a producer that sends to each partition's leader, and wait until every " +
            "record is acknowledged as --acks says. The topic must exist (`tidemark topic create`).",
        "With --key-separator each line is split at the first separator into key and value; a line without it " +
            "has a null key. Records with a key go to the key's partition, the others are spread, unless " +
            "--partition says.",
        "Prints the offsets written, as `produce` does. Exit code: 0 when every record was acknowledged, 2 for " +
            "bad arguments or configuration, 3 when FILE or the topic is missing or ZooKeeper cannot be " +
            "reached, 6 when a record failed (no leader, timeout, not enough in-sync replicas)."},
    sortOptions = false)
final class SendCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "Topic.")
    String topic;

    @Option(names = "--partition", paramLabel = "P", description = "Send every record to partition P.")
    Integer partition;

    @Option(names = "--acks", paramLabel = "ACKS", defaultValue = "all",
        description = "all, 0, 1 or a replica count (default: ${DEFAULT-VALUE}).")
    String acks;

    @Option(names = "--idempotent", paramLabel = "true|false", arity = "1",
        description = "Producer id and sequences, so that retries neither duplicate nor reorder (default: true " +
            "with --acks all, else false).")
    Boolean idempotent;

    @Mixin
    LineInput lines;

    @Option(names = "--producer-config", paramLabel = "KEY=VALUE",
        description = "A producer configuration key (linger.ms, delivery.timeout.ms, ...); repeatable.")
    Map<String, String> producerConfig = new LinkedHashMap<>();

    @Override
    public Integer call() throws IOException
    {
        if (null != partition && partition < 0)
        {
            throw new ParameterException(spec.commandLine(), "--partition must be >= 0");
        }
        final Map<String, String> producerProperties = new LinkedHashMap<>(producerConfig);
        producerProperties.put(ProducerContext.ACKS, acks);
        if (null != idempotent)
        {
            producerProperties.put(ProducerContext.ENABLE_IDEMPOTENCE, idempotent.toString());
        }
        final ProducerContext producerContext = ProducerContext.fromProperties(producerProperties).conclude();
        final PrintWriter out = spec.commandLine().getOut();
        final LineSender sender = new LineSender();
        try (TidemarkClient connection = client.connect(); BufferedReader in = lines.open())
        {
            final int partitionCount = connection.partitions(topic).size();
            if (0 == partitionCount)
            {
                throw ClientOptions.noTopic(topic);
            }
            if (null != partition && partition >= partitionCount)
            {
                throw new ParameterException(spec.commandLine(), "topic " + topic + " has " + partitionCount +
                    " partition(s): no partition " + partition);
            }
            sender.send(connection, producerContext, topic, partition, lines.keySeparator, in);
        }
        out.println(sender.summary(topic, "acks=" + acks + (producerContext.enableIdempotence() ?
            ", idempotent" : "")));
        out.flush();
        sender.checkNoneFailed();
        return ExitCodes.OK;
    }
}
