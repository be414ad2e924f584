package io.tidemark.zookeeper;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host is alive while it holds its ZooKeeper session. With heartbeat expiry set far away (60 s), a killed leader
 * whose session is still open keeps its leadership; the moment its session ends, the controller moves leadership,
 * and acknowledged records are all there.
 */
class ZooKeeperHostLivenessTest
{
    private static final String ROOT = "/tidemark/liveness-test";

    @TempDir
    Path tmp;

    private static CuratorFramework session(final TestingServer server)
    {
        final CuratorFramework client = CuratorFrameworkFactory.newClient(server.getConnectString(),
            new RetryOneTime(100));
        client.start();
        return client;
    }

    @Test
    void aHostIsDeadWhenItsZooKeeperSessionEnds() throws Exception
    {
        final List<CuratorFramework> clients = new ArrayList<>();
        try (TestingServer server = new TestingServer(true))
        {
            final CuratorFramework controllerSession = session(server);
            clients.add(controllerSession);
            final CuratorFramework[] hostSessions = new CuratorFramework[3];
            for (int host = 0; host < 3; host++)
            {
                hostSessions[host] = session(server);
                clients.add(hostSessions[host]);
                ZooKeeperHostLiveness.register(hostSessions[host], ROOT, host, 10_000);
            }
            try (ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(controllerSession, ROOT))
            {
                for (int host = 0; host < 3; host++)
                {
                    final int h = host;
                    assertTrue(waitFor(() -> liveness.isRegistered(h), 10_000), "host " + h + " seen");
                }
                final ReplicationContext ctx = new ReplicationContext()
                    .minInsyncReplicas(2)
                    .hostSessionTimeoutMs(60_000)
                    .hostLiveness(liveness)
                    .threadingMode(ReplicationContext.ThreadingMode.SHARED)
                    .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1024 * 1024));
                final TopicPartition tp = new TopicPartition("orders", 0);
                final AckedRecords acked = new AckedRecords(tp);
                try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 3, ctx);
                    Producer producer = new Producer(cluster, new ProducerContext()))
                {
                    cluster.createTopic("orders", 1, 3);
                    assertTrue(cluster.awaitLeaders("orders", 30_000));
                    acked.send(producer, "a", 100);
                    final int oldLeader = cluster.leaderOf(tp);
                    cluster.killHost(oldLeader); // its threads stop; its ZooKeeper session is still open
                    Thread.sleep(1_500);
                    assertEquals(oldLeader, cluster.leaderOf(tp),
                        "with its session open and heartbeats given 60 s, the host still counts as alive");

                    final long endedAt = System.nanoTime();
                    hostSessions[oldLeader].close(); // the session ends: its ephemeral node goes
                    assertTrue(waitFor(() -> cluster.leaderOf(tp) != oldLeader && cluster.leaderOf(tp) >= 0, 10_000),
                        "leadership moves once the session ends");
                    final long movedMs = (System.nanoTime() - endedAt) / 1_000_000;
                    System.out.println("leadership moved " + movedMs + " ms after the leader's ZooKeeper session ended");
                    acked.send(producer, "b", 100);

                    // The host comes back: a new session registers it, then it rejoins the ISR.
                    hostSessions[oldLeader] = session(server);
                    clients.add(hostSessions[oldLeader]);
                    ZooKeeperHostLiveness.register(hostSessions[oldLeader], ROOT, oldLeader, 10_000);
                    assertTrue(waitFor(() -> liveness.isRegistered(oldLeader), 10_000));
                    cluster.restartHost(oldLeader);
                    assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 3, 30_000),
                        "the host rejoins the ISR: " + cluster.state(tp));

                    assertEquals(200, acked.size());
                    acked.assertReadBack(cluster, tp);
                }
            }
            finally
            {
                for (final CuratorFramework client : clients)
                {
                    client.close();
                }
            }
        }
    }

    private static boolean waitFor(final java.util.function.BooleanSupplier condition, final long timeoutMs)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }
}
