package io.tidemark.host;

import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a host checks when it starts, each failure typed and leaving nothing behind: credentials ZooKeeper refuses,
 * a ZooKeeper root of another cluster, a directory another host holds, a host id another live process holds, an
 * endpoint already bound, an unreachable ZooKeeper.
 */
class HostStartupTest
{
    @TempDir
    Path tmp;

    private TestingServer zooKeeper;

    @BeforeEach
    void startZooKeeper() throws Exception
    {
        zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1, true, -1, 250, -1),
            true);
    }

    @AfterEach
    void stopZooKeeper() throws IOException
    {
        zooKeeper.close();
    }

    private static int freeUdpPort() throws IOException
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    private Properties config(final int hostId, final String dir, final String endpoints)
    {
        final Properties p = new Properties();
        p.setProperty("host.id", Integer.toString(hostId));
        p.setProperty("host.dir", tmp.resolve(dir).toString());
        p.setProperty("cluster.id", "startup");
        p.setProperty("cluster.hosts", endpoints);
        p.setProperty("zookeeper.connect", zooKeeper.getConnectString());
        p.setProperty("zookeeper.root", "/tidemark/startup");
        p.setProperty("zookeeper.user", "tidemark");
        p.setProperty("zookeeper.password", "right");
        // a loaded machine took more than a second to connect a new client to a live server; the connection
        // timeout may not exceed the session, and a second host with this id waits out twice the session
        p.setProperty("zookeeper.session.timeout.ms", "2000");
        p.setProperty("zookeeper.connection.timeout.ms", "2000");
        p.setProperty("cluster.secret.file", secretFile().toString());
        return p;
    }

    private Path secretFile()
    {
        final Path file = tmp.resolve("cluster.secret");
        if (!java.nio.file.Files.exists(file))
        {
            try
            {
                io.tidemark.aeron.ClusterSecret.generate(file);
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        }
        return file;
    }

    private static HostConfig with(final Properties base, final String key, final String value)
    {
        final Properties p = new Properties();
        p.putAll(base);
        p.setProperty(key, value);
        return HostConfig.fromProperties(p);
    }

    @Test
    void refusesWhatItMustAndStartsOnceTheCauseIsGone() throws Exception
    {
        final String endpoints = "0@127.0.0.1:" + freeUdpPort() + ",1@127.0.0.1:" + freeUdpPort();
        final Properties host0 = config(0, "host-0", endpoints);
        try (TidemarkHost first = TidemarkHost.start(HostConfig.fromProperties(host0)))
        {
            assertEquals(0, first.hostId());

            final ConfigException wrongPassword = assertThrows(ConfigException.class, () ->
                TidemarkHost.start(with(config(1, "host-1", endpoints), "zookeeper.password", "wrong")));
            assertEquals("zookeeper.password", wrongPassword.key(), wrongPassword.getMessage());

            final ConfigException otherCluster = assertThrows(ConfigException.class, () ->
                TidemarkHost.start(with(config(1, "host-1", endpoints), "cluster.id", "another")));
            assertEquals("cluster.id", otherCluster.key());
            assertTrue(otherCluster.getMessage().contains("belongs to cluster 'startup'"), otherCluster.getMessage());

            final HostStartException sameDir = assertThrows(HostStartException.class, () ->
                TidemarkHost.start(HostConfig.fromProperties(config(1, "host-0", endpoints))));
            assertTrue(sameDir.getMessage().contains("in use by another running host"), sameDir.getMessage());

            final long before = System.nanoTime();
            final ZooKeeperStoreException sameId = assertThrows(ZooKeeperStoreException.class, () ->
                TidemarkHost.start(HostConfig.fromProperties(config(0, "host-0-twin", endpoints))));
            assertTrue(sameId.getMessage().contains("still registered"), sameId.getMessage());
            assertTrue(System.nanoTime() - before < 10_000_000_000L);

            try (DatagramSocket taken = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
            {
                final String busy = "0@127.0.0.1:" + freeUdpPort() + ",1@127.0.0.1:" + taken.getLocalPort();
                final HostStartException bound = assertThrows(HostStartException.class, () ->
                    TidemarkHost.start(HostConfig.fromProperties(config(1, "host-1", busy))));
                assertTrue(bound.getMessage().contains("Aeron refused endpoint"), bound.getMessage());
            }

            // nothing of the failed starts is left: host 1 starts now, at once
            try (TidemarkHost second = TidemarkHost.start(HostConfig.fromProperties(config(1, "host-1", endpoints))))
            {
                assertEquals(1, second.hostId());
                assertTrue(second.incarnation() >= 1);
            }
        }
        // and a restart of host 0 gets a larger incarnation
        try (TidemarkHost again = TidemarkHost.start(HostConfig.fromProperties(host0)))
        {
            assertTrue(again.incarnation() >= 2, "incarnation " + again.incarnation());
        }
    }

    @Test
    void anUnreachableZooKeeperIsATypedErrorWithinTheConnectionTimeout() throws Exception
    {
        final Properties p = config(0, "host-0", "0@127.0.0.1:" + freeUdpPort());
        p.setProperty("zookeeper.connect", "127.0.0.1:" + freeUdpPort());
        p.setProperty("zookeeper.connection.timeout.ms", "1000");
        final long before = System.nanoTime();
        final ZooKeeperStoreException ex = assertThrows(ZooKeeperStoreException.class, () ->
            TidemarkHost.start(HostConfig.fromProperties(p)));
        assertTrue(ex.getMessage().contains("cannot reach ZooKeeper"), ex.getMessage());
        assertTrue(System.nanoTime() - before < 10_000_000_000L);
    }

    @Test
    void aZooKeeperRootOpenToAnyoneIsRepairedOrRefusedNamingTheNode() throws Exception
    {
        // made by hand, open to anyone, before any host: the first host closes it
        try (org.apache.curator.framework.CuratorFramework stranger = org.apache.curator.framework
            .CuratorFrameworkFactory.newClient(zooKeeper.getConnectString(), new org.apache.curator.retry
            .RetryOneTime(100)))
        {
            stranger.start();
            final java.util.List<org.apache.zookeeper.data.ACL> open = new java.util.ArrayList<>(java.util.List.of(
                new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ALL,
                new org.apache.zookeeper.data.Id("world", "anyone"))));
            stranger.create().creatingParentsIfNeeded().withACL(open).forPath("/tidemark/startup/producer-ids",
                new byte[8]);
            final String endpoints = "0@127.0.0.1:" + freeUdpPort();
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(config(0, "host-0", endpoints))))
            {
                assertEquals(0, host.hostId());
            }
            assertThrows(org.apache.zookeeper.KeeperException.NoAuthException.class,
                () -> stranger.setData().forPath("/tidemark/startup/producer-ids", new byte[8]),
                "repaired at the start: the stranger is locked out");

            // a node the cluster's credentials may not change: refused, naming it
            try (org.apache.curator.framework.CuratorFramework owner = org.apache.curator.framework
                .CuratorFrameworkFactory.builder().connectString(zooKeeper.getConnectString())
                .retryPolicy(new org.apache.curator.retry.RetryOneTime(100))
                .authorization("digest", "tidemark:right".getBytes(java.nio.charset.StandardCharsets.UTF_8)).build())
            {
                owner.start();
                final org.apache.zookeeper.data.Id other = new org.apache.zookeeper.data.Id("digest",
                    org.apache.zookeeper.server.auth.DigestAuthenticationProvider.generateDigest("other:pw"));
                owner.create().withACL(new java.util.ArrayList<>(java.util.List.of(
                    new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.READ,
                    new org.apache.zookeeper.data.Id("world", "anyone")),
                    new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ALL, other))))
                    .forPath("/tidemark/startup/consumer-offsets", new byte[0]);
            }
            final io.tidemark.zookeeper.ZooKeeperAclException refused = assertThrows(
                io.tidemark.zookeeper.ZooKeeperAclException.class, () -> TidemarkHost.start(
                HostConfig.fromProperties(config(0, "host-0", endpoints))));
            assertEquals("/tidemark/startup/consumer-offsets", refused.node(), refused.getMessage());
        }
    }
}
