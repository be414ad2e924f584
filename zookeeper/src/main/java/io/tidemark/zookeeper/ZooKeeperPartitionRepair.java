package io.tidemark.zookeeper;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.nio.ByteBuffer;

/**
 * Rewrites a damaged partition state in ZooKeeper from a host's view of it (the state the host last applied, which
 * it keeps beside the replica's log: {@code io.tidemark.replication.PartitionStateFile}). The controller has the
 * partition quarantined and reads it again every few seconds; once it reads, the controller serves it again.
 * <p>
 * The state written is the view with the <b>right version</b>: the znode's next version (0 when the znode is gone),
 * as the store requires, and a leader epoch one above the view's, so that every host applies it (a host ignores a
 * state of an older epoch, or of its epoch at a version it has seen). A readable state is not overwritten unless
 * forced, and the write is a compare-and-set on the znode's version.
 */
public final class ZooKeeperPartitionRepair
{
    private ZooKeeperPartitionRepair()
    {
    }

    /** What the znode held, and what was (or would be) written. */
    public record Result(String path, String damage, PartitionState written, boolean applied)
    {
    }

    /**
     * @param settings the cluster's ZooKeeper settings (credentials, root).
     * @param view     a host's view of the partition.
     * @param force    overwrite a state that is readable.
     * @param dryRun   only say what would be written.
     * @return the result.
     * @throws IllegalStateException   when the state is readable and not forced, or the znode changed meanwhile.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be reached or refuses the credentials.
     */
    public static Result repair(final ZooKeeperSettings settings, final PartitionState view, final boolean force,
        final boolean dryRun)
    {
        PartitionStateCodec.checkHosts(view);
        final String path = settings.rootPath() + "/" + ZooKeeperControllerStore.PARTITIONS + "/" +
            view.partitionId();
        try (CuratorFramework client = settings.connectClient())
        {
            final Stat stat = new Stat();
            byte[] data = null;
            try
            {
                data = client.getData().storingStatIn(stat).forPath(path);
            }
            catch (final KeeperException.NoNodeException ex)
            {
                // missing: created at version 0
            }
            final boolean exists = null != data;
            final String damage = exists ? damage(data, view.partitionId(), stat.getVersion()) : "missing";
            if (null == damage && !force)
            {
                throw new IllegalStateException("the partition state at " + path + " is readable (version " +
                    stat.getVersion() + "): not damaged; --force overwrites it");
            }
            final PartitionState written = new PartitionState(view.partitionId(), view.topicPartition(),
                view.assignedReplicas(), view.isr(), view.eligible(), view.recovering(), view.leader(),
                view.leaderEpoch() + 1, exists ? stat.getVersion() + 1 : 0);
            PartitionStateCodec.checkHosts(written);
            if (!dryRun)
            {
                if (exists)
                {
                    client.setData().withVersion(stat.getVersion()).forPath(path, PartitionStateCodec.encode(written));
                }
                else
                {
                    client.create().forPath(path, PartitionStateCodec.encode(written));
                }
            }
            return new Result(path, damage, written, !dryRun);
        }
        catch (final KeeperException.BadVersionException | KeeperException.NodeExistsException ex)
        {
            throw new IllegalStateException("the partition state at " + path + " changed while it was repaired; " +
                "run again", ex);
        }
        catch (final IllegalStateException | ZooKeeperStoreException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot repair " + path, ex);
        }
    }

    private static String damage(final byte[] data, final int partitionId, final int version)
    {
        try
        {
            final ByteBuffer in = ByteBuffer.wrap(data);
            final PartitionState state = PartitionStateCodec.decode(in);
            if (in.hasRemaining() || state.partitionId() != partitionId || state.version() != version)
            {
                return "inconsistent with its znode";
            }
            return null;
        }
        catch (final IllegalArgumentException | java.nio.BufferUnderflowException ex)
        {
            return "unreadable: " + ex.getMessage();
        }
    }
}
