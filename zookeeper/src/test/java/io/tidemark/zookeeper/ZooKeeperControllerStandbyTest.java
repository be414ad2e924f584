package io.tidemark.zookeeper;

import io.tidemark.replication.TopicPartition;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ZooKeeperControllerStandbyTest
{
    private static final String ROOT = "/tidemark/standby";

    @RegisterExtension
    final TestZooKeeper zk = new TestZooKeeper();

    private static PartitionState state(final int id, final int version, final int leader, final int... isr)
    {
        return new PartitionState(id, new TopicPartition("orders", id), new int[] {0, 1, 2}, isr, new int[0],
            new int[0], leader, 1, version);
    }

    private static ZooKeeperControllerStandby.View awaitView(final ZooKeeperControllerStandby standby,
        final Predicate<ZooKeeperControllerStandby.View> ready) throws InterruptedException
    {
        while (true)
        {
            final ZooKeeperControllerStandby.View view = standby.view();
            if (null != view && ready.test(view))
            {
                return view;
            }
            Thread.sleep(5);
        }
    }

    private static boolean partitionAt(final ZooKeeperControllerStandby.View view, final int id, final int version)
    {
        final var node = view.children().get(Integer.toString(id));
        return null != node && node.getStat().getVersion() == version;
    }

    private ZooKeeperControllerStore first(final CuratorFramework client)
    {
        final ZooKeeperControllerStore store = new ZooKeeperControllerStore(client, ROOT, false, 3);
        store.create(state(0, 0, 0, 0, 1, 2));
        store.create(state(1, 0, 1, 1, 2, 0));
        return store;
    }

    @Test
    void aCurrentCopyIsTakenOverWithOneClaimAndFencesTheOlderController() throws Exception
    {
        final CuratorFramework client = zk.anonymousClient();
        try (ZooKeeperControllerStandby standby = zk.closeAfterTest(new ZooKeeperControllerStandby(client, ROOT));
             ZooKeeperControllerStore older = first(client))
        {
            older.compareAndSet(0, state(0, 1, 1, 1, 2));
            awaitView(standby, (v) -> partitionAt(v, 0, 1) && partitionAt(v, 1, 0) && v.epoch() == 1);
            try (ZooKeeperControllerStore successor = new ZooKeeperControllerStore(client, ROOT, false, 3, standby))
            {
                assertTrue(successor.openedFromStandby());
                assertEquals(2, successor.controllerEpoch());
                assertEquals(List.of(state(0, 1, 1, 1, 2), state(1, 0, 1, 1, 2, 0)), successor.all());
                assertThrows(ControllerFencedException.class, () -> older.compareAndSet(0, state(1, 1, 2, 2, 0)));
                assertEquals(state(1, 1, 2, 2), successor.compareAndSet(0, state(1, 1, 2, 2)));
            }
        }
    }

    @Test
    void aCopyBehindAPartitionWriteIsNotClaimedAndTheStoreReadsZooKeeper() throws Exception
    {
        final CuratorFramework client = zk.anonymousClient();
        try (ZooKeeperControllerStandby standby = zk.closeAfterTest(new ZooKeeperControllerStandby(client, ROOT));
             ZooKeeperControllerStore older = first(client))
        {
            final ZooKeeperControllerStandby.View stale = awaitView(standby, (v) -> partitionAt(v, 1, 0));
            older.compareAndSet(0, state(1, 1, 2, 2, 0));
            try (ZooKeeperControllerStore successor = new ZooKeeperControllerStore(client, ROOT, false, 3, stale))
            {
                assertFalse(successor.openedFromStandby(), "the claim checked version 0 of partition 1");
                assertEquals(2, successor.controllerEpoch(), "the failed claim moved nothing");
                assertEquals(state(1, 1, 2, 2, 0), successor.get(1));
            }
        }
    }

    @Test
    void aPartitionCreatedOrCreatedAgainAfterTheCopyIsReadAfterTheClaim() throws Exception
    {
        final CuratorFramework client = zk.anonymousClient();
        try (ZooKeeperControllerStandby standby = zk.closeAfterTest(new ZooKeeperControllerStandby(client, ROOT));
             ZooKeeperControllerStore older = first(client))
        {
            final ZooKeeperControllerStandby.View stale = awaitView(standby, (v) -> partitionAt(v, 1, 0));
            older.create(state(2, 0, 2, 2, 0, 1));
            try (ZooKeeperControllerStore successor = new ZooKeeperControllerStore(client, ROOT, false, 3, stale))
            {
                assertTrue(successor.openedFromStandby());
                assertEquals(3, successor.size());
                assertEquals(state(2, 0, 2, 2, 0, 1), successor.get(2), "listed after the claim, then read");
            }

            // deleted and created again: back at version 0, which the claim's check cannot tell from the copy's
            final ZooKeeperControllerStandby.View copy = awaitView(standby,
                (v) -> partitionAt(v, 2, 0) && v.epoch() == 2);
            client.delete().forPath(ROOT + "/partitions/0");
            client.create().forPath(ROOT + "/partitions/0", PartitionStateCodec.encode(state(0, 0, 2, 2)));
            try (ZooKeeperControllerStore successor = new ZooKeeperControllerStore(client, ROOT, false, 3, copy))
            {
                assertTrue(successor.openedFromStandby());
                assertEquals(state(0, 0, 2, 2), successor.get(0), "the partitions node's pzxid moved: read again");
            }
        }
    }

    @Test
    void forgedContentInTheCopyIsQuarantinedAndADamagedEpochMakesNoView() throws Exception
    {
        final CuratorFramework client = zk.anonymousClient();
        try (ZooKeeperControllerStandby standby = zk.closeAfterTest(new ZooKeeperControllerStandby(client, ROOT));
             ZooKeeperControllerStore older = first(client))
        {
            assertEquals(1, older.controllerEpoch());
            client.setData().forPath(ROOT + "/partitions/0", new byte[] {1, 2, 3});
            final byte[] trailing = java.util.Arrays.copyOf(PartitionStateCodec.encode(state(1, 0, 1, 1)), 400);
            client.setData().forPath(ROOT + "/partitions/1", trailing);
            awaitView(standby, (v) -> partitionAt(v, 0, 1) && partitionAt(v, 1, 1));
            try (ZooKeeperControllerStore successor = new ZooKeeperControllerStore(client, ROOT, false, 3, standby))
            {
                assertTrue(successor.openedFromStandby());
                assertEquals(java.util.Set.of(0, 1), successor.damaged().keySet(), successor.damaged().toString());
                assertNull(successor.get(0));
                assertTrue(successor.damaged().get(1).contains("bytes after the state"), successor.damaged().get(1));
            }

            client.setData().forPath(ROOT + "/" + ZooKeeperControllerStore.CONTROLLER_EPOCH, new byte[] {1, 2, 3});
            while (null != standby.view())
            {
                Thread.sleep(5);
            }
            assertNull(standby.view(), "an epoch znode of 3 bytes");
            assertThrows(IllegalStateException.class,
                () -> new ZooKeeperControllerStore(client, ROOT, false, 3, standby), "the store's read names it");
        }
    }
}
