package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.store.ConfigException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Defaults (Kafka's) and validation of both client contexts: every rejection names its key. */
class ConfigTest
{
    private static void rejects(final String key, final ProducerContext ctx)
    {
        assertEquals(key, assertThrows(ConfigException.class, ctx::conclude).key());
    }

    @Test
    void producerDefaultsAreKafkas()
    {
        final ProducerContext ctx = new ProducerContext().conclude();
        assertEquals(Acks.ALL, ctx.acks());
        assertTrue(ctx.enableIdempotence());
        assertEquals(16384, ctx.batchSize());
        assertEquals(5, ctx.lingerMs());
        assertEquals(33_554_432L, ctx.bufferMemory());
        assertEquals(60_000, ctx.maxBlockMs());
        assertEquals(Integer.MAX_VALUE, ctx.retries());
        assertEquals(100, ctx.retryBackoffMs());
        assertEquals(120_000, ctx.deliveryTimeoutMs());
        assertEquals(30_000, ctx.requestTimeoutMs());
        assertEquals(5, ctx.maxInFlightRequestsPerPartition());
        assertEquals(ProducerContext.Partitioner.STICKY, ctx.partitioner());
        assertEquals(ProducerContext.AgentMode.DEDICATED, ctx.agentMode());
        assertNull(ctx.epochClock(), "the cluster's clock");
    }

    @Test
    void idempotenceIsOnByDefaultOnlyWithAcksAllAndAtMostFiveInFlight()
    {
        assertFalse(new ProducerContext().acks(Acks.LEADER).conclude().enableIdempotence(), "default off with acks=1");
        assertFalse(new ProducerContext().maxInFlightRequestsPerPartition(6).conclude().enableIdempotence());
        rejects(ProducerContext.ENABLE_IDEMPOTENCE, new ProducerContext().acks(Acks.LEADER).enableIdempotence(true));
        rejects(ProducerContext.ENABLE_IDEMPOTENCE, new ProducerContext().acks(Acks.NONE).enableIdempotence(true));
        rejects(ProducerContext.ENABLE_IDEMPOTENCE, new ProducerContext().maxInFlightRequestsPerPartition(6)
            .enableIdempotence(true));
        assertFalse(new ProducerContext().enableIdempotence(false).conclude().enableIdempotence());
    }

    @Test
    void producerValuesAreValidatedNamingTheKey()
    {
        rejects(ProducerContext.ACKS, new ProducerContext().acks(-2));
        rejects(ProducerContext.BATCH_SIZE, new ProducerContext().batchSize(10));
        rejects(ProducerContext.LINGER_MS, new ProducerContext().lingerMs(-1));
        rejects(ProducerContext.BUFFER_MEMORY, new ProducerContext().batchSize(4096).bufferMemory(1024));
        rejects(ProducerContext.MAX_BLOCK_MS, new ProducerContext().maxBlockMs(-1));
        rejects(ProducerContext.RETRIES, new ProducerContext().retries(-1));
        rejects(ProducerContext.RETRY_BACKOFF_MS, new ProducerContext().retryBackoffMs(-5));
        rejects(ProducerContext.REQUEST_TIMEOUT_MS, new ProducerContext().requestTimeoutMs(0));
        rejects(ProducerContext.MAX_IN_FLIGHT, new ProducerContext().maxInFlightRequestsPerPartition(0));
        rejects(ProducerContext.DELIVERY_TIMEOUT_MS, new ProducerContext().lingerMs(100).requestTimeoutMs(1000)
            .deliveryTimeoutMs(1099));
        new ProducerContext().lingerMs(100).requestTimeoutMs(1000).deliveryTimeoutMs(1100).conclude();
        final ProducerContext concluded = new ProducerContext().conclude();
        assertThrows(IllegalStateException.class, () -> concluded.acks(1), "frozen once concluded");
    }

    @Test
    void producerPropertiesAreParsedAndUnknownKeysRejected()
    {
        final ProducerContext ctx = ProducerContext.fromProperties(Map.of("acks", "all", "linger.ms", "20",
            "batch.size", "32_768", "enable.idempotence", "false", "partitioner", "round-robin",
            "max.in.flight.requests.per.partition", "3")).conclude();
        assertEquals(Acks.ALL, ctx.acks());
        assertEquals(20, ctx.lingerMs());
        assertEquals(32_768, ctx.batchSize());
        assertFalse(ctx.enableIdempotence());
        assertEquals(ProducerContext.Partitioner.ROUND_ROBIN, ctx.partitioner());
        assertEquals(3, ctx.maxInFlightRequestsPerPartition());
        assertEquals(1, ProducerContext.fromProperties(Map.of("acks", "1")).acks());
        assertEquals("compression.type",
            assertThrows(ConfigException.class, () -> ProducerContext.fromProperties(Map.of("compression.type", "lz4")))
                .key());
        assertEquals("linger.ms",
            assertThrows(ConfigException.class, () -> ProducerContext.fromProperties(Map.of("linger.ms", "soon")))
                .key());
        assertEquals("partitioner",
            assertThrows(ConfigException.class, () -> ProducerContext.fromProperties(Map.of("partitioner", "random")))
                .key());
        assertEquals("enable.idempotence", assertThrows(ConfigException.class,
            () -> ProducerContext.fromProperties(Map.of("enable.idempotence", "yes"))).key());
    }

    @Test
    void consumerDefaultsValidationAndProperties()
    {
        final ConsumerContext defaults = new ConsumerContext().conclude();
        assertNull(defaults.groupId());
        assertEquals(ConsumerContext.AutoOffsetReset.LATEST, defaults.autoOffsetReset(), "as Kafka");
        assertEquals(500, defaults.maxPollRecords());
        assertNull(defaults.offsetsDir());

        assertEquals(ConsumerContext.GROUP_ID, assertThrows(ConfigException.class,
            () -> new ConsumerContext().groupId("../escape").conclude()).key(), "group ids name directories");
        assertEquals(ConsumerContext.MAX_POLL_RECORDS, assertThrows(ConfigException.class,
            () -> new ConsumerContext().maxPollRecords(0).conclude()).key());

        final ConsumerContext parsed = ConsumerContext.fromProperties(Map.of("group.id", "billing",
            "auto.offset.reset", "earliest", "max.poll.records", "10", "offsets.dir", "/tmp/x")).conclude();
        assertEquals("billing", parsed.groupId());
        assertEquals(ConsumerContext.AutoOffsetReset.EARLIEST, parsed.autoOffsetReset());
        assertEquals(10, parsed.maxPollRecords());
        assertEquals(Path.of("/tmp/x"), parsed.offsetsDir());
        assertEquals("auto.offset.reset", assertThrows(ConfigException.class,
            () -> ConsumerContext.fromProperties(Map.of("auto.offset.reset", "smallest"))).key());
        assertEquals("enable.auto.commit", assertThrows(ConfigException.class,
            () -> ConsumerContext.fromProperties(Map.of("enable.auto.commit", "true"))).key(), "not supported");
    }
}
