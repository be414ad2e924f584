package io.tidemark.kafka;

import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import org.apache.kafka.common.security.auth.SecurityProtocol;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.tidemark.kafka.KafkaContext.*;

/**
 * The definitions of {@link KafkaContext}'s keys (the names are its constants): type, default, accepted values and
 * the text of each key's row in docs/configuration.md, in the table's order. As Aeron keeps a component's
 * {@code Configuration} beside its {@code Context}: the keys and their rules here, the values there. The checks that
 * depend on the security protocol are here too ({@link #checkSecurity}), run by {@link KafkaContext#validate()}.
 */
final class KafkaKeys
{
    /** The definitions, bound to the context's accessors; published as {@link KafkaContext#CONFIG}. */
    static final ConfigDef<KafkaContext> CONFIG = new ConfigDef<KafkaContext>()
        .define(ConfigKey.ofString(LISTENER, "127.0.0.1:9092")
            .withDefaultText("`127.0.0.1:9092`")
            .withDoc("`host:port` to bind; port 0 takes a free one. In a host's file, its presence turns the " +
            "listener on."),
            (c) -> c.host() + ":" + c.port(), KafkaContext::listener)
        .define(ConfigKey.ofString(ADVERTISED_LISTENER, null)
            .withDefaultText("the bound address")
            .withDoc("`host:port` clients are told to connect to (metadata, FindCoordinator)."),
            (c) -> null == c.advertisedHost() ? null : c.advertisedHost() + ":" + c.advertisedPort(),
            KafkaContext::advertisedListener)
        .define(ConfigKey.ofInt(MAX_REQUEST_BYTES, 16 * 1024 * 1024, 1024, Integer.MAX_VALUE)
            .withDoc("Largest request frame; a larger size prefix closes the connection as a bad frame."),
            KafkaContext::maxRequestBytes, KafkaContext::maxRequestBytes)
        .define(ConfigKey.ofInt(MAX_CONNECTIONS, 1000, 1, Integer.MAX_VALUE)
            .withDoc("Open connections; one more is closed at once (counted, logged at most once per interval)."),
            KafkaContext::maxConnections, KafkaContext::maxConnections)
        .define(ConfigKey.ofLong(CONNECTIONS_MAX_IDLE_MS, 600_000, 1, Integer.MAX_VALUE)
            .withDoc("A connection without a request for this long is closed."),
            KafkaContext::connectionsMaxIdleMs, KafkaContext::connectionsMaxIdleMs)
        .define(ConfigKey.ofInt(FETCH_MAX_BYTES, 8 * 1024 * 1024, 1024, Integer.MAX_VALUE)
            .withDoc("Most record bytes in one fetch response, whatever the client asks (the first batch always " +
            "goes)."),
            KafkaContext::fetchMaxBytes, KafkaContext::fetchMaxBytes)
        .define(ConfigKey.ofInt(NUM_PARTITIONS, 1, 1, Integer.MAX_VALUE)
            .withDoc("Partitions of a topic created without a count."),
            KafkaContext::numPartitions, KafkaContext::numPartitions)
        .define(ConfigKey.ofInt(DEFAULT_REPLICATION_FACTOR, -1, 1, Integer.MAX_VALUE).orSpecial(-1)
            .withDefaultText("-1: min(3, hosts)")
            .withDoc("Replication factor of a topic created without one."),
            KafkaContext::defaultReplicationFactor, KafkaContext::defaultReplicationFactor)
        .define(ConfigKey.ofInt(GROUP_MIN_SESSION_TIMEOUT_MS, 6_000, 1, Integer.MAX_VALUE)
            .withDoc("Smallest session timeout a group member may ask for."),
            KafkaContext::groupMinSessionTimeoutMs, KafkaContext::groupMinSessionTimeoutMs)
        .define(ConfigKey.ofInt(GROUP_MAX_SESSION_TIMEOUT_MS, 1_800_000, 1, Integer.MAX_VALUE)
            .withDoc("Largest session timeout a group member may ask for."),
            KafkaContext::groupMaxSessionTimeoutMs, KafkaContext::groupMaxSessionTimeoutMs)
        .define(ConfigKey.ofInt(GROUP_INITIAL_REBALANCE_DELAY_MS, 3_000, 0, Integer.MAX_VALUE)
            .withDoc("How long the first rebalance of an empty group waits for more members."),
            KafkaContext::groupInitialRebalanceDelayMs, KafkaContext::groupInitialRebalanceDelayMs)
        .define(ConfigKey.ofLong(ERROR_LOG_INTERVAL_MS, 10_000, 0, Integer.MAX_VALUE)
            .withDoc("At most one log line per interval about bad frames, refused connections and failed " +
            "authentications (the rest are counted)."),
            KafkaContext::errorLogIntervalMs, KafkaContext::errorLogIntervalMs)
        .define(ConfigKey.ofLong(QUEUED_MAX_REQUEST_BYTES, 128L * 1024 * 1024, 1024, Long.MAX_VALUE)
            .withDoc("Most bytes of requests read and not yet answered, over all connections of the listener " +
            "(Kafka's `queued.max.request.bytes`): when taken, connections stop being read until answers give bytes " +
            "back; a larger request closes its connection."),
            KafkaContext::queuedMaxRequestBytes, KafkaContext::queuedMaxRequestBytes)
        .define(ConfigKey.of(SECURITY_PROTOCOL, SecurityProtocol.class, SecurityProtocol.PLAINTEXT,
            KafkaKeys::protocol).withValidator((v) -> null == v ? "missing" : null)
            .withDefaultText("`PLAINTEXT`")
            .withDoc("`PLAINTEXT`, `SSL`, `SASL_SSL` or `SASL_PLAINTEXT`. PLAINTEXT binds a loopback address only, " +
            "unless `kafka.allow.plaintext=true`; SASL_PLAINTEXT binds a loopback address only."),
            KafkaContext::securityProtocol, KafkaContext::securityProtocol)
        .define(ConfigKey.of(ALLOW_PLAINTEXT, Boolean.class, false, KafkaKeys::flag)
            .withDefaultText("`false`")
            .withDoc("`true` lets a PLAINTEXT listener bind an address that is not loopback (anyone who reaches it " +
            "reads and writes every topic)."),
            KafkaContext::allowPlaintext, KafkaContext::allowPlaintext)
        .define(ConfigKey.of(SSL_KEYSTORE_LOCATION, Path.class, null, KafkaKeys::path)
            .withDefaultText("required by SSL, SASL_SSL")
            .withDoc("The listener's key store (PKCS12 or JKS): its private key and certificate chain."),
            KafkaContext::sslKeystoreLocation, (c, v) -> c.sslKeystore(v, c.sslKeystorePassword()))
        .define(ConfigKey.ofString(SSL_KEYSTORE_PASSWORD, null).asSecret()
            .withDefaultText("required with a key store")
            .withDoc("The key store's password."),
            KafkaContext::sslKeystorePassword, (c, v) -> c.sslKeystore(c.sslKeystoreLocation(), v))
        .define(ConfigKey.ofString(SSL_KEY_PASSWORD, null).asSecret()
            .withDefaultText("the key store's")
            .withDoc("The private key's password."),
            KafkaContext::sslKeyPassword, KafkaContext::sslKeyPassword)
        .define(ConfigKey.of(SSL_TRUSTSTORE_LOCATION, Path.class, null, KafkaKeys::path)
            .withDefaultText("none")
            .withDoc("Certificates that sign clients' certificates (needed by `kafka.ssl.client.auth`)."),
            KafkaContext::sslTruststoreLocation, (c, v) -> c.sslTruststore(v, c.sslTruststorePassword()))
        .define(ConfigKey.ofString(SSL_TRUSTSTORE_PASSWORD, null).asSecret()
            .withDefaultText("required with a trust store")
            .withDoc("The trust store's password."),
            KafkaContext::sslTruststorePassword, (c, v) -> c.sslTruststore(c.sslTruststoreLocation(), v))
        .define(ConfigKey.ofString(SSL_CLIENT_AUTH, "none")
            .withDefaultText("`none`")
            .withDoc("`none`, `requested` or `required`: whether clients present a certificate (mutual TLS)."),
            KafkaContext::sslClientAuth, KafkaContext::sslClientAuth)
        .define(listKey(SSL_ENABLED_PROTOCOLS, List.of("TLSv1.3", "TLSv1.2"))
            .withDefaultText("`TLSv1.3,TLSv1.2`")
            .withDoc("TLS versions offered; a TLS 1.2 renegotiation is refused (the connection closes)."),
            KafkaContext::sslEnabledProtocols, KafkaContext::sslEnabledProtocols)
        .define(listKey(SASL_ENABLED_MECHANISMS, MECHANISMS)
            .withDefaultText("`PLAIN,SCRAM-SHA-256`")
            .withDoc("SASL mechanisms offered by SASL_SSL and SASL_PLAINTEXT."),
            KafkaContext::saslEnabledMechanisms, KafkaContext::saslEnabledMechanisms)
        .define(ConfigKey.of(SASL_USERS_FILE, Path.class, null, KafkaKeys::path)
            .withDefaultText("required by SASL_*")
            .withDoc("`user=password` lines, in a file only its owner may read (refused otherwise, as the cluster " +
            "secret file is)."),
            KafkaContext::saslUsersFile, KafkaContext::saslUsersFile)
        .define(ConfigKey.ofLong(AUTHENTICATION_TIMEOUT_MS, 10_000, 1, Long.MAX_VALUE)
            .withDoc("A connection that has not finished its TLS handshake and SASL authentication this long after " +
            "it opened is closed (counted as a failed authentication)."),
            KafkaContext::authenticationTimeoutMs, KafkaContext::authenticationTimeoutMs)
        .define(ConfigKey.ofLong(REQUEST_READ_TIMEOUT_MS, 30_000, 1, 86_400_000)
            .withDoc("A request whose bytes (its size prefix included) do not all arrive this long after its first " +
            "byte closes the connection, giving back the request budget it holds (counted, logged at most once per " +
            "interval); 1 to 86400000."),
            KafkaContext::requestReadTimeoutMs, KafkaContext::requestReadTimeoutMs);

    private KafkaKeys()
    {
    }

    /**
     * The checks that depend on the security protocol: what it binds, and what TLS and SASL need.
     *
     * @param c the listener's context.
     * @throws ConfigException naming the first bad key.
     */
    static void checkSecurity(final KafkaContext c)
    {
        final boolean loopback = isLoopback(c.host());
        if (c.securityProtocol() == SecurityProtocol.PLAINTEXT && !loopback && !c.allowPlaintext())
        {
            throw new ConfigException(SECURITY_PROTOCOL, "PLAINTEXT on " + c.host() + ", which is not a loopback " +
                "address: anyone on the network could read and write every topic. Use SSL or SASL_SSL, or set " +
                ALLOW_PLAINTEXT + "=true to accept that");
        }
        if (c.securityProtocol() == SecurityProtocol.SASL_PLAINTEXT && !loopback)
        {
            throw new ConfigException(SECURITY_PROTOCOL, "SASL_PLAINTEXT sends passwords in the clear: only on a " +
                "loopback address, not " + c.host() + " (use SASL_SSL)");
        }
        if (c.usesTls())
        {
            if (null == c.sslKeystoreLocation())
            {
                throw new ConfigException(SSL_KEYSTORE_LOCATION, "missing: " + c.securityProtocol() + " needs the " +
                    "listener's key store");
            }
            if (null == c.sslKeystorePassword() || c.sslKeystorePassword().isEmpty())
            {
                throw new ConfigException(SSL_KEYSTORE_PASSWORD, "missing: the key store " +
                    c.sslKeystoreLocation() + " needs its password");
            }
            if (null != c.sslTruststoreLocation() &&
                (null == c.sslTruststorePassword() || c.sslTruststorePassword().isEmpty()))
            {
                throw new ConfigException(SSL_TRUSTSTORE_PASSWORD, "missing: the trust store " +
                    c.sslTruststoreLocation() + " needs its password");
            }
            if (!List.of("none", "requested", "required").contains(c.sslClientAuth()))
            {
                throw new ConfigException(SSL_CLIENT_AUTH, "none, requested or required: '" + c.sslClientAuth() +
                    "'");
            }
            if (!c.sslClientAuth().equals("none") && null == c.sslTruststoreLocation())
            {
                throw new ConfigException(SSL_TRUSTSTORE_LOCATION, "missing: " + SSL_CLIENT_AUTH + "=" +
                    c.sslClientAuth() + " needs the certificates that sign clients' certificates");
            }
            if (c.sslEnabledProtocols().isEmpty())
            {
                throw new ConfigException(SSL_ENABLED_PROTOCOLS, "at least one TLS version");
            }
            for (final String protocol : c.sslEnabledProtocols())
            {
                if (!protocol.equals("TLSv1.3") && !protocol.equals("TLSv1.2"))
                {
                    throw new ConfigException(SSL_ENABLED_PROTOCOLS, "TLSv1.3 or TLSv1.2, not '" + protocol + "'");
                }
            }
        }
        if (c.usesSasl())
        {
            if (c.saslEnabledMechanisms().isEmpty())
            {
                throw new ConfigException(SASL_ENABLED_MECHANISMS, "at least one of " + MECHANISMS);
            }
            for (final String mechanism : c.saslEnabledMechanisms())
            {
                if (!MECHANISMS.contains(mechanism))
                {
                    throw new ConfigException(SASL_ENABLED_MECHANISMS, "one of " + MECHANISMS + ", not '" +
                        mechanism + "'");
                }
            }
            if (null == c.saslUsersFile())
            {
                throw new ConfigException(SASL_USERS_FILE, "missing: " + c.securityProtocol() + " needs the users' " +
                    "credentials");
            }
        }
    }

    /**
     * @return whether {@code host} names a loopback address: 127.0.0.0/8, ::1, or a name that resolves to one
     *         (only such names are looked up: an IP literal is not).
     */
    static boolean isLoopback(final String host)
    {
        final String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) :
            host;
        try
        {
            final InetAddress[] addresses = InetAddress.getAllByName(bare);
            for (final InetAddress address : addresses)
            {
                if (!address.isLoopbackAddress())
                {
                    return false;
                }
            }
            return addresses.length > 0;
        }
        catch (final UnknownHostException ex)
        {
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private static ConfigKey<List<String>> listKey(final String name, final List<String> defaultValue)
    {
        return ConfigKey.of(name, (Class<List<String>>)(Class<?>)List.class, defaultValue, KafkaKeys::list);
    }

    private static SecurityProtocol protocol(final String value)
    {
        try
        {
            return SecurityProtocol.forName(value);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(SECURITY_PROTOCOL, "one of PLAINTEXT, SSL, SASL_SSL, SASL_PLAINTEXT: '" +
                value + "'");
        }
    }

    /** {@code true} or {@code false} in any case; empty is false (a key written without a value). */
    private static Boolean flag(final String value)
    {
        if ("true".equalsIgnoreCase(value))
        {
            return Boolean.TRUE;
        }
        if ("false".equalsIgnoreCase(value) || value.isEmpty())
        {
            return Boolean.FALSE;
        }
        throw new IllegalArgumentException("must be true or false: '" + value + "'");
    }

    private static Path path(final String value)
    {
        return value.isEmpty() ? null : Path.of(value);
    }

    private static List<String> list(final String value)
    {
        final List<String> items = new ArrayList<>();
        for (final String item : value.split(","))
        {
            if (!item.isBlank())
            {
                items.add(item.trim());
            }
        }
        return items;
    }
}
