package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host restarted at once after a kill finds the registration of its dead predecessor, whose ZooKeeper session
 * has not expired yet. A registration that ends with the host directory's token is taken over at once; one with
 * another token (a live process of the same host id elsewhere) is waited out and refused, as before. The
 * predecessor's session stays open in these tests (as a killed process's does until it expires), so a take-over
 * that waited for it would time out.
 */
class ZooKeeperHostTakeOverTest
{
    private static final String ROOT = "/tidemark/take-over-test";
    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    private static ZooKeeperSettings settings(final TestingServer server)
    {
        return new ZooKeeperSettings()
            .connectString(server.getConnectString())
            .rootPath(ROOT)
            .user("tidemark")
            .password("secret")
            .sessionTimeoutMs(30_000)
            .connectionTimeoutMs(10_000);
    }

    private static byte[] data(final long incarnation, final String token)
    {
        return (incarnation + " 127.0.0.1:40123" + (null == token ? "" : " " + token))
            .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void aDeadPredecessorsRegistrationInTheSameDirectoryIsTakenOverAtOnce() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework predecessor = settings(server).connectClient();
            CuratorFramework restarted = settings(server).connectClient();
            CuratorFramework reader = settings(server).connectClient();
            ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(reader, ROOT))
        {
            assertTrue(liveness.awaitInitialized(30_000));
            ZooKeeperHostLiveness.register(predecessor, ROOT, 3, data(7, TOKEN), TOKEN, 1_000);
            assertTrue(await(() -> liveness.registeredIncarnation(3) == 7), "the predecessor is seen registered");

            // the predecessor's session lives on (30 s); the restarted process may wait 1 s at most
            ZooKeeperHostLiveness.register(restarted, ROOT, 3, data(8, TOKEN), TOKEN, 1_000);

            final Stat stat = new Stat();
            final byte[] now = reader.getData().storingStatIn(stat).forPath(ROOT + "/hosts/3");
            assertArrayEquals(data(8, TOKEN), now);
            assertEquals(restarted.getZookeeperClient().getZooKeeper().getSessionId(), stat.getEphemeralOwner(),
                "the node is the restarted process's, and goes with its session");
            assertTrue(await(() -> liveness.registeredIncarnation(3) == 8), "the controller's side sees the new " +
                "incarnation");
        }
    }

    @Test
    void aRegistrationWithAnotherTokenIsWaitedOutAndRefused() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework other = settings(server).connectClient();
            CuratorFramework starting = settings(server).connectClient())
        {
            ZooKeeperHostLiveness.register(other, ROOT, 3, data(7, "ffffffffffffffffffffffffffffffff"),
                "ffffffffffffffffffffffffffffffff", 1_000);
            final ZooKeeperStoreException ex = assertThrows(ZooKeeperStoreException.class,
                () -> ZooKeeperHostLiveness.register(starting, ROOT, 3, data(8, TOKEN), TOKEN, 300));
            assertTrue(ex.getMessage().contains("still registered"), ex.getMessage());
            assertArrayEquals(data(7, "ffffffffffffffffffffffffffffffff"), starting.getData().forPath(ROOT + "/hosts/3"),
                "the other process's node is untouched");

            // a registration that states no token (an older build) is never taken over
            ZooKeeperHostLiveness.register(other, ROOT, 4, data(2, null), null, 1_000);
            assertThrows(ZooKeeperStoreException.class,
                () -> ZooKeeperHostLiveness.register(starting, ROOT, 4, data(3, TOKEN), TOKEN, 300));
            // nor one whose last word only looks like the token's start
            ZooKeeperHostLiveness.register(other, ROOT, 5, data(2, TOKEN + "0"), null, 1_000);
            assertThrows(ZooKeeperStoreException.class,
                () -> ZooKeeperHostLiveness.register(starting, ROOT, 5, data(3, TOKEN), TOKEN, 300));
        }
    }

    @Test
    void aNodeOfTheOwnSessionCountsAsRegistered() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework host = settings(server).connectClient())
        {
            ZooKeeperHostLiveness.register(host, ROOT, 6, data(1, TOKEN), TOKEN, 1_000);
            ZooKeeperHostLiveness.register(host, ROOT, 6, data(1, TOKEN), null, 300);
            assertArrayEquals(data(1, TOKEN), host.getData().forPath(ROOT + "/hosts/6"));
        }
    }

    private static boolean await(final java.util.function.BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline)
        {
            if (condition.getAsBoolean())
            {
                return true;
            }
            Thread.sleep(10);
        }
        return condition.getAsBoolean();
    }
}
