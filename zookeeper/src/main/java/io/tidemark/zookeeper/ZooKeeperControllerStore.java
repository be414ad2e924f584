package io.tidemark.zookeeper;

import io.tidemark.replication.spi.CachedControllerStore;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.Stat;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The controller's durable state in ZooKeeper, through Apache Curator, so that controllers on several machines share
 * it. Under a root path:
 * <pre>
 *  &lt;root&gt;/partitions/&lt;id&gt;   one znode per partition; data: {@link PartitionStateCodec}; the znode's version
 *                              is the state's version
 *  &lt;root&gt;/producer-ids       8 bytes, little-endian: the first producer id not yet reserved
 *  &lt;root&gt;/controller-epoch   8 bytes, little-endian: bumped by every store that opens (a controller taking over)
 * </pre>
 * <b>Damaged state is quarantined.</b> A partition whose znode is missing (ids are dense), cannot be decoded, names
 * another id or version than its znode's, or assigns a host outside the cluster is left out of {@link #all()} and
 * {@link #get}, and named with why in {@link #damaged()}; the controller serves the rest. {@link #checkDamaged} reads a
 * quarantined partition again without changing the store (has it been repaired?).
 * <b>Fencing.</b> Opening a store is taking over as controller: it bumps the controller epoch, and every write it
 * makes afterwards is a ZooKeeper transaction that also checks the epoch znode still has the version its bump gave
 * it. Once a newer controller has opened its store, every write of the older one fails with
 * {@link ControllerFencedException}, even where its view of the partition is current: two controllers never both
 * decide. Pair it with {@link ZooKeeperControllerElection}, so that only the elected host opens a store.
 * Every change is a compare-and-set on the znode's version ({@code setData().withVersion(expected)}), so a
 * controller working from an old view of a partition, even one that does not know it has been replaced, cannot
 * overwrite what a newer one wrote: its write fails, the store re-reads the partition, and the controller decides
 * again. Producer ids are reserved by compare-and-set on their znode, so two controllers never hand out the same
 * one.
 * <p>
 * <b>Access.</b> Opened with {@link #connect(ZooKeeperSettings)}, the store authenticates with the settings' digest
 * credentials and every znode it creates can be read or changed only with them (see {@link ZooKeeperSettings}).
 * <p>
 * Reads come from the store's copy, loaded when it opens and refreshed on every lost compare-and-set. Not
 * thread-safe (the controller serializes access). Failures to reach ZooKeeper, after Curator's retries, are
 * {@link ZooKeeperStoreException}s.
 */
public final class ZooKeeperControllerStore extends CachedControllerStore
{
    /** Child of the root holding one znode per partition. */
    public static final String PARTITIONS = "partitions";
    /** Child of the root holding the producer id reservation. */
    public static final String PRODUCER_IDS = "producer-ids";
    /** Child of the root holding the controller epoch. */
    public static final String CONTROLLER_EPOCH = "controller-epoch";

    private final CuratorFramework client;
    private final boolean ownsClient;
    private final String root;
    private final int maxHosts;
    private long controllerEpoch;
    private int epochZnodeVersion;
    private int lastCounterVersion;
    private boolean tookOver;

    /**
     * Open the store under {@code rootPath} (created if missing) and load every partition.
     *
     * @param client     a started Curator client.
     * @param rootPath   the cluster's root znode, e.g. {@code /tidemark/orders-cluster}.
     * @param ownsClient whether {@link #close} closes the client.
     */
    public ZooKeeperControllerStore(final CuratorFramework client, final String rootPath, final boolean ownsClient)
    {
        this(client, rootPath, ownsClient, PartitionState.MAX_HOSTS);
    }

    /**
     * Open the store under {@code rootPath} (created if missing) and load every partition; a partition whose state
     * names a host outside {@code [0, maxHosts)} is damaged (quarantined).
     *
     * @param client     a started Curator client.
     * @param rootPath   the cluster's root znode.
     * @param ownsClient whether {@link #close} closes the client.
     * @param maxHosts   host ids of the cluster are in {@code [0, maxHosts)}.
     */
    public ZooKeeperControllerStore(final CuratorFramework client, final String rootPath, final boolean ownsClient,
        final int maxHosts)
    {
        this(client, rootPath, ownsClient, maxHosts, (ZooKeeperControllerStandby.View)null);
    }

    /**
     * Open the store under {@code rootPath} from a candidate's warm copy of the state where one transaction proves
     * the copy current (see {@link #takeOver}), otherwise by reading ZooKeeper as the other constructors do.
     *
     * @param client   a started Curator client.
     * @param rootPath the cluster's root znode.
     * @param ownsClient whether {@link #close} closes the client.
     * @param maxHosts host ids of the cluster are in {@code [0, maxHosts)}.
     * @param standby  the candidate's copy of the state, or null to read ZooKeeper.
     */
    public ZooKeeperControllerStore(final CuratorFramework client, final String rootPath, final boolean ownsClient,
        final int maxHosts, final ZooKeeperControllerStandby standby)
    {
        this(client, rootPath, ownsClient, maxHosts, null == standby ? null : standby.view());
    }

    /** Open from {@code view} where it is proven current (null: read ZooKeeper); tests give a stale one. */
    ZooKeeperControllerStore(final CuratorFramework client, final String rootPath, final boolean ownsClient,
        final int maxHosts, final ZooKeeperControllerStandby.View view)
    {
        if (null == rootPath || !rootPath.startsWith("/") || rootPath.endsWith("/"))
        {
            throw new IllegalArgumentException("root path must start with / and not end with one: " + rootPath);
        }
        this.client = client;
        this.ownsClient = ownsClient;
        this.root = rootPath;
        this.maxHosts = maxHosts;
        try
        {
            if (takeOver(view))
            {
                return;
            }
            ensure(partitionsPath());
            // Read before claiming: a controller that cannot load fails here without bumping the epoch, so a retry
            // loop of a failing controller does not move it; the second load sees what its predecessor wrote up to
            // the claim.
            load();
            claimControllerEpoch();
            load();
        }
        catch (final RuntimeException ex)
        {
            if (ownsClient)
            {
                client.close();
            }
            throw ex;
        }
    }

    /**
     * Connect to ZooKeeper and open the store; the store owns the client.
     *
     * @param connectString       ZooKeeper servers, {@code host:port[,host:port...]}.
     * @param rootPath            the cluster's root znode.
     * @param sessionTimeoutMs    ZooKeeper session timeout.
     * @param connectionTimeoutMs how long to wait for the first connection.
     * @return the store.
     * @throws ZooKeeperStoreException when no server answers within the connection timeout.
     */
    public static ZooKeeperControllerStore connect(
        final String connectString, final String rootPath, final int sessionTimeoutMs, final int connectionTimeoutMs)
    {
        final CuratorFramework client = CuratorFrameworkFactory.newClient(connectString, sessionTimeoutMs,
            connectionTimeoutMs, new ExponentialBackoffRetry(100, 3));
        return new ZooKeeperControllerStore(
            ZooKeeperSettings.startAndAwaitConnection(client, connectString, connectionTimeoutMs), rootPath, true);
    }

    /**
     * Connect to ZooKeeper with digest credentials and open the store under the settings' root; the store owns the
     * client. Every znode the store creates carries the settings' ACL ({@link ZooKeeperSettings#aclId()} only).
     *
     * @param settings the servers, root, credentials and timeouts; concluded here when not already.
     * @return the store.
     * @throws io.tidemark.store.ConfigException when a setting is invalid.
     * @throws ZooKeeperStoreException           when no server answers within the connection timeout, or the
     *                                           root cannot be read or created (with these credentials, say).
     */
    public static ZooKeeperControllerStore connect(final ZooKeeperSettings settings)
    {
        settings.conclude();
        return new ZooKeeperControllerStore(settings.connectClient(), settings.rootPath(), true);
    }

    private String partitionsPath()
    {
        return root + "/" + PARTITIONS;
    }

    private void ensure(final String path)
    {
        try
        {
            client.create().creatingParentsIfNeeded().forPath(path);
        }
        catch (final KeeperException.NodeExistsException ex)
        {
            // there already
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot create " + path, ex);
        }
    }

    private String epochPath()
    {
        return root + "/" + CONTROLLER_EPOCH;
    }

    /** Take over as controller: bump the epoch; writes of stores opened before this one are fenced from now on. */
    private void claimControllerEpoch()
    {
        controllerEpoch = addToCounter(epochPath(), 1, false, "claim the controller epoch") + 1;
        epochZnodeVersion = lastCounterVersion;
    }

    /**
     * Add {@code delta} to the 8-byte counter at {@code path} (created at 0 when missing) by compare-and-set on its
     * version (see {@link ZooKeeperCounters}); {@link #lastCounterVersion} is the version written.
     *
     * @param fenced whether the write also checks that no newer controller has opened a store.
     * @return the counter's value before the addition.
     */
    private long addToCounter(final String path, final long delta, final boolean fenced, final String what)
    {
        return ZooKeeperCounters.getAndAdd(client, path, delta, what, (p, version, data) ->
        {
            if (fenced)
            {
                fenced(client.transactionOp().setData().withVersion(version).forPath(p, data), what);
                lastCounterVersion = version + 1;
            }
            else
            {
                lastCounterVersion = client.setData().withVersion(version).forPath(p, data).getVersion();
            }
        });
    }

    /**
     * @return whether the store opened from a candidate's warm copy ({@link ZooKeeperControllerStandby}): its claim
     *         proved the copy's partition versions current (the partitions may still have been listed again after).
     */
    public boolean openedFromStandby()
    {
        return tookOver;
    }

    /** @return the controller epoch this store claimed when it opened. */
    public long controllerEpoch()
    {
        return controllerEpoch;
    }

    /**
     * Write {@code data} at {@code path} (overwrite, or create with parents), fenced like every write of the store:
     * for the controller's writes outside the partition state (topic records, topic requests, published limits), so
     * that a deposed controller that has not noticed yet cannot make them either.
     *
     * @throws ControllerFencedException when a newer controller has opened a store, or the hosts deposed this one.
     * @throws Exception                 a failure of the client (Curator's style).
     */
    public void fencedUpsert(final String path, final byte[] data) throws Exception
    {
        try
        {
            fenced(client.transactionOp().setData().forPath(path, data), "write " + path);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            final int slash = path.lastIndexOf('/');
            if (slash > 0)
            {
                ensure(path.substring(0, slash));
            }
            fenced(client.transactionOp().create().forPath(path, data), "create " + path);
        }
    }

    /**
     * Overwrite the existing znode at {@code path}, fenced (see {@link #fencedUpsert}).
     *
     * @throws KeeperException.NoNodeException when there is none.
     * @throws ControllerFencedException       when this controller was superseded.
     */
    public void fencedSetData(final String path, final byte[] data) throws Exception
    {
        fenced(client.transactionOp().setData().forPath(path, data), "write " + path);
    }

    /**
     * Delete the znode at {@code path}, fenced (see {@link #fencedUpsert}).
     *
     * @throws KeeperException.NoNodeException when there is none.
     * @throws ControllerFencedException       when this controller was superseded.
     */
    public void fencedDelete(final String path) throws Exception
    {
        fenced(client.transactionOp().delete().forPath(path), "delete " + path);
    }

    /**
     * Run {@code op} in a transaction with a check that no newer controller has opened a store.
     *
     * @throws ControllerFencedException     when one has.
     * @throws KeeperException               from {@code op} (bad version, node exists...).
     */
    private void fenced(final CuratorOp op, final String what) throws Exception
    {
        try
        {
            client.transaction().forOperations(
                client.transactionOp().check().withVersion(epochZnodeVersion).forPath(epochPath()), op);
        }
        catch (final KeeperException ex)
        {
            final List<OpResult> results = ex.getResults();
            if (null != results && !results.isEmpty() && results.get(0) instanceof OpResult.ErrorResult first &&
                first.getErr() != KeeperException.Code.OK.intValue() &&
                first.getErr() != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue())
            {
                throw new ControllerFencedException("controller epoch " + controllerEpoch + " was superseded by a " +
                    "newer controller; refused: " + what);
            }
            if (null != results && results.size() > 1 && results.get(1) instanceof OpResult.ErrorResult second)
            {
                throw KeeperException.create(KeeperException.Code.get(second.getErr()), ex.getPath());
            }
            throw ex;
        }
    }

    /**
     * Take over from a warm copy of the state: decode and check it as {@link #load} does what it reads (the read
     * before claiming), then claim the epoch in one transaction that also checks that every partition znode in the
     * copy still has the copy's version, and list the partitions once after the claim. The copy is current when the
     * transaction commits and the listing shows the same partitions with no create or delete under the partitions
     * node since the newest of them was created (its {@code pzxid}: a partition deleted and created again would
     * start at a version the copy may hold). From the claim on, no older controller writes (every write of theirs
     * checks the epoch's version), so the copy is this store's view as the second load would have made it.
     *
     * @return whether the store took over; false when there is no copy or it is not provably current (nothing was
     *         claimed, or the claim stands and the caller's loads re-read what it moved past).
     */
    private boolean takeOver(final ZooKeeperControllerStandby.View view)
    {
        if (null == view)
        {
            return false;
        }
        final java.util.Map<String, org.apache.curator.framework.recipes.cache.ChildData> copy = view.children();
        load(new java.util.ArrayList<>(copy.keySet()), (id) ->
        {
            final org.apache.curator.framework.recipes.cache.ChildData node = copy.get(Integer.toString(id));
            return decode(id, node.getData(), node.getStat());
        });
        final java.util.List<CuratorOp> ops = new java.util.ArrayList<>(copy.size() + 1);
        try
        {
            ops.add(client.transactionOp().setData().withVersion(view.epochVersion())
                .forPath(epochPath(), ZooKeeperCounters.encode(view.epoch() + 1)));
            for (final var child : copy.values())
            {
                ops.add(client.transactionOp().check().withVersion(child.getStat().getVersion())
                    .forPath(child.getPath()));
            }
            client.transaction().forOperations(ops);
        }
        catch (final KeeperException ex)
        {
            return false; // the copy is stale, or the answer was lost: read as without one (a second claim only fences)
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("claim the controller epoch", ex);
        }
        controllerEpoch = view.epoch() + 1;
        epochZnodeVersion = view.epochVersion() + 1;
        tookOver = true;
        final Stat stat = new Stat();
        final List<String> children;
        try
        {
            children = client.getChildren().storingStatIn(stat).forPath(partitionsPath());
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot list " + partitionsPath(), ex);
        }
        if (children.size() != copy.size() || !copy.keySet().containsAll(children) ||
            (!copy.isEmpty() && stat.getPzxid() != view.newestCreation()))
        {
            load(children, this::read);
        }
        return true;
    }

    private void load()
    {
        final List<String> children;
        try
        {
            children = client.getChildren().forPath(partitionsPath());
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot list " + partitionsPath(), ex);
        }
        load(children, this::read);
    }

    /** Fill the store's view from the partitions {@code children} names, each present one read by {@code reader}. */
    private void load(final List<String> children, final java.util.function.IntFunction<PartitionState> reader)
    {
        states.clear();
        damaged.clear();
        int count = 0;
        for (final String child : children)
        {
            final int id = partitionId(child);
            if (id >= 0 && id <= children.size() + MAX_MISSING)
            {
                count = Math.max(count, id + 1);
            }
        }
        for (int id = 0; id < count; id++)
        {
            if (!children.contains(Integer.toString(id)))
            {
                states.add(null);
                damaged.put(id, "missing (ids are dense, and a later one exists)");
                continue;
            }
            try
            {
                states.add(reader.apply(id));
            }
            catch (final DamagedStateException ex)
            {
                states.add(null);
                damaged.put(id, ex.getMessage());
            }
        }
        for (final String child : children)
        {
            final int id = partitionId(child);
            if (id < 0 || id >= count)
            {
                damaged.put(STRAY, "stray znode " + partitionsPath() + "/" + child + " is no partition id of the " +
                    "dense range [0, " + count + ")");
                break;
            }
        }
    }

    /** Key of {@link #damaged()} for stray znodes under the partitions node (not a partition id). */
    public static final int STRAY = -1;
    /** Most missing ids between the partitions that exist: beyond, a high numbered child is stray. */
    private static final int MAX_MISSING = 64;

    private static int partitionId(final String child)
    {
        if (child.isEmpty() || child.length() > 9 || !child.chars().allMatch((c) -> c >= '0' && c <= '9') ||
            (child.length() > 1 && child.charAt(0) == '0'))
        {
            return -1;
        }
        return Integer.parseInt(child);
    }

    /** A stored partition state that cannot be used: quarantined, not served. */
    private static final class DamagedStateException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        DamagedStateException(final String message, final Throwable cause)
        {
            super(message, cause);
        }
    }

    /**
     * Read a partition's znode and check it, without changing anything this store holds (a controller checks
     * whether a damaged partition has been repaired).
     *
     * @return null when the state is readable and consistent now; otherwise why it is damaged.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    public String checkDamaged(final int partitionId)
    {
        try
        {
            read(partitionId);
            return null;
        }
        catch (final DamagedStateException ex)
        {
            return ex.getMessage();
        }
    }

    /** @return the path of a partition's znode. */
    public String partitionPath(final int partitionId)
    {
        return partitionsPath() + "/" + partitionId;
    }

    private PartitionState read(final int partitionId)
    {
        final String path = partitionPath(partitionId);
        final Stat stat = new Stat();
        final byte[] data;
        try
        {
            data = client.getData().storingStatIn(stat).forPath(path);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            throw new DamagedStateException("missing", ex);
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot read " + path, ex);
        }
        return decode(partitionId, data, stat);
    }

    /** Decode and check the content of a partition's znode, read with {@code stat}: hostile until it passes. */
    private PartitionState decode(final int partitionId, final byte[] data, final Stat stat)
    {
        final PartitionState state;
        try
        {
            final ByteBuffer in = ByteBuffer.wrap(null == data ? new byte[0] : data);
            state = PartitionStateCodec.decode(in);
            if (in.hasRemaining())
            {
                throw new IllegalArgumentException(in.remaining() + " bytes after the state");
            }
        }
        catch (final IllegalArgumentException | java.nio.BufferUnderflowException ex)
        {
            throw new DamagedStateException("unreadable: " + ex.getMessage(), ex);
        }
        if (state.partitionId() != partitionId || state.version() != stat.getVersion())
        {
            throw new DamagedStateException("claims partition " + state.partitionId() + " version " +
                state.version() + ", the znode is partition " + partitionId + " version " + stat.getVersion(), null);
        }
        for (final int host : state.assignedReplicas())
        {
            if (host >= maxHosts)
            {
                throw new DamagedStateException("assigns host " + host + ", outside this cluster's [0, " + maxHosts +
                    ")", null);
            }
        }
        return state;
    }

    @Override
    public PartitionState create(final PartitionState state)
    {
        if (state.partitionId() != states.size() || state.version() != 0)
        {
            throw new IllegalStateException("partition ids are dense and start at version 0: expected id " +
                states.size() + ", got " + state.partitionId() + " at version " + state.version());
        }
        final String path = partitionPath(state.partitionId());
        try
        {
            fenced(client.transactionOp().create().forPath(path, PartitionStateCodec.encode(state)),
                "create partition " + state.partitionId());
        }
        catch (final ControllerFencedException ex)
        {
            throw ex;
        }
        catch (final KeeperException.NodeExistsException ex)
        {
            load();
            throw new IllegalStateException("partition " + state.partitionId() + " was created by another " +
                "controller first", ex);
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot create " + path, ex);
        }
        states.add(state);
        return state;
    }

    @Override
    public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
    {
        final int id = next.partitionId();
        final PartitionState current = get(id);
        if (null == current || current.version() != expectedVersion || next.version() != expectedVersion + 1)
        {
            return null;
        }
        final String path = partitionPath(id);
        try
        {
            fenced(client.transactionOp().setData().withVersion(expectedVersion).forPath(path,
                PartitionStateCodec.encode(next)), "change partition " + id + " to " + next);
        }
        catch (final ControllerFencedException ex)
        {
            throw ex;
        }
        catch (final KeeperException.BadVersionException ex)
        {
            try
            {
                states.set(id, read(id)); // another controller moved it on: decide again from what it wrote
            }
            catch (final DamagedStateException damage)
            {
                states.set(id, null);
                damaged.put(id, damage.getMessage());
            }
            return null;
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot write " + path, ex);
        }
        states.set(id, next);
        return next;
    }

    /**
     * Write every change in one ZooKeeper transaction (up to {@value #MAX_CHANGES_PER_TRANSACTION} partitions each):
     * the check of the controller epoch's version, then a compare-and-set on each partition znode's version. One round
     * trip and one disk sync of the ZooKeeper servers for all of a dead host's partitions, where one write each took
     * 20 to 80 ms on a loaded machine, one after the other. ZooKeeper applies a transaction whole or not at all: a
     * controller that dies, or loses its connection, before the answer has written all of it or nothing, never a
     * part (a lost answer is a {@link ZooKeeperStoreException}: the store's copy keeps the versions before, and the
     * next compare-and-set from it misses if the transaction did commit, and reads what it wrote). When a partition's
     * version no longer matches, nothing of the transaction is written and every partition of it is read again, so
     * the controller decides again from what is stored.
     *
     * @throws ControllerFencedException when a newer controller has opened a store, or the hosts deposed this one.
     */
    @Override
    public List<PartitionState> compareAndSetAll(final List<PartitionState> nexts)
    {
        final List<PartitionState> stored = new java.util.ArrayList<>(nexts.size());
        for (int from = 0; from < nexts.size(); from += MAX_CHANGES_PER_TRANSACTION)
        {
            stored.addAll(compareAndSetTogether(
                nexts.subList(from, Math.min(nexts.size(), from + MAX_CHANGES_PER_TRANSACTION))));
        }
        return stored;
    }

    /** Most partitions one transaction of {@link #compareAndSetAll} changes (a state is at most a few hundred bytes). */
    static final int MAX_CHANGES_PER_TRANSACTION = 256;

    private List<PartitionState> compareAndSetTogether(final List<PartitionState> nexts)
    {
        final PartitionState[] stored = new PartitionState[nexts.size()];
        final List<Integer> written = new java.util.ArrayList<>(nexts.size());
        final java.util.Set<Integer> ids = new java.util.HashSet<>();
        for (int i = 0; i < nexts.size(); i++)
        {
            final PartitionState next = nexts.get(i);
            if (!ids.add(next.partitionId()))
            {
                throw new IllegalArgumentException("partition " + next.partitionId() + " changed twice in one " +
                    "transaction");
            }
            final PartitionState current = get(next.partitionId());
            if (null != current && current.version() + 1 == next.version())
            {
                written.add(i); // otherwise not written (null), as compareAndSet
            }
        }
        final List<CuratorOp> ops = new java.util.ArrayList<>(written.size() + 1);
        try
        {
            ops.add(client.transactionOp().check().withVersion(epochZnodeVersion).forPath(epochPath()));
            for (final int i : written)
            {
                final PartitionState next = nexts.get(i);
                ops.add(client.transactionOp().setData().withVersion(next.version() - 1)
                    .forPath(partitionPath(next.partitionId()), PartitionStateCodec.encode(next)));
            }
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot prepare the partition writes", ex);
        }
        if (written.isEmpty())
        {
            return java.util.Arrays.asList(stored);
        }
        try
        {
            client.transaction().forOperations(ops);
        }
        catch (final KeeperException ex)
        {
            missed(ex, nexts, written);
            return java.util.Arrays.asList(stored);
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot write " + written.size() + " partition states", ex);
        }
        for (final int i : written)
        {
            final PartitionState next = nexts.get(i);
            states.set(next.partitionId(), next);
            stored[i] = next;
        }
        return java.util.Arrays.asList(stored);
    }

    /**
     * A transaction of {@link #compareAndSetTogether} failed whole: fenced when its epoch check failed; when a
     * partition's version did not match, every partition it named is read again (ZooKeeper names only the first
     * op that failed); any other failure is thrown.
     */
    private void missed(final KeeperException ex, final List<PartitionState> nexts, final List<Integer> written)
    {
        final List<OpResult> results = ex.getResults();
        if (null == results || results.size() != written.size() + 1)
        {
            throw ZooKeeperCounters.failure("cannot write " + written.size() + " partition states", ex);
        }
        boolean badVersion = false;
        for (int r = 0; r < results.size(); r++)
        {
            if (!(results.get(r) instanceof OpResult.ErrorResult error))
            {
                continue;
            }
            final int code = error.getErr();
            if (code == KeeperException.Code.OK.intValue() ||
                code == KeeperException.Code.RUNTIMEINCONSISTENCY.intValue())
            {
                continue;
            }
            if (r == 0)
            {
                throw new ControllerFencedException("controller epoch " + controllerEpoch + " was superseded by a " +
                    "newer controller; refused: write " + written.size() + " partition states");
            }
            if (code != KeeperException.Code.BADVERSION.intValue())
            {
                throw ZooKeeperCounters.failure("cannot write " + written.size() + " partition states",
                    KeeperException.create(KeeperException.Code.get(code), ex.getPath()));
            }
            badVersion = true;
        }
        if (!badVersion)
        {
            throw ZooKeeperCounters.failure("cannot write " + written.size() + " partition states", ex);
        }
        for (final int i : written)
        {
            final int id = nexts.get(i).partitionId();
            try
            {
                states.set(id, read(id)); // another controller moved one on: decide again from what is stored
            }
            catch (final DamagedStateException damage)
            {
                states.set(id, null);
                damaged.put(id, damage.getMessage());
            }
        }
    }

    @Override
    public long reserveProducerIds(final int count)
    {
        if (count <= 0)
        {
            throw new IllegalArgumentException("count must be positive: " + count);
        }
        return addToCounter(root + "/" + PRODUCER_IDS, count, true, "reserve producer ids");
    }

    @Override
    public void close()
    {
        if (ownsClient)
        {
            client.close();
        }
    }
}
