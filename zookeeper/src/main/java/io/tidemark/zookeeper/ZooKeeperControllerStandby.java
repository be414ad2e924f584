package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.cache.ChildData;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * A controller candidate's warm copy of what a {@link ZooKeeperControllerStore} loads when it opens: the partition
 * znodes (data and stat) and the controller epoch, kept current in memory by Curator caches (persistent watches),
 * so that a candidate elected after a controller failure opens its store with one transaction and one listing
 * instead of reading every partition twice.
 * <p>
 * <b>Never trusted as it is.</b> The copy is a guess at the current state: the store takes it over only where one
 * transaction proves it current (the epoch claim checks the version of every partition znode in the copy, and of
 * the epoch znode) and a listing after the claim shows the same partitions, created by the same writes (see
 * {@link ZooKeeperControllerStore}); anything else, or a copy that is not complete yet, and the store reads ZooKeeper
 * as without a standby. Its bytes are znode content like any other: the store decodes and checks each partition as
 * it does what it reads (a damaged one is quarantined), and an epoch znode that is not 8 bytes makes no
 * {@link View} (the store's own read then names the damage).
 * <p>
 * Thread-safe: the caches are filled on Curator's threads; {@link #view()} takes a copy on the caller's.
 */
public final class ZooKeeperControllerStandby implements AutoCloseable
{
    /** More partition znodes than this and no view is taken: the claim's transaction would be too large. */
    public static final int MAX_VIEW_PARTITIONS = 4_096;

    private final String partitionsPath;
    private final String epochPath;
    private final CuratorCache partitions;
    private final CuratorCache epoch;
    private volatile boolean partitionsInitialized;
    private volatile boolean epochInitialized;

    /**
     * Start watching the controller state under {@code rootPath}; the first {@link View} is there once both caches
     * have read what exists.
     *
     * @param client   a started Curator client.
     * @param rootPath the cluster's root znode.
     * @throws ZooKeeperStoreException when the caches cannot start.
     */
    public ZooKeeperControllerStandby(final CuratorFramework client, final String rootPath)
    {
        this.partitionsPath = rootPath + "/" + ZooKeeperControllerStore.PARTITIONS;
        this.epochPath = rootPath + "/" + ZooKeeperControllerStore.CONTROLLER_EPOCH;
        this.partitions = CuratorCache.build(client, partitionsPath);
        this.epoch = CuratorCache.build(client, epochPath, CuratorCache.Options.SINGLE_NODE_CACHE);
        partitions.listenable().addListener(CuratorCacheListener.builder()
            .forInitialized(() -> partitionsInitialized = true).build());
        epoch.listenable().addListener(CuratorCacheListener.builder()
            .forInitialized(() -> epochInitialized = true).build());
        try
        {
            partitions.start();
            epoch.start();
        }
        catch (final RuntimeException ex)
        {
            close();
            throw new ZooKeeperStoreException("cannot watch the controller state under " + rootPath, ex);
        }
    }

    /**
     * @return a copy of the cached state, or null while the caches are not complete, when the partitions node or
     *         the epoch znode is missing, the epoch znode does not hold 8 bytes, or more than
     *         {@link #MAX_VIEW_PARTITIONS} partitions are cached.
     */
    public View view()
    {
        if (!partitionsInitialized || !epochInitialized)
        {
            return null;
        }
        final Optional<ChildData> epochData = epoch.get(epochPath);
        if (epochData.isEmpty() || null == epochData.get().getData() || null == epochData.get().getStat() ||
            epochData.get().getData().length != Long.BYTES || partitions.get(partitionsPath).isEmpty())
        {
            return null;
        }
        final Map<String, ChildData> children = new HashMap<>();
        final String prefix = partitionsPath + "/";
        final boolean[] tooMany = new boolean[1];
        partitions.stream().forEach(node ->
        {
            final String path = node.getPath();
            if (path.startsWith(prefix) && path.indexOf('/', prefix.length()) < 0 && null != node.getStat())
            {
                if (children.size() >= MAX_VIEW_PARTITIONS)
                {
                    tooMany[0] = true;
                }
                else
                {
                    children.put(path.substring(prefix.length()), node);
                }
            }
        });
        if (tooMany[0])
        {
            return null;
        }
        final ChildData epochNode = epochData.get();
        return new View(ZooKeeperCounters.decode(epochPath, epochNode.getData()), epochNode.getStat().getVersion(),
            children);
    }

    @Override
    public void close()
    {
        partitions.close();
        epoch.close();
    }

    /**
     * A copy of the cached controller state, possibly stale: proven current or dropped by the store's claim.
     *
     * @param epoch        the controller epoch the epoch znode held.
     * @param epochVersion the epoch znode's version then.
     * @param children     the partition znodes by child name (not yet checked to be partition ids).
     */
    public record View(long epoch, int epochVersion, Map<String, ChildData> children)
    {
        /**
         * @return the newest creation zxid of the partition znodes in the view; with no deletes under the
         *         partitions node, the node's {@code pzxid} while no partition was created or deleted since.
         */
        public long newestCreation()
        {
            long newest = Long.MIN_VALUE;
            for (final ChildData child : children.values())
            {
                newest = Math.max(newest, child.getStat().getCzxid());
            }
            return newest;
        }
    }
}
