package io.tidemark.zookeeper;

import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group offsets in znodes: a commit reads back as written, in the layout earlier versions wrote (so their commits stay
 * readable), concurrent commits end in one of the values written, and a damaged znode is a typed error.
 */
class ZooKeeperGroupOffsetsTest
{
    private static final String ROOT = "/tidemark/offsets-test";
    private static final TopicPartition EVENTS_0 = new TopicPartition("events", 0);

    @RegisterExtension
    final TwoClients zk = new TwoClients(ROOT);

    @Test
    void aCommitReadsBackInTheLayoutEarlierVersionsWrote() throws Exception
    {
        final ZooKeeperGroupOffsets offsets = new ZooKeeperGroupOffsets(zk.first, ROOT);
        assertNull(offsets.read("billing", EVENTS_0), "nothing committed yet");

        offsets.commit("billing", EVENTS_0, 42, -1);
        assertEquals(new ZooKeeperGroupOffsets.Committed(42, -1), offsets.read("billing", EVENTS_0));
        final String path = ROOT + "/consumer-offsets/billing/events-0";
        assertArrayEquals("42".getBytes(StandardCharsets.US_ASCII), zk.first.getData().forPath(path));

        offsets.commit("billing", EVENTS_0, 43, 7);
        assertEquals(new ZooKeeperGroupOffsets.Committed(43, 7), offsets.read("billing", EVENTS_0));
        assertArrayEquals("43\n7".getBytes(StandardCharsets.US_ASCII), zk.first.getData().forPath(path));
        assertEquals(new ZooKeeperGroupOffsets.Committed(43, 7),
            new ZooKeeperGroupOffsets(zk.second, ROOT).read("billing", EVENTS_0), "another client reads it");

        assertNull(offsets.read("audit", EVENTS_0), "groups are separate");
        assertNull(offsets.read("billing", new TopicPartition("events", 1)), "partitions are separate");

        // what the Kafka gateway of earlier versions wrote for a commit without an epoch
        zk.first.setData().forPath(path, "44\n-1".getBytes(StandardCharsets.US_ASCII));
        assertEquals(new ZooKeeperGroupOffsets.Committed(44, -1), offsets.read("billing", EVENTS_0));
    }

    @Test
    void badArgumentsAreRefusedBeforeAnyWrite() throws Exception
    {
        final ZooKeeperGroupOffsets offsets = new ZooKeeperGroupOffsets(zk.first, ROOT);
        assertThrows(IllegalArgumentException.class, () -> offsets.commit("bill/ing", EVENTS_0, 1, -1));
        assertThrows(IllegalArgumentException.class, () -> offsets.commit("", EVENTS_0, 1, -1));
        assertThrows(IllegalArgumentException.class, () -> offsets.commit("billing", EVENTS_0, -1, -1));
        assertThrows(IllegalArgumentException.class, () -> offsets.commit("billing", EVENTS_0, 1, -2));
        assertThrows(IllegalArgumentException.class, () -> offsets.read("..\u0000", EVENTS_0));
        assertNull(zk.first.checkExists().forPath(ROOT + "/consumer-offsets"), "nothing written");
    }

    @Test
    void concurrentCommitsByTwoClientsEndInOneOfTheTwoValues() throws Exception
    {
        final ExecutorService pool = Executors.newFixedThreadPool(2);
        try
        {
            for (int round = 0; round < 20; round++)
            {
                final TopicPartition partition = new TopicPartition("race", round);
                final CyclicBarrier start = new CyclicBarrier(2);
                final long a = 1000L + round;
                final long b = 2000L + round;
                final Future<?> byFirst = pool.submit(() ->
                {
                    start.await();
                    new ZooKeeperGroupOffsets(zk.first, ROOT).commit("racers", partition, a, -1);
                    return null;
                });
                final Future<?> bySecond = pool.submit(() ->
                {
                    start.await();
                    new ZooKeeperGroupOffsets(zk.second, ROOT).commit("racers", partition, b, 3);
                    return null;
                });
                byFirst.get(30, TimeUnit.SECONDS);
                bySecond.get(30, TimeUnit.SECONDS);
                final ZooKeeperGroupOffsets.Committed committed =
                    new ZooKeeperGroupOffsets(zk.first, ROOT).read("racers", partition);
                assertTrue(new ZooKeeperGroupOffsets.Committed(a, -1).equals(committed) ||
                    new ZooKeeperGroupOffsets.Committed(b, 3).equals(committed), "round " + round + ": " + committed);
            }
        }
        finally
        {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void aDamagedZnodeIsATypedErrorAndACommitRepairsIt() throws Exception
    {
        final ZooKeeperGroupOffsets offsets = new ZooKeeperGroupOffsets(zk.first, ROOT);
        final String path = offsets.path("billing", EVENTS_0);
        final String[] damaged = {
            "", "x", "12x", "-5", "1\n2\n3", "1\nepoch", "99999999999999999999", "1\n99999999999", "1\n-2", "0x10",
            "\u0661\u0662", // Arabic-Indic digits: \d would take them in some engines, never here
        };
        zk.first.create().creatingParentsIfNeeded().forPath(path, new byte[0]);
        for (final String value : damaged)
        {
            zk.first.setData().forPath(path, value.getBytes(StandardCharsets.UTF_8));
            final DamagedZnodeException ex =
                assertThrows(DamagedZnodeException.class, () -> offsets.read("billing", EVENTS_0), value);
            assertTrue(ex.getMessage().contains(path), ex.getMessage());
        }

        final byte[] oversized = new byte[1024 * 1024 - 1024];
        java.util.Arrays.fill(oversized, (byte)'7');
        zk.first.setData().forPath(path, oversized);
        assertThrows(DamagedZnodeException.class, () -> offsets.read("billing", EVENTS_0), "oversized");

        offsets.commit("billing", EVENTS_0, 5, -1);
        assertEquals(new ZooKeeperGroupOffsets.Committed(5, -1), offsets.read("billing", EVENTS_0));
    }

    @Test
    void upsertCreatesParentsThenOverwritesAndCreateIfAbsentKeepsWhatIsThere() throws Exception
    {
        final String path = ROOT + "/a/b/c";
        ZNodes.upsert(zk.first, path, new byte[]{1});
        ZNodes.upsert(zk.second, path, new byte[]{2});
        assertArrayEquals(new byte[]{2}, zk.first.getData().forPath(path));

        assertFalse(ZNodes.createIfAbsent(zk.first, path, new byte[]{3}));
        assertArrayEquals(new byte[]{2}, zk.first.getData().forPath(path));
        assertTrue(ZNodes.createIfAbsent(zk.first, ROOT + "/a/d", new byte[]{4}));
        assertArrayEquals(new byte[]{4}, zk.second.getData().forPath(ROOT + "/a/d"));
    }
}
