package io.tidemark.host;

import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * This host's liveness node in ZooKeeper ({@code <root>/hosts/<id>}, ephemeral): registered at start, before
 * anything runs, so that a second process with this host id fails there, before its registration with the
 * controller could pass for a restart of the live one; a node left by a killed process in this directory (its token;
 * the directory's lock says that process is gone) is taken over at once instead of waited out until its session
 * expires. After a reconnection the node is created again if the session (and with it the node) was lost.
 * <p>
 * Owns the node's content (incarnation, endpoint, the directory's token, the liveness listener's port), which never
 * changes. Thread-safe:
 * {@link #register} runs on the starting thread, {@link #reRegister} on the host's ZooKeeper task thread.
 */
final class HostLivenessNode
{
    private final CuratorFramework client;
    private final String root;
    private final int hostId;
    private final byte[] hostData;
    private final String dirToken;
    private final long takeOverWithinMs;
    private final System.Logger logger = System.getLogger(TidemarkHost.class.getName());

    /**
     * @param livenessPort     the port of this host's liveness listener ({@link ProcessExitWatch}).
     * @param takeOverWithinMs how long a node left by another session (not this directory's) is waited out.
     */
    HostLivenessNode(final CuratorFramework client, final String root, final int hostId, final long incarnation,
        final String endpoint, final String dirToken, final int livenessPort, final long takeOverWithinMs)
    {
        this.client = client;
        this.root = root;
        this.hostId = hostId;
        this.hostData = new ZooKeeperHostLiveness.Registration(incarnation, endpoint, dirToken,
            livenessPort).encode();
        this.dirToken = dirToken;
        this.takeOverWithinMs = takeOverWithinMs;
    }

    /** Register the node ({@link ZooKeeperHostLiveness#register}): fails when another live process holds the id. */
    void register()
    {
        ZooKeeperHostLiveness.register(client, root, hostId, hostData, dirToken, takeOverWithinMs);
    }

    /** After a reconnection: recreate this host's liveness node if its session (and with it the node) was lost. */
    void reRegister()
    {
        final String path = root + "/" + ZooKeeperHostLiveness.HOSTS + "/" + hostId;
        try
        {
            final Stat stat = client.checkExists().forPath(path);
            final long session = client.getZookeeperClient().getZooKeeper().getSessionId();
            if (null != stat && stat.getEphemeralOwner() == session)
            {
                return;
            }
            if (null == stat)
            {
                client.create().creatingParentContainersIfNeeded().withMode(CreateMode.EPHEMERAL)
                    .forPath(path, hostData);
                logger.log(System.Logger.Level.WARNING, "host " + hostId + " lost its ZooKeeper session " +
                    "and registered again");
            }
            else
            {
                register();
            }
        }
        catch (final Exception ex)
        {
            logger.log(System.Logger.Level.ERROR, "host " + hostId + " cannot register again", ex);
        }
    }
}
