package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The two unconditional znode writes Tidemark makes in several places: "create it, or overwrite it" and "create it
 * unless it is there". Both create missing parents as persistent znodes and absorb the races with other writers
 * (a znode created, or deleted, between two of our calls). Conditional writes (compare-and-set on a version) are not
 * here: their callers own their retry rules ({@link ZooKeeperCounters}). Stateless; thread-safe as far as the
 * client is.
 */
public final class ZNodes
{
    /** Rounds of "set found no znode, create found one" before giving up: a znode deleted and re-made each time. */
    static final int MAX_UPSERT_ATTEMPTS = 10;

    private ZNodes()
    {
    }

    /**
     * Write {@code data} at {@code path}: overwrite the znode when it exists, create it (and its parents) when it
     * does not. The last writer wins.
     *
     * @throws KeeperException.NodeExistsException when the znode was deleted and re-made under us
     *                                              {@value #MAX_UPSERT_ATTEMPTS} times in a row.
     * @throws Exception                            any other failure of the client (Curator's style).
     */
    public static void upsert(final CuratorFramework client, final String path, final byte[] data) throws Exception
    {
        for (int attempt = 1; ; attempt++)
        {
            try
            {
                client.setData().forPath(path, data);
                return;
            }
            catch (final KeeperException.NoNodeException ex)
            {
                try
                {
                    client.create().creatingParentsIfNeeded().forPath(path, data);
                    return;
                }
                catch (final KeeperException.NodeExistsException raced)
                {
                    if (attempt >= MAX_UPSERT_ATTEMPTS)
                    {
                        throw raced;
                    }
                    // another writer created it between our two calls: overwrite it
                }
            }
        }
    }

    /**
     * Create the znode at {@code path} (and its parents) holding {@code data}, unless it exists already; an existing
     * znode is left as it is.
     *
     * @return true when this call created it, false when it was there (made by anyone, maybe a moment ago).
     * @throws Exception any failure of the client other than the znode existing (Curator's style).
     */
    public static boolean createIfAbsent(final CuratorFramework client, final String path, final byte[] data)
        throws Exception
    {
        try
        {
            client.create().creatingParentsIfNeeded().forPath(path, data);
            return true;
        }
        catch (final KeeperException.NodeExistsException ex)
        {
            return false;
        }
    }
}
