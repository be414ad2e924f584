package io.tidemark.zookeeper;

import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.common.PathUtils;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;

import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.Collections;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * How Tidemark reaches ZooKeeper, in one place: the servers, the cluster's root znode, the digest credentials and
 * the timeouts, with validation that fails fast naming the key ({@link ConfigException#key()}).
 * <p>
 * <b>Access control.</b> Every client built here ({@link #newClient()}) authenticates with the digest scheme as
 * {@code user:password}, and every znode it creates (the root and its parents included, when they are missing)
 * gets one ACL: {@link ZooDefs.Perms#ALL} for that digest identity, and nothing for anyone else. A client without
 * these credentials can neither read nor change what Tidemark created. Parents of the root that already exist
 * keep their ACL; an operator who shares a prefix such as {@code /tidemark} between clusters with different
 * credentials creates it beforehand with an ACL that lets each of them create children.
 * <p>
 * <b>Design note on the digest.</b> The identity in the ACL is computed here, on the client, with
 * {@link DigestAuthenticationProvider#generateDigest(String)}; the servers must hash with the same algorithm (the
 * default, SHA-1, unless {@code zookeeper.DigestAuthenticationProvider.digestAlg} is set on both sides).
 * <p>
 * Built with fluent setters, then {@link #conclude() concluded}: validated and frozen, after which it never changes
 * and may be shared between threads (publish it safely). Not thread-safe while being built.
 */
public final class ZooKeeperSettings
{
    /** ZooKeeper servers, {@code host:port[,host:port...]}, optionally followed by a chroot ({@code /path}). */
    public static final String CONNECT = "zookeeper.connect";
    /** The cluster's root znode: an absolute path, not {@code /} itself, no trailing {@code /}. */
    public static final String ROOT = "zookeeper.root";
    /** The user of the digest credentials (no {@code :}). */
    public static final String USER = "zookeeper.user";
    /** The password of the digest credentials. Never printed. */
    public static final String PASSWORD = "zookeeper.password";
    /** ZooKeeper session timeout: a host cut off for longer is dead. Default 18000. */
    public static final String SESSION_TIMEOUT_MS = "zookeeper.session.timeout.ms";
    /** Longest wait for a connection to a server; at most the session timeout. Default 15000. */
    public static final String CONNECTION_TIMEOUT_MS = "zookeeper.connection.timeout.ms";

    private static final String KEY_PREFIX = "zookeeper.";
    /**
     * Longest session (and so connection) timeout: ten minutes. Longer ones overflow the arithmetic of ZooKeeper's
     * and Curator's clients (a silent wait of weeks), and a ZooKeeper server allows at most 20 ticks anyway.
     */
    public static final int MAX_TIMEOUT_MS = 600_000;
    private static final int RETRY_BASE_SLEEP_MS = 100;
    private static final int RETRY_MAX_RETRIES = 3;

    /**
     * Every key, defined once (name, default, accepted values, documentation): {@link #fromProperties} parses with
     * it, {@link #conclude()} validates with it, and the table of docs/configuration.md is its
     * {@link ConfigDef#markdownTable()}.
     */
    public static final ConfigDef<ZooKeeperSettings> CONFIG = new ConfigDef<ZooKeeperSettings>()
        .define(ConfigKey.ofString(CONNECT, null).withValidator(ZooKeeperSettings::validateConnectString)
            .withDefaultText("required")
            .withDoc("ZooKeeper servers, `host:port[,host:port...]`, optionally followed by a chroot (`/path`)."),
            (s) -> s.connectString, ZooKeeperSettings::connectString)
        .define(ConfigKey.ofString(ROOT, null).withValidator(ZooKeeperSettings::validateRootPath)
            .withDefaultText("required")
            .withDoc("The cluster's root znode: an absolute path, not `/` itself, no trailing `/`."),
            (s) -> s.rootPath, ZooKeeperSettings::rootPath)
        .define(ConfigKey.ofString(USER, null).withValidator(ZooKeeperSettings::validateUser)
            .withDefaultText("required")
            .withDoc("User of the digest credentials (no `:`). Every znode Tidemark creates is readable and writable " +
            "by this identity only ([access control](multi-host.md#controller-state-in-zookeeper))."),
            (s) -> s.user, ZooKeeperSettings::user)
        .define(ConfigKey.ofString(PASSWORD, null).asSecret()
            .withValidator((v) -> null == v || v.isEmpty() ? "missing: the digest credentials need a password" : null)
            .withDefaultText("required")
            .withDoc("Password of the digest credentials. Never printed."),
            (s) -> s.password, ZooKeeperSettings::password)
        .define(ConfigKey.ofInt(SESSION_TIMEOUT_MS, 18_000, 1, MAX_TIMEOUT_MS)
            .withDoc("ZooKeeper session timeout: a host cut off for longer is dead. At most 600000 (longer ones " +
            "overflow the ZooKeeper client's arithmetic)."),
            (s) -> s.sessionTimeoutMs, ZooKeeperSettings::sessionTimeoutMs)
        .define(ConfigKey.ofInt(CONNECTION_TIMEOUT_MS, 15_000, 1, MAX_TIMEOUT_MS)
            .withDoc("Longest wait for a connection to a server; at most the session timeout."),
            (s) -> s.connectionTimeoutMs, ZooKeeperSettings::connectionTimeoutMs);

    /** Every key {@link #fromProperties(Properties)} reads: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    private String connectString;
    private String rootPath;
    private String user;
    private String password;
    private int sessionTimeoutMs;
    private int connectionTimeoutMs;
    private Id aclId;
    private boolean concluded;

    /** Settings with the timeouts at their defaults ({@link #CONFIG}) and the required keys not yet set. */
    public ZooKeeperSettings()
    {
        CONFIG.setDefaults(this);
    }

    /**
     * Read the {@code zookeeper.*} keys of a host's configuration file; other keys are left to other components,
     * and a {@code zookeeper.*} key this class does not know (a misspelling) is an error. Values are trimmed.
     *
     * @param properties the configuration.
     * @return the settings, concluded.
     * @throws ConfigException naming the first key whose value is missing, malformed or out of range.
     */
    public static ZooKeeperSettings fromProperties(final Properties properties)
    {
        final ZooKeeperSettings settings = new ZooKeeperSettings();
        for (final String key : properties.stringPropertyNames())
        {
            if (key.startsWith(KEY_PREFIX))
            {
                CONFIG.set(settings, key, properties.getProperty(key));
            }
        }
        return settings.conclude();
    }

    /**
     * Validate every value and freeze the settings (idempotent).
     *
     * @return this, concluded.
     * @throws ConfigException naming the first key whose value is missing, malformed or out of range.
     */
    public ZooKeeperSettings conclude()
    {
        if (concluded)
        {
            return this;
        }
        CONFIG.validate(this);
        if (connectionTimeoutMs > sessionTimeoutMs)
        {
            throw new ConfigException(CONNECTION_TIMEOUT_MS, connectionTimeoutMs + " is longer than " +
                SESSION_TIMEOUT_MS + "=" + sessionTimeoutMs);
        }
        try
        {
            aclId = new Id("digest", DigestAuthenticationProvider.generateDigest(user + ":" + password));
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("this JVM cannot compute ZooKeeper digests", ex);
        }
        concluded = true;
        return this;
    }

    private static String validateUser(final String value)
    {
        if (null == value || value.isEmpty())
        {
            return "missing: the digest credentials need a user";
        }
        return value.indexOf(':') >= 0 ?
            "must not contain ':' (the digest scheme separates user and password with it)" : null;
    }

    private static String validateConnectString(final String value)
    {
        if (null == value || value.isEmpty())
        {
            throw new ConfigException(CONNECT, "missing: expected host:port[,host:port...][/chroot]");
        }
        final int slash = value.indexOf('/');
        final String servers = slash < 0 ? value : value.substring(0, slash);
        if (slash >= 0)
        {
            final String chroot = value.substring(slash);
            if (chroot.length() > 1)
            {
                try
                {
                    PathUtils.validatePath(chroot);
                }
                catch (final IllegalArgumentException ex)
                {
                    throw new ConfigException(CONNECT, "bad chroot '" + chroot + "': " + ex.getMessage());
                }
            }
        }
        if (servers.isEmpty())
        {
            throw new ConfigException(CONNECT, "no host:port in '" + value + "'");
        }
        for (final String server : servers.split(",", -1))
        {
            validateServer(value, server);
        }
        return null;
    }

    private static void validateServer(final String value, final String server)
    {
        if (server.isEmpty())
        {
            throw new ConfigException(CONNECT, "empty server entry in '" + value + "'");
        }
        final String host;
        final String port;
        if (server.startsWith("["))
        {
            final int close = server.indexOf(']');
            if (close < 0 || close + 1 >= server.length() || server.charAt(close + 1) != ':')
            {
                throw new ConfigException(CONNECT, "'" + server + "' is not [ipv6-address]:port");
            }
            host = server.substring(1, close);
            port = server.substring(close + 2);
        }
        else
        {
            final int colon = server.lastIndexOf(':');
            if (colon < 0)
            {
                throw new ConfigException(CONNECT, "'" + server + "' has no port (expected host:port)");
            }
            host = server.substring(0, colon);
            port = server.substring(colon + 1);
            if (host.indexOf(':') >= 0)
            {
                throw new ConfigException(CONNECT, "'" + server + "': an IPv6 address goes in brackets, " +
                    "[address]:port");
            }
        }
        if (host.isEmpty())
        {
            throw new ConfigException(CONNECT, "'" + server + "' has no host");
        }
        for (int i = 0; i < host.length(); i++)
        {
            if (Character.isWhitespace(host.charAt(i)))
            {
                throw new ConfigException(CONNECT, "'" + server + "': the host contains white space");
            }
        }
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch((c) -> c >= '0' && c <= '9'))
        {
            throw new ConfigException(CONNECT, "'" + server + "': the port '" + port + "' is not a number " +
                "in [1, 65535]");
        }
        final int number = Integer.parseInt(port);
        if (number < 1 || number > 65535)
        {
            throw new ConfigException(CONNECT, "'" + server + "': the port " + number + " is outside [1, 65535]");
        }
    }

    private static String validateRootPath(final String value)
    {
        if (null == value || value.isEmpty())
        {
            throw new ConfigException(ROOT, "missing: expected an absolute znode path such as /tidemark/prod");
        }
        if ("/".equals(value))
        {
            throw new ConfigException(ROOT, "'/' is ZooKeeper's own root; give the cluster a path of its own, " +
                "such as /tidemark/prod");
        }
        if (value.endsWith("/"))
        {
            throw new ConfigException(ROOT, "'" + value + "' must not end with '/'");
        }
        try
        {
            PathUtils.validatePath(value);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(ROOT, "'" + value + "' is not a valid znode path: " + ex.getMessage());
        }
        return null;
    }

    private void checkNotConcluded()
    {
        if (concluded)
        {
            throw new IllegalStateException("ZooKeeper settings are concluded and can no longer change");
        }
    }

    private void checkConcluded()
    {
        if (!concluded)
        {
            throw new IllegalStateException("ZooKeeper settings are not concluded: call conclude() first");
        }
    }

    /**
     * @return the ACL every znode of the cluster carries: all permissions for the digest identity of
     *         {@link #USER} and {@link #PASSWORD}, nothing for anyone else.
     */
    public List<ACL> acl()
    {
        checkConcluded();
        return Collections.singletonList(new ACL(ZooDefs.Perms.ALL, aclId));
    }

    /**
     * A Curator client for these settings, <b>not started</b>: the caller starts it (after adding any listeners),
     * owns it and closes it; {@link #connectClient()} also starts it and waits for the connection. It authenticates
     * with the digest credentials on every connection, gives every znode it creates the ACL of {@link #aclId()}
     * only, and retries with exponential back-off. Concludes the settings.
     *
     * @return the client, not started.
     * @throws ConfigException when a value is invalid.
     */
    public CuratorFramework newClient()
    {
        conclude();
        return CuratorFrameworkFactory.builder()
            .connectString(connectString)
            .sessionTimeoutMs(sessionTimeoutMs)
            .connectionTimeoutMs(connectionTimeoutMs)
            .retryPolicy(new ExponentialBackoffRetry(RETRY_BASE_SLEEP_MS, RETRY_MAX_RETRIES))
            .authorization("digest", (user + ":" + password).getBytes(StandardCharsets.UTF_8))
            .aclProvider(new DigestAclProvider(aclId))
            // a lost connection is not a lost session: the controller's election and the hosts' ephemeral nodes live
            // while the session does, so a ZooKeeper restart shorter than the session costs no controller and no
            // epoch (the default policy drops leadership on every suspension and re-queues the candidate)
            .connectionStateErrorPolicy(new org.apache.curator.framework.state.SessionConnectionStateErrorPolicy())
            .build();
    }

    /**
     * {@link #newClient()}, started, once it has connected. The caller owns it and closes it.
     *
     * @return the started, connected client.
     * @throws ConfigException         when a value is invalid.
     * @throws ZooKeeperStoreException when no server answers within the connection timeout.
     */
    public CuratorFramework connectClient()
    {
        return startAndAwaitConnection(newClient(), connectString, connectionTimeoutMs);
    }

    /**
     * Start {@code client} and wait for its first connection; close it on failure.
     *
     * @return the client.
     * @throws ZooKeeperStoreException when no server answers within {@code connectionTimeoutMs}.
     */
    static CuratorFramework startAndAwaitConnection(
        final CuratorFramework client, final String connectString, final int connectionTimeoutMs)
    {
        client.start();
        try
        {
            if (!client.blockUntilConnected(connectionTimeoutMs, TimeUnit.MILLISECONDS))
            {
                throw new ZooKeeperStoreException("cannot reach ZooKeeper at " + connectString + " within " +
                    connectionTimeoutMs + " ms", null);
            }
        }
        catch (final InterruptedException ex)
        {
            client.close();
            Thread.currentThread().interrupt();
            throw new ZooKeeperStoreException("interrupted while connecting to ZooKeeper at " + connectString, ex);
        }
        catch (final RuntimeException ex)
        {
            client.close();
            throw ex;
        }
        return client;
    }

    /**
     * The digest identity that owns every znode created through {@link #newClient()}: {@code digest} scheme,
     * {@code user:base64(hash(user:password))}. Only concluded settings have one.
     *
     * @return the identity.
     * @throws IllegalStateException when not concluded.
     */
    public Id aclId()
    {
        checkConcluded();
        return aclId;
    }

    /** @param value see {@link #CONNECT}. @return this */
    public ZooKeeperSettings connectString(final String value)
    {
        checkNotConcluded();
        connectString = value;
        return this;
    }

    /** @return see {@link #CONNECT}. */
    public String connectString()
    {
        return connectString;
    }

    /** @param value see {@link #ROOT}. @return this */
    public ZooKeeperSettings rootPath(final String value)
    {
        checkNotConcluded();
        rootPath = value;
        return this;
    }

    /** @return see {@link #ROOT}. */
    public String rootPath()
    {
        return rootPath;
    }

    /** @param value see {@link #USER}. @return this */
    public ZooKeeperSettings user(final String value)
    {
        checkNotConcluded();
        user = value;
        return this;
    }

    /** @return see {@link #USER}. */
    public String user()
    {
        return user;
    }

    /**
     * Set the password; there is deliberately no getter, and {@link #toString()} does not print it.
     *
     * @param value see {@link #PASSWORD}.
     * @return this
     */
    public ZooKeeperSettings password(final String value)
    {
        checkNotConcluded();
        password = value;
        return this;
    }

    /** @param value see {@link #SESSION_TIMEOUT_MS}. @return this */
    public ZooKeeperSettings sessionTimeoutMs(final int value)
    {
        checkNotConcluded();
        sessionTimeoutMs = value;
        return this;
    }

    /** @return see {@link #SESSION_TIMEOUT_MS}. */
    public int sessionTimeoutMs()
    {
        return sessionTimeoutMs;
    }

    /** @param value see {@link #CONNECTION_TIMEOUT_MS}. @return this */
    public ZooKeeperSettings connectionTimeoutMs(final int value)
    {
        checkNotConcluded();
        connectionTimeoutMs = value;
        return this;
    }

    /** @return see {@link #CONNECTION_TIMEOUT_MS}. */
    public int connectionTimeoutMs()
    {
        return connectionTimeoutMs;
    }

    /** @return the settings by key, the password masked. */
    @Override
    public String toString()
    {
        return "ZooKeeperSettings{" +
            CONNECT + "=" + connectString + ", " +
            ROOT + "=" + rootPath + ", " +
            USER + "=" + user + ", " +
            PASSWORD + "=" + (null == password || password.isEmpty() ? "<not set>" : "<hidden>") + ", " +
            SESSION_TIMEOUT_MS + "=" + sessionTimeoutMs + ", " +
            CONNECTION_TIMEOUT_MS + "=" + connectionTimeoutMs + "}";
    }

    /** Every znode gets {@link ZooDefs.Perms#ALL} for one digest identity, and nothing for anyone else. */
    private static final class DigestAclProvider implements ACLProvider
    {
        // Not List.of: ZooKeeper's validateACL asks contains(null), which immutable List.of answers with an NPE.
        private final List<ACL> acl;

        DigestAclProvider(final Id id)
        {
            this.acl = Collections.singletonList(new ACL(ZooDefs.Perms.ALL, id));
        }

        @Override
        public List<ACL> getDefaultAcl()
        {
            return acl;
        }

        @Override
        public List<ACL> getAclForPath(final String path)
        {
            return acl;
        }
    }
}
