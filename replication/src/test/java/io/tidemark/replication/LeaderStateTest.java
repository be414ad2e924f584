package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The ISR tracker, high-watermark rule and acks completion of a leader, without a cluster. */
class LeaderStateTest
{
    private static final TopicPartition TP = new TopicPartition("t", 0);

    @TempDir
    Path dir;

    private Log log;
    private HighWatermark hw;

    @BeforeEach
    void open()
    {
        log = Log.open(new LogContext().logDir(dir.resolve("log")).segmentBytes(1 << 20).maxMessageBytes(64 * 1024)
            .agentMode(LogContext.AgentMode.EXTERNAL));
        hw = new HighWatermark(dir, 0);
    }

    @AfterEach
    void close()
    {
        log.close();
    }

    private void append(final int records)
    {
        for (int i = 0; i < records; i++)
        {
            log.tryClaim(256).addRecord(BatchClaim.NOW, null, 0, -1, new UnsafeBuffer(new byte[4]), 0, 4).commit();
        }
    }

    private LeaderState leader(final int minIsr, final int... isr)
    {
        return new LeaderState(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, isr, new int[0], new int[0], 0, 3, 7), 0, log, hw,
            log.logEndOffset(), minIsr, 1000);
    }

    @Test
    void highWatermarkIsTheMinimumOverTheIsrAndWaitsForUnknownPositions()
    {
        final LeaderState leader = leader(1, 0, 1, 2);
        append(10);
        assertFalse(leader.maybeAdvanceHighWatermark(), "followers' positions are not known yet");
        leader.follower(1).onFetch(7, 10, 1000);
        leader.follower(2).onFetch(4, 10, 1000);
        assertTrue(leader.maybeAdvanceHighWatermark());
        assertEquals(4, leader.highWatermark());
        leader.follower(2).onFetch(9, 10, 1001);
        leader.maybeAdvanceHighWatermark();
        assertEquals(7, leader.highWatermark());
        leader.follower(1).onFetch(3, 10, 1002); // a position going back (restarted follower) never lowers the HW
        leader.maybeAdvanceHighWatermark();
        assertEquals(7, leader.highWatermark());
    }

    @Test
    void theHighWatermarkDoesNotAdvanceWhileTheIsrIsBelowMinInsync()
    {
        final LeaderState leader = leader(2, 0);
        append(5);
        assertFalse(leader.maybeAdvanceHighWatermark());
        assertEquals(0, leader.highWatermark());
        final LeaderState enough = leader(1, 0);
        assertTrue(enough.maybeAdvanceHighWatermark());
        assertEquals(5, enough.highWatermark());
    }

    @Test
    void aPendingExpansionAlreadyCountsAndAPendingShrinkStillCounts()
    {
        final LeaderState leader = leader(1, 0, 1);
        append(10);
        leader.follower(1).onFetch(10, 10, 1000);
        leader.follower(2).onFetch(3, 10, 1000);
        leader.maybeAdvanceHighWatermark();
        assertEquals(10, leader.highWatermark(), "host 2 is outside the ISR");
        append(5);
        leader.follower(2).onFetch(12, 15, 1001);
        leader.follower(1).onFetch(15, 15, 1001);
        leader.requestChange(new int[]{ 0, 1, 2 }, 1001);
        leader.maybeAdvanceHighWatermark();
        assertEquals(12, leader.highWatermark(), "the member being added already holds the HW back");
        leader.apply(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 1, 2 }, new int[0], new int[0], 0, 3, 8));
        assertFalse(leader.changePending());
        leader.requestChange(new int[]{ 0, 1 }, 1002);
        leader.follower(2).onFetch(12, 15, 1002);
        leader.maybeAdvanceHighWatermark();
        assertEquals(12, leader.highWatermark(), "the member being removed still counts until it is removed");
    }

    @Test
    void withReplicaLagMaxMessagesAFollowerThatFarBehindLeavesBeforeTheTimeLimitAndJoinsAsBefore()
    {
        append(10);
        final LeaderState leader = new LeaderState(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 1, 2 },
            new int[0], new int[0], 0, 3, 7), 0, log, hw, 10, 1, 1000);
        assertNull(leader.shrinkCandidate(1100, 1000, 5), "positions not known yet in this epoch: time rule only");
        leader.follower(1).onFetch(10, 10, 1000);
        leader.follower(2).onFetch(10, 10, 1000);
        append(5);
        assertNull(leader.shrinkCandidate(1001, 1000, 5), "5 behind is not more than 5");
        append(1);
        assertArrayEquals(new int[]{ 0 }, leader.shrinkCandidate(1001, 1000, 5),
            "6 behind, caught up 1 ms ago: both leave by count (the burst that flaps the ISR)");
        assertNull(leader.shrinkCandidate(1001, 1000, 0), "0: the count rule is off");
        leader.follower(1).onFetch(16, 16, 1002);
        assertArrayEquals(new int[]{ 0, 1 }, leader.shrinkCandidate(1002, 1000, 5), "only the one behind leaves");
        leader.apply(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 1 }, new int[0], new int[0], 0, 3,
            8));
        hw.advanceTo(16);
        append(100);
        leader.follower(2).onFetch(16, 116, 1003);
        assertArrayEquals(new int[]{ 0, 1, 2 }, leader.expandCandidate(leader.follower(2), 1003, 1000),
            "joining is unchanged by count: caught up to the HW and the epoch start, however far behind the log end");
    }

    @Test
    void shrinkByTimeOnlyAndExpandWhenCaughtUpToHighWatermarkAndEpochStart()
    {
        append(10);
        final LeaderState leader = new LeaderState(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 1, 2 }, new int[0], new int[0],
            0, 3, 7), 0, log, hw, 10, 1, 1000);
        leader.follower(1).onFetch(10, 10, 1000);
        leader.follower(2).onFetch(10, 10, 1000);
        assertNull(leader.shrinkCandidate(50_000, 1000, 0), "caught-up followers never leave, however long ago");
        append(1_000); // a burst: both followers far behind, but recently caught up
        assertNull(leader.shrinkCandidate(1500, 1000, 0), "lag is measured in time, not messages");
        leader.follower(1).onFetch(1010, 1010, 2400);
        assertArrayEquals(new int[]{ 0, 1 }, leader.shrinkCandidate(2500, 1000, 0), "host 2 stuck for > lag");
        leader.requestChange(new int[]{ 0, 1 }, 2500);
        assertNull(leader.shrinkCandidate(9000, 1000, 0), "one change in flight at a time");
        leader.changeRejected(null);
        leader.apply(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 1 }, new int[0], new int[0], 0, 3, 8));
        hw.advanceTo(1010);
        leader.follower(2).onFetch(1005, 1010, 9000);
        assertNull(leader.expandCandidate(leader.follower(2), 9001, 1000), "below the HW: not yet");
        leader.follower(2).onFetch(1010, 1010, 9001);
        assertArrayEquals(new int[]{ 0, 1, 2 }, leader.expandCandidate(leader.follower(2), 9001, 1000));
        leader.follower(2).resetForIncarnation(2, 9002);
        assertNull(leader.expandCandidate(leader.follower(2), 9001, 1000), "nothing known from the new incarnation yet");
    }

    /**
     * The ISR is the leader alone (below min.insync.replicas=2), so the high watermark has stopped where it was; a
     * follower far behind passes it long before it reaches the log end. Joining then would end at the next ISR
     * check (not caught up for longer than the lag time), and the ISR would flap at every fetch after that (session
     * 6's failure after an acks=1 burst): it joins once caught up, and then the lag rule keeps it.
     */
    @Test
    void aFollowerPastAStoppedHighWatermarkJoinsOnlyOnceCaughtUp()
    {
        append(10);
        final LeaderState leader = new LeaderState(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0 },
            new int[0], new int[0], 0, 3, 7), 0, log, hw, 0, 2, 1000);
        hw.advanceTo(5);
        leader.follower(2).onFetch(2, 10, 1000); // the last fetch while it was behind
        append(1_000); // an acks=1 burst it did not keep up with
        leader.follower(2).onFetch(8, 1010, 5000);
        assertNull(leader.expandCandidate(leader.follower(2), 5000, 1000),
            "past the stopped HW, 1002 records behind, last caught up 4 s ago: would leave at the next check");
        leader.follower(2).onFetch(900, 1010, 5001);
        assertNull(leader.expandCandidate(leader.follower(2), 5001, 1000), "still behind");
        leader.follower(2).onFetch(1010, 1010, 5002);
        final int[] joined = leader.expandCandidate(leader.follower(2), 5002, 1000);
        assertArrayEquals(new int[]{ 0, 2 }, joined, "at the log end: joins");
        leader.requestChange(joined, 5002);
        leader.apply(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0, 2 }, new int[0], new int[0], 0, 3,
            8));
        append(50);
        leader.follower(2).onFetch(1010, 1060, 5100); // under a stream: caught up as of its previous fetch
        assertNull(leader.shrinkCandidate(5900, 1000, 0), "and stays while it keeps up");
        assertNull(leader.expandCandidate(leader.follower(1), 5900, 1000), "host 1 has never fetched in this epoch");
    }

    @Test
    void pendingAcksCompleteByModeTimeOutAndFailAfterAppend()
    {
        final List<String> outcomes = new ArrayList<>();
        final ProducerSessions sessions = new ProducerSessions();
        final int session = sessions.register((tp, id, offset, error) -> outcomes.add(id + ":" + error));
        final LeaderState leader = leader(2, 0, 1, 2);
        append(3);
        leader.pendingAcks.add(session, 1, 0, 1, Acks.ALL, 5000);
        leader.pendingAcks.add(session, 2, 1, 2, Acks.replicas(2), 5000);
        leader.pendingAcks.add(session, 3, 2, 3, Acks.ALL, 1500);
        leader.follower(1).onFetch(2, 3, 1000);
        assertEquals(1, leader.pendingAcks.complete(leader, TP, sessions, 1000, 2));
        assertEquals(List.of("2:NONE"), outcomes, "acks=2: leader and host 1 hold offset 1; acks=all waits");
        leader.follower(2).onFetch(1, 3, 1000);
        leader.maybeAdvanceHighWatermark();
        leader.pendingAcks.complete(leader, TP, sessions, 1000, 2);
        assertEquals(List.of("2:NONE", "1:NONE"), outcomes, "HW passed offset 0");
        leader.pendingAcks.complete(leader, TP, sessions, 1600, 2);
        assertEquals("3:REQUEST_TIMED_OUT", outcomes.get(2));
        leader.pendingAcks.add(session, 4, 3, 4, Acks.ALL, 9000);
        leader.apply(new PartitionState(0, TP, new int[]{ 0, 1, 2 }, new int[]{ 0 }, new int[0], new int[0], 0, 3, 9));
        leader.pendingAcks.complete(leader, TP, sessions, 1700, 2);
        assertEquals("4:NOT_ENOUGH_REPLICAS_AFTER_APPEND", outcomes.get(3));
        leader.pendingAcks.add(session, 5, 3, 4, Acks.ALL, 9000);
        leader.pendingAcks.failAll(TP, sessions, ReplicationError.NOT_LEADER);
        assertEquals("5:NOT_LEADER", outcomes.get(4));
        assertEquals(0, leader.pendingAcks.size());
    }
}
