package io.tidemark.bench.kafka;

import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The files of a {@link KafkaPeerCluster}'s nodes: each node's configuration ({@code server-<id>.properties}), and
 * its log and output, read for error messages and copied for the report; the log4j2 configuration, the storage
 * formatter's exit and free ports. Stateless.
 */
final class KafkaNodeFiles
{
    private KafkaNodeFiles()
    {
    }

    /**
     * Write a node's configuration: broker and controller in one process, loopback listeners, the quorum's
     * timeouts raised for a loaded machine, then the settings' broker properties.
     *
     * @return the file, {@code <dir>/server-<id>.properties}.
     */
    static Path writeConfig(final KafkaPeerCluster.Settings settings, final int id, final int port,
        final int controllerPort, final String voters) throws IOException
    {
        final Properties p = new Properties();
        p.setProperty("process.roles", "broker,controller");
        p.setProperty("node.id", Integer.toString(id));
        p.setProperty("controller.quorum.voters", voters);
        p.setProperty("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort);
        p.setProperty("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port);
        p.setProperty("controller.listener.names", "CONTROLLER");
        p.setProperty("inter.broker.listener.name", "PLAINTEXT");
        p.setProperty("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        p.setProperty("log.dirs", settings.dir().resolve("data-" + id).toAbsolutePath().toString());
        p.setProperty("num.partitions", "1");
        p.setProperty("default.replication.factor", Integer.toString(Math.min(3, settings.brokers())));
        p.setProperty("offsets.topic.replication.factor", Integer.toString(Math.min(3, settings.brokers())));
        p.setProperty("transaction.state.log.replication.factor", Integer.toString(Math.min(3, settings.brokers())));
        p.setProperty("transaction.state.log.min.isr", Integer.toString(Math.min(2, settings.brokers())));
        p.setProperty("group.initial.rebalance.delay.ms", "0");
        p.setProperty("auto.create.topics.enable", "false");
        // The KRaft quorum's timeouts, raised from 1 s / 2 s / 2 s so that the nodes can elect a quorum leader on a
        // loaded 2-core machine, where a starved node misses the default election timeout again and again (seen:
        // no leader after 6 minutes at a load average of 90). They only govern the metadata quorum's elections
        // and liveness, not the produce path measured.
        p.setProperty("controller.quorum.election.timeout.ms", "5000");
        p.setProperty("controller.quorum.fetch.timeout.ms", "10000");
        p.setProperty("controller.quorum.request.timeout.ms", "10000");
        settings.brokerProperties().forEach(p::setProperty);
        final Path file = settings.dir().resolve("server-" + id + ".properties");
        try (Writer writer = Files.newBufferedWriter(file, StandardCharsets.UTF_8))
        {
            p.store(writer, "tidemark-bench: Kafka node " + id + " (broker and controller)");
        }
        return file;
    }

    /**
     * Write the nodes' log4j2 configuration: everything at INFO into {@code ${kafka.logs.dir}/server.log}.
     *
     * @return the file, {@code <dir>/log4j2.properties}.
     */
    static Path writeLog4j(final Path dir) throws IOException
    {
        final Path log4j = dir.resolve("log4j2.properties");
        Files.writeString(log4j, String.join("\n",
            "status = warn",
            "appender.file.type = File",
            "appender.file.name = file",
            "appender.file.fileName = ${sys:kafka.logs.dir}/server.log",
            "appender.file.layout.type = PatternLayout",
            "appender.file.layout.pattern = [%d] %p %m (%c)%n",
            "rootLogger.level = info",
            "rootLogger.appenderRef.file.ref = file",
            ""), StandardCharsets.UTF_8);
        return log4j;
    }

    /**
     * Wait for a tool's process (the storage formatter) to exit with 0.
     *
     * @throws IllegalStateException when it does not within {@code timeoutMs}, or fails, with the end of its log.
     */
    static void awaitExit(final Process process, final String what, final Path log, final long timeoutMs)
    {
        try
        {
            if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                throw new IllegalStateException(what + " did not finish within " + timeoutMs +
                    " ms");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            throw new IllegalStateException("interrupted while " + what, ex);
        }
        if (process.exitValue() != 0)
        {
            throw new IllegalStateException(what + " failed, exit code " + process.exitValue() + ":\n" +
                tail(log, 20));
        }
    }

    /** @return a TCP port free on loopback now. */
    static int freeTcpPort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            return socket.getLocalPort();
        }
    }

    /**
     * Copy the end of every node's log and output to {@link KafkaPeerCluster.Settings#logCopies()}, if set.
     *
     * @param settings the cluster's settings.
     * @param logs     each node's log, by node id.
     */
    static void copyLogs(final KafkaPeerCluster.Settings settings, final Map<Integer, Path> logs)
    {
        if (null == settings.logCopies())
        {
            return;
        }
        try
        {
            Files.createDirectories(settings.logCopies());
            for (final Map.Entry<Integer, Path> log : logs.entrySet())
            {
                final Path out = settings.dir().resolve("broker-" + log.getKey() + ".out");
                copyTail(log.getValue(), settings.logCopies().resolve("kafka-" + log.getKey() + ".log"));
                copyTail(out, settings.logCopies().resolve("kafka-" + log.getKey() + ".out"));
            }
        }
        catch (final IOException ex)
        {
            System.err.println("tidemark-bench: could not copy the Kafka logs: " + ex);
        }
    }

    /** Copy at most the last 2 MiB of a file. */
    private static void copyTail(final Path from, final Path to) throws IOException
    {
        if (!Files.exists(from))
        {
            return;
        }
        final long max = 2L * 1024 * 1024;
        final byte[] all = Files.readAllBytes(from);
        final int start = (int)Math.max(0, all.length - max);
        Files.write(to, java.util.Arrays.copyOfRange(all, start, all.length));
    }

    /** @return the last {@code lines} lines of a file, or why it cannot be read. */
    static String tail(final Path file, final int lines)
    {
        try (InputStream in = Files.newInputStream(file))
        {
            final List<String> all = new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        }
        catch (final IOException ex)
        {
            return "(cannot read " + file + ": " + ex.getMessage() + ")";
        }
    }
}
