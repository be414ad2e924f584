package io.tidemark.zookeeper;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.util.Arrays;
import java.util.List;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ZooKeeperControllerStoreTest
{
    private static final String ROOT = "/tidemark/test";

    @RegisterExtension
    final TestZooKeeper zk = new TestZooKeeper();

    private ZooKeeperControllerStore open()
    {
        return ZooKeeperControllerStore.connect(zk.connectString(), ROOT, 10_000, 10_000);
    }

    private static PartitionState state(final int id, final int version, final int leader, final int epoch,
        final int... isr)
    {
        return new PartitionState(id, new TopicPartition("orders", id), new int[] {0, 1, 2}, isr, new int[0],
            new int[0], leader, epoch, version);
    }

    @Test
    void partitionStateChangesOnlyByCompareAndSetAndSurvivesControllerFailover()
    {
        try (ZooKeeperControllerStore store = open())
        {
            assertEquals(0, store.size());
            store.create(state(0, 0, 0, 0, 0, 1, 2));
            store.create(state(1, 0, 1, 0, 1, 2, 0));
            assertThrows(IllegalStateException.class, () -> store.create(state(5, 0, 0, 0, 0)), "ids are dense");
            assertNull(store.compareAndSet(5, state(0, 6, 0, 0, 0, 1)), "wrong expected version");
            assertNull(store.compareAndSet(0, state(0, 2, 0, 0, 0, 1)), "the new version must be expected + 1");
            assertNotNull(store.compareAndSet(0, state(0, 1, 0, 0, 0, 1)));
            assertNotNull(store.compareAndSet(1, state(0, 2, 1, 1, 1)));
        }
        try (ZooKeeperControllerStore failedOver = open())
        {
            assertEquals(2, failedOver.size());
            assertEquals(state(0, 2, 1, 1, 1), failedOver.get(0));
            assertEquals(state(1, 0, 1, 0, 1, 2, 0), failedOver.get(1));
        }
    }

    @Test
    void aWriteFromAStaleViewLosesAndTheStoreRereadsThePartition() throws Exception
    {
        try (ZooKeeperControllerStore store = open())
        {
            store.create(state(0, 0, 0, 0, 0, 1, 2));
            // Someone else moves the partition on in ZooKeeper (an operator's edit, say): version 1 there.
            final CuratorFramework client = zk.anonymousClient();
            client.setData().withVersion(0).forPath(ROOT + "/partitions/0",
                io.tidemark.replication.protocol.PartitionStateCodec.encode(state(0, 1, 1, 1, 1, 2)));
            assertNull(store.compareAndSet(0, state(0, 1, 2, 1, 2)), "a write from the stale view loses");
            assertEquals(state(0, 1, 1, 1, 1, 2), store.get(0), "and the store then sees what is there");
            assertNotNull(store.compareAndSet(1, state(0, 2, 2, 2, 2)), "deciding again from it succeeds");
        }
    }

    @Test
    void producerIdBlocksNeverRepeatAcrossControllerFailovers()
    {
        final Set<Long> firsts = new HashSet<>();
        for (int controller = 0; controller < 4; controller++)
        {
            try (ZooKeeperControllerStore store = open())
            {
                for (int i = 0; i < 25; i++)
                {
                    assertTrue(firsts.add(store.reserveProducerIds(1000)), "a block handed out twice");
                }
            }
        }
        final Set<Long> expected = new HashSet<>();
        for (long i = 0; i < 100; i++)
        {
            expected.add(i * 1000);
        }
        assertEquals(expected, firsts, "contiguous blocks of 1000 from 0");
    }

    @Test
    void damagedStateIsQuarantinedTheRestServedAndARepairMakesItReadableAgain() throws Exception
    {
        try (ZooKeeperControllerStore store = open())
        {
            store.create(state(0, 0, 0, 0, 0, 1, 2));
            store.create(state(1, 0, 1, 0, 1, 2, 0));
            store.create(state(2, 0, 2, 0, 2, 0, 1));
            store.create(state(3, 0, 0, 0, 0, 1, 2));
        }
        final CuratorFramework client = zk.anonymousClient();
        client.setData().forPath(ROOT + "/partitions/1", new byte[] {1, 2, 3}); // garbage
        // a well-formed state naming a host this (three-host) cluster cannot have
        final byte[] outside = io.tidemark.replication.protocol.PartitionStateCodec.encode(new PartitionState(2,
            new TopicPartition("orders", 2), new int[] {0, 1, 9}, new int[] {9}, new int[0], new int[0], 9, 0,
            1));
        client.setData().forPath(ROOT + "/partitions/2", outside);
        client.delete().forPath(ROOT + "/partitions/3");
        client.create().forPath(ROOT + "/partitions/4", io.tidemark.replication.protocol.PartitionStateCodec.encode(
            state(4, 0, 0, 0, 0, 1, 2)));
        client.create().forPath(ROOT + "/partitions/junk");

        final long epochBefore;
        try (ZooKeeperControllerStore store = new ZooKeeperControllerStore(client, ROOT, false, 3))
        {
            epochBefore = store.controllerEpoch();
            assertEquals(5, store.size(), "ids stay dense: the damaged ones count");
            assertEquals(java.util.List.of(0, 4), store.all().stream().map(PartitionState::partitionId).toList());
            assertNull(store.get(1));
            assertEquals(java.util.Set.of(ZooKeeperControllerStore.STRAY, 1, 2, 3), store.damaged().keySet(),
                store.damaged().toString());
            assertTrue(store.damaged().get(1).startsWith("unreadable"), store.damaged().get(1));
            assertTrue(store.damaged().get(2).contains("host 9"), store.damaged().get(2));
            assertTrue(store.damaged().get(3).startsWith("missing"), store.damaged().get(3));
            assertTrue(store.damaged().get(ZooKeeperControllerStore.STRAY).contains("junk"));
            assertNull(store.compareAndSet(0, state(1, 1, 1, 1, 1, 2)), "a damaged partition is not written");
            assertNotNull(store.create(state(5, 0, 0, 0, 0, 1, 2)), "the next id is after the damaged ones");
            assertNotNull(store.checkDamaged(1));
        }

        // the repair from a host's view: the znode's next version, the view's epoch plus one
        final ZooKeeperSettings settings = new ZooKeeperSettings().connectString(zk.connectString())
            .rootPath(ROOT).user("u").password("p").conclude();
        final PartitionState view = state(1, 7, 1, 4, 1, 2, 0);
        assertThrows(IllegalStateException.class, () -> ZooKeeperPartitionRepair.repair(settings,
            state(0, 0, 0, 0, 0, 1, 2), false, false), "a readable state is not overwritten");
        final ZooKeeperPartitionRepair.Result dry = ZooKeeperPartitionRepair.repair(settings, view, false, true);
        assertFalse(dry.applied());
        assertNotNull(dry.damage());
        final ZooKeeperPartitionRepair.Result repaired = ZooKeeperPartitionRepair.repair(settings, view, false,
            false);
        assertEquals(5, repaired.written().leaderEpoch());
        assertEquals(2, repaired.written().version(), "the znode's next version (one set, now the repair)");
        assertEquals(0, ZooKeeperPartitionRepair.repair(settings, state(3, 3, 0, 2, 0, 1, 2), false, false)
            .written().version(), "a missing partition is created at version 0");
        try (CuratorFramework credentialed = settings.connectClient(); // the repair's znode has the digest ACL
            ZooKeeperControllerStore store = new ZooKeeperControllerStore(credentialed, ROOT, false, 3))
        {
            assertNull(store.checkDamaged(1));
            assertEquals(repaired.written(), store.get(1));
            assertNotNull(store.get(3));
            assertEquals(epochBefore + 1, store.controllerEpoch());
        }
    }

    @Test
    void aStoreThatCannotLoadFailsWithoutBumpingTheControllerEpoch() throws Exception
    {
        try (ZooKeeperControllerStore store = open())
        {
            store.create(state(0, 0, 0, 0, 0, 1, 2));
        }
        final CuratorFramework client = zk.anonymousClient();
        final byte[] epochBefore = client.getData().forPath(ROOT + "/controller-epoch");
        // nobody may list the partitions any more
        client.setACL().withACL(java.util.List.of(new org.apache.zookeeper.data.ACL(
            org.apache.zookeeper.ZooDefs.Perms.ADMIN, new org.apache.zookeeper.data.Id("world", "anyone"))))
            .forPath(ROOT + "/partitions");
        for (int attempt = 0; attempt < 3; attempt++)
        {
            assertThrows(ZooKeeperStoreException.class, () -> new ZooKeeperControllerStore(client, ROOT, false));
        }
        assertArrayEquals(epochBefore, client.getData().forPath(ROOT + "/controller-epoch"),
            "no epoch bump for a store that could not load");
    }

    @Test
    void unreachableZooKeeperIsATypedErrorWithinTheTimeout() throws Exception
    {
        final int port;
        try (ServerSocket socket = new ServerSocket(0))
        {
            port = socket.getLocalPort();
        }
        final long start = System.nanoTime();
        final ZooKeeperStoreException ex = assertThrows(ZooKeeperStoreException.class,
            () -> ZooKeeperControllerStore.connect("127.0.0.1:" + port, ROOT, 2_000, 1_000));
        assertTrue(ex.getMessage().contains("cannot reach ZooKeeper"), ex.getMessage());
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "gave up within the timeout");
    }

    @Test
    void badRootPathIsRefused()
    {
        assertThrows(IllegalArgumentException.class,
            () -> ZooKeeperControllerStore.connect(zk.connectString(), "tidemark", 10_000, 10_000));
        assertThrows(IllegalArgumentException.class,
            () -> ZooKeeperControllerStore.connect(zk.connectString(), "/tidemark/", 10_000, 10_000));
    }

    @Test
    void aNewerControllerFencesTheOlderOneEvenWhereItsViewIsCurrent()
    {
        try (ZooKeeperControllerStore old = open())
        {
            old.create(state(0, 0, 0, 0, 0, 1, 2));
            final long firstReservation = old.reserveProducerIds(1000);
            try (ZooKeeperControllerStore newer = open())
            {
                assertTrue(newer.controllerEpoch() > old.controllerEpoch());
                // The old controller's view of partition 0 is current (version 0), but it has been superseded.
                assertThrows(ControllerFencedException.class, () -> old.compareAndSet(0, state(0, 1, 1, 1, 1, 2)));
                assertThrows(ControllerFencedException.class, () -> old.create(state(1, 0, 1, 0, 1, 2, 0)));
                assertThrows(ControllerFencedException.class, () -> old.reserveProducerIds(1000));
                // Nothing of the refused writes reached ZooKeeper; the newer controller decides.
                assertEquals(state(0, 0, 0, 0, 0, 1, 2), newer.get(0));
                assertEquals(1, newer.size());
                assertNotNull(newer.compareAndSet(0, state(0, 1, 2, 1, 2, 0)));
                assertEquals(firstReservation + 1000, newer.reserveProducerIds(1000));
            }
        }
        try (ZooKeeperControllerStore third = open())
        {
            assertEquals(state(0, 1, 2, 1, 2, 0), third.get(0));
        }
    }

    @Test
    void changesWrittenTogetherAreAllStoredOrNoneAndAStaleOneMakesTheStoreReadThemAgain() throws Exception
    {
        try (ZooKeeperControllerStore store = open())
        {
            for (int id = 0; id < 3; id++)
            {
                store.create(state(id, 0, id, 0, 0, 1, 2));
            }
            final List<PartitionState> first = store.compareAndSetAll(List.of(state(0, 1, 1, 1, 1, 2),
                state(1, 1, 1, 0, 1, 2), state(2, 5, 2, 0, 2)));
            assertEquals(Arrays.asList(state(0, 1, 1, 1, 1, 2), state(1, 1, 1, 0, 1, 2), null), first,
                "an entry whose version is not the next is not written, as compareAndSet; the others are");
            // Someone else moves partition 1 on in ZooKeeper: version 2 there.
            final CuratorFramework client = zk.anonymousClient();
            client.setData().withVersion(1).forPath(ROOT + "/partitions/1",
                io.tidemark.replication.protocol.PartitionStateCodec.encode(state(1, 2, 2, 1, 2)));
            final List<PartitionState> stale = store.compareAndSetAll(List.of(state(0, 2, 2, 2, 2),
                state(1, 2, 2, 1, 2, 0), state(2, 1, 2, 0, 2, 0)));
            assertEquals(Arrays.asList(null, null, null), stale, "one stale version: nothing is written");
            try (ZooKeeperControllerStore reader = open())
            {
                assertEquals(state(0, 1, 1, 1, 1, 2), reader.get(0), "nothing half-written");
                assertEquals(state(1, 2, 2, 1, 2), reader.get(1));
                assertEquals(state(2, 0, 2, 0, 0, 1, 2), reader.get(2));
            }
            // the reader's store claimed a newer epoch: this one is fenced now, and writes nothing
            assertThrows(ControllerFencedException.class, () -> store.compareAndSetAll(List.of(
                state(0, 2, 2, 2, 2))));
            assertEquals(state(1, 2, 2, 1, 2), store.get(1), "the stale partition was read again");
        }
        try (ZooKeeperControllerStore store = open())
        {
            assertEquals(state(0, 1, 1, 1, 1, 2), store.get(0), "the fenced batch wrote nothing");
            assertEquals(List.of(state(0, 2, 2, 2, 2), state(2, 1, 2, 0, 2, 0)), store.compareAndSetAll(List.of(
                state(0, 2, 2, 2, 2), state(2, 1, 2, 0, 2, 0))), "deciding again from what is stored succeeds");
            assertThrows(IllegalArgumentException.class, () -> store.compareAndSetAll(List.of(
                state(0, 3, 0, 3, 0), state(0, 3, 2, 3, 2))), "one partition twice in one transaction");
            assertEquals(state(0, 2, 2, 2, 2), store.get(0));
        }
    }

    @Test
    void moreChangesThanOneTransactionTakesAreWrittenInSeveral()
    {
        final int count = ZooKeeperControllerStore.MAX_CHANGES_PER_TRANSACTION + 3;
        try (ZooKeeperControllerStore store = open())
        {
            final List<PartitionState> nexts = new java.util.ArrayList<>();
            for (int id = 0; id < count; id++)
            {
                store.create(state(id, 0, 0, 0, 0, 1, 2));
                nexts.add(state(id, 1, 1, 1, 1, 2));
            }
            assertEquals(nexts, store.compareAndSetAll(nexts));
        }
        try (ZooKeeperControllerStore store = open())
        {
            for (int id = 0; id < count; id++)
            {
                assertEquals(state(id, 1, 1, 1, 1, 2), store.get(id));
            }
        }
    }
}
