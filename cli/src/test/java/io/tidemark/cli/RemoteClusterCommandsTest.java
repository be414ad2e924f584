package io.tidemark.cli;

import io.tidemark.host.HostConfig;
import io.tidemark.host.TidemarkHost;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * host, topic, send and read against a cluster of one replica host (in this JVM, on a loopback UDP endpoint) with
 * an in-process ZooKeeper, driven as a user would, output and exit codes checked.
 */
@ExtendWith(Cli.Transcript.class)
class RemoteClusterCommandsTest
{
    private static final String CLUSTER = "cli-remote";
    private static final String TOPIC = "orders";

    @TempDir
    static Path tmp;

    private static TestingServer zooKeeper;
    private static TidemarkHost host;
    private static String endpoint;
    private static Path clientConfig;

    @BeforeAll
    static void startCluster() throws Exception
    {
        // tick 250 ms: ZooKeeper accepts session timeouts from 500 ms to 5 s
        zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1, true, -1, 250, -1),
            true);
        endpoint = "127.0.0.1:" + freeUdpPort();
        final Cli.Result secret = Cli.run("secret", tmp.resolve("cluster.secret").toString());
        assertEquals(0, secret.exitCode(), secret.toString());
        final Properties hostProperties = zooKeeperProperties();
        hostProperties.setProperty("host.id", "0");
        hostProperties.setProperty("host.dir", tmp.resolve("host-0").toString());
        hostProperties.setProperty("cluster.id", CLUSTER);
        hostProperties.setProperty("cluster.hosts", "0@" + endpoint);
        hostProperties.setProperty("min.insync.replicas", "1");
        host = TidemarkHost.start(HostConfig.fromProperties(hostProperties));
        final Properties client = zooKeeperProperties();
        client.setProperty("cluster.id", CLUSTER);
        clientConfig = write("client.properties", client);
    }

    @AfterAll
    static void stopCluster() throws IOException
    {
        if (null != host)
        {
            host.close();
        }
        if (null != zooKeeper)
        {
            zooKeeper.close();
        }
    }

    private static Properties zooKeeperProperties()
    {
        final Properties p = new Properties();
        p.setProperty("zookeeper.connect", zooKeeper.getConnectString());
        p.setProperty("zookeeper.root", "/tidemark/" + CLUSTER);
        p.setProperty("zookeeper.user", "tidemark");
        p.setProperty("zookeeper.password", "s3cret-for-tests");
        p.setProperty("zookeeper.session.timeout.ms", "5000");
        p.setProperty("zookeeper.connection.timeout.ms", "5000"); // at most the session: the longest allowed
        p.setProperty("cluster.secret.file", tmp.resolve("cluster.secret").toString());
        return p;
    }

    private static Path write(final String name, final Properties properties) throws IOException
    {
        final Path file = tmp.resolve(name);
        try (Writer out = Files.newBufferedWriter(file, StandardCharsets.UTF_8))
        {
            properties.store(out, null);
        }
        return file;
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    private static Cli.Result run(final String... args)
    {
        return Cli.run(args);
    }

    private static Cli.Result runWithStdin(final String stdin, final String... args)
    {
        final InputStream original = System.in;
        try
        {
            System.setIn(new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)));
            return run(args);
        }
        finally
        {
            System.setIn(original);
        }
    }

    @Test
    void createListSendAndReadBack()
    {
        final String config = clientConfig.toString();
        final Cli.Result create = run("topic", "create", "--config", config, "--topic", TOPIC, "--partitions", "2",
            "--replication-factor", "1");
        assertEquals(ExitCodes.OK, create.exitCode(), create.toString());
        assertTrue(Pattern.matches("created topic orders \\(2 partition\\(s\\), replication factor 1\\)\n" +
            "  orders-0 leader=0 epoch=\\d+ replicas=\\[0] isr=\\[0]\n" +
            "  orders-1 leader=0 epoch=\\d+ replicas=\\[0] isr=\\[0]\n", create.out()), create.out());

        final Cli.Result list = run("topic", "list", "--config", config);
        assertEquals(ExitCodes.OK, list.exitCode(), list.toString());
        assertTrue(Pattern.matches("1 host\\(s\\) registered\n" +
            "  host 0 at " + Pattern.quote(endpoint) + " \\(incarnation \\d+\\)\n" +
            "1 topic\\(s\\)\n" +
            "  topic orders \\(2 partition\\(s\\)\\)\n" +
            "    orders-0 leader=0 epoch=\\d+ replicas=\\[0] isr=\\[0]\n" +
            "    orders-1 leader=0 epoch=\\d+ replicas=\\[0] isr=\\[0]\n", list.out()), list.out());

        final List<String> lines = new ArrayList<>();
        for (int i = 0; i < 100; i++)
        {
            lines.add("order-" + i + ":" + (i % 2 == 0 ? "BUY " : "SELL ") + i);
        }
        final Cli.Result send = runWithStdin(String.join("\n", lines) + "\n", "send", "--config", config,
            "--topic", TOPIC, "--key-separator", ":");
        assertEquals(ExitCodes.OK, send.exitCode(), send.toString());
        final Matcher summary = Pattern.compile("produced 100 of 100 record\\(s\\) to topic orders \\(acks=all, " +
            "idempotent\\), partition 0 offsets 0\\.\\.(\\d+), partition 1 offsets 0\\.\\.(\\d+)\n")
            .matcher(send.out());
        assertTrue(summary.matches(), send.out());
        assertEquals(100, Long.parseLong(summary.group(1)) + 1 + Long.parseLong(summary.group(2)) + 1);

        // Read both partitions back: every line once, each partition in the order sent.
        final Set<String> read = new HashSet<>();
        final List<List<String>> byPartition = new ArrayList<>();
        for (int partition = 0; partition < 2; partition++)
        {
            final Cli.Result back = run("read", "--config", config, "--topic", TOPIC, "--partition",
                Integer.toString(partition), "--format", "kv", "--key-separator", ":");
            assertEquals(ExitCodes.OK, back.exitCode(), back.toString());
            final List<String> partitionLines = List.of(back.out().split("\n"));
            read.addAll(partitionLines);
            byPartition.add(partitionLines);
            assertEquals(lines.stream().filter(partitionLines::contains).toList(), partitionLines);
        }
        assertEquals(new HashSet<>(lines), read);

        // The default format is tail's: offset, timestamp, key, value; --from and --max pick a range.
        final Cli.Result full = run("read", "--config", config, "--topic", TOPIC, "--partition", "0", "--from",
            "1", "--max", "2");
        assertEquals(ExitCodes.OK, full.exitCode(), full.toString());
        final String[] fullLines = full.out().split("\n");
        assertEquals(2, fullLines.length, full.out());
        assertTrue(fullLines[0].matches("1\t20[0-9-]+T[0-9:.]+Z\torder-\\d+\t(BUY|SELL) \\d+"), fullLines[0]);
        assertTrue(fullLines[1].startsWith("2\t"), fullLines[1]);

        // -n N: the last N committed records.
        final Cli.Result last = run("read", "--config", config, "--topic", TOPIC, "--partition", "0", "-n", "2",
            "--format", "kv", "--key-separator", ":");
        assertEquals(ExitCodes.OK, last.exitCode(), last.toString());
        final List<String> partition0 = byPartition.get(0);
        assertEquals(partition0.subList(partition0.size() - 2, partition0.size()), List.of(last.out().split("\n")));
        assertEquals(ExitCodes.USAGE, run("read", "--config", config, "--topic", TOPIC, "--partition", "0", "-n",
            "2", "--from", "1").exitCode());

        // A consumer group: the first read stops after 2 records and commits offset 2; the next starts there.
        final Cli.Result groupFirst = run("read", "--config", config, "--topic", TOPIC, "--partition", "0",
            "--group", "audit", "--max", "2", "--format", "value");
        assertEquals(ExitCodes.OK, groupFirst.exitCode(), groupFirst.toString());
        assertEquals(2, groupFirst.out().split("\n").length, groupFirst.out());
        assertEquals("committed offset 2 of group audit for orders-0\n", groupFirst.err());
        final Cli.Result groupNext = run("read", "--config", config, "--topic", TOPIC, "--partition", "0",
            "--group", "audit", "--max", "1");
        assertEquals(ExitCodes.OK, groupNext.exitCode(), groupNext.toString());
        assertTrue(groupNext.out().startsWith("2\t"), groupNext.out());
        assertEquals("committed offset 3 of group audit for orders-0\n", groupNext.err());

        // To one partition, acks=1, not idempotent; then --follow stops when idle.
        final Cli.Result one = runWithStdin("late\n", "send", "--config", config, "--topic", TOPIC,
            "--partition", "1", "--acks", "1", "--idempotent", "false");
        assertEquals(ExitCodes.OK, one.exitCode(), one.toString());
        final long next = Long.parseLong(summary.group(2)) + 1;
        assertEquals("produced 1 of 1 record(s) to topic orders (acks=1), partition 1 offsets " + next + ".." + next +
            "\n", one.out());
        final Cli.Result follow = run("read", "--config", config, "--topic", TOPIC, "--partition", "1", "--from",
            Long.toString(next), "--follow", "--idle-timeout-ms", "300", "--format", "value");
        assertEquals(ExitCodes.OK, follow.exitCode(), follow.toString());
        assertEquals("late\n", follow.out());

        // Refusals, after the topic exists.
        final Cli.Result exists = run("topic", "create", "--config", config, "--topic", TOPIC);
        assertEquals(ExitCodes.USAGE, exists.exitCode(), exists.toString());
        assertEquals("tidemark topic create: topic orders exists, with 2 partition(s) (see `tidemark topic " +
            "list`)\n", exists.err());
        final Cli.Result beyond = run("read", "--config", config, "--topic", TOPIC, "--partition", "0", "--from",
            "1000");
        assertEquals(ExitCodes.USAGE, beyond.exitCode(), beyond.toString());
        assertTrue(beyond.err().contains("1000 of orders-0 is not in its leader's log") ||
            beyond.err().contains("offset 1000 is beyond the high watermark"), beyond.err());
        final Cli.Result noPartition = run("read", "--config", config, "--topic", TOPIC, "--partition", "2");
        assertEquals(ExitCodes.USAGE, noPartition.exitCode(), noPartition.toString());
        assertTrue(noPartition.err().contains("topic orders has 2 partition(s): no partition 2"), noPartition.err());
    }

    @Test
    void refusalsAndConfigurationErrorsAreClearWithTheirExitCodes() throws Exception
    {
        final String config = clientConfig.toString();
        final Cli.Result factor = run("topic", "create", "--config", config, "--topic", "payments",
            "--replication-factor", "2");
        assertEquals(ExitCodes.USAGE, factor.exitCode(), factor.toString());
        assertEquals("tidemark topic create: replication factor 2 is more than the 1 registered host(s) [0] (start " +
            "more hosts, or lower --replication-factor)\n", factor.err());
        assertEquals("", factor.out());

        final Properties wrong = zooKeeperProperties();
        wrong.setProperty("cluster.id", "not-" + CLUSTER);
        final Path wrongConfig = write("wrong-cluster.properties", wrong);
        final Cli.Result wrongCluster = run("topic", "list", "--config", wrongConfig.toString());
        assertEquals(ExitCodes.USAGE, wrongCluster.exitCode(), wrongCluster.toString());
        assertEquals("tidemark topic list: invalid client configuration " + wrongConfig + ": cluster.id: ZooKeeper " +
            "root /tidemark/" + CLUSTER + " belongs to cluster '" + CLUSTER + "', not 'not-" + CLUSTER + "'\n",
            wrongCluster.err());

        final Properties unknownKey = zooKeeperProperties();
        unknownKey.setProperty("cluster.id", CLUSTER);
        unknownKey.setProperty("client.endpiont", "127.0.0.1:0");
        final Cli.Result typo = run("send", "--config", write("typo.properties", unknownKey).toString(), "--topic",
            TOPIC);
        assertEquals(ExitCodes.USAGE, typo.exitCode(), typo.toString());
        assertTrue(typo.err().contains(": client.endpiont: unknown client configuration key"), typo.err());

        final Path missing = tmp.resolve("no-such.properties");
        for (final String[] command : new String[][] {{"topic", "list"}, {"send", "--topic", TOPIC},
            {"read", "--topic", TOPIC, "--partition", "0"}, {"host"}})
        {
            final List<String> args = new ArrayList<>(List.of(command));
            args.add("--config");
            args.add(missing.toString());
            final Cli.Result result = run(args.toArray(new String[0]));
            assertEquals(ExitCodes.IO, result.exitCode(), result.toString());
            assertTrue(result.err().endsWith(": no such file: " + missing + "\n"), result.err());
        }

        final Cli.Result noTopic = run("read", "--config", config, "--topic", "payments", "--partition", "0");
        assertEquals(ExitCodes.IO, noTopic.exitCode(), noTopic.toString());
        assertEquals("tidemark read: no topic payments in the cluster (create it with `tidemark topic create`)\n",
            noTopic.err());

        final Cli.Result idempotentAcks1 = run("send", "--config", config, "--topic", TOPIC, "--acks", "1",
            "--idempotent", "true");
        assertEquals(ExitCodes.USAGE, idempotentAcks1.exitCode(), idempotentAcks1.toString());
        assertTrue(idempotentAcks1.err().contains("enable.idempotence: requires acks=all"), idempotentAcks1.err());

        // A host configuration without cluster.hosts: HostMain's configuration error, exit code 2.
        final Properties badHost = zooKeeperProperties();
        badHost.setProperty("host.id", "1");
        badHost.setProperty("host.dir", tmp.resolve("host-1").toString());
        badHost.setProperty("cluster.id", CLUSTER);
        final Cli.Result host = run("host", "--config", write("bad-host.properties", badHost).toString());
        assertEquals(ExitCodes.USAGE, host.exitCode(), host.toString());
    }

    @Test
    void helpListsTheClusterCommandsWithTheirExitCodes()
    {
        final Cli.Result help = Cli.run("--help");
        for (final String command : new String[] {"host", "topic", "send", "read"})
        {
            assertTrue(help.out().contains("  " + command + " "), command + ": " + help.out());
        }
        for (final String[] command : new String[][] {{"host"}, {"topic"}, {"topic", "create"}, {"topic", "list"},
            {"send"}, {"read"}})
        {
            final List<String> args = new ArrayList<>(List.of(command));
            args.add("--help");
            final Cli.Result result = Cli.run(args.toArray(new String[0]));
            assertEquals(ExitCodes.OK, result.exitCode(), result.toString());
            assertTrue(result.out().startsWith("Usage: tidemark " + String.join(" ", command)), result.out());
            assertTrue(result.out().contains("Exit code"), result.out());
        }
        assertEquals(ExitCodes.USAGE, Cli.run("topic").exitCode());
        assertEquals(ExitCodes.USAGE, Cli.run("send", "--topic", TOPIC).exitCode()); // --config is required
    }
}
