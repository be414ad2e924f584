package io.tidemark.host;

import io.tidemark.zookeeper.ZooKeeperGroupOffsets;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.RemoteReader;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Consuming from a host in another process (here: one host embedded in the test JVM, reached only through Aeron and
 * ZooKeeper): a reader reads the committed records in order, a consumer group's committed position is kept in
 * ZooKeeper and a new client resumes from it, and the offsets are behind the cluster's digest ACL.
 */
class RemoteConsumeTest
{
    @TempDir
    Path tmp;

    @Test
    void aGroupResumesFromItsCommittedOffsetInAnotherClient() throws Exception
    {
        final int port = OneHostSettings.freeUdpPort();
        try (TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1,
            true, -1, 250, -1), true))
        {
            final Properties common = OneHostSettings.common("consume", zooKeeper.getConnectString());
            common.setProperty("zookeeper.session.timeout.ms", "5000");
            common.setProperty("zookeeper.connection.timeout.ms", "5000"); // at most the session: the longest allowed
            OneHostSettings.secret(common, tmp.resolve("cluster.secret"));
            final Properties hostProperties = OneHostSettings.host(common, tmp.resolve("host-0"), port);
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(hostProperties)))
            {
                assertEquals(0, host.hostId());
                try (TidemarkClient client = TidemarkClient.connect(ClientConfig.fromProperties(common));
                    Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL)))
                {
                    client.createTopic("events", 1, 1, 30_000);
                    final ProducerRecord record = new ProducerRecord().topic("events").partition(0);
                    for (int i = 0; i < 100; i++)
                    {
                        assertEquals(i, producer.send(record.value("e-" + i)));
                    }
                    assertEquals(-1, client.committedOffset("billing", "events", 0));
                    final List<String> first = read(client, 0, 60);
                    assertEquals(60, first.size());
                    assertEquals("e-0", first.get(0));
                    assertEquals("e-59", first.get(59));
                    client.commitOffset("billing", "events", 0, 60);
                    client.commitOffset("billing", "events", 0, 60); // a second commit of the same position
                    assertThrows(IllegalArgumentException.class, () -> client.commitOffset("bad group", "events", 0,
                        1));
                }

                try (TidemarkClient again = TidemarkClient.connect(ClientConfig.fromProperties(common)))
                {
                    final long resume = again.committedOffset("billing", "events", 0);
                    assertEquals(60, resume);
                    final List<String> rest = read(again, resume, 100);
                    assertEquals(40, rest.size());
                    assertEquals("e-60", rest.get(0));
                    assertEquals("e-99", rest.get(39));
                    assertEquals(-1, again.committedOffset("audit", "events", 0), "groups are separate");
                }

                try (CuratorFramework anonymous = CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(),
                    new RetryOneTime(100)))
                {
                    anonymous.start();
                    assertThrows(KeeperException.NoAuthException.class, () -> anonymous.getData()
                        .forPath("/tidemark/consume/" + ZooKeeperGroupOffsets.CONSUMER_OFFSETS + "/billing/events-0"));
                }
            }
        }
    }

    /**
     * A client killed with SIGKILL cannot remove its embedded media driver's directory (about 47 MB in /dev/shm):
     * the next client to start on the machine removes it, and never the directory of a running client.
     */
    @Test
    void theNextClientRemovesTheDriverDirectoryOfAKilledClient() throws Exception
    {
        final int port = OneHostSettings.freeUdpPort();
        try (TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk3").toFile(), -1, -1, -1,
            true, -1, 250, -1), true))
        {
            final Properties common = OneHostSettings.common("killed", zooKeeper.getConnectString());
            OneHostSettings.secret(common, tmp.resolve("killed.secret"));
            final Properties hostProperties = OneHostSettings.host(common, tmp.resolve("host-killed"), port);
            final Path clientFile = tmp.resolve("client.properties");
            try (java.io.Writer out = java.nio.file.Files.newBufferedWriter(clientFile))
            {
                common.store(out, null);
            }
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(hostProperties)))
            {
                final Process child = new ProcessBuilder(ProcessHandle.current().info().command().orElse("java"),
                    "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
                    System.getProperty("java.class.path"), ClientChild.class.getName(), clientFile.toString())
                    .redirectError(tmp.resolve("client-child.err").toFile())
                    .start();
                final String ready;
                try
                {
                    ready = new java.io.BufferedReader(new java.io.InputStreamReader(child.getInputStream(),
                        java.nio.charset.StandardCharsets.UTF_8)).readLine();
                    assertEquals("READY " + child.pid(), ready, () -> "child stderr: " +
                        readQuietly(tmp.resolve("client-child.err")));
                }
                finally
                {
                    child.destroyForcibly(); // SIGKILL: no close, no shutdown hook
                    assertTrue(child.waitFor(60, TimeUnit.SECONDS));
                }
                final Path killedDir = driverDirOf(child.pid());
                assertTrue(null != killedDir && java.nio.file.Files.isDirectory(killedDir),
                    "the killed client's driver directory is left: " + killedDir);

                try (TidemarkClient next = TidemarkClient.connect(ClientConfig.fromProperties(common)))
                {
                    assertTrue(null == driverDirOf(child.pid()), "removed by the next client's start");
                    final Path own = driverDirOf(ProcessHandle.current().pid());
                    assertTrue(null != own, "its own is there");
                    try (TidemarkClient second = TidemarkClient.connect(ClientConfig.fromProperties(common)))
                    {
                        assertTrue(java.nio.file.Files.isDirectory(own),
                            "a running client's directory is never removed");
                        assertTrue(second.partitions("none").isEmpty() && next.partitions("none").isEmpty());
                    }
                }
                assertEquals(0, host.hostId());
            }
        }
    }

    private static Path driverDirOf(final long pid) throws java.io.IOException
    {
        final Path base = ClusterSettings.embeddedAeronDir("x").getParent();
        try (java.util.stream.Stream<Path> entries = java.nio.file.Files.list(base))
        {
            return entries.filter((p) -> p.getFileName().toString().startsWith(
                TidemarkClient.EMBEDDED_DIR_PREFIX + pid + "-")).findFirst().orElse(null);
        }
    }

    private static String readQuietly(final Path file)
    {
        try
        {
            return java.nio.file.Files.readString(file);
        }
        catch (final java.io.IOException ex)
        {
            return ex.toString();
        }
    }

    @Test
    void aHostRunsOnAnExternalMediaDriverByConfiguration() throws Exception
    {
        final int port = OneHostSettings.freeUdpPort();
        final Path driverDir = tmp.resolve("external-driver");
        try (io.aeron.driver.MediaDriver driver = io.aeron.driver.MediaDriver.launch(new io.aeron.driver.MediaDriver
            .Context().aeronDirectoryName(driverDir.toString()).dirDeleteOnStart(true).dirDeleteOnShutdown(true)
            .threadingMode(io.aeron.driver.ThreadingMode.SHARED));
            TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk2").toFile(), -1, -1, -1,
                true, -1, 250, -1), true))
        {
            final Properties common = OneHostSettings.common("external", zooKeeper.getConnectString());
            common.setProperty("aeron.dir", driver.aeronDirectoryName());
            common.setProperty("cluster.insecure", "true"); // the explicit try-out setting: no secret
            final Properties hostProperties = OneHostSettings.host(common, tmp.resolve("host-ext"), port);
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(hostProperties));
                TidemarkClient client = TidemarkClient.connect(ClientConfig.fromProperties(common));
                Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL)))
            {
                assertEquals(0, host.hostId());
                client.createTopic("events", 1, 1, 30_000);
                final ProducerRecord record = new ProducerRecord().topic("events").partition(0);
                for (int i = 0; i < 10; i++)
                {
                    assertEquals(i, producer.send(record.value("e-" + i)));
                }
                assertEquals(10, read(client, 0, 10).size());
            }
            // the host and the client were clients of that driver: it is still running, and nothing of theirs
            // depends on an embedded driver of their own
            assertTrue(java.nio.file.Files.isDirectory(driverDir));
        }
    }

    private static List<String> read(final TidemarkClient client, final long from, final int max)
        throws InterruptedException
    {
        final List<String> values = new ArrayList<>();
        try (RemoteReader reader = client.openReader("events", 0))
        {
            reader.seek(from);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (values.size() < max && System.nanoTime() < deadline)
            {
                if (reader.poll((r) -> values.add(r.valueAsString()), max - values.size()) == 0)
                {
                    if (reader.highWatermark() >= 0 && reader.position() >= reader.highWatermark())
                    {
                        break;
                    }
                    Thread.sleep(5);
                }
            }
        }
        return values;
    }
}
