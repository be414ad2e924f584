package io.tidemark.client.remote;

import io.tidemark.client.remote.protocol.ClusterConfig;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import io.tidemark.zookeeper.ZooKeeperSettings;

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
 * The keys it shares with a host (cluster, media driver, MTU, secret) are defined once in {@link ClusterSettings}
 * and held by {@link ClusterConfig}; its own are defined here. {@link #CONFIG} parses, checks and documents them.
 */
public final class ClientConfig extends ClusterConfig<ClientConfig>
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

    /** Default {@link #REQUEST_MAX_BYTES}: an eighth of a leader's default produce queue, less the header. */
    public static final int DEFAULT_REQUEST_MAX_BYTES = 4 * 1024 * 1024 / 8 - 64;

    /**
     * This class's keys, defined once (type, default, accepted values, documentation): {@link #fromProperties}
     * parses with it, {@link #validate()} checks with it, and the client table of docs/configuration.md is its
     * {@link ConfigDef#markdownTable()}. ZooKeeper's keys are {@link ZooKeeperSettings}'.
     */
    public static final ConfigDef<ClientConfig> CONFIG = new ConfigDef<ClientConfig>()
        .define(ClusterSettings.CLUSTER_ID_KEY, ClientConfig::clusterId, ClientConfig::clusterId)
        .define(ConfigKey.ofString(CLIENT_ENDPOINT, "127.0.0.1:0")
            .withValidator((v) ->
            {
                ClusterSettings.checkEndpoint(CLIENT_ENDPOINT, null == v ? "" : v);
                return null;
            })
            .withDefaultText("`127.0.0.1:0`")
            .withDoc("`address:port` the hosts send answers to; port 0 takes any free port. Between machines, this " +
            "machine's address."),
            ClientConfig::endpoint, ClientConfig::endpoint)
        .define(ClusterSettings.AERON_DIR_KEY, ClientConfig::aeronDir, ClientConfig::aeronDir)
        .define(ConfigKey.ofInt(REQUEST_MAX_BYTES, DEFAULT_REQUEST_MAX_BYTES, 64, DEFAULT_REQUEST_MAX_BYTES * 64)
            .withDoc("Largest run of records in one produce request, in bytes: an eighth of a leader's default " +
            "produce queue less the header; 64 to 64 times the default."),
            ClientConfig::requestMaxBytes, ClientConfig::requestMaxBytes)
        .define(ConfigKey.ofLong(REQUEST_TIMEOUT_MS, 5_000, 1, ReplicationContext.MAX_TIMEOUT_MS)
            .withDoc("How long a read waits for its answer before giving up; 1 to " +
            ReplicationContext.MAX_TIMEOUT_MS + "."),
            ClientConfig::requestTimeoutMs, ClientConfig::requestTimeoutMs)
        .define(ClusterSettings.TRANSPORT_MTU_KEY, ClientConfig::transportMtu, ClientConfig::transportMtu)
        .define(ClusterSettings.CLUSTER_SECRET_FILE_KEY, ClientConfig::secretFile, ClientConfig::secretFile)
        .define(ClusterSettings.CLUSTER_INSECURE_KEY, ClientConfig::insecure, ClientConfig::insecure);

    /** Keys of this class (the rest are ZooKeeper's): the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    private String endpoint;
    private int requestMaxBytes;
    private long requestTimeoutMs;

    /** A configuration with this class's keys at their defaults ({@link #CONFIG}) and the required ones unset. */
    public ClientConfig()
    {
        CONFIG.setDefaults(this);
    }

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
        return parse(new ClientConfig(), CONFIG, properties, (key, value) ->
        {
            throw new ConfigException(key, "unknown client configuration key; known keys are " + KEYS + " and " +
                ZooKeeperSettings.KEYS);
        }).validate();
    }

    /**
     * @return this, checked.
     * @throws ConfigException naming the first bad key.
     */
    public ClientConfig validate()
    {
        CONFIG.validate(this);
        concludeCluster();
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
        this.endpoint = null == endpoint ? null : endpoint.trim();
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

    @Override
    public String toString()
    {
        return "ClientConfig{cluster.id=" + clusterId() + ", client.endpoint=" + endpoint + ", aeron.dir=" +
            aeronDir() + ", request.max.bytes=" + requestMaxBytes + ", request.timeout.ms=" + requestTimeoutMs + ", " +
            describeCluster() + '}';
    }
}
