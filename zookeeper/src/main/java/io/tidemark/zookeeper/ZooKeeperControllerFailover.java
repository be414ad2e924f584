package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Failover of a dead controller in well under a ZooKeeper session: the hosts' own view decides, ZooKeeper arbitrates.
 * <p>
 * <b>The rule.</b> The controller announces itself to every host every heartbeat interval over the control channel
 * (authenticated by the cluster secret like every control message; a host takes such a message only from the host
 * the election names as controller, and never one of an older controller epoch than it heard). A host that has not
 * heard the elected controller for longer than the controller timeout <em>suspects</em> it: it writes an ephemeral
 * vote {@code <root>/controller-votes/<its host id>} naming the controller's election node (the latch node with the
 * lowest sequence under {@code <root>/controller-election}), and rewrites it while the silence lasts, so that the
 * vote's modification time (set by the ZooKeeper servers, one clock for every voter) stays fresh. Once votes of a
 * <em>majority of the cluster's hosts</em> (counting every configured host, the suspect included) name the same
 * node, each fresh (modified within {@link #freshnessMs} of the counting host's own latest vote; only the votes of
 * the configured host ids count, read with the epoch in one round trip), any voter
 * <em>deposes</em> the controller in one ZooKeeper transaction: the node must still exist, the controller epoch
 * is bumped at the version read, {@code <root>/controller-deposed} records the host and the epoch after the bump,
 * and the node is deleted. The latch then elects the next candidate at once, whose store bumps the epoch again.
 * A host that hears the controller again withdraws its vote.
 * <p>
 * <b>Failure cases</b> (each is why a part of the rule is there):
 * <ul>
 *   <li><b>The controller is paused</b> (GC, SIGSTOP) for longer than the timeout and resumes. The hosts depose it
 *   meanwhile; the deposing transaction bumped the epoch, so every write its store makes after that fails with
 *   {@link ControllerFencedException}, whether or not it has noticed: a decision in flight (an election, an ISR
 *   change, a topic half-created) either committed before the bump, and the next controller loads it, or fails
 *   and is dropped: the controller stops at once and never retries it (the next controller decides again from the
 *   stored state; a topic cut short is completed by it). Its own election sees its node gone and it steps down,
 *   rejoining the election at the end of the line. Its control messages to hosts after the change are dropped:
 *   they come from a host that is no longer the elected controller, or carry an older epoch.</li>
 *   <li><b>The controller is cut off from the majority but not from ZooKeeper.</b> Its session lives on, so
 *   ZooKeeper alone would keep it forever; the majority's votes depose it as above and it is fenced in ZooKeeper,
 *   where it could still write. A minority cut off from the controller (one host of three) cannot depose it.</li>
 *   <li><b>Two hosts both decide to depose.</b> The transaction requires the node to exist and the epoch to be
 *   at the version read: one wins, the other's fails and changes nothing. Nobody takes over by deposing: the
 *   latch's order elects the next controller, so two hosts never both believe they were elected.</li>
 *   <li><b>A forged or replayed "controller is dead".</b> Votes are znodes writable only with the cluster's
 *   ZooKeeper credentials; a vote names one election node, whose sequential name is never reused, so a replayed
 *   vote against an earlier controller counts for nothing against the current one; a vote older than the
 *   freshness window does not count. A forged or replayed "controller is alive" on the control channel fails the
 *   transport's authentication, or is from a host that is not the controller, or is of an older epoch: dropped.
 *   At worst a forged one delays a failover to the ZooKeeper session's expiry, never makes one.</li>
 *   <li><b>The dead controller's ephemeral nodes stay for a session (18 s).</b> Its election node is deleted by
 *   the depose, so it stops counting; its host registration ({@code <root>/hosts/<id>}) stays until the session
 *   ends, and the new controller does not take it for life: it reads {@code controller-deposed} and gives that host
 *   only a short grace (it keeps its leaderships only if it heartbeats to the new controller). Its votes, if it
 *   had any, stop counting when they stop being fresh.</li>
 *   <li><b>A ZooKeeper restart</b> costs no controller: the election node and session survive a short outage,
 *   hosts keep hearing the controller over the control channel (announcements do not need ZooKeeper), so nobody
 *   votes, and the same controller keeps its epoch.</li>
 *   <li><b>A voter dies after voting.</b> Its ephemeral vote stays until its session expires, but stops being fresh
 *   within {@link #freshnessMs}: a single surviving suspicious host cannot borrow it for a majority.</li>
 * </ul>
 * A cluster of two hosts has no majority without the controller's host: there the ZooKeeper session decides, as
 * before. Not thread-safe: one host's controller role thread uses it.
 */
public final class ZooKeeperControllerFailover
{
    /** Child of the root holding the hosts' ephemeral votes against the controller. */
    public static final String VOTES = "controller-votes";
    /** Child of the root recording the last deposed controller: {@code "<host id> <controller epoch after>"}. */
    public static final String DEPOSED = "controller-deposed";

    /**
     * The elected controller as the election's nodes say.
     *
     * @param node   its latch node's name (a child of the election node).
     * @param hostId its host id.
     */
    public record Incumbent(String node, int hostId)
    {
    }

    private final CuratorFramework client;
    private final String root;
    private final int hostId;
    private final int clusterSize;
    private final long freshnessMs;
    private String votedAgainst;
    private long lastVoteMtime;

    /**
     * @param client      a started Curator client (the host's).
     * @param root        the cluster's root znode.
     * @param hostId      this host's id.
     * @param clusterSize the number of hosts the cluster is configured with: a majority of it deposes.
     * @param freshnessMs how much older than this host's latest vote another vote may be and still count.
     */
    public ZooKeeperControllerFailover(final CuratorFramework client, final String root, final int hostId,
        final int clusterSize, final long freshnessMs)
    {
        this.client = client;
        this.root = root;
        this.hostId = hostId;
        this.clusterSize = clusterSize;
        this.freshnessMs = freshnessMs;
    }

    /** @return the votes needed to depose: a majority of the configured hosts. */
    public int majority()
    {
        return clusterSize / 2 + 1;
    }

    private String electionPath()
    {
        return root + "/" + ZooKeeperControllerElection.ELECTION;
    }

    private String votePath(final int host)
    {
        return root + "/" + VOTES + "/" + host;
    }

    /**
     * @return the elected controller (the latch node with the lowest sequence number and its host id), or null when
     *         there is none.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public Incumbent incumbent()
    {
        try
        {
            final List<String> children;
            try
            {
                children = client.getChildren().forPath(electionPath());
            }
            catch (final KeeperException.NoNodeException ex)
            {
                return null;
            }
            String first = null;
            long lowest = Long.MAX_VALUE;
            for (final String child : children)
            {
                final long sequence = sequence(child);
                if (sequence >= 0 && sequence < lowest)
                {
                    lowest = sequence;
                    first = child;
                }
            }
            if (null == first)
            {
                return null;
            }
            final int host = parseHost(client.getData().forPath(electionPath() + "/" + first));
            return host < 0 ? null : new Incumbent(first, host);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            return null; // the node went between the listing and the read: asked again next time
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the controller election at " + electionPath(), ex);
        }
    }

    private static long sequence(final String child)
    {
        final int dash = child.lastIndexOf('-');
        try
        {
            return Long.parseLong(child.substring(dash + 1));
        }
        catch (final NumberFormatException ex)
        {
            return -1; // not a latch node
        }
    }

    private static int parseHost(final byte[] data)
    {
        try
        {
            final int host = Integer.parseInt(new String(data, StandardCharsets.UTF_8).trim());
            return host >= 0 ? host : -1;
        }
        catch (final NumberFormatException ex)
        {
            return -1;
        }
    }

    /**
     * Vote against {@code incumbent} (or refresh the vote): this host has not heard it for longer than the timeout.
     *
     * @throws ZooKeeperStoreException when ZooKeeper cannot be written.
     */
    public void suspect(final Incumbent incumbent)
    {
        final String path = votePath(hostId);
        final byte[] data = (incumbent.node() + " " + incumbent.hostId()).getBytes(StandardCharsets.UTF_8);
        try
        {
            // one round trip in the common cases: a first vote creates (and a vote left from a suspicion that passed
            // is overwritten), a refreshed one overwrites; the node's stat comes with the answer
            Stat stat = new Stat();
            if (null == votedAgainst)
            {
                try
                {
                    client.create().storingStatIn(stat).creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                        .forPath(path, data);
                }
                catch (final KeeperException.NodeExistsException ex)
                {
                    stat = client.setData().forPath(path, data);
                }
            }
            else
            {
                try
                {
                    stat = client.setData().forPath(path, data);
                }
                catch (final KeeperException.NoNodeException ex)
                {
                    client.create().storingStatIn(stat).creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                        .forPath(path, data);
                }
            }
            votedAgainst = incumbent.node();
            lastVoteMtime = null == stat ? System.currentTimeMillis() : stat.getMtime();
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot vote against the controller at " + path, ex);
        }
    }

    /** @return the election node this host votes against now, or null. */
    public String votedAgainst()
    {
        return votedAgainst;
    }

    /** Withdraw this host's vote (it hears the controller again, or the controller changed). Quiet on failure. */
    public void withdraw()
    {
        if (null == votedAgainst)
        {
            return;
        }
        try
        {
            client.delete().quietly().forPath(votePath(hostId));
            votedAgainst = null;
        }
        catch (final Exception ex)
        {
            // asked again at the next duty cycle; a stale vote also stops counting once it is not fresh
        }
    }

    /**
     * @return the hosts whose fresh votes name {@code incumbent}'s node, this host's included when it voted.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public int freshVotesAgainst(final Incumbent incumbent)
    {
        return countFresh(incumbent, readVotesAnd(new String[0]));
    }

    /**
     * Read the vote of every configured host ({@code <root>/controller-votes/<host id>} for host ids in
     * {@code [0, clusterSize)}: nothing else under the votes node counts) and {@code more} znodes, all at once
     * (pipelined on the session: one round trip, where a listing and one read per vote were several).
     *
     * @return the reads: the votes by host id, then {@code more} in order; null where there is no znode.
     */
    private ZNodes.Read[] readVotesAnd(final String[] more)
    {
        final String[] paths = new String[clusterSize + more.length];
        for (int host = 0; host < clusterSize; host++)
        {
            paths[host] = votePath(host);
        }
        System.arraycopy(more, 0, paths, clusterSize, more.length);
        try
        {
            return ZNodes.readAll(client, paths);
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the votes at " + root + "/" + VOTES, ex);
        }
    }

    private int countFresh(final Incumbent incumbent, final ZNodes.Read[] reads)
    {
        final String expected = incumbent.node() + " ";
        int count = 0;
        for (int host = 0; host < clusterSize; host++)
        {
            final ZNodes.Read vote = reads[host];
            if (null != vote && new String(vote.data(), StandardCharsets.UTF_8).startsWith(expected) &&
                vote.stat().getMtime() >= lastVoteMtime - freshnessMs)
            {
                count++;
            }
        }
        return count;
    }

    /**
     * Depose {@code incumbent} if a majority of fresh votes names it: in one transaction, check its node, bump the
     * controller epoch at the version read (fencing its store at once), record it as deposed and delete its node.
     *
     * @return whether this call deposed it (false: too few votes, or it is gone or deposed by another host already).
     * @throws ZooKeeperStoreException when ZooKeeper cannot be reached.
     */
    public boolean tryDepose(final Incumbent incumbent)
    {
        final String node = electionPath() + "/" + incumbent.node();
        final String epochPath = root + "/" + ZooKeeperControllerStore.CONTROLLER_EPOCH;
        final String deposedPath = root + "/" + DEPOSED;
        // the votes, the epoch and the record of the deposed in one round trip; what they say is checked by the
        // transaction (the node still there, the epoch at the version read), as when they were read one by one
        final ZNodes.Read[] reads = readVotesAnd(new String[] {epochPath, deposedPath});
        if (countFresh(incumbent, reads) < majority())
        {
            return false;
        }
        final ZNodes.Read epochRead = reads[clusterSize];
        if (null == epochRead)
        {
            return false; // no controller has claimed an epoch: nothing to depose yet
        }
        try
        {
            final Stat epochStat = epochRead.stat();
            final long epoch = ZooKeeperCounters.decode(epochPath, epochRead.data());
            if (null == reads[clusterSize + 1])
            {
                ZNodes.createIfAbsent(client, deposedPath, new byte[0]);
            }
            client.transaction().forOperations(
                client.transactionOp().check().forPath(node),
                client.transactionOp().setData().withVersion(epochStat.getVersion())
                    .forPath(epochPath, ZooKeeperCounters.encode(epoch + 1)),
                client.transactionOp().setData().forPath(deposedPath,
                    (incumbent.hostId() + " " + (epoch + 1)).getBytes(StandardCharsets.UTF_8)),
                client.transactionOp().delete().forPath(node));
            return true;
        }
        catch (final KeeperException.NoNodeException | KeeperException.BadVersionException ex)
        {
            return false; // gone, or the epoch moved (deposed by another voter, or a new controller took over)
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot depose the controller at " + node, ex);
        }
    }

    /**
     * Delete election nodes a previous incarnation of this host left (it was killed; its session has not expired):
     * a host starting again must not wait a ZooKeeper session for its own dead candidacy. When that node is the
     * elected one (the previous incarnation was the controller), the epoch is bumped in the same transaction, as a
     * depose does, in case that incarnation is in fact alive (two processes of one host id are refused elsewhere, but
     * fencing does not rely on it); a node that is not elected is deleted only while the elected node it is behind
     * is still there, and the live controller's epoch is left alone.
     *
     * @param ownSession the session id of this process's client: nodes it owns are not stale.
     * @return the stale nodes deleted.
     */
    public int deleteStaleCandidacies(final long ownSession)
    {
        int deleted = 0;
        try
        {
            final List<String> children;
            try
            {
                children = client.getChildren().forPath(electionPath());
            }
            catch (final KeeperException.NoNodeException ex)
            {
                return 0;
            }
            String lowest = null;
            for (final String child : children)
            {
                final long sequence = sequence(child);
                if (sequence >= 0 && (null == lowest || sequence < sequence(lowest)))
                {
                    lowest = child;
                }
            }
            for (final String child : children)
            {
                final String path = electionPath() + "/" + child;
                final Stat stat = new Stat();
                try
                {
                    if (parseHost(client.getData().storingStatIn(stat).forPath(path)) != hostId ||
                        stat.getEphemeralOwner() == ownSession)
                    {
                        continue;
                    }
                    if (!child.equals(lowest))
                    {
                        client.transaction().forOperations(
                            client.transactionOp().check().forPath(electionPath() + "/" + lowest),
                            client.transactionOp().delete().withVersion(stat.getVersion()).forPath(path));
                        deleted++;
                        continue;
                    }
                    final String epochPath = root + "/" + ZooKeeperControllerStore.CONTROLLER_EPOCH;
                    final Stat epochStat = new Stat();
                    final byte[] epochData;
                    try
                    {
                        epochData = client.getData().storingStatIn(epochStat).forPath(epochPath);
                    }
                    catch (final KeeperException.NoNodeException ex)
                    {
                        client.delete().withVersion(stat.getVersion()).forPath(path); // no controller ever ran
                        deleted++;
                        continue;
                    }
                    client.transaction().forOperations(
                        client.transactionOp().setData().withVersion(epochStat.getVersion())
                            .forPath(epochPath, ZooKeeperCounters.encode(ZooKeeperCounters.decode(epochPath,
                            epochData) + 1)),
                        client.transactionOp().delete().withVersion(stat.getVersion()).forPath(path));
                    deleted++;
                }
                catch (final KeeperException.NoNodeException | KeeperException.BadVersionException ex)
                {
                    // gone meanwhile, or the election or the epoch moved: its session's end removes it
                }
            }
            return deleted;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot clear this host's stale candidacies at " + electionPath(), ex);
        }
    }

    /**
     * @return the host the last depose removed, when that depose is what the controller epoch {@code claimedEpoch}
     *         immediately followed (the depose's bump, then this controller's), else -1.
     */
    public static int deposedBefore(final CuratorFramework client, final String root, final long claimedEpoch)
    {
        try
        {
            final String[] words = new String(client.getData().forPath(root + "/" + DEPOSED),
                StandardCharsets.UTF_8).trim().split(" ");
            if (words.length == 2 && Long.parseLong(words[1]) == claimedEpoch - 1)
            {
                return Integer.parseInt(words[0]);
            }
            return -1;
        }
        catch (final Exception ex)
        {
            return -1; // none recorded, or damaged: the deposed host gets the full grace, as without a depose
        }
    }
}
