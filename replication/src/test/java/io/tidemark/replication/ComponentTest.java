package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Unit tests of the replication components: high watermark, epoch cache, controller store and CAS. */
class ComponentTest
{
    @TempDir
    Path dir;

    @Test
    void highWatermarkOnlyMovesUpEvenUnderConcurrentAdvancers() throws Exception
    {
        final HighWatermark hw = new HighWatermark(dir, 0);
        assertTrue(hw.advanceTo(5));
        assertFalse(hw.advanceTo(3));
        assertEquals(5, hw.get());
        final CountDownLatch start = new CountDownLatch(1);
        final Thread[] threads = new Thread[4];
        for (int t = 0; t < threads.length; t++)
        {
            final int seed = t;
            threads[t] = new Thread(() ->
            {
                try
                {
                    start.await();
                }
                catch (final InterruptedException ex)
                {
                    return;
                }
                for (int i = 0; i < 100_000; i++)
                {
                    final long before = hw.get();
                    hw.advanceTo((i * 7L + seed * 13L) % 200_000);
                    if (hw.get() < before)
                    {
                        throw new AssertionError("high watermark went back");
                    }
                }
            });
            threads[t].start();
        }
        start.countDown();
        for (final Thread thread : threads)
        {
            thread.join();
        }
        assertEquals(199_999, hw.get());
        hw.checkpoint();
        assertEquals(199_999, HighWatermark.load(dir, 1_000_000).get());
        assertEquals(10, HighWatermark.load(dir, 10).get(), "HW = min(checkpointed HW, LEO) on restart");
    }

    @Test
    void highWatermarkCheckpointStopsAtCloseAndHaltWritesNone() throws Exception
    {
        final Path a = dir.resolve("a");
        java.nio.file.Files.createDirectories(a);
        final HighWatermark clean = new HighWatermark(a, 0);
        clean.advanceTo(7);
        clean.close();
        clean.advanceTo(9);
        clean.checkpoint(); // a housekeeping pass that raced the close: writes nothing
        assertEquals(7, HighWatermark.load(a, 100).get(), "the clean close wrote the last checkpoint, nothing after");

        final Path b = dir.resolve("b");
        java.nio.file.Files.createDirectories(b);
        final HighWatermark halted = new HighWatermark(b, 0);
        halted.advanceTo(5);
        halted.checkpoint();
        halted.advanceTo(8);
        halted.halt();
        halted.checkpoint();
        assertEquals(5, HighWatermark.load(b, 100).get(), "a halt writes nothing, as a killed process");
    }

    private Log log(final String name)
    {
        return Log.open(new LogContext().logDir(dir.resolve(name)).segmentBytes(1 << 20).maxMessageBytes(64 * 1024)
            .agentMode(LogContext.AgentMode.EXTERNAL));
    }

    private static void append(final Log log, final int epoch, final int records)
    {
        for (int i = 0; i < records; i++)
        {
            log.tryClaim(256).leaderEpoch(epoch)
                .addRecord(BatchClaim.NOW, null, 0, -1, new UnsafeBuffer(new byte[8]), 0, 8).commit();
        }
    }

    @Test
    void epochCacheAnswersTheEndOfEachEpochAsKip279Says()
    {
        try (Log log = log("a"))
        {
            final LeaderEpochCache cache = LeaderEpochCache.load(log);
            cache.assign(1, 0);
            append(log, 1, 10);
            cache.assign(3, 10);
            append(log, 3, 5);
            cache.assign(5, 15);
            append(log, 5, 5);
            cache.assign(4, 18); // stale: ignored
            assertEquals(5, cache.latestEpoch());
            assertEquals(new LeaderEpochCache.EpochEndOffset(5, 20), cache.endOffsetFor(5, 20));
            assertEquals(new LeaderEpochCache.EpochEndOffset(3, 15), cache.endOffsetFor(4, 20),
                "largest epoch <= asked, ending where the next one starts");
            assertEquals(new LeaderEpochCache.EpochEndOffset(1, 10), cache.endOffsetFor(2, 20));
            assertEquals(new LeaderEpochCache.EpochEndOffset(-1, -1), cache.endOffsetFor(0, 20));
            assertEquals(new LeaderEpochCache.EpochEndOffset(5, 20), cache.endOffsetFor(9, 20));
            assertEquals(3, cache.epochForOffset(12));
            assertEquals(3, cache.previousEpoch(5));

            cache.truncateFromEnd(15);
            assertEquals(3, cache.latestEpoch());
            assertEquals(2, cache.entries().size());

            final LeaderEpochCache reloaded = LeaderEpochCache.load(log);
            assertEquals(cache.entries().size(), reloaded.entries().size());
            assertArrayEquals(cache.entries().get(1), reloaded.entries().get(1));
        }
    }

    @Test
    void epochCacheIsRebuiltFromTheBatchesWhenItsCheckpointIsLost() throws Exception
    {
        try (Log log = log("b"))
        {
            append(log, 2, 3);
            append(log, 7, 4);
            Files.deleteIfExists(log.directory().resolve(LeaderEpochCache.FILE_NAME));
            final LeaderEpochCache cache = LeaderEpochCache.load(log);
            assertEquals(2, cache.entries().size());
            assertArrayEquals(new long[]{ 2, 0 }, cache.entries().get(0));
            assertArrayEquals(new long[]{ 7, 3 }, cache.entries().get(1));
            Files.write(log.directory().resolve(LeaderEpochCache.FILE_NAME), new byte[]{ 1, 2, 3 });
            assertEquals(2, LeaderEpochCache.load(log).entries().size(), "a torn checkpoint is rebuilt too");
        }
    }

    @Test
    void epochCacheReplacesAnEpochThatProducedNoRecords()
    {
        try (Log log = log("c"))
        {
            final LeaderEpochCache cache = LeaderEpochCache.load(log);
            cache.assign(1, 0);
            cache.assign(2, 0); // epoch 1 never wrote anything
            assertEquals(1, cache.entries().size());
            assertArrayEquals(new long[]{ 2, 0 }, cache.entries().get(0));
        }
    }

    private static PartitionState state(final int version, final int leader, final int epoch, final int... isr)
    {
        return new PartitionState(0, new TopicPartition("t", 0), new int[]{ 0, 1, 2 }, isr, new int[0], new int[0], leader, epoch, version);
    }

    @Test
    void partitionStateChangesOnlyByCompareAndSetAndSurviveControllerFailover()
    {
        final FileControllerStore store = new FileControllerStore(dir.resolve("ctl"));
        store.create(state(0, 0, 0, 0, 1, 2));
        assertNull(store.compareAndSet(5, state(6, 0, 0, 0, 1)), "wrong expected version");
        assertNull(store.compareAndSet(0, state(2, 0, 0, 0, 1)), "the new version must be expected + 1");
        assertNotNull(store.compareAndSet(0, state(1, 0, 0, 0, 1)));
        assertNull(store.compareAndSet(0, state(1, 1, 1, 1)), "a second writer at the same version loses");
        final FileControllerStore failedOver = new FileControllerStore(dir.resolve("ctl"));
        assertEquals(state(1, 0, 0, 0, 1), failedOver.get(0));
    }

    @Test
    void controllerFencesIsrChangesFromStaleLeadersAndElectsInAssignmentOrder()
    {
        final org.agrona.concurrent.CachedEpochClock clock = new org.agrona.concurrent.CachedEpochClock();
        clock.update(1000);
        final ControlChannel channel = new ControlChannel(3);
        final Controller controller = new Controller(dir.resolve("c2"),
            new ReplicationContext().epochClock(clock), channel);
        for (int host = 0; host < 3; host++)
        {
            channel.toController(host, new ControlMessage.RegisterHost(host, 1, false));
        }
        controller.doWork();
        final List<PartitionState> created = controller.createTopic("t", 1, 3, new int[]{ 0, 1, 2 });
        final PartitionState initial = created.get(0);
        assertEquals(0, initial.leader());
        // stale epoch: fenced
        channel.toController(0, new ControlMessage.AlterIsr(0, 0, initial.leaderEpoch() - 1, initial.version(),
            new int[]{ 0, 1 }));
        // wrong version: refused
        channel.toController(0, new ControlMessage.AlterIsr(0, 0, initial.leaderEpoch(), initial.version() + 3,
            new int[]{ 0, 1 }));
        // a follower cannot change the ISR
        channel.toController(1, new ControlMessage.AlterIsr(0, 1, initial.leaderEpoch(), initial.version(),
            new int[]{ 1, 2 }));
        controller.doWork();
        assertEquals(initial, controller.partition(0));
        channel.toController(0, new ControlMessage.AlterIsr(0, 0, initial.leaderEpoch(), initial.version(),
            new int[]{ 0, 2 }));
        controller.doWork();
        assertArrayEquals(new int[]{ 0, 2 }, controller.partition(0).isr());
        // host 0 (leader) stops heartbeating: the first live ISR member in AR order leads, epoch bumped
        for (int i = 0; i < 10; i++)
        {
            clock.advance(100);
            channel.toController(1, new ControlMessage.Heartbeat(1, 1, 0));
            channel.toController(2, new ControlMessage.Heartbeat(2, 1, 0));
            controller.doWork();
        }
        final PartitionState after = controller.partition(0);
        assertEquals(2, after.leader(), "host 1 is not in the ISR, so host 2 leads");
        assertEquals(initial.leaderEpoch() + 1, after.leaderEpoch());
        assertArrayEquals(new int[]{ 2 }, after.isr());
        assertFalse(controller.hostAlive(0));
    }

    /** Counts the controller's batches of writes; each is then written one by one, as the default does. */
    private static final class BatchCountingStore extends ForwardingControllerStore
    {
        final List<Integer> batches = new java.util.ArrayList<>();
        int singleWrites;

        BatchCountingStore(final Path dir)
        {
            super(new FileControllerStore(dir));
        }

        @Override
        public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
        {
            singleWrites++;
            return delegate.compareAndSet(expectedVersion, next);
        }

        @Override
        public List<PartitionState> compareAndSetAll(final List<PartitionState> nexts)
        {
            batches.add(nexts.size());
            return super.compareAndSetAll(nexts);
        }
    }

    @Test
    void aHostsDeathIsStoredInOneBatchOfWritesElectionsAndIsrShrinksTogether()
    {
        final ControlChannel channel = new ControlChannel(3);
        final BatchCountingStore store = new BatchCountingStore(dir.resolve("batch"));
        final Controller controller = new Controller(store, new ReplicationContext(), channel);
        for (int host = 0; host < 3; host++)
        {
            channel.toController(host, new ControlMessage.RegisterHost(host, 1, false));
        }
        controller.doWork();
        final List<PartitionState> created = controller.createTopic("t", 6, 3, new int[]{ 0, 1, 2 });
        for (final PartitionState state : created)
        {
            assertEquals(3, state.isr().length);
        }
        store.batches.clear();
        final int singleWritesBefore = store.singleWrites;
        channel.toController(1, new ControlMessage.UnregisterHost(1, 1));
        controller.doWork();
        assertEquals(List.of(6), store.batches, "every partition host 1 replicates, in one batch");
        assertEquals(singleWritesBefore + 6, store.singleWrites, "the default writes the batch one by one");
        for (final PartitionState before : created)
        {
            final PartitionState after = controller.partition(before.partitionId());
            assertEquals(before.version() + 1, after.version());
            assertFalse(after.inIsr(1), after.toString());
            if (before.leader() == 1)
            {
                assertEquals(before.leaderEpoch() + 1, after.leaderEpoch(), "an election bumps the leader epoch");
                assertTrue(after.leader() == 0 || after.leader() == 2, after.toString());
            }
            else
            {
                assertEquals(before.leader(), after.leader());
                assertEquals(before.leaderEpoch(), after.leaderEpoch(), "a shrink keeps the leader epoch");
            }
        }
        assertEquals(created.size(), store.all().size());
    }
}
