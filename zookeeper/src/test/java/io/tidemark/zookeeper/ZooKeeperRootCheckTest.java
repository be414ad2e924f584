package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The start-up check of a cluster's ZooKeeper root: a root, or any node under it, created open by hand (world:anyone)
 * is repaired when the credentials allow and refused with the node's path otherwise.
 */
class ZooKeeperRootCheckTest
{
    private static final String ROOT = "/tidemark/root-check";
    private static final List<ACL> OPEN = new ArrayList<>(List.of(new ACL(ZooDefs.Perms.ALL,
        ZooKeeperRootCheck.ANYONE)));
    private static final List<ACL> READ_ONLY = new ArrayList<>(List.of(new ACL(ZooDefs.Perms.READ,
        ZooKeeperRootCheck.ANYONE)));

    @RegisterExtension
    final TestZooKeeper zk = new TestZooKeeper();

    private ZooKeeperSettings settings()
    {
        return new ZooKeeperSettings().connectString(zk.connectString()).rootPath(ROOT).user("tidemark")
            .password("pw").sessionTimeoutMs(10_000).connectionTimeoutMs(10_000).conclude();
    }

    private CuratorFramework withCredentials()
    {
        return zk.closeAfterTest(settings().connectClient());
    }

    @Test
    void anOpenRootAndOpenNodesAreRepairedWhenTheCredentialsAllow() throws Exception
    {
        // created by hand, as zkCli would: open to anyone
        final CuratorFramework stranger = zk.anonymousClient();
        stranger.create().creatingParentsIfNeeded().withACL(OPEN)
            .forPath(ROOT + "/producer-ids", new byte[8]);
        stranger.create().withACL(READ_ONLY).forPath(ROOT + "/cluster-id",
            "c".getBytes(StandardCharsets.UTF_8));
        final CuratorFramework host = withCredentials();
        host.create().forPath(ROOT + "/partitions"); // the cluster's own: closed

        // the read-only node grants no ADMIN to anyone: it cannot be repaired
        final ZooKeeperAclException readOnly = assertThrows(ZooKeeperAclException.class,
            () -> ZooKeeperRootCheck.check(host, ROOT, settings().acl(), null));
        assertEquals(ROOT + "/cluster-id", readOnly.node(), readOnly.getMessage());
        assertTrue(readOnly.getMessage().contains("world:anyone:r"), readOnly.getMessage());
        assertFalse(ZooKeeperRootCheck.grantsToAnyone(host.getACL().forPath(ROOT)),
            "what could be repaired before the refusal was (the root, walked first)");

        host.delete().forPath(ROOT + "/cluster-id"); // the root was repaired first: only the cluster deletes under it
        final ZooKeeperRootCheck.Result result = ZooKeeperRootCheck.check(host, ROOT, settings().acl(), null);
        assertEquals(List.of(ROOT + "/producer-ids"), result.repaired());
        assertEquals(3, result.nodesChecked());
        for (final String path : List.of(ROOT, ROOT + "/producer-ids", ROOT + "/partitions"))
        {
            assertFalse(ZooKeeperRootCheck.grantsToAnyone(host.getACL().forPath(path)), path);
        }
        // now the stranger is locked out of what it created
        assertThrows(KeeperException.NoAuthException.class,
            () -> stranger.setData().forPath(ROOT + "/producer-ids", new byte[8]));
        assertThrows(KeeperException.NoAuthException.class, () -> stranger.delete().forPath(ROOT + "/partitions"));

        assertEquals(List.of(), ZooKeeperRootCheck.check(host, ROOT, settings().acl(), null).repaired(),
            "a second check has nothing to repair");
    }

    @Test
    void aNodeOfSomeoneElseThatIsOpenIsRefusedWithItsPath() throws Exception
    {
        final Id other = new Id("digest", DigestAuthenticationProvider.generateDigest("other:secret"));
        final CuratorFramework stranger = zk.anonymousClient();
        stranger.create().creatingParentsIfNeeded().withACL(OPEN).forPath(ROOT + "/partitions");
        // writable by anyone, but only another identity may change its ACL
        stranger.create().withACL(new ArrayList<>(List.of(new ACL(ZooDefs.Perms.READ | ZooDefs.Perms.WRITE,
            ZooKeeperRootCheck.ANYONE), new ACL(ZooDefs.Perms.ALL, other)))).forPath(ROOT + "/partitions/0",
            new byte[0]);
        final CuratorFramework host = withCredentials();
        final ZooKeeperAclException refused = assertThrows(ZooKeeperAclException.class,
            () -> ZooKeeperRootCheck.check(host, ROOT, settings().acl(), null));
        assertEquals(ROOT + "/partitions/0", refused.node());
        assertTrue(refused.getMessage().contains("world:anyone:rw"), refused.getMessage());
    }
}
