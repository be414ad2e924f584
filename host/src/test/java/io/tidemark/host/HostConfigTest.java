package io.tidemark.host;

import io.tidemark.client.remote.ClientConfig;
import io.tidemark.store.ConfigException;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every value of a host's and a client's configuration is checked before anything starts. */
class HostConfigTest
{
    /** What a client and a host of the cluster both name: the cluster and its ZooKeeper. */
    private static Properties cluster()
    {
        final Properties p = new Properties();
        p.setProperty("cluster.id", "prod-eu");
        p.setProperty("zookeeper.connect", "10.0.0.9:2181");
        p.setProperty("zookeeper.root", "/tidemark/prod-eu");
        p.setProperty("zookeeper.user", "tidemark");
        p.setProperty("zookeeper.password", "secret");
        return p;
    }

    /** A valid host configuration, without a secret. */
    private static Properties good()
    {
        final Properties p = cluster();
        p.setProperty("host.id", "1");
        p.setProperty("host.dir", "/tmp/tidemark-config-test");
        p.setProperty("cluster.hosts", "0@10.0.0.1:40100,1@10.0.0.2:40100,2@10.0.0.3:40100");
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("cluster.insecure", "true");
        return p;
    }

    @Test
    void aGoodConfigurationPassesAndHidesThePassword()
    {
        final HostConfig config = HostConfig.fromProperties(good());
        assertEquals(io.tidemark.aeron.AeronMedia.Profile.SHARED, config.threading(), "shared is the default");
        final Properties latency = good();
        latency.setProperty(HostConfig.THREADING, "Latency");
        assertEquals(io.tidemark.aeron.AeronMedia.Profile.LATENCY, HostConfig.fromProperties(latency).threading());
        assertEquals(1, config.hostId());
        assertEquals(3, config.maxHosts());
        assertEquals("10.0.0.2:40100", config.endpoints().get(1));
        assertEquals(2, config.replication().minInsyncReplicas());
        assertFalse(config.toString().contains("secret"), config.toString());
        // a host process's heartbeat defaults (a busy machine does not flap), a file may set them
        assertEquals(6000, config.replication().hostSessionTimeoutMs());
        assertEquals(500, config.replication().hostHeartbeatIntervalMs());
        final Properties fast = good();
        fast.setProperty("host.session.timeout.ms", "900");
        fast.setProperty("host.heartbeat.interval.ms", "150");
        assertEquals(900, HostConfig.fromProperties(fast).replication().hostSessionTimeoutMs());
        assertEquals(150, HostConfig.fromProperties(fast).replication().hostHeartbeatIntervalMs());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "host.id|x|host.id",
        "host.id|5|host.id",
        "host.id|-1|host.id",
        "host.dir||host.dir",
        "cluster.id||cluster.id",
        "cluster.id|a b|cluster.id",
        "cluster.hosts||cluster.hosts",
        "cluster.hosts|0@10.0.0.1:40100,1@10.0.0.2|cluster.hosts",
        "cluster.hosts|0@10.0.0.1:40100,1@10.0.0.2:70000|cluster.hosts",
        "cluster.hosts|0@10.0.0.1:40100,0@10.0.0.2:40100|cluster.hosts",
        "cluster.hosts|0@10.0.0.1:40100,1@10.0.0.1:40100|cluster.hosts",
        "cluster.hosts|0@10.0.0.1:40100,2@10.0.0.2:40100|cluster.hosts",
        "cluster.hosts|zero@10.0.0.1:40100|cluster.hosts",
        "aeron.dir|/no/such/driver/dir|aeron.dir",
        "host.threading|fast|host.threading",
        "zookeeper.connect|nohostport|zookeeper.connect",
        "zookeeper.root|relative/path|zookeeper.root",
        "zookeeper.user||zookeeper.user",
        "zookeeper.password||zookeeper.password",
        "min.insync.replicas|0|min.insync.replicas",
        "replica.lag.time.max.ms|soon|replica.lag.time.max.ms",
        "no.such.key|1|no.such.key",
        "cluster.insecure|maybe|cluster.insecure",
        "cluster.secret.file|/no/such/secret|cluster.insecure",
        "client.max|0|client.max",
        "client.max.per.address|1000|client.max.per.address",
        "client.idle.timeout.ms|10|client.idle.timeout.ms"})
    void aBadValueNamesItsKey(final String key, final String value, final String expectedKey)
    {
        final Properties p = good();
        p.setProperty(key, null == value ? "" : value);
        final ConfigException ex = assertThrows(ConfigException.class, () -> HostConfig.fromProperties(p));
        assertEquals(expectedKey, ex.key(), ex.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "cluster.id||cluster.id",
        "client.endpoint|localhost|client.endpoint",
        "request.max.bytes|1|request.max.bytes",
        "request.timeout.ms|0|request.timeout.ms",
        "host.id|1|host.id"})
    void aBadClientValueNamesItsKey(final String key, final String value, final String expectedKey)
    {
        final Properties p = cluster();
        p.setProperty("cluster.insecure", "true");
        p.setProperty(key, null == value ? "" : value);
        final ConfigException ex = assertThrows(ConfigException.class, () -> ClientConfig.fromProperties(p));
        assertEquals(expectedKey, ex.key(), ex.getMessage());
    }

    @Test
    void theSecretIsAFileOnlyItsOwnerReadsOrAnExplicitInsecureSetting(@org.junit.jupiter.api.io.TempDir
        final java.nio.file.Path tmp) throws Exception
    {
        final Properties p = good();
        p.remove("cluster.insecure");
        final ConfigException missing = assertThrows(ConfigException.class, () -> HostConfig.fromProperties(p));
        assertEquals("cluster.secret.file", missing.key(), missing.getMessage());
        assertTrue(missing.getMessage().contains("cluster.insecure=true"), missing.getMessage());

        final java.nio.file.Path secret = tmp.resolve("cluster.secret");
        io.tidemark.aeron.ClusterSecret.generate(secret);
        p.setProperty("cluster.secret.file", secret.toString());
        final HostConfig config = HostConfig.fromProperties(p);
        assertTrue(config.secret().authenticates());
        final String content = java.nio.file.Files.readString(secret).trim();
        assertFalse(config.toString().contains(content), "the secret is never in the configuration's string form");

        java.nio.file.Files.setPosixFilePermissions(secret,
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-r--"));
        final ConfigException open = assertThrows(ConfigException.class, () -> HostConfig.fromProperties(p));
        assertEquals("cluster.secret.file", open.key());
        assertTrue(open.getMessage().contains("owner only"), open.getMessage());
        assertFalse(open.getMessage().contains(content));

        final Properties client = cluster();
        client.setProperty("cluster.secret.file", secret.toString());
        assertEquals("cluster.secret.file", assertThrows(ConfigException.class,
            () -> ClientConfig.fromProperties(client)).key(), "a client refuses an open secret file too");
    }
}
