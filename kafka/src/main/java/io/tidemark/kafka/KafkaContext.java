package io.tidemark.kafka;

import io.tidemark.store.ConfigException;

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

    /** Every key {@link #fromProperties(Map)} accepts. */
    public static final Set<String> KEYS = Set.of(LISTENER, ADVERTISED_LISTENER, MAX_REQUEST_BYTES, MAX_CONNECTIONS,
        CONNECTIONS_MAX_IDLE_MS, FETCH_MAX_BYTES, NUM_PARTITIONS, DEFAULT_REPLICATION_FACTOR,
        GROUP_MIN_SESSION_TIMEOUT_MS, GROUP_MAX_SESSION_TIMEOUT_MS, GROUP_INITIAL_REBALANCE_DELAY_MS,
        ERROR_LOG_INTERVAL_MS);

    private String host = "127.0.0.1";
    private int port = 9092;
    private String advertisedHost;
    private int advertisedPort = -1;
    private int maxRequestBytes = 16 * 1024 * 1024;
    private int maxConnections = 1000;
    private long connectionsMaxIdleMs = 600_000;
    private int fetchMaxBytes = 8 * 1024 * 1024;
    private int numPartitions = 1;
    private int defaultReplicationFactor = -1;
    private int groupMinSessionTimeoutMs = 6_000;
    private int groupMaxSessionTimeoutMs = 1_800_000;
    private int groupInitialRebalanceDelayMs = 3_000;
    private long errorLogIntervalMs = 10_000;

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
            final String key = e.getKey();
            if (!key.startsWith("kafka."))
            {
                continue;
            }
            final String value = null == e.getValue() ? "" : e.getValue().trim();
            switch (key)
            {
                case LISTENER -> ctx.listener(value);
                case ADVERTISED_LISTENER -> ctx.advertisedListener(value);
                case MAX_REQUEST_BYTES -> ctx.maxRequestBytes(parseInt(key, value));
                case MAX_CONNECTIONS -> ctx.maxConnections(parseInt(key, value));
                case CONNECTIONS_MAX_IDLE_MS -> ctx.connectionsMaxIdleMs(parseInt(key, value));
                case FETCH_MAX_BYTES -> ctx.fetchMaxBytes(parseInt(key, value));
                case NUM_PARTITIONS -> ctx.numPartitions(parseInt(key, value));
                case DEFAULT_REPLICATION_FACTOR -> ctx.defaultReplicationFactor(parseInt(key, value));
                case GROUP_MIN_SESSION_TIMEOUT_MS -> ctx.groupMinSessionTimeoutMs(parseInt(key, value));
                case GROUP_MAX_SESSION_TIMEOUT_MS -> ctx.groupMaxSessionTimeoutMs(parseInt(key, value));
                case GROUP_INITIAL_REBALANCE_DELAY_MS -> ctx.groupInitialRebalanceDelayMs(parseInt(key, value));
                case ERROR_LOG_INTERVAL_MS -> ctx.errorLogIntervalMs(parseInt(key, value));
                default -> throw new ConfigException(key, "unknown key (known: " + KEYS + ")");
            }
        }
        return ctx.validate();
    }

    private static int parseInt(final String key, final String value)
    {
        try
        {
            return Integer.parseInt(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: '" + value + "'");
        }
    }

    private static String[] hostPort(final String key, final String value)
    {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            throw new ConfigException(key, "expected host:port, got '" + value + "'");
        }
        final String host = value.substring(0, colon);
        final int port = parseInt(key, value.substring(colon + 1));
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

    /**
     * @return this, after checking every value.
     * @throws ConfigException naming the first bad key.
     */
    public KafkaContext validate()
    {
        if (maxRequestBytes < 1024)
        {
            throw new ConfigException(MAX_REQUEST_BYTES, "at least 1024: " + maxRequestBytes);
        }
        if (maxConnections < 1)
        {
            throw new ConfigException(MAX_CONNECTIONS, "at least 1: " + maxConnections);
        }
        if (connectionsMaxIdleMs < 1)
        {
            throw new ConfigException(CONNECTIONS_MAX_IDLE_MS, "at least 1: " + connectionsMaxIdleMs);
        }
        if (fetchMaxBytes < 1024)
        {
            throw new ConfigException(FETCH_MAX_BYTES, "at least 1024: " + fetchMaxBytes);
        }
        if (numPartitions < 1)
        {
            throw new ConfigException(NUM_PARTITIONS, "at least 1: " + numPartitions);
        }
        if (defaultReplicationFactor == 0 || defaultReplicationFactor < -1)
        {
            throw new ConfigException(DEFAULT_REPLICATION_FACTOR, "-1 or at least 1: " + defaultReplicationFactor);
        }
        if (groupMinSessionTimeoutMs < 1 || groupMaxSessionTimeoutMs < groupMinSessionTimeoutMs)
        {
            throw new ConfigException(GROUP_MAX_SESSION_TIMEOUT_MS, "need 1 <= min (" + groupMinSessionTimeoutMs +
                ") <= max (" + groupMaxSessionTimeoutMs + ")");
        }
        if (groupInitialRebalanceDelayMs < 0)
        {
            throw new ConfigException(GROUP_INITIAL_REBALANCE_DELAY_MS, "not negative: " +
                groupInitialRebalanceDelayMs);
        }
        if (errorLogIntervalMs < 0)
        {
            throw new ConfigException(ERROR_LOG_INTERVAL_MS, "not negative: " + errorLogIntervalMs);
        }
        return this;
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
}
