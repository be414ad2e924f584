package io.tidemark.kafka;

import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Configuration of a Kafka listener, in one place: keys, defaults and validation that fails fast naming the key.
 * Keys carry the {@code kafka.} prefix in a host's properties file. Not thread-safe while being built; a listener
 * takes a validated copy.
 */
public final class KafkaContext implements Cloneable
{
    /** Address to bind, {@code host:port}; port 0 picks a free one. Default {@code 127.0.0.1:9092}. */
    public static final String LISTENER = "kafka.listener";
    /** Address clients are told to connect to, {@code host:port}; default: the bound address. */
    public static final String ADVERTISED_LISTENER = "kafka.advertised.listener";
    /** Largest request frame accepted; a larger one closes the connection. Default 16 MiB. */
    public static final String MAX_REQUEST_BYTES = "kafka.max.request.bytes";
    /** Most open client connections; more are closed at once. Default 1000. */
    public static final String MAX_CONNECTIONS = "kafka.max.connections";
    /** A connection with no request for this long is closed. Default 600000 (Kafka's). */
    public static final String CONNECTIONS_MAX_IDLE_MS = "kafka.connections.max.idle.ms";
    /** Most record bytes in one fetch response, whatever the client asks. Default 8 MiB. */
    public static final String FETCH_MAX_BYTES = "kafka.fetch.max.bytes";
    /** Partitions of a topic created without a count. Default 1. */
    public static final String NUM_PARTITIONS = "kafka.num.partitions";
    /** Replication factor of a topic created without one; -1: min(3, hosts). Default -1. */
    public static final String DEFAULT_REPLICATION_FACTOR = "kafka.default.replication.factor";
    /** Smallest session timeout a group member may ask for. Default 6000 (Kafka's). */
    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "kafka.group.min.session.timeout.ms";
    /** Largest session timeout a group member may ask for. Default 1800000 (Kafka's). */
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "kafka.group.max.session.timeout.ms";
    /** How long the first rebalance of an empty group waits for more members. Default 3000 (Kafka's). */
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "kafka.group.initial.rebalance.delay.ms";
    /** At most one log line per this interval for bad frames and refused connections. Default 10000. */
    public static final String ERROR_LOG_INTERVAL_MS = "kafka.error.log.interval.ms";

    /**
     * Most bytes of requests read but not yet answered, over all connections of the listener (Kafka's
     * {@code queued.max.request.bytes}): when they are taken, the listener stops reading until answers free them; a
     * request larger than this closes its connection. Default 134217728 (128 MiB).
     */
    public static final String QUEUED_MAX_REQUEST_BYTES = "kafka.queued.max.request.bytes";
    /** PLAINTEXT (default), SSL, SASL_SSL or SASL_PLAINTEXT (loopback only). */
    public static final String SECURITY_PROTOCOL = "kafka.security.protocol";
    /** {@code true} lets a PLAINTEXT listener bind an address that is not loopback. Default false. */
    public static final String ALLOW_PLAINTEXT = "kafka.allow.plaintext";
    /** The listener's key store (PKCS12 or JKS) with its private key and certificate chain; SSL and SASL_SSL. */
    public static final String SSL_KEYSTORE_LOCATION = "kafka.ssl.keystore.location";
    /** The key store's password. */
    public static final String SSL_KEYSTORE_PASSWORD = "kafka.ssl.keystore.password";
    /** The private key's password; default: the key store's. */
    public static final String SSL_KEY_PASSWORD = "kafka.ssl.key.password";
    /** Certificates trusted to sign clients' certificates (with {@code kafka.ssl.client.auth}); default none. */
    public static final String SSL_TRUSTSTORE_LOCATION = "kafka.ssl.truststore.location";
    /** The trust store's password. */
    public static final String SSL_TRUSTSTORE_PASSWORD = "kafka.ssl.truststore.password";
    /** none (default), requested or required: whether clients present a certificate. */
    public static final String SSL_CLIENT_AUTH = "kafka.ssl.client.auth";
    /** TLS versions offered. Default {@code TLSv1.3,TLSv1.2}. */
    public static final String SSL_ENABLED_PROTOCOLS = "kafka.ssl.enabled.protocols";
    /** SASL mechanisms offered (SASL_SSL, SASL_PLAINTEXT): PLAIN, SCRAM-SHA-256. Default both. */
    public static final String SASL_ENABLED_MECHANISMS = "kafka.sasl.enabled.mechanisms";
    /** File of {@code user=password} lines, readable by its owner only; needed by SASL_SSL and SASL_PLAINTEXT. */
    public static final String SASL_USERS_FILE = "kafka.sasl.users.file";
    /** A connection not authenticated (TLS handshake and SASL) this long after it opened is closed. Default 10000. */
    public static final String AUTHENTICATION_TIMEOUT_MS = "kafka.authentication.timeout.ms";
    /**
     * A request whose bytes (size prefix included) do not all arrive within this many milliseconds of its first byte
     * closes its connection, giving back the request budget it holds. Default 30000.
     */
    public static final String REQUEST_READ_TIMEOUT_MS = "kafka.request.read.timeout.ms";

    /** The SASL mechanisms served. */
    public static final List<String> MECHANISMS = List.of("PLAIN", "SCRAM-SHA-256");

    /**
     * Every key, defined once (type, default, accepted values, documentation) in {@link KafkaKeys}:
     * {@link #fromProperties} parses with it, {@link #validate()} checks with it, and the table of
     * docs/configuration.md is its {@link ConfigDef#markdownTable()}.
     */
    public static final ConfigDef<KafkaContext> CONFIG = KafkaKeys.CONFIG;

    /** Every key {@link #fromProperties(Map)} accepts: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    private String host;
    private int port;
    private String advertisedHost;
    private int advertisedPort = -1;
    private int maxRequestBytes;
    private int maxConnections;
    private long connectionsMaxIdleMs;
    private int fetchMaxBytes;
    private int numPartitions;
    private int defaultReplicationFactor;
    private int groupMinSessionTimeoutMs;
    private int groupMaxSessionTimeoutMs;
    private int groupInitialRebalanceDelayMs;
    private long errorLogIntervalMs;
    private long queuedMaxRequestBytes;
    private SecurityProtocol securityProtocol;
    private boolean allowPlaintext;
    private Path keystoreLocation;
    private String keystorePassword;
    private String keyPassword;
    private Path truststoreLocation;
    private String truststorePassword;
    private String clientAuth;
    private List<String> enabledProtocols;
    private List<String> saslMechanisms;
    private Path saslUsersFile;
    private long authenticationTimeoutMs;
    private long requestReadTimeoutMs;

    /** A listener context with every key at its default ({@link #CONFIG}). */
    public KafkaContext()
    {
        CONFIG.setDefaults(this);
    }

    /**
     * Read the {@code kafka.*} keys of a properties map (other keys are ignored: the host's file holds them too).
     *
     * @throws ConfigException naming the key of a bad value or an unknown {@code kafka.} key.
     */
    public static KafkaContext fromProperties(final Map<String, String> properties)
    {
        final KafkaContext ctx = new KafkaContext();
        for (final Map.Entry<String, String> e : properties.entrySet())
        {
            if (e.getKey().startsWith("kafka."))
            {
                CONFIG.set(ctx, e.getKey(), e.getValue());
            }
        }
        return ctx.validate();
    }

    private static String[] hostPort(final String key, final String value)
    {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            throw new ConfigException(key, "expected host:port, got '" + value + "'");
        }
        final String host = value.substring(0, colon);
        final int port;
        try
        {
            port = Integer.parseInt(value.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: '" + value.substring(colon + 1) + "'");
        }
        if (port < 0 || port > 65535)
        {
            throw new ConfigException(key, "port out of range: " + port);
        }
        return new String[] {host, Integer.toString(port)};
    }

    /** @param value {@code host:port} to bind. @return this */
    public KafkaContext listener(final String value)
    {
        final String[] hp = hostPort(LISTENER, value);
        this.host = hp[0];
        this.port = Integer.parseInt(hp[1]);
        return this;
    }

    /** @param value {@code host:port} to tell clients; null or empty for the bound address. @return this */
    public KafkaContext advertisedListener(final String value)
    {
        if (null == value || value.isEmpty())
        {
            advertisedHost = null;
            advertisedPort = -1;
            return this;
        }
        final String[] hp = hostPort(ADVERTISED_LISTENER, value);
        if (hp[1].equals("0"))
        {
            throw new ConfigException(ADVERTISED_LISTENER, "an advertised port must not be 0");
        }
        this.advertisedHost = hp[0];
        this.advertisedPort = Integer.parseInt(hp[1]);
        return this;
    }

    /** @param bytes largest request frame. @return this */
    public KafkaContext maxRequestBytes(final int bytes)
    {
        this.maxRequestBytes = bytes;
        return this;
    }

    /** @param count most open connections. @return this */
    public KafkaContext maxConnections(final int count)
    {
        this.maxConnections = count;
        return this;
    }

    /** @param ms idle time after which a connection is closed. @return this */
    public KafkaContext connectionsMaxIdleMs(final long ms)
    {
        this.connectionsMaxIdleMs = ms;
        return this;
    }

    /** @param bytes most record bytes in one fetch response. @return this */
    public KafkaContext fetchMaxBytes(final int bytes)
    {
        this.fetchMaxBytes = bytes;
        return this;
    }

    /** @param count partitions of a topic created without a count. @return this */
    public KafkaContext numPartitions(final int count)
    {
        this.numPartitions = count;
        return this;
    }

    /** @param factor replication factor of a topic created without one; -1 for min(3, hosts). @return this */
    public KafkaContext defaultReplicationFactor(final int factor)
    {
        this.defaultReplicationFactor = factor;
        return this;
    }

    /** @param ms smallest session timeout of a group member. @return this */
    public KafkaContext groupMinSessionTimeoutMs(final int ms)
    {
        this.groupMinSessionTimeoutMs = ms;
        return this;
    }

    /** @param ms largest session timeout of a group member. @return this */
    public KafkaContext groupMaxSessionTimeoutMs(final int ms)
    {
        this.groupMaxSessionTimeoutMs = ms;
        return this;
    }

    /** @param ms delay of the first rebalance of an empty group. @return this */
    public KafkaContext groupInitialRebalanceDelayMs(final int ms)
    {
        this.groupInitialRebalanceDelayMs = ms;
        return this;
    }

    /** @param ms least time between two log lines about bad input. @return this */
    public KafkaContext errorLogIntervalMs(final long ms)
    {
        this.errorLogIntervalMs = ms;
        return this;
    }

    /** @param bytes most bytes of requests read and not yet answered, over all connections. @return this */
    public KafkaContext queuedMaxRequestBytes(final long bytes)
    {
        this.queuedMaxRequestBytes = bytes;
        return this;
    }

    /** @param protocol PLAINTEXT, SSL, SASL_SSL or SASL_PLAINTEXT. @return this */
    public KafkaContext securityProtocol(final SecurityProtocol protocol)
    {
        this.securityProtocol = protocol;
        return this;
    }

    /** @param allow whether a PLAINTEXT listener may bind an address that is not loopback. @return this */
    public KafkaContext allowPlaintext(final boolean allow)
    {
        this.allowPlaintext = allow;
        return this;
    }

    /** @param location the key store file. @param password its password. @return this */
    public KafkaContext sslKeystore(final Path location, final String password)
    {
        this.keystoreLocation = location;
        this.keystorePassword = password;
        return this;
    }

    /** @param password the private key's password, or null for the key store's. @return this */
    public KafkaContext sslKeyPassword(final String password)
    {
        this.keyPassword = null == password || password.isEmpty() ? null : password;
        return this;
    }

    /** @param location the trust store file, or null. @param password its password. @return this */
    public KafkaContext sslTruststore(final Path location, final String password)
    {
        this.truststoreLocation = location;
        this.truststorePassword = password;
        return this;
    }

    /** @param mode none, requested or required. @return this */
    public KafkaContext sslClientAuth(final String mode)
    {
        this.clientAuth = null == mode ? "" : mode.trim().toLowerCase(java.util.Locale.ROOT);
        return this;
    }

    /** @param protocols TLS versions offered. @return this */
    public KafkaContext sslEnabledProtocols(final List<String> protocols)
    {
        this.enabledProtocols = List.copyOf(protocols);
        return this;
    }

    /** @param mechanisms SASL mechanisms offered. @return this */
    public KafkaContext saslEnabledMechanisms(final List<String> mechanisms)
    {
        this.saslMechanisms = List.copyOf(mechanisms);
        return this;
    }

    /** @param file {@code user=password} lines, readable by its owner only. @return this */
    public KafkaContext saslUsersFile(final Path file)
    {
        this.saslUsersFile = file;
        return this;
    }

    /** @param ms how long a connection may take to authenticate. @return this */
    public KafkaContext authenticationTimeoutMs(final long ms)
    {
        this.authenticationTimeoutMs = ms;
        return this;
    }

    /** @param ms how long the bytes of one request may take to arrive. @return this */
    public KafkaContext requestReadTimeoutMs(final long ms)
    {
        this.requestReadTimeoutMs = ms;
        return this;
    }

    /**
     * @return this, after checking every value.
     * @throws ConfigException naming the first bad key.
     */
    public KafkaContext validate()
    {
        CONFIG.validate(this);
        if (groupMaxSessionTimeoutMs < groupMinSessionTimeoutMs)
        {
            throw new ConfigException(GROUP_MAX_SESSION_TIMEOUT_MS, "need 1 <= min (" + groupMinSessionTimeoutMs +
                ") <= max (" + groupMaxSessionTimeoutMs + ")");
        }
        KafkaKeys.checkSecurity(this);
        return this;
    }

    /** @return whether the listener speaks TLS (SSL, SASL_SSL). */
    public boolean usesTls()
    {
        return securityProtocol == SecurityProtocol.SSL || securityProtocol == SecurityProtocol.SASL_SSL;
    }

    /** @return whether clients authenticate with SASL (SASL_SSL, SASL_PLAINTEXT). */
    public boolean usesSasl()
    {
        return securityProtocol == SecurityProtocol.SASL_SSL || securityProtocol == SecurityProtocol.SASL_PLAINTEXT;
    }

    @Override
    public KafkaContext clone()
    {
        try
        {
            return (KafkaContext)super.clone();
        }
        catch (final CloneNotSupportedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /** @return host to bind. */
    public String host()
    {
        return host;
    }

    /** @return port to bind, 0 for any free one. */
    public int port()
    {
        return port;
    }

    /** @return advertised host, or null for the bound one. */
    public String advertisedHost()
    {
        return advertisedHost;
    }

    /** @return advertised port, or -1 for the bound one. */
    public int advertisedPort()
    {
        return advertisedPort;
    }

    /** @return largest request frame. */
    public int maxRequestBytes()
    {
        return maxRequestBytes;
    }

    /** @return most open connections. */
    public int maxConnections()
    {
        return maxConnections;
    }

    /** @return idle time after which a connection is closed. */
    public long connectionsMaxIdleMs()
    {
        return connectionsMaxIdleMs;
    }

    /** @return most record bytes in one fetch response. */
    public int fetchMaxBytes()
    {
        return fetchMaxBytes;
    }

    /** @return partitions of a topic created without a count. */
    public int numPartitions()
    {
        return numPartitions;
    }

    /** @return replication factor of a topic created without one, or -1. */
    public int defaultReplicationFactor()
    {
        return defaultReplicationFactor;
    }

    /** @return smallest member session timeout. */
    public int groupMinSessionTimeoutMs()
    {
        return groupMinSessionTimeoutMs;
    }

    /** @return largest member session timeout. */
    public int groupMaxSessionTimeoutMs()
    {
        return groupMaxSessionTimeoutMs;
    }

    /** @return delay of the first rebalance of an empty group. */
    public int groupInitialRebalanceDelayMs()
    {
        return groupInitialRebalanceDelayMs;
    }

    /** @return least time between two log lines about bad input. */
    public long errorLogIntervalMs()
    {
        return errorLogIntervalMs;
    }

    /** @return most bytes of requests read and not yet answered, over all connections. */
    public long queuedMaxRequestBytes()
    {
        return queuedMaxRequestBytes;
    }

    /** @return the listener's security protocol. */
    public SecurityProtocol securityProtocol()
    {
        return securityProtocol;
    }

    /** @return whether PLAINTEXT may bind an address that is not loopback. */
    public boolean allowPlaintext()
    {
        return allowPlaintext;
    }

    /** @return the key store, or null. */
    public Path sslKeystoreLocation()
    {
        return keystoreLocation;
    }

    String sslKeystorePassword()
    {
        return keystorePassword;
    }

    String sslKeyPassword()
    {
        return null == keyPassword ? keystorePassword : keyPassword;
    }

    /** @return the trust store, or null. */
    public Path sslTruststoreLocation()
    {
        return truststoreLocation;
    }

    String sslTruststorePassword()
    {
        return truststorePassword;
    }

    /** @return none, requested or required. */
    public String sslClientAuth()
    {
        return clientAuth;
    }

    /** @return TLS versions offered. */
    public List<String> sslEnabledProtocols()
    {
        return enabledProtocols;
    }

    /** @return SASL mechanisms offered. */
    public List<String> saslEnabledMechanisms()
    {
        return saslMechanisms;
    }

    /** @return the users' credentials file, or null. */
    public Path saslUsersFile()
    {
        return saslUsersFile;
    }

    /** @return how long a connection may take to authenticate. */
    public long authenticationTimeoutMs()
    {
        return authenticationTimeoutMs;
    }

    /** @return how long the bytes of one request may take to arrive. */
    public long requestReadTimeoutMs()
    {
        return requestReadTimeoutMs;
    }

    /** @return the security protocol and what it uses, without passwords (for {@code tidemark host}'s output). */
    public String describeSecurity()
    {
        final StringBuilder text = new StringBuilder(securityProtocol.name);
        if (usesSasl())
        {
            text.append(" (SASL ").append(String.join(",", saslMechanisms)).append(", users ").append(saslUsersFile)
                .append(')');
        }
        if (usesTls())
        {
            text.append(" (TLS ").append(String.join(",", enabledProtocols)).append(", key store ")
                .append(keystoreLocation).append(", client certificates ").append(clientAuth).append(')');
        }
        return text.toString();
    }
}
