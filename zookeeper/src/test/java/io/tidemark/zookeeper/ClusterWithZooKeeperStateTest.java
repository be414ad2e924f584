package io.tidemark.zookeeper;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A replicated topic whose controller keeps partition state in ZooKeeper: the leader's kill is decided and stored
 * there (a compare-and-set on the partition's znode), a controller failover reads it back from ZooKeeper, and every
 * acknowledged record is read back at its offset.
 */
class ClusterWithZooKeeperStateTest
{
    private static final String ROOT = "/tidemark/cluster-test";

    @TempDir
    Path tmp;

    @Test
    void leaderChangesAreStoredInZooKeeperAndSurviveControllerFailover() throws Exception
    {
        try (TestingServer zooKeeper = new TestingServer(true))
        {
            final ReplicationContext ctx = new ReplicationContext()
                .minInsyncReplicas(2)
                .threadingMode(ReplicationContext.ThreadingMode.SHARED)
                .controllerStoreFactory((dir) ->
                    ZooKeeperControllerStore.connect(zooKeeper.getConnectString(), ROOT, 10_000, 10_000))
                .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1024 * 1024));
            final TopicPartition tp = new TopicPartition("orders", 0);
            final AckedRecords acked = new AckedRecords(tp);
            final int oldLeader;
            try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 3, ctx);
                Producer producer = new Producer(cluster, new ProducerContext()))
            {
                cluster.createTopic("orders", 1, 3);
                assertTrue(cluster.awaitLeaders("orders", 30_000));
                acked.send(producer, "a", 200);
                oldLeader = cluster.leaderOf(tp);
                cluster.killHost(oldLeader);
                acked.send(producer, "b", 200);
                final int newLeader = cluster.leaderOf(tp);
                assertNotEquals(oldLeader, newLeader);
                try (ZooKeeperControllerStore view = ZooKeeperControllerStore.connect(zooKeeper.getConnectString(),
                    ROOT, 10_000, 10_000))
                {
                    final PartitionState stored = view.get(0);
                    assertEquals(newLeader, stored.leader(), "the election is in ZooKeeper: " + stored);
                    assertTrue(stored.version() > 0 && stored.leaderEpoch() > 0, stored.toString());
                }

                cluster.restartController(); // a new controller, a new store: state read back from ZooKeeper
                assertEquals(newLeader, cluster.leaderOf(tp));
                cluster.restartHost(oldLeader);
                assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 3, 30_000),
                    "the restarted host rejoins the ISR through the new controller: " + cluster.state(tp));
                acked.send(producer, "c", 100);

                assertEquals(500, acked.size());
                acked.assertReadBack(cluster, tp);
            }
        }
    }
}
