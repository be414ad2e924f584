package io.tidemark.bench.harness;

import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Short real runs of the ISR-flap cell on an embedded cluster: counts and verification only, never timings or how
 * often the ISR flapped (LagByCountTest shows that deterministically).
 */
class IsrFlapRunTest
{
    private static final long MS = 1_000_000L;

    @TempDir
    Path tmp;

    @ParameterizedTest(name = "replica.lag.max.messages={0}")
    @ValueSource(longs = { 0, 10 })
    void burstsAreCountedAnsweredAndVerified(final long lagMaxMessages) throws Exception
    {
        final IsrFlapRun cell = new IsrFlapRun(tmp, ReplicationContext.ThreadingMode.SHARED, 100, 16, 320, 50 * MS);
        final IsrFlapRun.Result r = cell.run(lagMaxMessages, 100 * MS, 400 * MS);
        assertNull(r.problem(), "every acknowledged record is at its offset");
        assertEquals(lagMaxMessages, r.lagMaxMessages());
        assertTrue(r.bursts() > 0, "bursts in the window");
        assertEquals(r.bursts() * 20, r.requestsSent(), "320 records per burst in requests of 16");
        assertEquals(r.requestsSent(), r.outcomes().values().stream().mapToLong(Long::longValue).sum(),
            "every request of the window answered: " + r.outcomes());
        assertTrue(Set.of(ReplicationError.NONE, ReplicationError.NOT_ENOUGH_REPLICAS,
            ReplicationError.NOT_ENOUGH_REPLICAS_AFTER_APPEND).containsAll(r.outcomes().keySet()),
            r.outcomes().toString());
        assertEquals(r.requestsSent() - r.failed(), r.latency().getTotalCount(), "a latency per acknowledged request");
        assertTrue(r.isrShrinks() >= 0 && r.isrExpansions() >= 0 && r.msBelowMinInsync() >= 0);
        try (Stream<Path> left = Files.list(tmp))
        {
            assertEquals(0, left.count(), "the run's directory is deleted");
        }
    }
}
