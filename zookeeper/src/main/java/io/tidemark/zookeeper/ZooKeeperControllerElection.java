package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.framework.recipes.cache.CuratorCache;
import org.apache.curator.framework.recipes.cache.CuratorCacheListener;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.Participant;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The election of one controller among the replica hosts, with Curator's {@link LeaderLatch} under
 * {@code <root>/controller-election}: every host that can run the controller joins with its host id; the latch
 * picks one; when its ZooKeeper session ends (the process dies, or it is cut off for longer than the session
 * timeout) or it leaves, another is picked. The elected host opens a {@link ZooKeeperControllerStore}, which fences
 * every controller before it, so a deposed controller that has not noticed yet cannot write.
 */
public final class ZooKeeperControllerElection implements AutoCloseable
{
    /** Child of the root under which the candidates' latch nodes live. */
    public static final String ELECTION = "controller-election";

    private final CuratorFramework client;
    private final LeaderLatch latch;
    private final int hostId;
    private final CuratorCache candidates;
    private final java.util.concurrent.atomic.AtomicLong changes = new java.util.concurrent.atomic.AtomicLong();
    /** This candidate's latch node once the candidates' cache has seen it (so that its absence then means deleted). */
    private volatile String seenOwnNode;

    /**
     * Join the election.
     *
     * @param client   a started Curator client (its session is the candidate's liveness).
     * @param rootPath the cluster's root znode.
     * @param hostId   this host's id.
     * @param listener told when this host becomes controller or stops being it (on a Curator thread), or null.
     */
    public ZooKeeperControllerElection(
        final CuratorFramework client, final String rootPath, final int hostId, final LeaderLatchListener listener)
    {
        this.client = client;
        this.hostId = hostId;
        this.latch = new LeaderLatch(client, rootPath + "/" + ELECTION, Integer.toString(hostId));
        if (null != listener)
        {
            latch.addListener(listener);
        }
        this.candidates = CuratorCache.build(client, rootPath + "/" + ELECTION);
        candidates.listenable().addListener(CuratorCacheListener.builder()
            .forAll((type, before, after) -> changes.incrementAndGet()).build());
        latch.addListener(new LeaderLatchListener()
        {
            @Override
            public void isLeader()
            {
                changes.incrementAndGet();
            }

            @Override
            public void notLeader()
            {
                changes.incrementAndGet();
            }
        });
        client.getConnectionStateListenable().addListener((c, state) -> changes.incrementAndGet());
        try
        {
            candidates.start();
            latch.start();
        }
        catch (final Exception ex)
        {
            candidates.close();
            throw new ZooKeeperStoreException("cannot join the controller election under " + rootPath, ex);
        }
    }

    /**
     * @return a number that changes whenever the election may have changed (a candidate joined or left, this host
     *         won or lost, the connection changed state): a caller re-reads {@link #controllerHostId()} only then,
     *         instead of asking ZooKeeper on every duty cycle.
     */
    public long changes()
    {
        return changes.get();
    }

    /**
     * Wait until this host is the controller.
     *
     * @return whether it became the controller within the timeout.
     */
    public boolean awaitLeadership(final long timeoutMs) throws InterruptedException
    {
        return latch.await(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /**
     * @return whether this host is the controller now: the latch says so and its node has not been deleted by a
     *         depose ({@link ZooKeeperControllerFailover}; Curator's latch does not notice its own node deleted).
     */
    public boolean isController()
    {
        return latch.hasLeadership() && !deposed();
    }

    /**
     * @return whether this candidate's latch node, seen before, is gone while the latch still holds leadership: the
     *         hosts deposed this controller. The caller leaves the election (and may join it again, at the end).
     */
    public boolean deposed()
    {
        final String own = latch.getOurPath();
        if (null == own)
        {
            return false;
        }
        if (candidates.get(own).isPresent())
        {
            seenOwnNode = own;
            return false;
        }
        return own.equals(seenOwnNode);
    }

    /** @return this candidate's host id. */
    public int hostId()
    {
        return hostId;
    }

    /**
     * @return the host id of the current controller as ZooKeeper has it, or -1 when there is none.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public int controllerHostId()
    {
        try
        {
            final Participant leader = latch.getLeader();
            return null == leader || !leader.isLeader() ? -1 : Integer.parseInt(leader.getId());
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the controller election", ex);
        }
    }

    /**
     * Leave the election (another host is elected if this one was the controller). With the client already closed
     * the session has ended, and with it the candidacy: nothing is left to do.
     */
    /**
     * The elected controller as the election's nodes say, for a host that is not a candidate now (it stepped down):
     * the candidate whose latch node has the lowest sequence number.
     *
     * @return its host id, or -1 when there is no candidate.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public static int controllerHostId(final CuratorFramework client, final String rootPath)
    {
        final String path = rootPath + "/" + ELECTION;
        try
        {
            String first = null;
            long lowest = Long.MAX_VALUE;
            for (final String child : client.getChildren().forPath(path))
            {
                final int dash = child.lastIndexOf('-');
                try
                {
                    final long sequence = Long.parseLong(child.substring(dash + 1));
                    if (sequence < lowest)
                    {
                        lowest = sequence;
                        first = child;
                    }
                }
                catch (final NumberFormatException ex)
                {
                    // not a latch node
                }
            }
            if (null == first)
            {
                return -1;
            }
            return Integer.parseInt(new String(client.getData().forPath(path + "/" + first),
                java.nio.charset.StandardCharsets.UTF_8).trim());
        }
        catch (final org.apache.zookeeper.KeeperException.NoNodeException ex)
        {
            return -1;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the controller election at " + path, ex);
        }
    }

    @Override
    public void close()
    {
        candidates.close();
        if (client.getState() == CuratorFrameworkState.STOPPED)
        {
            return;
        }
        try
        {
            latch.close();
        }
        catch (final IOException ex)
        {
            throw new ZooKeeperStoreException("cannot leave the controller election", ex);
        }
        catch (final IllegalStateException ex)
        {
            // already closed
        }
    }
}
