package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

/**
 * The two unconditional znode writes Tidemark makes in several places: "create it, or overwrite it" and "create it
 * unless it is there". Both create missing parents as persistent znodes and absorb the races with other writers
 * (a znode created, or deleted, between two of our calls). Conditional writes (compare-and-set on a version) are not
 * here: their callers own their retry rules ({@link ZooKeeperCounters}). And reads of several znodes in one round
 * trip ({@link #readAll}). Stateless; thread-safe as far as the client is.
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

    /**
     * A znode's content and stat as read.
     *
     * @param data its data (never null: empty for none).
     * @param stat its stat.
     */
    record Read(byte[] data, org.apache.zookeeper.data.Stat stat)
    {
    }

    /**
     * Read several znodes at once: every read is sent before the first answer is awaited (in order, on the client's
     * session), so they take one round trip, not one each.
     *
     * @return a read for each of {@code paths}, in order; null where there is no znode.
     * @throws Exception the first failure other than a missing znode (Curator's style), or a
     *                   {@link ZooKeeperStoreException} when the answers do not come within the client's connection
     *                   timeout.
     */
    static Read[] readAll(final CuratorFramework client, final String[] paths) throws Exception
    {
        final Read[] reads = new Read[paths.length];
        final java.util.concurrent.CountDownLatch answered = new java.util.concurrent.CountDownLatch(paths.length);
        final java.util.concurrent.atomic.AtomicReference<Exception> failure =
            new java.util.concurrent.atomic.AtomicReference<>();
        for (int i = 0; i < paths.length; i++)
        {
            final int index = i;
            client.getData().inBackground((c, event) ->
            {
                final int rc = event.getResultCode();
                if (rc == KeeperException.Code.OK.intValue())
                {
                    reads[index] = new Read(null == event.getData() ? new byte[0] : event.getData(), event.getStat());
                }
                else if (rc != KeeperException.Code.NONODE.intValue())
                {
                    failure.compareAndSet(null, KeeperException.create(KeeperException.Code.get(rc), event.getPath()));
                }
                answered.countDown();
            }).forPath(paths[i]);
        }
        final long timeoutMs = client.getZookeeperClient().getConnectionTimeoutMs();
        if (!answered.await(timeoutMs, java.util.concurrent.TimeUnit.MILLISECONDS))
        {
            throw new ZooKeeperStoreException("no answer within " + timeoutMs + " ms reading " +
                java.util.Arrays.toString(paths), null);
        }
        if (null != failure.get())
        {
            throw failure.get();
        }
        return reads;
    }
}
