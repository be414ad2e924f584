package io.tidemark.client.remote.protocol;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.UdpChannels;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.zookeeper.ZooKeeperSettings;

import java.nio.file.Path;
import java.util.Properties;
import java.util.function.BiConsumer;

/**
 * What a replica host's configuration ({@code HostConfig}) and a remote client's
 * ({@link io.tidemark.client.remote.ClientConfig}) both hold: the cluster's name, the media driver, the Aeron MTU,
 * the cluster secret and ZooKeeper. The values and their accessors live here once; the keys' definitions are
 * {@link ClusterSettings}' ({@link ClusterSettings#CLUSTER_ID_KEY} and the like), which each subclass binds to these
 * accessors in its own {@link io.tidemark.store.config.ConfigDef}.
 *
 * @param <S> the subclass, which the setters return so that they chain.
 */
public abstract class ClusterConfig<S extends ClusterConfig<S>>
{
    private String clusterId;
    private String aeronDir;
    private int transportMtu = UdpChannels.AUTO;
    private Path secretFile;
    private boolean insecure;
    private ClusterSecret secret;
    private ZooKeeperSettings zooKeeper = new ZooKeeperSettings();

    /** A subclass only. */
    protected ClusterConfig()
    {
    }

    /**
     * Parse properties into a configuration: ZooKeeper's keys into its {@link ZooKeeperSettings}, the keys of
     * {@code definition} into the configuration, every other key (trimmed value) to {@code other}, which keeps it or
     * refuses it. Not validated yet.
     *
     * @param config     a new configuration.
     * @param definition its keys.
     * @param properties the properties.
     * @param other      takes every key that is neither ZooKeeper's nor the definition's.
     * @param <C>        the configuration class.
     * @return the configuration.
     * @throws ConfigException naming the first key whose value is malformed, or that {@code other} refuses.
     */
    protected static <C extends ClusterConfig<C>> C parse(final C config, final ConfigDef<C> definition,
        final Properties properties, final BiConsumer<String, String> other)
    {
        final Properties zk = new Properties();
        for (final String key : properties.stringPropertyNames())
        {
            final String value = properties.getProperty(key).trim();
            if (ZooKeeperSettings.KEYS.contains(key))
            {
                zk.setProperty(key, value);
            }
            else if (definition.contains(key))
            {
                definition.set(config, key, value);
            }
            else
            {
                other.accept(key, value);
            }
        }
        return config.zooKeeper(ZooKeeperSettings.fromProperties(zk));
    }

    @SuppressWarnings("unchecked")
    private S self()
    {
        return (S)this;
    }

    /**
     * The checks of this part that relate keys or reach outside (ZooKeeper's settings, reading the secret), for the
     * subclass's {@code validate()} after its {@code ConfigDef} has checked each value.
     *
     * @throws ConfigException naming the key at fault.
     */
    protected final void concludeCluster()
    {
        zooKeeper.conclude();
        secret = ClusterSettings.secret(secretFile, insecure);
    }

    /** @return the cluster's name. */
    public final String clusterId()
    {
        return clusterId;
    }

    /** @param id the cluster's name (trimmed). @return this. */
    public final S clusterId(final String id)
    {
        this.clusterId = null == id ? null : id.trim();
        return self();
    }

    /** @return the external media driver's directory, or null for an embedded driver. */
    public final String aeronDir()
    {
        return aeronDir;
    }

    /** @param dir an external media driver's directory, or null/empty for an embedded driver. @return this. */
    public final S aeronDir(final String dir)
    {
        this.aeronDir = null == dir || dir.isBlank() ? null : dir.trim();
        return self();
    }

    /** @return the configured MTU ({@link ClusterSettings#TRANSPORT_MTU}), or {@link UdpChannels#AUTO}. */
    public final int transportMtu()
    {
        return transportMtu;
    }

    /** @param mtu the MTU ({@link ClusterSettings#TRANSPORT_MTU}), or {@link UdpChannels#AUTO}. @return this. */
    public final S transportMtu(final int mtu)
    {
        this.transportMtu = mtu;
        return self();
    }

    /** @return the cluster secret file, or null. */
    public final Path secretFile()
    {
        return secretFile;
    }

    /** @param file the cluster secret file, or null. @return this. */
    public final S secretFile(final Path file)
    {
        this.secretFile = file;
        this.secret = null;
        return self();
    }

    /** @return whether to run without a secret. */
    public final boolean insecure()
    {
        return insecure;
    }

    /** @param insecure whether to run without a secret (local try-outs only). @return this. */
    public final S insecure(final boolean insecure)
    {
        this.insecure = insecure;
        this.secret = null;
        return self();
    }

    /** @return the cluster secret (read by {@code validate()}), never logged. */
    public final ClusterSecret secret()
    {
        if (null == secret)
        {
            secret = ClusterSettings.secret(secretFile, insecure);
        }
        return secret;
    }

    /** @return ZooKeeper settings. */
    public final ZooKeeperSettings zooKeeper()
    {
        return zooKeeper;
    }

    /** @param settings ZooKeeper settings. @return this. */
    public final S zooKeeper(final ZooKeeperSettings settings)
    {
        this.zooKeeper = settings;
        return self();
    }

    /** @return the shared part for {@code toString}: MTU, secret file or insecure, ZooKeeper. */
    protected final String describeCluster()
    {
        return ClusterSettings.TRANSPORT_MTU + "=" +
            (transportMtu == UdpChannels.AUTO ? "auto" : Integer.toString(transportMtu)) + ", " +
            (insecure ? ClusterSettings.CLUSTER_INSECURE + "=true" :
            ClusterSettings.CLUSTER_SECRET_FILE + "=" + secretFile) + ", " + zooKeeper;
    }
}
