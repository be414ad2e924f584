package io.tidemark.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigTest
{
    @TempDir
    Path dir;

    private ConfigException invalid(final String key, final String value)
    {
        return assertThrows(ConfigException.class,
            () -> LogContext.fromProperties(dir, Map.of(key, value)).conclude(), key + "=" + value);
    }

    @Test
    void defaultsAreKafkasWhereKafkaHasTheSetting()
    {
        final LogContext ctx = new LogContext().logDir(dir).conclude();
        assertEquals(1 << 30, ctx.segmentBytes());
        assertEquals(7L * 24 * 3600 * 1000, ctx.segmentMs());
        assertEquals(4096, ctx.indexIntervalBytes());
        assertEquals(10 * 1024 * 1024, ctx.segmentIndexBytes());
        assertEquals(Long.MAX_VALUE, ctx.flushIntervalMessages());
        assertEquals(Long.MAX_VALUE, ctx.flushIntervalMs());
        assertEquals(-1, ctx.retentionBytes());
        assertEquals(7L * 24 * 3600 * 1000, ctx.retentionMs());
        assertTrue(ctx.readVerifyCrc());
        assertEquals(0, ctx.dirtyBytesMax(), "off unless asked for: see docs/durability.md");
    }

    @Test
    void everyKeyIsParsedAndValidated()
    {
        final LogContext ctx = LogContext.fromProperties(dir, Map.ofEntries(
            Map.entry("segment.bytes", "1_048_576"), Map.entry("segment.ms", "60000"),
            Map.entry("segment.index.bytes", "65536"), Map.entry("index.interval.bytes", "0"),
            Map.entry("max.message.bytes", "4096"), Map.entry("flush.interval.messages", "1"),
            Map.entry("flush.interval.ms", "10"), Map.entry("retention.bytes", "-1"),
            Map.entry("retention.ms", "3600000"), Map.entry("retention.check.interval.ms", "1000"),
            Map.entry("pretouch.bytes", "0"), Map.entry("read.verify.crc", "false"),
            Map.entry("dirty.bytes.max", "8192"))).conclude();
        assertEquals(1 << 20, ctx.segmentBytes());
        assertEquals(0, ctx.indexIntervalBytes());
        assertEquals(1, ctx.flushIntervalMessages());
        assertFalse(ctx.readVerifyCrc());
        assertEquals(8192, ctx.dirtyBytesMax());
        assertEquals(LogContext.KEYS.size(), 13);
    }

    @Test
    void badValuesNameTheirKey()
    {
        assertEquals("segment.bytes", invalid("segment.bytes", "10").key());
        assertEquals("segment.bytes", invalid("segment.bytes", "4294967296").key());
        assertEquals("segment.bytes", invalid("segment.bytes", "lots").key());
        assertEquals("segment.ms", invalid("segment.ms", "0").key());
        assertEquals("index.interval.bytes", invalid("index.interval.bytes", "-1").key());
        assertEquals("max.message.bytes", invalid("max.message.bytes", "12").key());
        assertEquals("flush.interval.messages", invalid("flush.interval.messages", "0").key());
        assertEquals("flush.interval.ms", invalid("flush.interval.ms", "-5").key());
        assertEquals("retention.bytes", invalid("retention.bytes", "-2").key());
        assertEquals("retention.ms", invalid("retention.ms", "-7").key());
        assertEquals("read.verify.crc", invalid("read.verify.crc", "yes").key());
        assertEquals("pretouch.bytes", invalid("pretouch.bytes", "-1").key());
        assertTrue(invalid("segment.bytes", "10").getMessage().startsWith("segment.bytes: "));
    }

    @Test
    void aMessageLargerThanASegmentIsRejected()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> new LogContext().logDir(dir).segmentBytes(4096).maxMessageBytes(8192).conclude());
        assertEquals("max.message.bytes", ex.key());
    }

    @Test
    void unknownKeysAreRejected()
    {
        final ConfigException ex = assertThrows(ConfigException.class,
            () -> LogContext.fromProperties(dir, Map.of("segment.byte", "1024")));
        assertEquals("segment.byte", ex.key());
        assertTrue(ex.getMessage().contains("unknown"));
    }

    @Test
    void aConcludedContextIsFrozenAndTheLogDirIsRequired()
    {
        final LogContext ctx = new LogContext().logDir(dir).conclude();
        assertThrows(IllegalStateException.class, () -> ctx.segmentBytes(2048));
        assertEquals("log.dir", assertThrows(ConfigException.class, () -> new LogContext().conclude()).key());
    }
}
