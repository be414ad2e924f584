package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fault windows of issue 14, each as the scenario that lost or changed acknowledged records through the public
 * replication API in deterministic INVOKER mode: a follower killed between its append and its epoch checkpoint, a
 * failed epoch checkpoint write, a power-loss fence acknowledged before it was durable. RF=3, min.insync.replicas=2.
 */
class FaultWindowTest
{
    private static final String EPOCH_FILE = LeaderEpochCache.FILE_NAME;

    @TempDir
    Path root;

    private static ReplicationContext ctx()
    {
        return new ReplicationContext().minInsyncReplicas(2).replicaLagTimeMaxMs(1000).hostSessionTimeoutMs(600)
            .hostHeartbeatIntervalMs(100).replicaFetchWaitMaxMs(100).requestTimeoutMs(5000);
    }

    /** Advance, killing a host whose duty cycle stopped at an injected crash point. @return the crashed host or -1. */
    private static int advanceCatchingCrash(final Harness h, final long ms)
    {
        int crashed = -1;
        for (long done = 0; done < ms; done += 20)
        {
            try
            {
                h.advance(20);
            }
            catch (final FaultyFileSync.Crash crash)
            {
                h.cluster.killHost(crash.host);
                crashed = crash.host;
            }
        }
        return crashed;
    }

    /** The records of a replica's log below its high watermark, by offset. */
    private static TreeMap<Long, String> committed(final Replica replica)
    {
        final TreeMap<Long, String> records = Simulation.read(replica);
        return new TreeMap<>(records.headMap(replica.highWatermark.get()));
    }

    private static void awaitLeader(final Harness h, final TopicPartition tp, final int host, final long maxMs)
    {
        for (long waited = 0; waited < maxMs && !(h.leader(tp) == host && null != h.cluster.leaderReplica(tp));
            waited += 20)
        {
            h.advance(20);
        }
        assertEquals(host, h.leader(tp), "expected host " + host + " to lead: " + h.state(tp) + " errors " + h.errors);
    }

    /**
     * Host 0, the leader of epoch 0, appends {@code values} (acks=1) that no follower gets, and dies: host 1 leads
     * epoch 1.
     */
    private static void leaderAppendsAloneThenDies(final Harness h, final TopicPartition tp, final String... values)
    {
        h.cluster.transport().isolate(0, 1);
        h.cluster.transport().isolate(0, 2);
        for (final String value : values)
        {
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.LEADER, value, 100).error());
        }
        h.cluster.killHost(0);
        h.cluster.transport().heal();
        awaitLeader(h, tp, 1, 3000);
        h.advance(300);
    }

    /**
     * The next write (rename) of a host's epoch checkpoint fails with {@code fault}; later ones succeed.
     *
     * @return true until the fault has struck.
     */
    private static AtomicBoolean failNextEpochCheckpoint(
        final Harness h, final int failingHost, final FaultyFileSync.Fault fault)
    {
        final AtomicBoolean armed = new AtomicBoolean(true);
        h.faults = (host, step, path) -> host == failingHost && step == FaultyFileSync.Step.RENAME &&
            path.getFileName().toString().equals(EPOCH_FILE) && armed.getAndSet(false) ? fault :
            FaultyFileSync.Fault.NONE;
        return armed;
    }

    private static void awaitIsr(final Harness h, final TopicPartition tp, final int host, final long maxMs)
    {
        for (long waited = 0; waited < maxMs && !h.state(tp).inIsr(host); waited += 20)
        {
            h.advance(20);
        }
        assertTrue(h.state(tp).inIsr(host), "host " + host + " never rejoined the ISR: " + h.state(tp));
    }

    /**
     * Hole 1. A follower killed after it appended batches of a new epoch and before the epoch reached its checkpoint
     * restarted believing those batches were of the epoch before; elected from the eligible replicas, it told a
     * returning replica that the old epoch ended where its log did, so that replica kept a different record at an
     * offset that then got committed, and after one more clean election a consumer read another value there.
     * <p>
     * Run without a flush policy (the batches of the new epoch lie above the recovery point, where the load's check
     * of the cache against the log would find them) and with a flush after every message (they lie below it, where
     * only the order of the two writes, epoch first, keeps the cache from falling behind the log).
     */
    @ParameterizedTest(name = "flush.interval.messages={0}")
    @ValueSource(longs = { Long.MAX_VALUE, 1 })
    void aFollowerKilledBetweenItsAppendAndItsEpochCheckpointNeverAnswersAWrongEpochEnd(final long flushMessages)
    {
        try (Harness h = new Harness(root, 3, ctx(), flushMessages))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            assertEquals(0, h.leader(tp));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "x0", 500).error());
            leaderAppendsAloneThenDies(h, tp, "x1");
            // Host 2 is killed inside its duty cycle while it replicates y1 of epoch 1: at the rename of its epoch
            // checkpoint.
            failNextEpochCheckpoint(h, 2, FaultyFileSync.Fault.CRASH);
            h.produce(tp, Acks.ALL, "y1");
            assertEquals(2, advanceCatchingCrash(h, 200), "host 2 stopped at its epoch checkpoint");
            // It restarts (kill -9: the page cache kept everything) and host 1 dies before host 2 reconciles with it:
            // host 2, an eligible replica, leads epoch 2.
            h.cluster.restartHost(2);
            h.cluster.killHost(1);
            awaitLeader(h, tp, 2, 3000);
            // Host 0 returns with x1 (epoch 0) at offset 1 and reconciles with host 2.
            h.cluster.restartHost(0);
            awaitIsr(h, tp, 0, 5000);
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "z", 2000).error());
            h.advance(500);
            final TreeMap<Long, String> before = committed(h.replica(2, tp));
            final TreeMap<Long, String> onZero = committed(h.replica(0, tp));
            // One more clean election: host 0 leads.
            h.cluster.killHost(2);
            awaitLeader(h, tp, 0, 3000);
            h.advance(200);
            final TreeMap<Long, String> after = Simulation.read(h.replica(0, tp));
            for (final Map.Entry<Long, String> e : before.entrySet())
            {
                assertEquals(e.getValue(), after.get(e.getKey()), "committed offset " + e.getKey() + " changed value " +
                    "across a clean election (host 2 had " + before + ", host 0 " + onZero + ")");
            }
        }
    }

    /**
     * Hole 2. A failed write of a follower's epoch checkpoint (a full disk while the preallocated segments still take
     * appends) was handed to the error handler and the follower carried on with the entry in memory only; after a
     * restart its cache was stale while its high-watermark checkpoint was past the epoch start, which reconciliation
     * (clamped at the HW) cannot repair; two clean elections later acknowledged acks=all records were gone.
     */
    @Test
    void aFailedEpochCheckpointWriteStopsTheReplicaBeforeItAppendsAnythingOfThatEpoch()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final List<Long> acked = new ArrayList<>();
            final List<String> ackedValues = new ArrayList<>();
            final Harness.Outcome x0 = h.produceAndWait(tp, Acks.ALL, "x0", 500);
            assertEquals(ReplicationError.NONE, x0.error());
            acked.add(x0.offset());
            ackedValues.add("x0");
            leaderAppendsAloneThenDies(h, tp, "x1", "x2");
            // One write of host 2's epoch checkpoint fails (no space for a small file).
            failNextEpochCheckpoint(h, 2, FaultyFileSync.Fault.NO_SPACE);
            final long y1 = h.produce(tp, Acks.ALL, "y1");
            final long y2 = h.produce(tp, Acks.ALL, "y2");
            h.advance(2500); // acknowledgements, and host 2's high-watermark checkpoint
            for (final long id : new long[]{ y1, y2 })
            {
                final Harness.Outcome outcome = h.outcome(id);
                if (null != outcome && outcome.error() == ReplicationError.NONE)
                {
                    acked.add(outcome.offset());
                    ackedValues.add(id == y1 ? "y1" : "y2");
                }
            }
            final Throwable failure = null == h.cluster.host(2) ? null : h.cluster.host(2).failure();
            // Host 2 is killed (if it still runs) and restarts.
            h.cluster.killHost(2);
            h.cluster.restartHost(2);
            awaitIsr(h, tp, 2, 5000);
            // Election 1: host 2 leads; host 0 returns with x1, x2 of epoch 0.
            h.cluster.killHost(1);
            awaitLeader(h, tp, 2, 3000);
            h.cluster.restartHost(0);
            awaitIsr(h, tp, 0, 5000);
            h.advance(300);
            // Election 2: host 0 leads.
            h.cluster.killHost(2);
            awaitLeader(h, tp, 0, 3000);
            h.advance(200);
            final TreeMap<Long, String> log = Simulation.read(h.replica(0, tp));
            for (int i = 0; i < acked.size(); i++)
            {
                assertEquals(ackedValues.get(i), log.get(acked.get(i)), "acks=all record " + ackedValues.get(i) +
                    " acknowledged at " + acked.get(i) + " is not there on the leader: " + log);
            }
            assertNotNull(failure, "host 2 stopped (fail-stop) when its epoch checkpoint could not be written");
        }
    }

    /**
     * Hole 4, the last part. A failed write of the epoch checkpoint when a replica becomes leader left it neither
     * leading nor following (the exception escaped becomeLeader after it had resigned and stopped fetching) while the
     * controller had it as the leader: the partition took no writes until the next state. Now the host stops
     * (fail-stop), tells the controller, and another ISR member leads.
     */
    @Test
    void aFailedEpochCheckpointWriteWhenBecomingLeaderStopsTheHostAndAnotherReplicaLeads()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            assertEquals(0, h.leader(tp));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "a", 500).error());
            // Host 1, first in line, cannot write its epoch checkpoint (no space for a small file) when it is elected.
            final AtomicBoolean armed = failNextEpochCheckpoint(h, 1, FaultyFileSync.Fault.NO_SPACE);
            h.cluster.killHost(0);
            for (long waited = 0; waited < 3000 && armed.get(); waited += 20)
            {
                h.advance(20);
            }
            assertTrue(!armed.get(), "host 1 was elected and tried to write its epoch checkpoint: " + h.state(tp));
            awaitLeader(h, tp, 2, 3000);
            assertNotNull(h.cluster.host(1) == null ? null : h.cluster.host(1).failure(),
                "host 1 stopped (fail-stop) when its epoch checkpoint could not be written");
            // Host 0 returns: the ISR reaches min.insync.replicas again and acks=all writes are taken.
            h.cluster.restartHost(0);
            awaitIsr(h, tp, 0, 5000);
            final Harness.Outcome b = h.produceAndWait(tp, Acks.ALL, "b", 2000);
            assertEquals(ReplicationError.NONE, null == b ? null : b.error(), "an acks=all write after the failover");
            final TreeMap<Long, String> log = Simulation.read(h.replica(2, tp));
            assertEquals("a", log.get(0L), log.toString());
            assertEquals("b", log.get(b.offset()), log.toString());
        }
    }

    /** A controller store that fails, once, the first write marking {@code host} as recovering from a power loss. */
    private static final class FailingRecoveringWrite extends ForwardingControllerStore
    {
        private final int host;
        private final AtomicBoolean armed;

        FailingRecoveringWrite(final Path dir, final int host, final AtomicBoolean armed)
        {
            super(new FileControllerStore(dir));
            this.host = host;
            this.armed = armed;
        }

        @Override
        public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
        {
            if (PartitionState.contains(next.recovering(), host) && armed.getAndSet(false))
            {
                throw new UncheckedIOException(new IOException("No space left on device (injected)"));
            }
            return delegate.compareAndSet(expectedVersion, next);
        }
    }

    /**
     * Hole 3. The controller answered Registered to a host that reported a possible power loss before it wrote that
     * host's replicas as recovering; the host then forgot its power-loss marker. A failed write and a controller
     * failover in between lost the fence, and the host that had lost two acknowledged acks=all records led again.
     */
    @Test
    void aPowerLossFenceIsDurableBeforeTheHostHearsThatItIsRegistered()
    {
        final AtomicBoolean armed = new AtomicBoolean(false);
        try (Harness h = new Harness(root, 3, ctx().controllerStoreFactory((dir) ->
            new FailingRecoveringWrite(dir, 1, armed))))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final Harness.Outcome[] acked = acknowledgeTwoThenHaltEveryHost(h, tp);
            // host 1 loses its unflushed tail (both records) to a power loss
            h.powerCycle(1);
            h.dropTail(1, tp, 2);
            // Host 1 restarts; the controller's write of its recovering state fails once; the controller fails over.
            armed.set(true);
            h.cluster.restartHost(1);
            h.advance(100);
            h.cluster.restartController();
            h.advance(2000);
            assertNotEquals(1, h.leader(tp), "host 1 lost two acknowledged acks=all records to a power loss and " +
                "must not lead before it re-synced: " + h.state(tp));
            // Host 0, which holds them, returns: every acknowledged record is on the leader.
            assertTheLeaderHoldsBothOnceHosts0And2Return(h, tp, acked);
        }
    }

    /**
     * Hole 4. The high watermark shown to clients (PartitionReader, and through it Consumer.highWatermark, and the
     * remote read's) was the raw leader HW, which goes back after an election: a new leader's starts behind.
     */
    @Test
    void highWatermarksShownToClientsNeverGoBackAcrossAnElection()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "m0", 500).error());
            h.advance(200);
            final int leader = h.leader(tp);
            // m1 is committed on the leader, but the responses that would tell the followers are lost
            final long m1 = h.produce(tp, Acks.ALL, "m1");
            for (int i = 0; i < 50 && (h.replica((leader + 1) % 3, tp).log.logEndOffset() < 2 ||
                h.replica((leader + 2) % 3, tp).log.logEndOffset() < 2); i++)
            {
                h.cluster.invokeAgents();
            }
            h.cluster.transport().cut(leader, (leader + 1) % 3);
            h.cluster.transport().cut(leader, (leader + 2) % 3);
            h.settle();
            assertEquals(ReplicationError.NONE, h.outcome(m1).error());
            try (PartitionReader reader = h.cluster.openReader(tp))
            {
                final long shown = reader.highWatermark();
                assertEquals(2, shown);
                h.cluster.killHost(leader);
                h.cluster.transport().heal();
                boolean sawNewLeaderBehind = false;
                for (int i = 0; i < 2000; i++)
                {
                    if (i % 20 == 0)
                    {
                        h.clock.advance(20);
                    }
                    h.cluster.invokeAgents(); // one round at a time: the window is a few rounds long
                    final Replica newLeader = h.cluster.leaderReplica(tp);
                    sawNewLeaderBehind |= null != newLeader &&
                        newLeader.leaderState.highWatermark() < newLeader.leaderState.epochStartOffset;
                    final long now = reader.highWatermark();
                    assertTrue(now == -1 || now >= shown, "the high watermark shown went back from " + shown +
                        " to " + now);
                    final int newLeaderHost = h.leader(tp);
                    if (newLeaderHost >= 0)
                    {
                        final long remote = h.cluster.host(newLeaderHost) == null ? -1 :
                            nodeHighWatermark(h, newLeaderHost, tp);
                        assertTrue(remote == -1 || remote >= shown, "the remote read's high watermark went back " +
                            "from " + shown + " to " + remote);
                    }
                }
                assertTrue(sawNewLeaderBehind, "the scenario must put the new leader's HW behind its epoch start");
                assertEquals(2, reader.highWatermark(), "then the new leader's HW reaches it");
            }
        }
    }

    private static long nodeHighWatermark(final Harness h, final int host, final TopicPartition tp)
    {
        final Replica replica = h.replica(host, tp);
        final LeaderState leader = null == replica ? null : replica.leaderState;
        return null == leader ? -1 : PartitionReader.exposedHighWatermark(leader);
    }

    /** A controller store whose next compare-and-set, once armed, fails or misses (another controller's write). */
    private static final class FlakyStore extends ForwardingControllerStore
    {
        private final java.util.concurrent.atomic.AtomicReference<String> armed;

        FlakyStore(final Path dir, final java.util.concurrent.atomic.AtomicReference<String> armed)
        {
            super(new FileControllerStore(dir));
            this.armed = armed;
        }

        @Override
        public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
        {
            final String mode = armed.getAndSet(null);
            if ("fail".equals(mode))
            {
                throw new UncheckedIOException(new IOException("Input/output error (injected)"));
            }
            if ("miss".equals(mode))
            {
                return null;
            }
            return delegate.compareAndSet(expectedVersion, next);
        }
    }

    /**
     * Hole 4. The controller broadcast the result of a compare-and-set without a null check, and a store failure in
     * the middle of a dead host's partitions left the later ones unprocessed for good (the host was already marked
     * dead): a partition stayed led by a dead host.
     */
    @Test
    void aStoreWriteThatFailsOrMissesWhileAHostDiesIsDecidedAgain()
    {
        for (final String mode : new String[]{ "fail", "miss" })
        {
            final java.util.concurrent.atomic.AtomicReference<String> armed =
                new java.util.concurrent.atomic.AtomicReference<>();
            try (Harness h = new Harness(root.resolve(mode), 3, ctx().controllerStoreFactory((dir) ->
                new FlakyStore(dir, armed))))
            {
                h.topic("t", 3, 3);
                h.advance(200);
                armed.set(mode);
                h.cluster.killHost(0);
                h.advance(2000);
                for (final PartitionState state : h.cluster.partitions("t"))
                {
                    assertTrue(state.leader() != 0 && state.leader() != PartitionState.NO_LEADER && !state.inIsr(0),
                        mode + ": the dead host still leads or is in the ISR: " + state + " errors " + h.errors);
                }
            }
        }
    }

    /**
     * Item 5, seen from replication: a replica whose disk lost records it had flushed (the store now opens such a log
     * where its data ends and reports a typed loss) has lost records it may have acknowledged, as after a power loss,
     * and is fenced the same way: not elected until it has re-joined an ISR through a leader.
     */
    @Test
    void aReplicaWhoseDiskLostFlushedRecordsIsFencedAsAfterAPowerLoss() throws IOException
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            final Harness.Outcome[] acked = acknowledgeTwoThenHaltEveryHost(h, tp);
            // Host 1's log had flushed both records (its checkpoint says so); its disk returns zeros for them.
            final Path logDir = root.resolve("host-1").resolve(tp.logName());
            final java.nio.ByteBuffer checkpoint = io.tidemark.store.file.CheckpointFile.allocate(0x4B434D54, 16);
            checkpoint.putLong(io.tidemark.store.format.CheckpointDescriptor.FIELDS_OFFSET, 2).putLong(
                io.tidemark.store.format.CheckpointDescriptor.FIELDS_OFFSET + 8, 0);
            io.tidemark.store.file.CheckpointFile.write(logDir.resolve("log.checkpoint"), checkpoint);
            final Path segment = logDir.resolve("00000000000000000000.log");
            final byte[] bytes = Files.readAllBytes(segment);
            java.util.Arrays.fill(bytes, (byte)0);
            Files.write(segment, bytes);
            h.cluster.restartHost(1);
            h.advance(2000);
            assertNotEquals(1, h.leader(tp), "host 1 lost flushed acknowledged records and must not lead before it " +
                "re-synced: " + h.state(tp));
            assertTrue(PartitionState.contains(h.state(tp).recovering(), 1), h.state(tp).toString());
            assertTheLeaderHoldsBothOnceHosts0And2Return(h, tp, acked);
        }
    }

    /**
     * Item 6, the choice made: acks=N guarantees nothing beyond acks=1 across an election (documented in Acks and the
     * replication page). Elections take the first live ISR member in assignment order, not the one holding the most,
     * so an acks=2 record held by the leader and the last replica in assignment order is lost when the leader alone
     * fails; an acks=all record sent the same way is not acknowledged until every ISR member holds it.
     */
    @Test
    void acksNGuaranteesNothingBeyondAcksOneAcrossAnElection()
    {
        try (Harness h = new Harness(root, 3, ctx()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            assertEquals(0, h.leader(tp));
            assertEquals(ReplicationError.NONE, h.produceAndWait(tp, Acks.ALL, "committed", 500).error());
            h.cluster.transport().cut(0, 1); // host 1, first in line after the leader, does not get the next records
            final Harness.Outcome two = h.produceAndWait(tp, Acks.replicas(2), "acks-2", 200);
            assertEquals(ReplicationError.NONE, two.error(), "held by hosts 0 and 2: two ISR members");
            final long all = h.produce(tp, Acks.ALL, "acks-all");
            h.advance(100);
            assertEquals(null, h.outcome(all), "acks=all waits for host 1, which does not have it");
            h.cluster.killHost(0);
            h.cluster.transport().heal();
            awaitLeader(h, tp, 1, 3000);
            h.advance(1000);
            final TreeMap<Long, String> log = Simulation.read(h.replica(1, tp));
            assertEquals("committed", log.get(0L));
            assertTrue(!log.containsValue("acks-2"), "the acks=2 record is lost after one failure: " + log);
            assertEquals(log, Simulation.read(h.replica(2, tp)), "host 2 truncated it to follow the new leader");
        }
    }

    /**
     * Host 2 dies; a1 and a2 are acknowledged (acks=all) by hosts 0, the leader, and 1; host 0 dies and host 1 takes
     * over; host 1 dies too. No host is up, and host 1 led last.
     *
     * @return the outcomes of a1 and a2.
     */
    private static Harness.Outcome[] acknowledgeTwoThenHaltEveryHost(final Harness h, final TopicPartition tp)
    {
        assertEquals(0, h.leader(tp));
        h.cluster.killHost(2);
        h.advance(1500);
        assertTrue(!h.state(tp).inIsr(2), h.state(tp).toString());
        final Harness.Outcome[] acked = {
            h.produceAndWait(tp, Acks.ALL, "a1", 500), h.produceAndWait(tp, Acks.ALL, "a2", 500) };
        assertEquals(ReplicationError.NONE, acked[0].error());
        assertEquals(ReplicationError.NONE, acked[1].error());
        h.cluster.killHost(0);
        awaitLeader(h, tp, 1, 3000);
        h.cluster.killHost(1);
        h.advance(1000);
        assertEquals(PartitionState.NO_LEADER, h.leader(tp));
        return acked;
    }

    /** Hosts 0 and 2 return: a leader is elected, and holds a1 and a2 at the offsets they were acknowledged at. */
    private static void assertTheLeaderHoldsBothOnceHosts0And2Return(
        final Harness h, final TopicPartition tp, final Harness.Outcome[] acked)
    {
        h.cluster.restartHost(0);
        h.cluster.restartHost(2);
        h.advance(3000);
        final int leader = h.leader(tp);
        assertTrue(leader >= 0, h.state(tp).toString());
        final TreeMap<Long, String> log = Simulation.read(h.replica(leader, tp));
        for (int i = 0; i < acked.length; i++)
        {
            final String value = "a" + (i + 1);
            assertEquals(value, log.get(acked[i].offset()), "acks=all " + value + " at " + acked[i].offset() + ": " +
                log);
        }
    }
}
