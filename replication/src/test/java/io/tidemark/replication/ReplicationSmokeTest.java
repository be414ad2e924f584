package io.tidemark.replication;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReplicationSmokeTest
{
    @TempDir
    Path root;

    @Test
    void acksAllIsAcknowledgedOnceEveryIsrMemberHasTheRecord()
    {
        try (Harness h = new Harness(root, 3, new ReplicationContext()))
        {
            final TopicPartition tp = h.topic("orders", 1, 3);
            final int leader = h.cluster.leaderOf(tp);
            final long id = h.produce(tp, Acks.ALL, "hello");
            h.settle();
            final Harness.Outcome outcome = h.outcome(id);
            assertNotNull(outcome, "not acknowledged; errors: " + h.errors);
            assertEquals(ReplicationError.NONE, outcome.error());
            assertEquals(0, outcome.offset());
            for (int host = 0; host < 3; host++)
            {
                assertEquals(List.of("hello"), Harness.values(h.replica(host, tp)), "host " + host);
            }
            assertEquals(1, h.replica(leader, tp).highWatermark.get());
            assertTrue(h.errors.isEmpty(), h.errors.toString());
        }
    }
}
