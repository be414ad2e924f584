package io.tidemark.zookeeper;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.replication.TopicPartition;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What Tidemark creates through clients built from {@link ZooKeeperSettings} is readable and writable only with
 * its digest credentials: anonymous clients and clients with the right user but a wrong password are refused with
 * {@code NoAuth}; every znode, from the root's new parents down to the hosts' ephemeral nodes and the election's
 * latch nodes, carries exactly the settings' digest ACL.
 */
class ZooKeeperAclTest
{
    private static final String TOP = "/tidemark";
    private static final String ROOT = TOP + "/acl-test";
    private static final String USER = "tidemark";
    private static final String PASSWORD = "right-password";
    private static final byte[] JUNK = {1, 2, 3};

    @RegisterExtension
    final TestZooKeeper zk = new TestZooKeeper();

    private ZooKeeperSettings settings(final String password)
    {
        return new ZooKeeperSettings()
            .connectString(zk.connectString())
            .rootPath(ROOT)
            .user(USER)
            .password(password)
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000)
            .conclude();
    }

    private static PartitionState state(final int id, final int version)
    {
        return new PartitionState(id, new TopicPartition("orders", id), new int[] {0, 1, 2}, new int[] {0, 1, 2},
            new int[0], new int[0], 0, version, version);
    }

    private static void assertNoAuth(final String what, final Executable operation)
    {
        final Exception ex = assertThrows(Exception.class, operation, what);
        assertInstanceOf(KeeperException.NoAuthException.class, ex, what + ": " + ex);
    }

    private static void assertRefusedEverything(final CuratorFramework client, final String who)
    {
        for (final String path : new String[] {ROOT + "/partitions/0", ROOT + "/controller-epoch",
            ROOT + "/producer-ids"})
        {
            assertNoAuth(who + " reads " + path, () -> client.getData().forPath(path));
            assertNoAuth(who + " writes " + path, () -> client.setData().forPath(path, JUNK));
            assertNoAuth(who + " deletes " + path, () -> client.delete().forPath(path));
        }
        assertNoAuth(who + " lists the partitions", () -> client.getChildren().forPath(ROOT + "/partitions"));
        assertNoAuth(who + " creates a partition", () -> client.create().forPath(ROOT + "/partitions/1", JUNK));
        assertNoAuth(who + " creates under the root", () -> client.create().forPath(ROOT + "/junk", JUNK));
        assertNoAuth(who + " creates a sibling of the root", () -> client.create().forPath(TOP + "/junk", JUNK));
    }

    @Test
    void onlyTheRightCredentialsReadOrWriteWhatTheStoreCreated() throws Exception
    {
        final ZooKeeperSettings settings = settings(PASSWORD);
        try (ZooKeeperControllerStore store = ZooKeeperControllerStore.connect(settings))
        {
            store.create(state(0, 0));
            assertNotNull(store.compareAndSet(0, state(0, 1)));
            assertEquals(0, store.reserveProducerIds(10));
        }

        assertRefusedEverything(zk.anonymousClient(), "an anonymous client");
        final CuratorFramework wrongPassword = zk.closeAfterTest(settings("wrong-password").connectClient());
        assertRefusedEverything(wrongPassword, "the right user with a wrong password");
        final ZooKeeperStoreException refused = assertThrows(ZooKeeperStoreException.class,
            () -> ZooKeeperControllerStore.connect(settings("wrong-password")), "nor can it open a store");
        assertInstanceOf(KeeperException.NoAuthException.class, refused.getCause(), refused.toString());

        final CuratorFramework authorized = zk.closeAfterTest(settings.connectClient());
        final Stat stat = new Stat();
        final byte[] data = authorized.getData().storingStatIn(stat).forPath(ROOT + "/partitions/0");
        assertEquals(state(0, 1), PartitionStateCodec.decode(ByteBuffer.wrap(data)));
        assertEquals(1, stat.getVersion());
        assertEquals(1, ZooKeeperCounters.decode(ROOT + "/controller-epoch",
            authorized.getData().forPath(ROOT + "/controller-epoch")));
        assertEquals(10, ZooKeeperCounters.decode(ROOT + "/producer-ids",
            authorized.getData().forPath(ROOT + "/producer-ids")));

        try (ZooKeeperControllerStore failedOver = ZooKeeperControllerStore.connect(settings(PASSWORD)))
        {
            assertEquals(2, failedOver.controllerEpoch());
            assertEquals(state(0, 1), failedOver.get(0));
            assertEquals(10, failedOver.reserveProducerIds(10));
        }
    }

    @Test
    void everyZnodeTidemarkCreatesCarriesOnlyTheDigestAcl() throws Exception
    {
        final ZooKeeperSettings settings = settings(PASSWORD);
        final CuratorFramework controllerSession = zk.closeAfterTest(settings.connectClient());
        final CuratorFramework hostSession = zk.closeAfterTest(settings.connectClient());

        final ZooKeeperControllerElection election =
            zk.closeAfterTest(new ZooKeeperControllerElection(controllerSession, ROOT, 0, null));
        assertTrue(election.awaitLeadership(10_000));
        final ZooKeeperControllerStore store =
            zk.closeAfterTest(new ZooKeeperControllerStore(controllerSession, ROOT, false));
        store.create(state(0, 0));
        store.reserveProducerIds(1);
        ZooKeeperHostLiveness.register(hostSession, ROOT, 7, "endpoint".getBytes(StandardCharsets.UTF_8), 10_000);
        assertEquals(1, ZooKeeperCounters.incrementAndGet(hostSession, ROOT + "/incarnations/7"));

        final List<ACL> expected = Collections.singletonList(new ACL(ZooDefs.Perms.ALL, settings.aclId()));
        final List<String> checked = new ArrayList<>();
        checkTree(controllerSession, TOP, expected, checked);
        for (final String path : new String[] {TOP, ROOT, ROOT + "/partitions", ROOT + "/partitions/0",
            ROOT + "/controller-epoch", ROOT + "/producer-ids", ROOT + "/hosts", ROOT + "/hosts/7",
            ROOT + "/controller-election", ROOT + "/incarnations", ROOT + "/incarnations/7"})
        {
            assertTrue(checked.contains(path), path + " was checked: " + checked);
        }
        final List<String> latchNodes = controllerSession.getChildren().forPath(ROOT + "/controller-election");
        assertEquals(1, latchNodes.size(), latchNodes.toString());
        assertEquals(hostSession.getZookeeperClient().getZooKeeper().getSessionId(),
            hostSession.checkExists().forPath(ROOT + "/hosts/7").getEphemeralOwner(),
            "the host node is ephemeral, owned by the host's session");

        assertNoAuth("an anonymous client reads the host node",
            () -> zk.anonymousClient().getData().forPath(ROOT + "/hosts/7"));
        assertNoAuth("an anonymous client reads an election node",
            () -> zk.anonymousClient().getData().forPath(ROOT + "/controller-election/" + latchNodes.get(0)));
        assertNoAuth("an anonymous client bumps an incarnation",
            () -> zk.anonymousClient().setData().forPath(ROOT + "/incarnations/7", ZooKeeperCounters.encode(0)));
        final ZooKeeperStoreException refused = assertThrows(ZooKeeperStoreException.class,
            () -> ZooKeeperCounters.incrementAndGet(zk.anonymousClient(), ROOT + "/incarnations/7"));
        assertInstanceOf(KeeperException.NoAuthException.class, refused.getCause(), refused.toString());
        assertArrayEquals("endpoint".getBytes(StandardCharsets.UTF_8),
            ZooKeeperHostLiveness.hostData(controllerSession, ROOT, 7), "the right credentials read it");
    }

    private static void checkTree(
        final CuratorFramework client, final String path, final List<ACL> expected, final List<String> checked)
        throws Exception
    {
        assertEquals(expected, client.getACL().forPath(path), "ACL of " + path);
        checked.add(path);
        for (final String child : client.getChildren().forPath(path))
        {
            checkTree(client, path + "/" + child, expected, checked);
        }
    }
}
