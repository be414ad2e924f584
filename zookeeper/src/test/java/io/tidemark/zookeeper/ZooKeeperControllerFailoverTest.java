package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three hosts, each with its own ZooKeeper session (all alive: the sessions never expire here), depose the controller
 * by a majority of votes: one vote is not enough; two are; the deposed controller's store is fenced by the depose
 * itself, before any new controller opens one; the deposed candidate sees itself deposed while its latch still says
 * leader; the next candidate is elected at once; a replayed vote against the deposed node cannot depose the new
 * controller; a second depose of the same node changes nothing. A restarted host clears its previous incarnation's
 * candidacy.
 */
class ZooKeeperControllerFailoverTest
{
    private static final String ROOT = "/tidemark/failover-test";

    @Test
    void aMajorityDeposesTheControllerAndFencesItsStore() throws Exception
    {
        try (TestingServer server = new TestingServer(true))
        {
            final List<CuratorFramework> clients = new ArrayList<>();
            final List<ZooKeeperControllerElection> candidates = new ArrayList<>();
            try
            {
                for (int host = 0; host < 3; host++)
                {
                    final CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
                        new RetryOneTime(100));
                    client.start();
                    clients.add(client);
                    candidates.add(new ZooKeeperControllerElection(client, ROOT, host, null));
                }
                final int first = awaitOneController(candidates);
                final ZooKeeperControllerStore firstStore =
                    new ZooKeeperControllerStore(clients.get(first), ROOT, false);
                final long firstEpoch = firstStore.controllerEpoch();
                firstStore.reserveProducerIds(1); // it can write while it is the controller
                final int a = (first + 1) % 3;
                final int b = (first + 2) % 3;
                final ZooKeeperControllerFailover voterA = new ZooKeeperControllerFailover(clients.get(a), ROOT, a, 3,
                    60_000);
                final ZooKeeperControllerFailover voterB = new ZooKeeperControllerFailover(clients.get(b), ROOT, b, 3,
                    60_000);
                final ZooKeeperControllerFailover.Incumbent incumbent = voterA.incumbent();
                assertNotNull(incumbent);
                assertEquals(first, incumbent.hostId());

                voterA.suspect(incumbent);
                // a vote under a name that is no configured host id (written with the cluster's credentials) counts
                // for nothing: only the votes of hosts 0 to 2 are read
                clients.get(a).create().forPath(ROOT + "/" + ZooKeeperControllerFailover.VOTES + "/7",
                    (incumbent.node() + " " + first).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                assertEquals(1, voterA.freshVotesAgainst(incumbent));
                assertFalse(voterA.tryDepose(incumbent), "one vote of three is a minority");
                assertTrue(candidates.get(first).isController());
                firstStore.reserveProducerIds(1); // not fenced by a minority

                voterB.suspect(incumbent);
                assertEquals(2, voterB.freshVotesAgainst(incumbent));
                assertTrue(voterB.tryDepose(incumbent), "two votes of three depose");
                assertFalse(voterA.tryDepose(incumbent), "already deposed: the second depose changes nothing");

                // fenced at once by the depose's epoch bump, before a new controller opens its store
                assertThrows(ControllerFencedException.class, () -> firstStore.reserveProducerIds(1));
                assertTrue(waitFor(() -> candidates.get(first).deposed()), "the deposed candidate notices");
                assertFalse(candidates.get(first).isController(), "a deposed candidate is not the controller");
                assertEquals(first, ZooKeeperControllerFailover.deposedBefore(clients.get(a), ROOT, firstEpoch + 2),
                    "recorded for the next controller, whose claim follows the depose's bump");

                // the next candidate in line is elected at once, without the deposed one's session ending
                final List<ZooKeeperControllerElection> others = List.of(candidates.get(a), candidates.get(b));
                final int second = awaitOneController(others);
                assertNotEquals(first, second);
                final ZooKeeperControllerStore secondStore =
                    new ZooKeeperControllerStore(clients.get(second), ROOT, false);
                assertEquals(firstEpoch + 2, secondStore.controllerEpoch());
                secondStore.reserveProducerIds(1);

                // a replayed vote names the deposed node: it counts nothing against the new controller
                final ZooKeeperControllerFailover.Incumbent now = voterA.incumbent();
                assertEquals(second, now.hostId());
                voterA.suspect(incumbent);
                voterB.suspect(incumbent);
                assertEquals(0, voterA.freshVotesAgainst(now));
                assertFalse(voterA.tryDepose(now));
                assertTrue(waitFor(() -> others.stream().filter(ZooKeeperControllerElection::isController).count() ==
                    1));
                secondStore.reserveProducerIds(1);
                voterA.withdraw();
                voterB.withdraw();
                secondStore.close();
                firstStore.close();
            }
            finally
            {
                candidates.forEach(ZooKeeperControllerElection::close);
                clients.forEach(CuratorFramework::close);
            }
        }
    }

    @Test
    void aRestartedHostClearsItsPreviousIncarnationsCandidacy() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework dead = CuratorFrameworkFactory.newClient(server.getConnectString(), 60_000, 10_000,
                new RetryOneTime(100));
            CuratorFramework other = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100));
            CuratorFramework restarted = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100)))
        {
            dead.start();
            other.start();
            restarted.start();
            final ZooKeeperControllerElection killed = new ZooKeeperControllerElection(dead, ROOT, 0, null);
            assertTrue(killed.awaitLeadership(10_000));
            final ZooKeeperControllerStore store = new ZooKeeperControllerStore(dead, ROOT, false);
            final ZooKeeperControllerElection waiting = new ZooKeeperControllerElection(other, ROOT, 1, null);
            try
            {
                // host 0 starts again with a new session while the killed incarnation's session lives on
                final ZooKeeperControllerFailover failover = new ZooKeeperControllerFailover(restarted, ROOT, 0, 2,
                    1_000);
                assertEquals(1, failover.deleteStaleCandidacies(restarted.getZookeeperClient().getZooKeeper()
                    .getSessionId()));
                assertTrue(waiting.awaitLeadership(10_000), "the next candidate is elected at once");
                assertThrows(ControllerFencedException.class, () -> store.reserveProducerIds(1),
                    "the previous incarnation, were it alive, is fenced");
                assertEquals(0, failover.deleteStaleCandidacies(restarted.getZookeeperClient().getZooKeeper()
                    .getSessionId()), "nothing left to clear");
            }
            finally
            {
                store.close();
                waiting.close();
                killed.close();
            }
        }
    }

    @Test
    void aRestartedHostThatWasNotTheControllerLeavesTheEpochAlone() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework controllerClient = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100));
            CuratorFramework dead = CuratorFrameworkFactory.newClient(server.getConnectString(), 60_000, 10_000,
                new RetryOneTime(100));
            CuratorFramework restarted = CuratorFrameworkFactory.newClient(server.getConnectString(),
                new RetryOneTime(100)))
        {
            controllerClient.start();
            dead.start();
            restarted.start();
            final ZooKeeperControllerElection controller = new ZooKeeperControllerElection(controllerClient, ROOT, 1,
                null);
            assertTrue(controller.awaitLeadership(10_000));
            final ZooKeeperControllerStore store = new ZooKeeperControllerStore(controllerClient, ROOT, false);
            final ZooKeeperControllerElection killed = new ZooKeeperControllerElection(dead, ROOT, 0, null);
            try
            {
                assertTrue(waitFor(() -> killed.controllerHostId() == 1));
                // the killed incarnation's candidacy is created in the background: wait until it is there
                assertTrue(waitFor(() -> candidacies(controllerClient) == 2), "both candidacies created");
                final ZooKeeperControllerFailover failover = new ZooKeeperControllerFailover(restarted, ROOT, 0, 3,
                    1_000);
                assertEquals(1, failover.deleteStaleCandidacies(restarted.getZookeeperClient().getZooKeeper()
                    .getSessionId()));
                store.reserveProducerIds(1); // the live controller is not fenced by a candidate's clean-up
                assertTrue(controller.isController());
            }
            finally
            {
                store.close();
                killed.close();
                controller.close();
            }
        }
    }

    private static int awaitOneController(final List<ZooKeeperControllerElection> candidates) throws Exception
    {
        final int[] found = {-1};
        assertTrue(waitFor(() ->
        {
            int count = 0;
            for (final ZooKeeperControllerElection c : candidates)
            {
                if (c.isController())
                {
                    count++;
                    found[0] = c.hostId();
                }
            }
            assertTrue(count <= 1, "two controllers at once");
            return count == 1;
        }), "one controller elected");
        return found[0];
    }

    private static int candidacies(final CuratorFramework client)
    {
        try
        {
            return client.getChildren().forPath(ROOT + "/" + ZooKeeperControllerElection.ELECTION).size();
        }
        catch (final Exception ex)
        {
            return -1;
        }
    }

    private static boolean waitFor(final BooleanSupplier condition) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
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
