package io.tidemark.host;

import io.tidemark.aeron.ClusterSecret;

import java.io.IOException;
import java.net.DatagramSocket;
import java.nio.file.Path;
import java.util.Properties;

/**
 * The settings of a one-host cluster embedded in a test JVM with its own ZooKeeper: what its clients and the host
 * share, and the host's own.
 */
final class OneHostSettings
{
    private OneHostSettings()
    {
    }

    /** @return a UDP port that was free a moment ago, for the host's Aeron endpoint. */
    static int freeUdpPort() throws IOException
    {
        try (DatagramSocket free = new DatagramSocket(0))
        {
            return free.getLocalPort();
        }
    }

    /** @return cluster id and ZooKeeper settings (root {@code /tidemark/<clusterId>}, digest credentials). */
    static Properties common(final String clusterId, final String zooKeeperConnect)
    {
        final Properties common = new Properties();
        common.setProperty("cluster.id", clusterId);
        common.setProperty("zookeeper.connect", zooKeeperConnect);
        common.setProperty("zookeeper.root", "/tidemark/" + clusterId);
        common.setProperty("zookeeper.user", "tidemark");
        common.setProperty("zookeeper.password", "pw");
        return common;
    }

    /** A new cluster secret in {@code file}, named in {@code common}. */
    static void secret(final Properties common, final Path file) throws IOException
    {
        ClusterSecret.generate(file);
        common.setProperty("cluster.secret.file", file.toString());
    }

    /** @return {@code common} and host 0 in {@code dir} on {@code 127.0.0.1:port}, the cluster's only host. */
    static Properties host(final Properties common, final Path dir, final int port)
    {
        final Properties host = new Properties();
        host.putAll(common);
        host.setProperty("host.id", "0");
        host.setProperty("host.dir", dir.toString());
        host.setProperty("cluster.hosts", "0@127.0.0.1:" + port);
        return host;
    }
}
