package io.tidemark.zookeeper;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three hosts, each with its own ZooKeeper session, elect one controller. When the controller is deposed another is
 * elected and opens the store, after which the deposed one's writes are refused; when a controller's session ends,
 * the next one is elected and continues from the last decision.
 */
class ZooKeeperControllerElectionTest
{
    private static final String ROOT = "/tidemark/election-test";

    private static PartitionState state(final int version, final int leader, final int epoch, final int... isr)
    {
        return new PartitionState(0, new TopicPartition("orders", 0), new int[] {0, 1, 2}, isr, new int[0],
            new int[0], leader, epoch, version);
    }

    private static int awaitOneController(final List<ZooKeeperControllerElection> candidates) throws Exception
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline)
        {
            final List<Integer> controllers = new ArrayList<>();
            for (final ZooKeeperControllerElection c : candidates)
            {
                if (c.isController())
                {
                    controllers.add(c.hostId());
                }
            }
            if (controllers.size() == 1)
            {
                return controllers.get(0);
            }
            assertTrue(controllers.size() <= 1, "two controllers at once: " + controllers);
            Thread.sleep(10);
        }
        throw new AssertionError("no controller elected within 30 s");
    }

    @Test
    void oneControllerAtATimeAndADeposedOneCannotWrite() throws Exception
    {
        try (TestingServer server = new TestingServer(true))
        {
            final List<CuratorFramework> sessions = new ArrayList<>();
            final List<ZooKeeperControllerElection> candidates = new ArrayList<>();
            try
            {
                for (int host = 0; host < 3; host++)
                {
                    final CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
                        new RetryOneTime(100));
                    client.start();
                    sessions.add(client);
                    candidates.add(new ZooKeeperControllerElection(client, ROOT, host, null));
                }
                final int first = awaitOneController(candidates);
                for (final ZooKeeperControllerElection c : candidates)
                {
                    assertTrue(waitFor(() -> c.controllerHostId() == first), "every host sees " + first);
                }
                final ZooKeeperControllerStore firstStore =
                    new ZooKeeperControllerStore(sessions.get(first), ROOT, false);
                firstStore.create(state(0, 0, 0, 0, 1, 2));

                // The controller is deposed (here it leaves the election) but, paused, has not noticed: its session
                // and its store are still there.
                candidates.get(first).close();
                final List<ZooKeeperControllerElection> rest = new ArrayList<>(candidates);
                rest.remove(first);
                final int second = awaitOneController(rest);
                assertNotEquals(first, second);
                final ZooKeeperControllerStore secondStore =
                    new ZooKeeperControllerStore(sessions.get(second), ROOT, false);
                assertEquals(state(0, 0, 0, 0, 1, 2), secondStore.get(0));
                assertNotNull(secondStore.compareAndSet(0, state(1, second, 1, second)));
                assertThrows(ControllerFencedException.class, () -> firstStore.compareAndSet(0, state(1, 0, 1, 0)),
                    "the deposed controller's write is refused");
                assertThrows(ControllerFencedException.class, () -> firstStore.reserveProducerIds(1000));

                // The new controller's process dies: its session ends, and with it its candidacy.
                sessions.get(second).close();
                final List<ZooKeeperControllerElection> last = new ArrayList<>(rest);
                last.removeIf((c) -> c.hostId() == second);
                final int third = awaitOneController(last);
                final ZooKeeperControllerStore thirdStore =
                    new ZooKeeperControllerStore(sessions.get(third), ROOT, false);
                assertEquals(state(1, second, 1, second), thirdStore.get(0), "the last decision survives");
                assertNotNull(thirdStore.compareAndSet(1, state(2, third, 2, third)));
            }
            finally
            {
                for (final ZooKeeperControllerElection c : candidates)
                {
                    c.close();
                }
                for (final CuratorFramework client : sessions)
                {
                    client.close();
                }
            }
        }
    }

    private static boolean waitFor(final java.util.function.BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                return false;
            }
            Thread.sleep(10);
        }
        return true;
    }
}
