package io.tidemark.zookeeper;

import io.tidemark.store.ConfigException;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullAndEmptySource;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every bad value fails at start with a {@link ConfigException} naming its key; a good configuration concludes,
 * freezes, and never prints its password.
 */
class ZooKeeperSettingsTest
{
    private static final String PASSWORD = "s3cret-Pa55";

    private static ZooKeeperSettings good()
    {
        return new ZooKeeperSettings()
            .connectString("127.0.0.1:2181,10.0.0.2:2181")
            .rootPath("/tidemark/prod")
            .user("tidemark")
            .password(PASSWORD)
            .sessionTimeoutMs(18_000)
            .connectionTimeoutMs(15_000);
    }

    private static void assertRejected(final String key, final ZooKeeperSettings settings)
    {
        final ConfigException ex = assertThrows(ConfigException.class, settings::conclude, settings.toString());
        assertEquals(key, ex.key(), ex.getMessage());
        assertTrue(ex.getMessage().startsWith(key + ": "), ex.getMessage());
        assertFalse(ex.getMessage().contains(PASSWORD), ex.getMessage());
    }

    @Test
    void aGoodConfigurationConcludesAndIsThenFrozen() throws Exception
    {
        final ZooKeeperSettings settings = good();
        assertSame(settings, settings.conclude());
        assertSame(settings, settings.conclude(), "idempotent");
        assertEquals("digest", settings.aclId().getScheme());
        assertEquals(DigestAuthenticationProvider.generateDigest("tidemark:" + PASSWORD), settings.aclId().getId());
        assertTrue(settings.aclId().getId().startsWith("tidemark:"));
        assertThrows(IllegalStateException.class, () -> settings.rootPath("/other"));
        assertThrows(IllegalStateException.class, () -> settings.password("other"));
        assertEquals("/tidemark/prod", settings.rootPath());
    }

    @ParameterizedTest
    @ValueSource(strings = {"zk1:2181", "zk-1.example.com:2181,zk-2.example.com:2182/tidemark",
        "[::1]:2181,[fe80::1]:65535", "10.0.0.1:1/", "a:2181/chroot/x"})
    void wellFormedConnectStringsAreAccepted(final String connectString)
    {
        good().connectString(connectString).conclude();
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"zk1", "zk1:", ":2181", "zk1:0", "zk1:65536", "zk1:99999999", "zk1:-1", "zk1:21a1",
        "zk1:2181,", ",zk1:2181", "zk1:2181,,zk2:2181", "zk1:2181,zk2", "/chroot", "zk 1:2181", "::1:2181",
        "[::1]2181", "[::1]:", "zk1:2181/chroot/", "zk1:2181/a//b", "zk1:2181/a/./b"})
    void aMalformedConnectStringIsRefusedNamingItsKey(final String connectString)
    {
        assertRejected(ZooKeeperSettings.CONNECT, good().connectString(connectString));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"/", "/tidemark/", "tidemark", "tidemark/prod", "/tidemark//prod", "/tidemark/./prod",
        "/tidemark/../prod", "/tidemark/pr\u0000od"})
    void aBadRootPathIsRefusedNamingItsKey(final String rootPath)
    {
        assertRejected(ZooKeeperSettings.ROOT, good().rootPath(rootPath));
    }

    @ParameterizedTest
    @NullAndEmptySource
    @ValueSource(strings = {"tide:mark", ":"})
    void aMissingUserOrOneWithAColonIsRefusedNamingItsKey(final String user)
    {
        assertRejected(ZooKeeperSettings.USER, good().user(user));
    }

    @ParameterizedTest
    @NullAndEmptySource
    void aMissingPasswordIsRefusedNamingItsKey(final String password)
    {
        assertRejected(ZooKeeperSettings.PASSWORD, good().password(password));
    }

    @Test
    void aPasswordMayContainAColon()
    {
        good().password("pa:ss").conclude();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void aNonPositiveSessionTimeoutIsRefusedNamingItsKey(final int timeoutMs)
    {
        assertRejected(ZooKeeperSettings.SESSION_TIMEOUT_MS, good().sessionTimeoutMs(timeoutMs));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
    void aNonPositiveConnectionTimeoutIsRefusedNamingItsKey(final int timeoutMs)
    {
        assertRejected(ZooKeeperSettings.CONNECTION_TIMEOUT_MS, good().connectionTimeoutMs(timeoutMs));
    }

    @Test
    void aConnectionTimeoutLongerThanTheSessionTimeoutIsRefused()
    {
        assertRejected(ZooKeeperSettings.CONNECTION_TIMEOUT_MS,
            good().sessionTimeoutMs(10_000).connectionTimeoutMs(10_001));
        good().sessionTimeoutMs(10_000).connectionTimeoutMs(10_000).conclude();
    }

    @Test
    void buildingAClientFromBadSettingsFailsBeforeConnecting()
    {
        final ConfigException ex = assertThrows(ConfigException.class, () -> good().user(null).newClient());
        assertEquals(ZooKeeperSettings.USER, ex.key());
    }

    @Test
    void toStringNamesEveryKeyButNeverThePassword()
    {
        final String text = good().conclude().toString();
        assertFalse(text.contains(PASSWORD), text);
        assertTrue(text.contains(ZooKeeperSettings.PASSWORD + "=<hidden>"), text);
        assertTrue(text.contains(ZooKeeperSettings.CONNECT + "=127.0.0.1:2181,10.0.0.2:2181"), text);
        assertTrue(text.contains(ZooKeeperSettings.ROOT + "=/tidemark/prod"), text);
        assertTrue(text.contains(ZooKeeperSettings.USER + "=tidemark"), text);
        assertTrue(text.contains(ZooKeeperSettings.SESSION_TIMEOUT_MS + "=18000"), text);
        assertTrue(text.contains(ZooKeeperSettings.CONNECTION_TIMEOUT_MS + "=15000"), text);
    }

    private static Properties properties()
    {
        final Properties p = new Properties();
        p.setProperty(ZooKeeperSettings.CONNECT, " zk1:2181,zk2:2181/x ");
        p.setProperty(ZooKeeperSettings.ROOT, "/tidemark/orders");
        p.setProperty(ZooKeeperSettings.USER, "tidemark");
        p.setProperty(ZooKeeperSettings.PASSWORD, PASSWORD);
        p.setProperty(ZooKeeperSettings.SESSION_TIMEOUT_MS, "20_000");
        p.setProperty(ZooKeeperSettings.CONNECTION_TIMEOUT_MS, "5000");
        p.setProperty("replica.lag.time.max.ms", "1000"); // another component's key: left alone
        return p;
    }

    @Test
    void fromPropertiesReadsEveryKeyAndConcludes()
    {
        final ZooKeeperSettings settings = ZooKeeperSettings.fromProperties(properties());
        assertEquals("zk1:2181,zk2:2181/x", settings.connectString());
        assertEquals("/tidemark/orders", settings.rootPath());
        assertEquals("tidemark", settings.user());
        assertEquals(20_000, settings.sessionTimeoutMs());
        assertEquals(5_000, settings.connectionTimeoutMs());
        assertThrows(IllegalStateException.class, () -> settings.user("x"), "concluded");

        final Properties defaults = properties();
        defaults.remove(ZooKeeperSettings.SESSION_TIMEOUT_MS);
        defaults.remove(ZooKeeperSettings.CONNECTION_TIMEOUT_MS);
        final ZooKeeperSettings withDefaults = ZooKeeperSettings.fromProperties(defaults);
        assertEquals(18_000, withDefaults.sessionTimeoutMs());
        assertEquals(15_000, withDefaults.connectionTimeoutMs());
    }

    @ParameterizedTest
    @ValueSource(strings = {ZooKeeperSettings.CONNECT, ZooKeeperSettings.ROOT, ZooKeeperSettings.USER,
        ZooKeeperSettings.PASSWORD})
    void fromPropertiesRefusesAMissingRequiredKeyNamingIt(final String key)
    {
        final Properties p = properties();
        p.remove(key);
        assertEquals(key, assertThrows(ConfigException.class, () -> ZooKeeperSettings.fromProperties(p)).key());
    }

    @ParameterizedTest
    @ValueSource(strings = {ZooKeeperSettings.SESSION_TIMEOUT_MS, ZooKeeperSettings.CONNECTION_TIMEOUT_MS})
    void fromPropertiesRefusesANonIntegerTimeoutNamingIt(final String key)
    {
        final Properties p = properties();
        p.setProperty(key, "15s");
        assertEquals(key, assertThrows(ConfigException.class, () -> ZooKeeperSettings.fromProperties(p)).key());
    }

    @Test
    void fromPropertiesRefusesAMisspelledZooKeeperKeyNamingIt()
    {
        final Properties p = properties();
        p.setProperty("zookeeper.sesion.timeout.ms", "1000");
        assertEquals("zookeeper.sesion.timeout.ms",
            assertThrows(ConfigException.class, () -> ZooKeeperSettings.fromProperties(p)).key());
    }
}
