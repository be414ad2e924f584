package io.tidemark.replication;

import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reader's positions (log start, log end, time index) and its truncation detection: a position the leader's
 * log does not hold after an unclean election fails the poll, also when the new leader's log has since grown past
 * it; a clean failover never trips it.
 */
class PartitionReaderTest
{
    @TempDir
    Path root;

    private static ReplicationContext ctx()
    {
        return new ReplicationContext().replicaLagTimeMaxMs(1000).hostSessionTimeoutMs(600)
            .hostHeartbeatIntervalMs(100).replicaFetchWaitMaxMs(100).requestTimeoutMs(5000);
    }

    private static List<String> drain(final PartitionReader reader)
    {
        final List<String> out = new ArrayList<>();
        while (reader.poll((r) -> out.add(r.valueAsString()), 100) > 0)
        {
            // read on
        }
        return out;
    }

    @Test
    void logRangeAndTimeIndexOfTheLeaderBelowTheHighWatermark()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            try (PartitionReader reader = h.cluster.openReader(tp))
            {
                assertEquals(0, reader.logStartOffset());
                assertEquals(0, reader.logEndOffset());
                final long start = h.clock.time();
                h.produceAndWait(tp, Acks.ALL, "a", 100);
                h.advance(100);
                h.produceAndWait(tp, Acks.ALL, "b", 100);
                assertEquals(2, reader.logEndOffset());
                assertEquals(0, reader.offsetForTimestamp(start));
                assertEquals(1, reader.offsetForTimestamp(start + 50));
                assertEquals(-1, reader.offsetForTimestamp(h.clock.time() + 1), "no record that recent");
                reader.seek(reader.offsetForTimestamp(start + 50));
                assertEquals(List.of("b"), drain(reader));
                assertNotEquals(-1, reader.lastEpoch(), "the epoch of the last record read is known");
            }
        }
    }

    @Test
    void aCleanFailoverKeepsReadingWhereItWas()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            h.produceAndWait(tp, Acks.ALL, "a", 100);
            try (PartitionReader reader = h.cluster.openReader(tp))
            {
                assertEquals(List.of("a"), drain(reader));
                final int old = h.leader(tp);
                h.cluster.killHost(old);
                while (h.leader(tp) == old || null == h.cluster.leaderReplica(tp))
                {
                    h.advance(20);
                }
                h.produceAndWait(tp, Acks.ALL, "b", 1000);
                assertEquals(List.of("b"), drain(reader), "validated against the new leader, then read on");
            }
        }
    }

    @Test
    void aPositionTheNewLeaderDoesNotHoldFailsThePollAlsoOnceItsLogHasGrownPastIt()
    {
        try (Harness h = new Harness(root, 3, ctx().uncleanLeaderElectionEnable(true)))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            for (int other = 0; other < 3; other++)
            {
                if (other != leader)
                {
                    h.cluster.transport().isolate(leader, other);
                }
            }
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "lost", 2000).error());
            try (PartitionReader reader = h.cluster.openReader(tp);
                PartitionReader late = h.cluster.openReader(tp))
            {
                assertEquals(List.of("lost"), drain(reader), "committed by an ISR of one");
                final int lastEpoch = reader.lastEpoch();
                h.cluster.killHost(leader);
                h.advance(1000);
                assertTrue(h.cluster.controller().uncleanElections() >= 1, "an unclean election");
                final StorageException above = assertThrows(StorageException.class, () -> reader.poll((r) -> { }, 10));
                assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, above.code());
                assertTrue(above.getMessage().contains("above the log end"), above.getMessage());

                for (int i = 0; i < 3; i++)
                {
                    assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "new-" + i, 1000).error());
                }
                late.seek(1, lastEpoch); // e.g. a committed position, restored with its epoch
                final StorageException diverged = assertThrows(StorageException.class, () -> late.poll((r) -> { }, 10));
                assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, diverged.code());
                assertTrue(diverged.getMessage().contains("diverged"), diverged.getMessage());
                assertThrows(StorageException.class, () -> reader.poll((r) -> { }, 10), "still not skipped");

                reader.seek(reader.logStartOffset());
                assertEquals(List.of("new-0", "new-1", "new-2"), drain(reader), "readable after an explicit seek");
            }
        }
    }
}
