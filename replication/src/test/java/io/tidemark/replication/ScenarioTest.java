package io.tidemark.replication;

import io.tidemark.replication.protocol.FetchMessages;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.ProduceMessages;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Scripted scenarios, one or more per rule of the replication reference (docs/replication.md), on a deterministic
 * cluster: INVOKER threading and a manual clock.
 */
class ScenarioTest
{
    @TempDir
    Path root;

    private static ReplicationContext ctx()
    {
        return new ReplicationContext().replicaLagTimeMaxMs(1000).hostSessionTimeoutMs(600)
            .hostHeartbeatIntervalMs(100).replicaFetchWaitMaxMs(100).requestTimeoutMs(5000);
    }

    private static int other(final int leader, final int skip)
    {
        for (int h = 0; h < 3; h++)
        {
            if (h != leader && h != skip)
            {
                return h;
            }
        }
        throw new IllegalStateException();
    }

    @Test
    void acksOneIsAnsweredAfterTheLeaderAppendsAndAcksZeroIsNeverAnswered()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            h.cluster.transport().cut(leader, other(leader, -1));
            h.cluster.transport().cut(leader, other(leader, other(leader, -1)));
            final long one = h.produce(tp, Acks.LEADER, "one");
            final long zero = h.produce(tp, Acks.NONE, "zero");
            h.settle();
            assertEquals(new Harness.Outcome(0, ReplicationError.NONE), h.outcome(one),
                "acks=1 answered although no follower has the record");
            assertNull(h.outcome(zero), "acks=0 is never answered");
            assertEquals(List.of("one", "zero"), Harness.values(h.replica(leader, tp)), "acks=0 is still appended");
        }
    }

    @Test
    void acksAllWaitsForEveryIsrMemberThenTheShrunkIsr()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            final int stuck = other(leader, -1);
            h.cluster.transport().isolate(leader, stuck);
            final long id = h.produce(tp, Acks.ALL, "x");
            h.settle();
            assertNull(h.outcome(id), "not acknowledged while an ISR member lacks it");
            assertEquals(0, h.replica(leader, tp).highWatermark.get());
            final long start = h.clock.time();
            while (h.state(tp).inIsr(stuck))
            {
                h.advance(20);
            }
            final long shrunkAfter = h.clock.time() - start;
            assertTrue(shrunkAfter <= 1500, "a stuck follower leaves within 1.5 x lag: " + shrunkAfter + " ms");
            h.settle();
            assertEquals(ReplicationError.NONE, h.outcome(id).error(), "then the smaller ISR commits it");
            assertEquals(1, h.replica(leader, tp).highWatermark.get());
        }
    }

    @Test
    void acksNNeedsNIsrMembersAndIsRejectedUpFrontWhenTheIsrIsSmaller()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            final int cutOff = other(leader, -1);
            h.cluster.transport().isolate(leader, cutOff);
            final long two = h.produce(tp, Acks.replicas(2), "two");
            final long three = h.produce(tp, Acks.replicas(3), "three");
            h.settle();
            assertEquals(ReplicationError.NONE, h.outcome(two).error(), "2 of 3 ISR members hold it");
            assertNull(h.outcome(three), "acks=3 waits for the third");
            h.advance(1600);
            assertFalse(h.state(tp).inIsr(cutOff));
            assertEquals(ReplicationError.NONE, h.outcome(three).error(), "N >= |ISR| means all of the ISR");
            final long rejected = h.produce(tp, Acks.replicas(3), "rejected");
            h.settle();
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, h.outcome(rejected).error());
            assertEquals(List.of("two", "three"), Harness.values(h.replica(leader, tp)), "nothing appended");
        }
    }

    @Test
    void minInsyncReplicasRejectsAcksAllButNotAcksOneAndFreezesTheHighWatermark()
    {
        try (Harness h = new Harness(root, 3, ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            final Harness.Outcome first = h.produceAndWait(tp, Acks.ALL, "committed", 100);
            assertEquals(ReplicationError.NONE, first.error());
            final long appended = h.produce(tp, Acks.ALL, "after-append");
            h.cluster.transport().isolate(leader, other(leader, -1));
            h.cluster.transport().isolate(leader, other(leader, other(leader, -1)));
            h.advance(1600);
            assertArrayEquals(new int[]{ leader }, h.state(tp).isr());
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS_AFTER_APPEND, h.outcome(appended).error(),
                "the ISR fell below min.insync.replicas while it waited");
            final Harness.Outcome rejected = h.produceAndWait(tp, Acks.ALL, "rejected", 100);
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, rejected.error());
            final Harness.Outcome one = h.produceAndWait(tp, Acks.LEADER, "acks-one", 100);
            assertEquals(ReplicationError.NONE, one.error(), "acks=1 ignores min.insync.replicas");
            assertEquals(List.of("committed", "after-append", "acks-one"), Harness.values(h.replica(leader, tp)));
            assertEquals(1, h.replica(leader, tp).highWatermark.get(), "no HW advance while |ISR| < min.insync");
            h.cluster.transport().heal();
            h.advance(1000);
            assertEquals(3, h.state(tp).isr().length, "followers rejoin once caught up");
            assertEquals(3, h.replica(leader, tp).highWatermark.get());
        }
    }

    @Test
    void aFailedLeaderIsReplacedByTheFirstLiveIsrMemberInAssignmentOrder()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            for (int i = 0; i < 5; i++)
            {
                assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m" + i, 100).error());
            }
            final PartitionState before = h.state(tp);
            final int oldLeader = before.leader();
            h.cluster.killHost(oldLeader);
            final long killedAt = h.clock.time();
            while (h.leader(tp) == oldLeader)
            {
                h.advance(20);
            }
            final PartitionState after = h.state(tp);
            assertTrue(h.clock.time() - killedAt <= 700, "elected within the session timeout");
            final int expected = Arrays.stream(before.assignedReplicas()).filter((x) -> x != oldLeader).findFirst()
                .getAsInt();
            assertEquals(expected, after.leader());
            assertEquals(before.leaderEpoch() + 1, after.leaderEpoch());
            assertFalse(after.inIsr(oldLeader));
            h.settle();
            assertEquals(List.of("m0", "m1", "m2", "m3", "m4"), Harness.values(h.replica(after.leader(), tp)),
                "the new leader holds every committed record");
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m5", 500).error());
            h.cluster.restartHost(oldLeader);
            h.advance(1000);
            assertTrue(h.state(tp).inIsr(oldLeader), "the restarted host rejoins the ISR");
            assertEquals(Harness.values(h.replica(after.leader(), tp)), Harness.values(h.replica(oldLeader, tp)));
        }
    }

    @Test
    void jepsen2013TheIsrShrinksToTheLeaderWhichDiesAndThePartitionBecomesUnavailable()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "committed", 100).error());
            h.cluster.transport().isolate(leader, other(leader, -1));
            h.cluster.transport().isolate(leader, other(leader, other(leader, -1)));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "acked-by-isr-of-one", 2000).error(),
                "acknowledged once the ISR shrank to the leader alone");
            assertArrayEquals(new int[]{ leader }, h.state(tp).isr());
            h.cluster.killHost(leader);
            h.advance(1000);
            final PartitionState state = h.state(tp);
            assertEquals(PartitionState.NO_LEADER, state.leader(), "no out-of-sync replica is elected");
            assertArrayEquals(new int[]{ leader }, state.isr(), "the last ISR member stays, to lead again");
            assertEquals(ReplicationError.LEADER_NOT_AVAILABLE,
                h.produceAndWait(tp, Acks.LEADER, "rejected", 100).error(), "unavailable, never lossy");
            h.cluster.restartHost(leader);
            h.advance(1500);
            assertEquals(leader, h.leader(tp), "the last ISR member leads again when it returns");
            assertEquals(List.of("committed", "acked-by-isr-of-one"), Harness.values(h.replica(leader, tp)));
        }
    }

    @Test
    void withUncleanElectionAnOutOfSyncReplicaLeadsAndTheLossIsReported()
    {
        try (Harness h = new Harness(root, 3, ctx().uncleanLeaderElectionEnable(true)))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            h.cluster.transport().isolate(leader, other(leader, -1));
            h.cluster.transport().isolate(leader, other(leader, other(leader, -1)));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "lost", 2000).error());
            h.cluster.killHost(leader);
            h.advance(1000);
            assertNotEquals(PartitionState.NO_LEADER, h.leader(tp));
            assertEquals(1, h.cluster.controller().uncleanElections());
            assertEquals(List.of(), Harness.values(h.replica(h.leader(tp), tp)), "the acked record is gone");
        }
    }

    @Test
    void kip101Scenario1ARestartedFollowerKeepsACommittedRecordAboveItsHighWatermark()
    {
        try (Harness h = new Harness(root, 2, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 2);
            final int a = h.leader(tp);
            final int b = 1 - a;
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m1", 100).error());
            // m2 gets committed on the leader, but B never learns the new HW: responses to B are lost from the
            // moment it has appended m2
            final long m2 = h.produce(tp, Acks.ALL, "m2");
            final Replica follower = h.replica(b, tp);
            for (int i = 0; i < 50 && follower.log.logEndOffset() < 2; i++)
            {
                h.cluster.invokeAgents();
            }
            h.cluster.transport().cut(a, b);
            h.settle();
            assertEquals(ReplicationError.NONE, h.outcome(m2).error());
            assertEquals(2, follower.log.logEndOffset());
            assertTrue(follower.highWatermark.get() < 2, "the follower's HW lags: " + follower.highWatermark);
            h.cluster.killHost(b);
            h.cluster.restartHost(b);
            h.cluster.invokeAgents(); // B registers its new incarnation
            h.cluster.invokeAgents(); // the controller sees the restart
            assertFalse(h.state(tp).inIsr(b), "a restarted replica leaves the ISR until it has caught up again");
            h.cluster.transport().heal();
            for (int i = 0; i < 200 && !h.state(tp).inIsr(b); i++)
            {
                h.advance(20);
                final Replica restarted = h.replica(b, tp);
                if (null != restarted)
                {
                    assertEquals(2, restarted.log.logEndOffset(),
                        "B reconciles by epochs: truncating to its HW would drop the committed m2");
                }
            }
            assertTrue(h.state(tp).inIsr(b));
            h.cluster.killHost(a);
            h.advance(1000);
            assertEquals(b, h.leader(tp), h.state(tp) + " errors " + h.errors);
            assertEquals(List.of("m1", "m2"), Harness.values(h.replica(b, tp)));
        }
    }

    @Test
    void kip101Scenario2ReplicasThatLostDifferentTailsNeverDiverge() throws Exception
    {
        // Both replicas lose power; B also loses its unflushed m2. Unclean election is on, so that B may lead.
        try (Harness h = new Harness(root, 2, ctx().uncleanLeaderElectionEnable(true)))
        {
            final TopicPartition tp = h.topic("t", 1, 2);
            final int a = h.leader(tp);
            final int b = 1 - a;
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m1", 100).error());
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m2", 100).error());
            h.cluster.killHost(a);
            h.cluster.killHost(b);
            h.powerCycle();
            h.dropTail(b, tp, 1);
            h.cluster.restartHost(b);
            h.advance(1000);
            assertEquals(b, h.leader(tp), "B leads (an unclean election: A, the last complete replica, is down)");
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.LEADER, "m3", 100).error());
            h.cluster.restartHost(a);
            h.advance(1500);
            assertEquals(List.of("m1", "m3"), Harness.values(h.replica(b, tp)));
            assertEquals(Harness.values(h.replica(b, tp)), Harness.values(h.replica(a, tp)),
                "A truncated its m2 by B's epochs instead of keeping a different record at offset 1");
        }
    }

    @Test
    void lastReplicaStandingAfterAPowerLossIsNotElectedAsIfComplete() throws Exception
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            h.cluster.transport().isolate(leader, other(leader, -1));
            h.cluster.transport().isolate(leader, other(leader, other(leader, -1)));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "acked", 2000).error());
            assertArrayEquals(new int[]{ leader }, h.state(tp).isr());
            h.cluster.killHost(leader);
            h.powerCycle();
            h.dropTail(leader, tp, 1); // the ack was before any fsync
            h.cluster.transport().heal();
            h.advance(1000);
            h.cluster.restartHost(leader);
            h.advance(1500);
            assertEquals(PartitionState.NO_LEADER, h.leader(tp),
                "the only ISR member may have lost acknowledged records: unavailable, never silently lossy");
            assertEquals(ReplicationError.LEADER_NOT_AVAILABLE,
                h.produceAndWait(tp, Acks.LEADER, "rejected", 100).error());
        }
    }


    @Test
    void requestsWithAStaleOrFutureEpochAreFenced()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            final Replica replica = h.replica(leader, tp);
            final int follower = other(leader, -1);
            final FetchMessages.FetchRequest request = new FetchMessages.FetchRequest();
            final org.agrona.ExpandableArrayBuffer buffer = new org.agrona.ExpandableArrayBuffer(64);
            final ReplicationError[] seen = new ReplicationError[1];
            final FetchMessages.FetchResponse response = new FetchMessages.FetchResponse();
            for (final int epoch : new int[]{ replica.leaderEpoch - 1, replica.leaderEpoch + 1 })
            {
                request.wrap(buffer, 0).encode(replica.partitionId, follower, epoch, 1024, 99, 0, 4242);
                h.cluster.transport().sendRequest(follower, leader, FetchMessages.FETCH_REQUEST, buffer, 0,
                    FetchMessages.FetchRequest.LENGTH);
                h.cluster.host(leader).fetchServer().poll();
                h.cluster.transport().pollResponses(follower, leader, (type, b, i, l) ->
                {
                    response.wrap(b, i);
                    if (response.correlationId() == 4242)
                    {
                        seen[0] = response.error();
                    }
                }, 100);
                assertEquals(epoch < replica.leaderEpoch ? ReplicationError.FENCED_LEADER_EPOCH :
                    ReplicationError.UNKNOWN_LEADER_EPOCH, seen[0]);
            }
        }
    }

    @Test
    void aZombieLeaderCutOffFromTheControllerCannotAcknowledgeAcksAll()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int zombie = h.leader(tp);
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "before", 100).error());
            h.cluster.controlChannel().disconnect(zombie);
            h.advance(1000);
            final int newLeader = h.leader(tp);
            assertNotEquals(zombie, newLeader);
            // a client with stale metadata still reaches the zombie's queue directly
            final long id = h.produce(tp, Acks.ALL, "ignored");
            final Replica zombieReplica = h.replica(zombie, tp);
            assertTrue(null != zombieReplica);
            final ReplicationError queued = zombieWrite(h, zombieReplica);
            assertEquals(ReplicationError.NONE, queued);
            h.advance(3000);
            assertTrue(null == h.outcome(-7) || h.outcome(-7).error() != ReplicationError.NONE,
                "the zombie never acknowledges an acks=all write: " + h.outcome(-7));
            assertEquals(ReplicationError.NONE, h.outcome(id).error(), "the real leader does");
            h.cluster.controlChannel().reconnect(zombie);
            h.advance(1500);
            assertNull(h.replica(zombie, tp).leaderState, "the zombie steps down once it hears the controller");
            assertEquals(Harness.values(h.replica(newLeader, tp)), Harness.values(h.replica(zombie, tp)),
                "and truncates whatever it appended as a zombie");
        }
    }

    private static ReplicationError zombieWrite(final Harness h, final Replica zombie)
    {
        final org.agrona.ExpandableArrayBuffer records = new org.agrona.ExpandableArrayBuffer(128);
        final org.agrona.concurrent.UnsafeBuffer value = new org.agrona.concurrent.UnsafeBuffer("zombie".getBytes());
        final int length = io.tidemark.store.format.RecordEncoder.encode(records, 0, 0, -1, null, 0, -1, value, 0, 6,
            null, 0, 0);
        final int index = zombie.produceRing.tryClaim(ProduceMessages.PRODUCE_REQUEST,
            ProduceMessages.HEADER_LENGTH + length);
        if (index <= 0)
        {
            return ReplicationError.BACK_PRESSURED;
        }
        final org.agrona.MutableDirectBuffer buffer = zombie.produceRing.buffer();
        buffer.putInt(index + ProduceMessages.SESSION_OFFSET, h.session);
        buffer.putInt(index + ProduceMessages.ACKS_OFFSET, Acks.ALL);
        buffer.putInt(index + ProduceMessages.TIMEOUT_OFFSET, 2000);
        buffer.putInt(index + ProduceMessages.PRODUCER_EPOCH_OFFSET, -1);
        buffer.putLong(index + ProduceMessages.PRODUCER_ID_OFFSET, -1);
        buffer.putInt(index + ProduceMessages.BASE_SEQUENCE_OFFSET, -1);
        buffer.putInt(index + ProduceMessages.RECORDS_LENGTH_OFFSET, length);
        buffer.putLong(index + ProduceMessages.CORRELATION_ID_OFFSET, -7);
        buffer.putBytes(index + ProduceMessages.HEADER_LENGTH, records, 0, length);
        zombie.produceRing.commit(index);
        return ReplicationError.NONE;
    }

    @Test
    void followerHighWatermarkLagsTheLeadersByOneRoundTripAndNeverExceedsIt()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            for (int i = 0; i < 20; i++)
            {
                h.produce(tp, Acks.LEADER, "r" + i);
                for (int step = 0; step < 5; step++)
                {
                    h.cluster.invokeAgents();
                    final long leaderHw = h.replica(leader, tp).highWatermark.get();
                    for (int host = 0; host < 3; host++)
                    {
                        final Replica r = h.replica(host, tp);
                        assertTrue(r.highWatermark.get() <= r.log.logEndOffset(), "HW <= LEO on " + host);
                        assertTrue(r.highWatermark.get() <= leaderHw, "follower HW <= leader HW on " + host);
                    }
                }
            }
            h.advance(200);
            for (int host = 0; host < 3; host++)
            {
                assertEquals(20, h.replica(host, tp).highWatermark.get(), "followers learn the HW at quiescence");
            }
        }
    }

    @Test
    void aNewLeaderExposesNoLatestOffsetUntilItsHighWatermarkReachesItsEpochStart()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            for (int i = 0; i < 3; i++)
            {
                h.produceAndWait(tp, Acks.ALL, "m" + i, 100);
            }
            final int old = h.leader(tp);
            h.cluster.killHost(old);
            while (h.leader(tp) == old || null == h.cluster.leaderReplica(tp))
            {
                h.advance(20);
            }
            final Replica leader = h.cluster.leaderReplica(tp);
            final LeaderState state = leader.leaderState;
            try (PartitionReader reader = h.cluster.openReader(tp))
            {
                if (state.highWatermark() < state.epochStartOffset)
                {
                    assertThrows(io.tidemark.store.StorageException.class, reader::seekToEnd);
                }
                h.advance(200);
                assertTrue(state.highWatermark() >= state.epochStartOffset);
                reader.seekToEnd();
                assertEquals(3, reader.position(), "the latest offset never goes backwards across the election");
            }
        }
    }

    @Test
    void consumersNeverReadAtOrAboveTheHighWatermark()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final int leader = h.leader(tp);
            h.cluster.transport().isolate(leader, other(leader, -1));
            h.produceAndWait(tp, Acks.LEADER, "uncommitted", 50);
            assertEquals(1, h.replica(leader, tp).log.logEndOffset());
            assertEquals(0, h.replica(leader, tp).highWatermark.get());
            try (PartitionReader reader = h.cluster.openReader(tp))
            {
                assertEquals(0, reader.poll((r) -> { }, 10), "the record is above the HW");
                h.advance(1600);
                final List<String> read = new java.util.ArrayList<>();
                reader.poll((r) -> read.add(r.valueAsString()), 10);
                assertEquals(List.of("uncommitted"), read, "readable once committed by the shrunk ISR");
            }
        }
    }

    @Test
    void aRestartedReplicaResumesFromMinOfCheckpointedHighWatermarkAndLogEnd()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            for (int i = 0; i < 10; i++)
            {
                h.produceAndWait(tp, Acks.ALL, "m" + i, 100);
            }
            h.advance(1100); // the HW checkpoint interval passes
            final int follower = other(h.leader(tp), -1);
            h.cluster.stopHost(follower);
            h.cluster.restartHost(follower);
            h.settle();
            final Replica restarted = h.replica(follower, tp);
            assertEquals(10, restarted.highWatermark.get());
            assertTrue(restarted.highWatermark.get() <= restarted.log.logEndOffset());
        }
    }

    @Test
    void epochCachesStrictlyIncreaseAndMatchTheBatchesAfterFailovers()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            for (int round = 0; round < 3; round++)
            {
                for (int i = 0; i < 3; i++)
                {
                    assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, round + "-" + i, 1000).error());
                }
                final int leader = h.leader(tp);
                h.cluster.killHost(leader);
                while (h.leader(tp) == leader || null == h.cluster.leaderReplica(tp))
                {
                    h.advance(20);
                }
                h.cluster.restartHost(leader);
                h.advance(1500);
            }
            for (int id = 0; id < 3; id++)
            {
                final int host = id;
                final Replica replica = h.replica(host, tp);
                final List<long[]> entries = replica.epochCache.entries();
                for (int i = 1; i < entries.size(); i++)
                {
                    assertTrue(entries.get(i)[0] > entries.get(i - 1)[0] && entries.get(i)[1] > entries.get(i - 1)[1],
                        "strictly increasing on host " + host + ": " + replica.epochCache);
                }
                try (io.tidemark.store.LogReader reader = replica.log.openReader())
                {
                    while (reader.pollBatches((b) -> assertEquals(replica.epochCache.epochForOffset(b.baseOffset()),
                        b.leaderEpoch(), "batch at " + b.baseOffset() + " on host " + host + ": " +
                        replica.epochCache), Long.MAX_VALUE, 1 << 20) > 0)
                    {
                        // check on
                    }
                }
                assertEquals(Harness.values(h.replica(0, tp)), Harness.values(replica), "identical at quiescence");
            }
        }
    }
}
