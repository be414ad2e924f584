package io.tidemark.host;

import io.tidemark.client.remote.protocol.ClusterConfig;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.kafka.KafkaContext;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * A replica host's configuration: who it is, where its data lives, the cluster's hosts and their Aeron endpoints,
 * ZooKeeper, and the replication settings. Read from a properties file:
 * <pre>
 * host.id=0
 * host.dir=/var/lib/tidemark/host-0
 * cluster.id=orders-eu
 * cluster.hosts=0@10.0.0.1:40100,1@10.0.0.2:40100,2@10.0.0.3:40100
 * zookeeper.connect=10.0.0.9:2181
 * zookeeper.root=/tidemark/orders-eu
 * zookeeper.user=tidemark
 * zookeeper.password=...
 * cluster.secret.file=/etc/tidemark/cluster.secret
 * # optional: host.threading=shared|latency (default shared: see THREADING), transport.mtu=auto|BYTES,
 * # aeron.dir=/dev/shm/aeron (an external media driver; default: embedded), client.max (256),
 * # client.max.per.address (32), client.idle.timeout.ms (30000), and any replication key
 * # (replica.lag.time.max.ms, min.insync.replicas, ...; see ReplicationContext)
 * </pre>
 * Cluster traffic is authenticated with the secret in {@code cluster.secret.file}, a file only its owner may read
 * ({@link ClusterSecret}); running without one takes the explicit {@code cluster.insecure=true}.
 * Every value is checked by {@link #validate()}: a bad one is a {@link ConfigException} naming its key.
 * <p>
 * The keys' definitions (defaults, accepted values, documentation) live beside it, in {@code HostKeys}; those a
 * host shares with its remote clients (cluster, media driver, MTU, secret) are {@link ClusterSettings}', and their
 * values and accessors {@link ClusterConfig}'s.
 */
public final class HostConfig extends ClusterConfig<HostConfig>
{
    /** This host's id, in {@code [0, 64)}, one of {@link #CLUSTER_HOSTS}. */
    public static final String HOST_ID = "host.id";
    /** Directory of this host's replica logs. */
    public static final String HOST_DIR = "host.dir";
    /** The cluster's name; hosts and clients of another cluster are refused. */
    public static final String CLUSTER_ID = ClusterSettings.CLUSTER_ID;
    /** Every host of the cluster: {@code id@address:port} separated by commas (the Aeron UDP endpoints). */
    public static final String CLUSTER_HOSTS = "cluster.hosts";
    /** Directory of an external Aeron media driver; empty or absent: an embedded one. */
    public static final String AERON_DIR = ClusterSettings.AERON_DIR;
    /**
     * The threading profile: {@code shared} (the default: for machines whose cores other processes share; one
     * thread runs the embedded media driver, the Aeron client, the gateway and the host's agents, and parks when
     * idle) or {@code latency} (for dedicated machines with cores to spare: the agents, the gateway and the
     * driver's sender and receiver each busy-spin on a thread of their own).
     */
    public static final String THREADING = "host.threading";
    /**
     * The Aeron MTU of the host's publications: {@code auto} (the default: the MTU of the interface that reaches
     * each destination, Aeron's 1,408 bytes on Ethernet, up to 65,504 on loopback or jumbo frames; see
     * {@link io.tidemark.aeron.UdpChannels}) or a number of bytes, a multiple of 32 in [1024, 65504], for a path whose
     * MTU is smaller than the hosts' interfaces.
     */
    public static final String TRANSPORT_MTU = ClusterSettings.TRANSPORT_MTU;
    /**
     * Replication defaults of a host process where they differ from {@link ReplicationContext}'s, whose sub-second
     * times suit replicas in one JVM. A heartbeat session of 600 ms expired on a busy 2-core machine right after a
     * topic was created (the controller's own host missed it while it created its replica logs) and moved the
     * leaderships with no fault; 3 s still did under a load average of 50; 6 s with a heartbeat every 500 ms held
     * (docs/multi-host.md, "Heartbeats"). Kafka's brokers default to 9 s. A properties file may set either key.
     */
    public static final Map<String, String> PROCESS_DEFAULTS = Map.of(
        ReplicationContext.HOST_SESSION_TIMEOUT_MS, "6000",
        ReplicationContext.HOST_HEARTBEAT_INTERVAL_MS, "500");

    /** File holding the cluster secret that authenticates every message; readable by its owner only. */
    public static final String CLUSTER_SECRET_FILE = ClusterSettings.CLUSTER_SECRET_FILE;
    /** {@code true}: no secret, messages are not authenticated (local try-outs only; logged loudly). */
    public static final String CLUSTER_INSECURE = ClusterSettings.CLUSTER_INSECURE;
    /** Most clients a host serves at once. Default 256. */
    public static final String CLIENT_MAX = "client.max";
    /** Most clients a host serves at once from one source address. Default 32. */
    public static final String CLIENT_MAX_PER_ADDRESS = "client.max.per.address";
    /** A client not heard from for this long is forgotten (live clients repeat their HELLO every 5 s). Default 30000. */
    public static final String CLIENT_IDLE_TIMEOUT_MS = "client.idle.timeout.ms";
    /**
     * TCP port of the host's liveness listener, on the address of its endpoint: peers hold a connection to it and
     * learn of the process's exit from its close within milliseconds ({@link ProcessExitWatch}). 0 (the default): a
     * free port, advertised in the host's ZooKeeper registration.
     */
    public static final String LIVENESS_PORT = "host.liveness.port";
    /** Most host ids a cluster may have: ids are in {@code [0, MAX_HOSTS)}. */
    static final int MAX_HOSTS = 64;

    /**
     * This class's keys, defined once (type, default, accepted values, documentation) in {@link HostKeys}:
     * {@link #fromProperties} parses with it, {@link #validate()} checks with it, and the table of
     * docs/configuration.md is its {@link ConfigDef#markdownTable()}. ZooKeeper's, replication's and the Kafka
     * listener's keys are their classes'.
     */
    public static final ConfigDef<HostConfig> CONFIG = HostKeys.CONFIG;

    /** Keys of this class (the rest are ZooKeeper's and replication's): the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    /**
     * Limits on a host's clients.
     *
     * @param maxClients           most clients at once.
     * @param maxClientsPerAddress most clients at once from one source address.
     * @param idleTimeoutMs        a client not heard from for this long is forgotten.
     */
    public record ClientLimits(int maxClients, int maxClientsPerAddress, long idleTimeoutMs)
    {
    }

    private int hostId;
    private Path hostDir;
    private final Map<Integer, String> endpoints = new LinkedHashMap<>();
    private io.tidemark.aeron.AeronMedia.Profile threading;
    private int clientMax;
    private int clientMaxPerAddress;
    private long clientIdleTimeoutMs;
    private int livenessPort;
    private ReplicationContext replication = new ReplicationContext();
    private Map<String, String> replicationProperties = Map.of();
    private KafkaContext kafka;

    /** A configuration with this class's keys at their defaults ({@link #CONFIG}) and the required ones unset. */
    public HostConfig()
    {
        CONFIG.setDefaults(this);
    }

    /**
     * Read a configuration file.
     *
     * @throws ConfigException for an unreadable file or a bad value.
     */
    public static HostConfig load(final Path file)
    {
        return fromProperties(ClusterSettings.readProperties(file));
    }

    /**
     * @param properties host, ZooKeeper and replication keys.
     * @return the validated configuration.
     * @throws ConfigException for an unknown key or a bad value.
     */
    public static HostConfig fromProperties(final Properties properties)
    {
        final Map<String, String> replication = new HashMap<>();
        final Map<String, String> kafka = new HashMap<>();
        final HostConfig config = parse(new HostConfig(), CONFIG, properties,
            (key, value) -> (key.startsWith("kafka.") ? kafka : replication).put(key, value));
        PROCESS_DEFAULTS.forEach(replication::putIfAbsent);
        config.replication = ReplicationContext.fromProperties(replication);
        config.replicationProperties = Map.copyOf(replication);
        if (!kafka.isEmpty())
        {
            if (!kafka.containsKey(KafkaContext.LISTENER))
            {
                throw new ConfigException(KafkaContext.LISTENER, "the kafka.* keys need " + KafkaContext.LISTENER +
                    " (the address the host's Kafka listener binds)");
            }
            config.kafka(KafkaContext.fromProperties(kafka));
        }
        return config.validate();
    }

    /**
     * Write a new cluster secret file (32 random bytes, Base64, mode 0600): see {@link ClusterSecret#generate}.
     *
     * @param file where; must not exist.
     * @throws IOException when it exists or cannot be written.
     */
    public static void generateSecret(final Path file) throws IOException
    {
        ClusterSecret.generate(file);
    }

    /**
     * Check every value.
     *
     * @return this.
     * @throws ConfigException naming the first bad key.
     */
    public HostConfig validate()
    {
        CONFIG.validate(this);
        if (!endpoints.containsKey(hostId))
        {
            throw new ConfigException(HOST_ID, "host " + hostId + " is not in " + CLUSTER_HOSTS + " " + endpoints);
        }
        if (clientMaxPerAddress > clientMax)
        {
            throw new ConfigException(CLIENT_MAX_PER_ADDRESS, "must be in [1, " + CLIENT_MAX + "=" + clientMax + "]: " +
                clientMaxPerAddress);
        }
        ReplicationContext.fromProperties(replicationProperties).conclude(); // ranges; the host's own is concluded
        concludeCluster();
        return this;
    }

    /**
     * Parse an endpoint list {@code id@address:port,...}.
     *
     * @return endpoints by host id, in the order given.
     * @throws ConfigException naming {@code key}.
     */
    static Map<Integer, String> parseEndpoints(final String key, final String value)
    {
        final Map<Integer, String> parsed = new LinkedHashMap<>();
        if (null == value || value.isBlank())
        {
            return parsed;
        }
        for (final String item : value.split(","))
        {
            final String entry = item.trim();
            final int at = entry.indexOf('@');
            if (at <= 0)
            {
                throw new ConfigException(key, "'" + entry + "' is not id@address:port");
            }
            final int id;
            try
            {
                id = Integer.parseInt(entry.substring(0, at));
            }
            catch (final NumberFormatException ex)
            {
                throw new ConfigException(key, "'" + entry + "': host id is not an integer");
            }
            if (id < 0 || id >= MAX_HOSTS)
            {
                throw new ConfigException(key, "'" + entry + "': host id must be in [0, " + MAX_HOSTS + ")");
            }
            final String endpoint = entry.substring(at + 1);
            ClusterSettings.checkEndpoint(key, endpoint);
            if (null != parsed.put(id, endpoint))
            {
                throw new ConfigException(key, "host " + id + " is listed twice");
            }
        }
        if (parsed.values().stream().distinct().count() != parsed.size())
        {
            throw new ConfigException(key, "two hosts share an endpoint: " + parsed);
        }
        return parsed;
    }

    /** @return this host's id. */
    public int hostId()
    {
        return hostId;
    }

    /** @param id this host's id. @return this. */
    public HostConfig hostId(final int id)
    {
        this.hostId = id;
        return this;
    }

    /** @return the directory of this host's replica logs. */
    public Path hostDir()
    {
        return hostDir;
    }

    /** @param dir directory of this host's replica logs. @return this. */
    public HostConfig hostDir(final Path dir)
    {
        this.hostDir = dir;
        return this;
    }

    /** @param list every host as {@code id@address:port}, comma separated. @return this. */
    public HostConfig clusterHosts(final String list)
    {
        endpoints.clear();
        endpoints.putAll(parseEndpoints(CLUSTER_HOSTS, list));
        return this;
    }

    /** @return endpoints by host id. */
    public Map<Integer, String> endpoints()
    {
        return Map.copyOf(endpoints);
    }

    /** @param byId endpoints by host id, as {@link #parseEndpoints} makes them. @return this. */
    HostConfig endpoints(final Map<Integer, String> byId)
    {
        endpoints.clear();
        endpoints.putAll(byId);
        return this;
    }

    /** @return the largest host id plus one. */
    public int maxHosts()
    {
        return endpoints.keySet().stream().mapToInt(Integer::intValue).max().orElse(-1) + 1;
    }

    /** @return the threading profile ({@link #THREADING}). */
    public io.tidemark.aeron.AeronMedia.Profile threading()
    {
        return threading;
    }

    /** @param profile the threading profile ({@link #THREADING}). @return this. */
    public HostConfig threading(final io.tidemark.aeron.AeronMedia.Profile profile)
    {
        this.threading = null == profile ? io.tidemark.aeron.AeronMedia.Profile.SHARED : profile;
        return this;
    }

    /** @return the liveness listener's TCP port ({@link #LIVENESS_PORT}); 0 for a free one. */
    public int livenessPort()
    {
        return livenessPort;
    }

    /** @param port the liveness listener's TCP port ({@link #LIVENESS_PORT}); 0 for a free one. @return this. */
    public HostConfig livenessPort(final int port)
    {
        this.livenessPort = port;
        return this;
    }

    /** @return the limits on this host's clients. */
    public ClientLimits clientLimits()
    {
        return new ClientLimits(clientMax, clientMaxPerAddress, clientIdleTimeoutMs);
    }

    /**
     * @param maxClients           most clients at once.
     * @param maxClientsPerAddress most from one source address.
     * @param idleTimeoutMs        a client not heard from for this long is forgotten.
     * @return this.
     */
    public HostConfig clientLimits(final int maxClients, final int maxClientsPerAddress, final long idleTimeoutMs)
    {
        this.clientMax = maxClients;
        this.clientMaxPerAddress = maxClientsPerAddress;
        this.clientIdleTimeoutMs = idleTimeoutMs;
        return this;
    }

    /** @return replication settings (not concluded: the host adds its ZooKeeper liveness first). */
    public ReplicationContext replication()
    {
        return replication;
    }

    /** @param ctx replication settings. @return this. */
    public HostConfig replication(final ReplicationContext ctx)
    {
        this.replication = ctx;
        this.replicationProperties = Map.of();
        return this;
    }

    /** @return the Kafka listener's configuration ({@code kafka.*} keys), or null when the host has none. */
    public KafkaContext kafka()
    {
        return kafka;
    }

    /** @param ctx the Kafka listener's configuration, or null for none. @return this. */
    public HostConfig kafka(final KafkaContext ctx)
    {
        this.kafka = ctx;
        return this;
    }

    @Override
    public String toString()
    {
        return "HostConfig{host.id=" + hostId + ", host.dir=" + hostDir + ", cluster.id=" + clusterId() +
            ", cluster.hosts=" + endpoints + ", aeron.dir=" + aeronDir() + ", host.threading=" +
            threading.name().toLowerCase(java.util.Locale.ROOT) + ", " + describeCluster() +
            (null == kafka ? "" : ", kafka.listener=" + kafka.host() + ":" + kafka.port() + ", " +
            KafkaContext.SECURITY_PROTOCOL + "=" + kafka.securityProtocol().name) + '}';
    }
}
