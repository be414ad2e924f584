package io.tidemark.replication;

import io.tidemark.store.format.RecordEncoder;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The leader's idempotent-producer checks, also on a new leader after a failover. */
class IdempotenceTest
{
    @TempDir
    Path root;

    private long id = 1000;

    private Harness.Outcome send(final Harness h, final TopicPartition tp, final long producerId, final short epoch,
        final int sequence, final String... values)
    {
        final ExpandableArrayBuffer records = new ExpandableArrayBuffer(256);
        int length = 0;
        for (int i = 0; i < values.length; i++)
        {
            final UnsafeBuffer v = new UnsafeBuffer(values[i].getBytes());
            length += RecordEncoder.encode(records, length, i, -1, null, 0, -1, v, 0, v.capacity(), null, 0, 0);
        }
        final long correlation = id++;
        assertEquals(ReplicationError.NONE, h.cluster.produceRecords(h.session, tp, correlation, Acks.ALL, 5000,
            producerId, epoch, sequence, records, 0, length));
        for (int i = 0; i < 100 && null == h.outcome(correlation); i++)
        {
            h.advance(20);
        }
        return h.outcome(correlation);
    }

    @Test
    void retriesAreAppendedOnceGapsAndOldEpochsAreRejectedAlsoAfterFailover()
    {
        try (Harness h = new Harness(root, 3, new ReplicationContext()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final long pid = h.cluster.allocateProducerId();
            assertNotEquals(pid, h.cluster.allocateProducerId(), "producer ids are unique");
            assertEquals(new Harness.Outcome(0, ReplicationError.NONE), send(h, tp, pid, (short)0, 0, "a", "b"));
            assertEquals(new Harness.Outcome(2, ReplicationError.NONE), send(h, tp, pid, (short)0, 2, "c"));
            assertEquals(new Harness.Outcome(0, ReplicationError.NONE), send(h, tp, pid, (short)0, 0, "a", "b"),
                "a retry of a kept batch: its original offset, nothing appended");
            assertEquals(ReplicationError.OUT_OF_ORDER_SEQUENCE, send(h, tp, pid, (short)0, 5, "gap").error());
            assertEquals(new Harness.Outcome(3, ReplicationError.NONE), send(h, tp, pid, (short)1, 0, "d"),
                "a new epoch starts its sequence again");
            assertEquals(ReplicationError.INVALID_PRODUCER_EPOCH, send(h, tp, pid, (short)0, 3, "zombie").error());
            assertEquals(List.of("a", "b", "c", "d"), Harness.values(h.cluster.leaderReplica(tp)));

            final int oldLeader = h.leader(tp);
            h.cluster.killHost(oldLeader);
            while (h.leader(tp) == oldLeader || null == h.cluster.leaderReplica(tp))
            {
                h.advance(20);
            }
            assertEquals(new Harness.Outcome(3, ReplicationError.NONE), send(h, tp, pid, (short)1, 0, "d"),
                "the new leader knows the producer's batches: the retry is not appended again");
            assertEquals(ReplicationError.OUT_OF_ORDER_SEQUENCE, send(h, tp, pid, (short)1, 2, "gap").error());
            assertEquals(new Harness.Outcome(4, ReplicationError.NONE), send(h, tp, pid, (short)1, 1, "e"));
            assertEquals(List.of("a", "b", "c", "d", "e"), Harness.values(h.cluster.leaderReplica(tp)));

            h.cluster.restartHost(oldLeader);
            h.advance(1500);
            final Replica restarted = h.replica(oldLeader, tp);
            assertTrue(restarted.producerState.size() >= 1, "state rebuilt from the log after recovery");
            assertEquals(4, restarted.producerState.check(pid, (short)1, 1, 1),
                "the restarted replica recognises batch (epoch 1, sequence 1) as the one at offset 4");
        }
    }
}
