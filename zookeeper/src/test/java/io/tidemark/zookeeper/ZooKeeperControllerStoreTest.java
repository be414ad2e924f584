package io.tidemark.zookeeper;

import io.tidemark.replication.PartitionState;
import io.tidemark.replication.TopicPartition;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ZooKeeperControllerStoreTest
{
    private static final String ROOT = "/tidemark/test";

    private TestingServer server;

    @BeforeEach
    void startZooKeeper() throws Exception
    {
        server = new TestingServer(true);
    }

    @AfterEach
    void stopZooKeeper() throws Exception
    {
        server.close();
    }

    private ZooKeeperControllerStore open()
    {
        return ZooKeeperControllerStore.connect(server.getConnectString(), ROOT, 10_000, 10_000);
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
            try (CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100)))
            {
                client.start();
                client.setData().withVersion(0).forPath(ROOT + "/partitions/0",
                    io.tidemark.replication.PartitionStateCodec.encode(state(0, 1, 1, 1, 1, 2)));
            }
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
    void damagedStateInZooKeeperIsATypedErrorNamingTheZnode() throws Exception
    {
        try (ZooKeeperControllerStore store = open())
        {
            store.create(state(0, 0, 0, 0, 0, 1, 2));
        }
        try (CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
            new RetryOneTime(100)))
        {
            client.start();
            client.setData().forPath(ROOT + "/partitions/0", new byte[] {1, 2, 3});
        }
        final IllegalStateException ex = assertThrows(IllegalStateException.class, this::open);
        assertTrue(ex.getMessage().contains(ROOT + "/partitions/0"), ex.getMessage());
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
            () -> ZooKeeperControllerStore.connect(server.getConnectString(), "tidemark", 10_000, 10_000));
        assertThrows(IllegalArgumentException.class,
            () -> ZooKeeperControllerStore.connect(server.getConnectString(), "/tidemark/", 10_000, 10_000));
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
}
