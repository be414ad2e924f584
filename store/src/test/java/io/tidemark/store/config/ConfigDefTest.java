package io.tidemark.store.config;

import io.tidemark.store.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigDefTest
{
    /** A context as the real ones are: typed fields, fluent setters, one definition. */
    static final class Settings
    {
        static final ConfigDef<Settings> CONFIG = new ConfigDef<Settings>()
            .define(ConfigKey.ofLong("size.bytes", 4096, 1024, 1L << 30).withDefaultText("4096 (4 KiB)")
                .withDoc("How big."), (s) -> s.size, (s, v) -> s.size = v)
            .define(ConfigKey.ofLong("limit", -1, 0, 100).orSpecial(-1L).withDoc("A limit; -1: none."),
                (s) -> s.limit, (s, v) -> s.limit = v)
            .define(ConfigKey.ofInt("ring.bytes", 65536, 0, Integer.MAX_VALUE)
                .withValidator(ConfigKey.powerOfTwo(1024)).withDoc("A ring."), (s) -> s.ring, (s, v) -> s.ring = v)
            .define(ConfigKey.ofBoolean("enabled", true).withDoc("On or off."), (s) -> s.enabled,
                (s, v) -> s.enabled = v)
            .define(ConfigKey.ofString("password", null).asSecret().withDefaultText("none").withDoc("Secret."),
                (s) -> s.password, (s, v) -> s.password = v);

        long size;
        long limit;
        int ring;
        boolean enabled;
        String password;

        Settings()
        {
            CONFIG.setDefaults(this);
        }
    }

    private static Settings parsed(final String key, final String value)
    {
        final Settings settings = settingsOf(Map.of(key, value));
        Settings.CONFIG.validate(settings);
        return settings;
    }

    private static Settings settingsOf(final Map<String, String> properties)
    {
        return Settings.CONFIG.setAll(new Settings(), properties);
    }

    @Test
    void defaultsComeFromTheKeys()
    {
        final Settings settings = new Settings();
        assertEquals(4096, settings.size);
        assertEquals(-1, settings.limit);
        assertEquals(65536, settings.ring);
        assertTrue(settings.enabled);
        assertNull(settings.password);
        Settings.CONFIG.validate(settings);
    }

    @Test
    void propertiesAreParsedIntoTheFields()
    {
        final Map<String, String> properties = new LinkedHashMap<>();
        properties.put("size.bytes", " 1_048_576 ");
        properties.put("limit", "7");
        properties.put("ring.bytes", "2048");
        properties.put("enabled", "FALSE");
        properties.put("password", "s3cret");
        final Settings settings = settingsOf(properties);
        Settings.CONFIG.validate(settings);
        assertEquals(1 << 20, settings.size);
        assertEquals(7, settings.limit);
        assertEquals(2048, settings.ring);
        assertFalse(settings.enabled);
        assertEquals("s3cret", settings.password);
        assertEquals("size.bytes=1048576, limit=7, ring.bytes=2048, enabled=false, password=[hidden]",
            Settings.CONFIG.describe(settings), "secrets are never shown");
    }

    @Test
    void badValuesGetATypedErrorNamingTheKeyAndWhatItAccepts()
    {
        final ConfigException small = assertThrows(ConfigException.class, () -> parsed("size.bytes", "12"));
        assertEquals("size.bytes", small.key());
        assertEquals("size.bytes: value 12 is outside [1024, 1073741824]", small.getMessage());
        assertEquals("size.bytes: not an integer: 'lots'",
            assertThrows(ConfigException.class, () -> parsed("size.bytes", "lots")).getMessage());
        assertEquals("limit", assertThrows(ConfigException.class, () -> parsed("limit", "-2")).key());
        assertEquals(-1, parsed("limit", "-1").limit, "the special value is accepted");
        assertEquals("ring.bytes: value 3000 must be a power of two, at least 1024",
            assertThrows(ConfigException.class, () -> parsed("ring.bytes", "3000")).getMessage());
        assertEquals("ring.bytes", assertThrows(ConfigException.class, () -> parsed("ring.bytes", "4294969344")).key(),
            "a value beyond an int is refused, never wrapped to a valid one");
        assertEquals("enabled: not a boolean (true/false): 'yes'",
            assertThrows(ConfigException.class, () -> parsed("enabled", "yes")).getMessage());
        final ConfigException unknown = assertThrows(ConfigException.class, () -> parsed("size.byte", "1"));
        assertEquals("size.byte", unknown.key());
        assertTrue(unknown.getMessage().contains("size.bytes"), unknown.getMessage());
    }

    @Test
    void settersAreValidatedLikeProperties()
    {
        final Settings settings = new Settings();
        settings.size = 1;
        assertEquals("size.bytes", assertThrows(ConfigException.class, () -> Settings.CONFIG.validate(settings)).key());
    }

    @Test
    void theTableIsMadeFromTheDefinitions()
    {
        assertEquals(List.of(
            "| Key | Default | Meaning |",
            "|---|---|---|",
            "| `size.bytes` | 4096 (4 KiB) | How big. |",
            "| `limit` | -1 | A limit; -1: none. |",
            "| `ring.bytes` | 65536 | A ring. |",
            "| `enabled` | true | On or off. |",
            "| `password` | none | Secret. |"), Settings.CONFIG.markdownTable());
        assertEquals(List.of("size.bytes", "limit", "ring.bytes", "enabled", "password"),
            List.copyOf(Settings.CONFIG.names()));
    }

    @Test
    void aKeyIsDefinedOnce()
    {
        final ConfigDef<Settings> def = new ConfigDef<Settings>()
            .define(ConfigKey.ofBoolean("x", true), (s) -> s.enabled, (s, v) -> s.enabled = v);
        assertThrows(IllegalArgumentException.class,
            () -> def.define(ConfigKey.ofBoolean("x", false), (s) -> s.enabled, (s, v) -> s.enabled = v));
    }
}
