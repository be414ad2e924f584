package io.tidemark.client.remote;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperSettings;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.Set;

/**
 * A remote client's configuration ({@link TidemarkClient}): the cluster's name, ZooKeeper (where it finds the
 * partitions and the hosts' endpoints), the address it receives answers on, and the media driver. Properties:
 * <pre>
 * cluster.id=orders-eu
 * zookeeper.connect=10.0.0.9:2181
 * zookeeper.root=/tidemark/orders-eu
 * zookeeper.user=tidemark
 * zookeeper.password=...
 * client.endpoint=10.0.0.20:0      # address:port the hosts answer to; port 0: any free port (default 127.0.0.1:0)
 * cluster.secret.file=/etc/tidemark/cluster.secret   # the hosts' secret; or cluster.insecure=true (try-outs)
 * # optional: aeron.dir (an external media driver), request.max.bytes (default 524224), request.timeout.ms
 * </pre>
 */
public final class ClientConfig
{
    /** The cluster's name; must match the one its hosts wrote in ZooKeeper. */
    public static final String CLUSTER_ID = ClusterSettings.CLUSTER_ID;
    /** Where the hosts send answers: {@code address:port}, port 0 for any free one. */
    public static final String CLIENT_ENDPOINT = "client.endpoint";
    /** Directory of an external Aeron media driver; absent: an embedded one. */
    public static final String AERON_DIR = ClusterSettings.AERON_DIR;
    /** Largest run of records in one produce request, in bytes; at most what a leader's produce queue takes. */
    public static final String REQUEST_MAX_BYTES = "request.max.bytes";
    /** How long a read waits for its answer before giving up, in ms. */
    public static final String REQUEST_TIMEOUT_MS = "request.timeout.ms";
    /** The Aeron MTU of the client's requests: {@code auto} or bytes, as a host's. */
    public static final String TRANSPORT_MTU = ClusterSettings.TRANSPORT_MTU;
    /** File holding the cluster secret (the hosts' file content); readable by its owner only. */
    public static final String CLUSTER_SECRET_FILE = ClusterSettings.CLUSTER_SECRET_FILE;
    /** {@code true}: no secret (only against insecure hosts, local try-outs). */
    public static final String CLUSTER_INSECURE = ClusterSettings.CLUSTER_INSECURE;
    /** Keys of this class (the rest are ZooKeeper's). */
    public static final Set<String> KEYS = Set.of(CLUSTER_ID, CLIENT_ENDPOINT, AERON_DIR, REQUEST_MAX_BYTES,
        REQUEST_TIMEOUT_MS, TRANSPORT_MTU, CLUSTER_SECRET_FILE, CLUSTER_INSECURE);

    /** Default {@link #REQUEST_MAX_BYTES}: an eighth of a leader's default produce queue, less the header. */
    public static final int DEFAULT_REQUEST_MAX_BYTES = 4 * 1024 * 1024 / 8 - 64;

    private String clusterId;
    private String endpoint = "127.0.0.1:0";
    private String aeronDir;
    private int requestMaxBytes = DEFAULT_REQUEST_MAX_BYTES;
    private long requestTimeoutMs = 5_000;
    private int transportMtu = io.tidemark.aeron.UdpChannels.AUTO;
    private ZooKeeperSettings zooKeeper = new ZooKeeperSettings();
    private Path secretFile;
    private boolean insecure;
    private ClusterSecret secret;

    /**
     * @return the configuration in a properties file, validated.
     * @throws ConfigException for an unreadable file, an unknown key or a bad value.
     */
    public static ClientConfig load(final Path file)
    {
        return fromProperties(ClusterSettings.readProperties(file));
    }

    /**
     * @return the configuration, validated.
     * @throws ConfigException for an unknown key or a bad value.
     */
    public static ClientConfig fromProperties(final Properties properties)
    {
        final ClientConfig config = new ClientConfig();
        final Properties zk = new Properties();
        for (final String key : properties.stringPropertyNames())
        {
            final String value = properties.getProperty(key).trim();
            if (ZooKeeperSettings.KEYS.contains(key))
            {
                zk.setProperty(key, value);
            }
            else if (!KEYS.contains(key))
            {
                throw new ConfigException(key, "unknown client configuration key; known keys are " + KEYS +
                    " and " + ZooKeeperSettings.KEYS);
            }
        }
        config.zooKeeper = ZooKeeperSettings.fromProperties(zk);
        config.clusterId = properties.getProperty(CLUSTER_ID);
        if (null != properties.getProperty(CLIENT_ENDPOINT))
        {
            config.endpoint = properties.getProperty(CLIENT_ENDPOINT).trim();
        }
        config.aeronDir(properties.getProperty(AERON_DIR));
        if (null != properties.getProperty(REQUEST_MAX_BYTES))
        {
            config.requestMaxBytes = (int)parse(REQUEST_MAX_BYTES, properties.getProperty(REQUEST_MAX_BYTES));
        }
        if (null != properties.getProperty(REQUEST_TIMEOUT_MS))
        {
            config.requestTimeoutMs = parse(REQUEST_TIMEOUT_MS, properties.getProperty(REQUEST_TIMEOUT_MS));
        }
        config.transportMtu = ClusterSettings.parseMtu(TRANSPORT_MTU, properties.getProperty(TRANSPORT_MTU));
        final String secretFile = properties.getProperty(CLUSTER_SECRET_FILE);
        config.secretFile = null == secretFile || secretFile.isBlank() ? null : Path.of(secretFile.trim());
        config.insecure = ClusterSettings.parseBoolean(CLUSTER_INSECURE, properties.getProperty(CLUSTER_INSECURE));
        return config.validate();
    }

    private static long parse(final String key, final String value)
    {
        try
        {
            return Long.parseLong(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: " + value);
        }
    }

    /**
     * @return this, checked.
     * @throws ConfigException naming the first bad key.
     */
    public ClientConfig validate()
    {
        if (null == clusterId || !clusterId.trim().matches("[A-Za-z0-9._-]{1,128}"))
        {
            throw new ConfigException(CLUSTER_ID, "need 1 to 128 of A-Z a-z 0-9 . _ -, not '" + clusterId + "'");
        }
        clusterId = clusterId.trim();
        ClusterSettings.checkEndpoint(CLIENT_ENDPOINT, endpoint);
        if (requestMaxBytes < 64 || requestMaxBytes > DEFAULT_REQUEST_MAX_BYTES * 64)
        {
            throw new ConfigException(REQUEST_MAX_BYTES, "must be in [64, " + DEFAULT_REQUEST_MAX_BYTES * 64 + "]: " +
                requestMaxBytes);
        }
        if (requestTimeoutMs < 1 || requestTimeoutMs > ReplicationContext.MAX_TIMEOUT_MS)
        {
            throw new ConfigException(REQUEST_TIMEOUT_MS, "must be in [1, " + ReplicationContext.MAX_TIMEOUT_MS +
                "]: " + requestTimeoutMs);
        }
        if (null != aeronDir && !Files.isDirectory(Path.of(aeronDir)))
        {
            throw new ConfigException(AERON_DIR, "no media driver directory at " + aeronDir);
        }
        ClusterSettings.checkMtu(TRANSPORT_MTU, transportMtu);
        zooKeeper.conclude();
        secret = ClusterSettings.secret(secretFile, insecure);
        return this;
    }

    /** @return the configured MTU ({@link #TRANSPORT_MTU}), or {@link io.tidemark.aeron.UdpChannels#AUTO}. */
    public int transportMtu()
    {
        return transportMtu;
    }

    /** @param mtu the MTU ({@link #TRANSPORT_MTU}), or {@link io.tidemark.aeron.UdpChannels#AUTO}. @return this. */
    public ClientConfig transportMtu(final int mtu)
    {
        this.transportMtu = mtu;
        return this;
    }

    /** @param file the cluster secret file, or null. @return this. */
    public ClientConfig secretFile(final Path file)
    {
        this.secretFile = file;
        this.secret = null;
        return this;
    }

    /** @param insecure whether to run without a secret (against insecure hosts only). @return this. */
    public ClientConfig insecure(final boolean insecure)
    {
        this.insecure = insecure;
        this.secret = null;
        return this;
    }

    /** @return the cluster secret (read by {@link #validate()}), never logged. */
    public ClusterSecret secret()
    {
        if (null == secret)
        {
            secret = ClusterSettings.secret(secretFile, insecure);
        }
        return secret;
    }

    /** @return the cluster's name. */
    public String clusterId()
    {
        return clusterId;
    }

    /** @param id the cluster's name. @return this. */
    public ClientConfig clusterId(final String id)
    {
        this.clusterId = id;
        return this;
    }

    /** @return where the hosts send answers. */
    public String endpoint()
    {
        return endpoint;
    }

    /** @param endpoint {@code address:port} where the hosts send answers (port 0: any). @return this. */
    public ClientConfig endpoint(final String endpoint)
    {
        this.endpoint = endpoint;
        return this;
    }

    /** @return the external media driver's directory, or null. */
    public String aeronDir()
    {
        return aeronDir;
    }

    /** @param dir an external media driver's directory, or null for an embedded one. @return this. */
    public ClientConfig aeronDir(final String dir)
    {
        this.aeronDir = null == dir || dir.isBlank() ? null : dir.trim();
        return this;
    }

    /** @return the largest run of records in one produce request. */
    public int requestMaxBytes()
    {
        return requestMaxBytes;
    }

    /** @param bytes the largest run of records in one produce request. @return this. */
    public ClientConfig requestMaxBytes(final int bytes)
    {
        this.requestMaxBytes = bytes;
        return this;
    }

    /** @return how long a read waits for its answer. */
    public long requestTimeoutMs()
    {
        return requestTimeoutMs;
    }

    /** @param ms how long a read waits for its answer. @return this. */
    public ClientConfig requestTimeoutMs(final long ms)
    {
        this.requestTimeoutMs = ms;
        return this;
    }

    /** @return ZooKeeper settings. */
    public ZooKeeperSettings zooKeeper()
    {
        return zooKeeper;
    }

    /** @param settings ZooKeeper settings. @return this. */
    public ClientConfig zooKeeper(final ZooKeeperSettings settings)
    {
        this.zooKeeper = settings;
        return this;
    }
}
