package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The start-up check of a cluster's ZooKeeper root: the root and every node under it (partition state, the
 * producer-id and controller-epoch counters, the cluster id, incarnations, hosts, the election, topic requests,
 * consumer offsets) must grant nothing to {@code world:anyone}. A node created by Tidemark carries only the
 * cluster's digest ACL; one created by hand (zkCli) or by someone else first may be open, and then anyone who can
 * reach ZooKeeper could delete partition state, reset the producer-id counter or replace the cluster id.
 * <p>
 * An open node is repaired when the credentials allow it (it grants ADMIN to {@code world:anyone} or to them): its
 * ACL becomes the cluster's digest ACL, and a warning names it. Otherwise the check fails with a
 * {@link ZooKeeperAclException} naming the node. Nodes above the root are not checked: ZooKeeper's own {@code /} is
 * open by default, and an open parent lets anyone delete the root only once it is empty.
 * <p>
 * Stateless; the walk is bounded by {@link #MAX_NODES}.
 */
public final class ZooKeeperRootCheck
{
    /** {@code world:anyone}: whoever reaches ZooKeeper, without credentials. */
    static final Id ANYONE = new Id("world", "anyone");

    /** Most nodes one check walks; a root with more is refused (it is not a Tidemark root). */
    public static final int MAX_NODES = 1_000_000;

    private ZooKeeperRootCheck()
    {
    }

    /** What a check found and did. */
    public record Result(int nodesChecked, List<String> repaired)
    {
    }

    /**
     * Check the root and everything under it; repair what the credentials allow.
     *
     * @param client a started client with the cluster's credentials.
     * @param root   the cluster's root path (it exists).
     * @param acl    the cluster's ACL, given to repaired nodes.
     * @param logger where each repair is reported, or null.
     * @return the nodes checked and the paths repaired.
     * @throws ZooKeeperAclException   for an open node these credentials may not change.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public static Result check(final CuratorFramework client, final String root, final List<ACL> acl,
        final System.Logger logger)
    {
        final List<String> repaired = new ArrayList<>();
        final Deque<String> pending = new ArrayDeque<>();
        pending.push(root);
        int checked = 0;
        while (!pending.isEmpty())
        {
            final String path = pending.pop();
            if (++checked > MAX_NODES)
            {
                throw new ZooKeeperAclException(root, "more than " + MAX_NODES + " znodes under " + root +
                    ": not a Tidemark root", null);
            }
            final Stat stat = new Stat();
            final List<ACL> current;
            final List<String> children;
            try
            {
                // ZooKeeper's own calls, in Curator's retry loop: Curator's ACL builders carry annotations this
                // build does not have
                current = org.apache.curator.RetryLoop.callWithRetry(client.getZookeeperClient(),
                    () -> client.getZookeeperClient().getZooKeeper().getACL(path, stat));
                children = client.getChildren().forPath(path);
            }
            catch (final KeeperException.NoNodeException ex)
            {
                continue; // gone meanwhile (an ephemeral node, an offset removed)
            }
            catch (final KeeperException.NoAuthException ex)
            {
                throw new ZooKeeperAclException(path, "ZooKeeper node " + path + " cannot be read with these " +
                    "credentials: it belongs to someone else", ex);
            }
            catch (final Exception ex)
            {
                throw ZooKeeperCounters.failure("cannot check the ACL of " + path, ex);
            }
            if (grantsToAnyone(current))
            {
                repair(client, path, stat.getAversion(), current, acl);
                repaired.add(path);
                if (null != logger)
                {
                    logger.log(System.Logger.Level.WARNING, "ZooKeeper node " + path + " granted " +
                        describe(current) + "; repaired: its ACL is now the cluster's digest ACL only");
                }
            }
            for (final String child : children)
            {
                pending.push(path + "/" + child);
            }
        }
        return new Result(checked, List.copyOf(repaired));
    }

    /** @return whether an ACL grants any permission to {@code world:anyone}. */
    static boolean grantsToAnyone(final List<ACL> acl)
    {
        for (final ACL entry : acl)
        {
            if (ANYONE.equals(entry.getId()) && entry.getPerms() != 0)
            {
                return true;
            }
        }
        return false;
    }

    private static void repair(final CuratorFramework client, final String path, final int aclVersion,
        final List<ACL> current, final List<ACL> acl)
    {
        try
        {
            org.apache.curator.RetryLoop.callWithRetry(client.getZookeeperClient(),
                () -> client.getZookeeperClient().getZooKeeper().setACL(path, acl, aclVersion));
        }
        catch (final KeeperException.NoAuthException ex)
        {
            throw new ZooKeeperAclException(path, "ZooKeeper node " + path + " grants " + describe(current) +
                " (anyone who reaches ZooKeeper may use it) and these credentials may not change its ACL; set it to " +
                "the cluster's digest ACL (setAcl " + path + " digest:<user>:<hash>:cdrwa) or remove the node", ex);
        }
        catch (final KeeperException.BadVersionException ex)
        {
            throw new ZooKeeperAclException(path, "ZooKeeper node " + path + " grants " + describe(current) +
                " and its ACL changed while it was being repaired; start again", ex);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            // gone meanwhile
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot repair the ACL of " + path, ex);
        }
    }

    private static String describe(final List<ACL> acl)
    {
        final StringBuilder text = new StringBuilder();
        for (final ACL entry : acl)
        {
            if (ANYONE.equals(entry.getId()))
            {
                text.append(text.length() == 0 ? "" : ", ").append("world:anyone:").append(perms(entry.getPerms()));
            }
        }
        return text.toString();
    }

    private static String perms(final int perms)
    {
        final StringBuilder text = new StringBuilder();
        text.append((perms & ZooDefs.Perms.CREATE) != 0 ? "c" : "");
        text.append((perms & ZooDefs.Perms.DELETE) != 0 ? "d" : "");
        text.append((perms & ZooDefs.Perms.READ) != 0 ? "r" : "");
        text.append((perms & ZooDefs.Perms.WRITE) != 0 ? "w" : "");
        text.append((perms & ZooDefs.Perms.ADMIN) != 0 ? "a" : "");
        return text.toString();
    }
}
