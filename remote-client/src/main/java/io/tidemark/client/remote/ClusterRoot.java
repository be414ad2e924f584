package io.tidemark.client.remote;

import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperSettings;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads of a cluster's ZooKeeper root that {@link ClusterMetadata}'s cache does not follow: the cluster's name,
 * checked once at connect, and the hosts' Kafka listeners, read when asked.
 */
final class ClusterRoot
{
    private ClusterRoot()
    {
    }

    /**
     * @throws ConfigException         when the root belongs to another cluster, holds none, or refuses these
     *                                 credentials.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    static void checkClusterId(final CuratorFramework zk, final String root, final String clusterId)
    {
        final String path = root + "/" + ClusterZNodes.CLUSTER_ID;
        try
        {
            final String existing = new String(zk.getData().forPath(path), StandardCharsets.UTF_8);
            if (!existing.equals(clusterId))
            {
                throw new ConfigException(ClientConfig.CLUSTER_ID, "ZooKeeper root " + root + " belongs to cluster '" +
                    existing + "', not '" + clusterId + "'");
            }
        }
        catch (final KeeperException.NoNodeException ex)
        {
            throw new ConfigException(ClientConfig.CLUSTER_ID, "no cluster under ZooKeeper root " + root +
                " (no host has started there)");
        }
        catch (final KeeperException.NoAuthException ex)
        {
            throw new ConfigException(ZooKeeperSettings.PASSWORD, "ZooKeeper refused access to " + root +
                " for these credentials");
        }
        catch (final ConfigException ex)
        {
            throw ex;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read " + path, ex);
        }
    }

    /**
     * @return the Kafka listeners the hosts registered: host id to advertised {@code host:port}.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be read.
     */
    static Map<Integer, String> kafkaListeners(final CuratorFramework zk, final String root)
    {
        final Map<Integer, String> listeners = new TreeMap<>();
        final String dir = root + "/" + ClusterZNodes.KAFKA_BROKERS;
        try
        {
            for (final String child : zk.getChildren().forPath(dir))
            {
                try
                {
                    listeners.put(Integer.parseInt(child), new String(zk.getData().forPath(dir + "/" + child),
                        StandardCharsets.UTF_8));
                }
                catch (final KeeperException.NoNodeException | NumberFormatException ex)
                {
                    // gone meanwhile, or not a host's node
                }
            }
        }
        catch (final KeeperException.NoNodeException ex)
        {
            return listeners;
        }
        catch (final Exception ex)
        {
            throw new ZooKeeperStoreException("cannot read the Kafka listeners under " + dir, ex);
        }
        return listeners;
    }
}
