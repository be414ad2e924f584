package io.tidemark.cli;

import io.tidemark.host.HostMain;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code tidemark host}: run one replica host of a cluster of host processes until stopped. */
@Command(
    name = "host",
    mixinStandardHelpOptions = true,
    description = {
        "Run a replica host (io.tidemark.host.HostMain) until stopped with Ctrl-C or SIGTERM (a clean stop: " +
            "leadership moves away, logs close cleanly). It serves its replicas over Aeron UDP at its endpoint " +
            "in cluster.hosts, registers in ZooKeeper and takes part in the controller election. Prints one line " +
            "when it runs; --verbose adds its log messages (start and stop, topics created, hosts gone).",
        "FILE (properties): host.id, host.dir, cluster.id, cluster.hosts=0@addr:port,1@addr:port,..., " +
            "zookeeper.connect, zookeeper.root, zookeeper.user, zookeeper.password; optional aeron.dir and " +
            "replication keys (min.insync.replicas, replica.lag.time.max.ms, ...); kafka.listener and the other " +
            "kafka.* keys for a Kafka listener (kafka.security.protocol: PLAINTEXT on loopback only, SSL, " +
            "SASL_SSL). The line printed when the host runs shows the listener's address and security protocol.",
        "Exit code: 2 for a bad configuration value (the message names the key), 3 when FILE is missing, " +
            "ZooKeeper cannot be reached or another live process holds this host id, 4 when the endpoint cannot " +
            "be bound or the host directory is in use by another process. A stop by signal ends with the JVM's " +
            "status for it (130 for Ctrl-C, 143 for SIGTERM) after the clean stop."},
    sortOptions = false)
final class HostCommand implements Callable<Integer>
{
    @Option(names = "--config", paramLabel = "FILE", required = true, description = "Host configuration.")
    Path config;

    @Override
    public Integer call()
    {
        if (!Files.isRegularFile(config))
        {
            throw new CliException(ExitCodes.IO, (Files.exists(config) ? "not a file: " : "no such file: ") + config);
        }
        // HostMain's codes are the CLI's: 2 USAGE (configuration), 3 IO (ZooKeeper), 4 LOCKED (endpoint or directory
        // in use by another process).
        return HostMain.run(config);
    }
}
