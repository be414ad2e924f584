package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.client.remote.protocol.ClusterZNodes;
import io.tidemark.client.ProducerErrorCode;
import io.tidemark.client.ProducerException;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.PartitionStateCodec;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperPartitionRepair;
import io.tidemark.zookeeper.ZooKeeperSettings;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A damaged partition state in ZooKeeper: the controller serves the rest without bumping its epoch again and again,
 * a client refuses the damaged partition's topic (and only it), and a repair from a host's view brings it back; a
 * controller that cannot load at all backs off and steps down from the election.
 */
class ControllerQuarantineTest
{
    private static final String ROOT = "/tidemark/quarantine";

    @TempDir
    Path tmp;

    private static ZooKeeperSettings settings(final TestingServer server)
    {
        return new ZooKeeperSettings().connectString(server.getConnectString()).rootPath(ROOT).user("tidemark")
            .password("pw").sessionTimeoutMs(10_000).connectionTimeoutMs(10_000).conclude();
    }

    private static PartitionState state(final int id, final String topic, final int partition)
    {
        return new PartitionState(id, new TopicPartition(topic, partition), new int[]{ 0, 1, 2 },
            new int[]{ 0, 1, 2 }, new int[0], new int[0], 0, 0, 0);
    }

    private static long epoch(final CuratorFramework client) throws Exception
    {
        return java.nio.ByteBuffer.wrap(client.getData().forPath(ROOT + "/" +
            ZooKeeperControllerStore.CONTROLLER_EPOCH)).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
    }

    @Test
    void aDamagedPartitionIsQuarantinedItsTopicRefusedAndARepairBringsItBack() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework admin = settings(server).connectClient())
        {
            // a cluster with topics "orders" (ids 0, 1) and "audit" (id 2), whose partition 1 is then damaged
            TidemarkHost.claimClusterId(admin, ROOT, "quarantine");
            try (ZooKeeperControllerStore store = new ZooKeeperControllerStore(admin, ROOT, false, 3))
            {
                store.create(state(0, "orders", 0));
                store.create(state(1, "orders", 1));
                store.create(state(2, "audit", 0));
            }
            admin.create().creatingParentsIfNeeded().forPath(ROOT + "/" + ClusterZNodes.TOPICS + "/orders",
                "0:2".getBytes(StandardCharsets.UTF_8));
            admin.setData().forPath(ROOT + "/partitions/1", new byte[]{ 7, 7, 7 });
            final long epochBefore = epoch(admin);

            final ReplicationContext ctx = new ReplicationContext();
            final ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(admin, ROOT);
            final ControlChannel channel = new ControlChannel(3, (h) -> h == 0, new ControlChannel.ControlLink()
            {
                @Override
                public int controllerHost()
                {
                    return 0;
                }

                @Override
                public boolean send(final int host, final org.agrona.DirectBuffer buffer, final int offset,
                    final int length)
                {
                    return true;
                }
            });
            final AtomicInteger errors = new AtomicInteger();
            try (ControllerRole role = new ControllerRole(0, admin, ROOT, ctx.hostLiveness(liveness).conclude(),
                (h) -> false, channel, (t) -> errors.incrementAndGet(), 1))
            {
                role.start();
                assertTrue(ProcessCluster.await(role::isController, 30_000), "elected");
                assertEquals(List.of(0, 2), java.util.Arrays.stream(role.controller().partitions())
                    .map(PartitionState::partitionId).toList(), "the rest is served");
                Thread.sleep(1_500);
                assertEquals(epochBefore + 1, epoch(admin), "one epoch bump, not one per attempt");

                // a client refuses the topic with the damaged partition, and only it
                final Properties p = new Properties();
                p.setProperty("cluster.id", "quarantine");
                p.setProperty("zookeeper.connect", server.getConnectString());
                p.setProperty("zookeeper.root", ROOT);
                p.setProperty("zookeeper.user", "tidemark");
                p.setProperty("zookeeper.password", "pw");
                p.setProperty("cluster.insecure", "true");
                try (TidemarkClient client = TidemarkClient.connect(ClientConfig.fromProperties(p)))
                {
                    assertTrue(ProcessCluster.await(() -> client.damagedPartitions().containsKey(1), 10_000));
                    final ProducerException refused = assertThrows(ProducerException.class,
                        () -> client.partitions("orders"));
                    assertEquals(ProducerErrorCode.DAMAGED_METADATA, refused.code(), refused.getMessage());
                    assertEquals(1, client.partitions("audit").size(), "another topic is served");
                    assertEquals(1, client.knownPartitions("orders").size());

                    // the repair, from a host's view of partition 1
                    final PartitionState view = new PartitionState(1, new TopicPartition("orders", 1),
                        new int[]{ 0, 1, 2 }, new int[]{ 1, 2 }, new int[0], new int[0], 1, 3, 5);
                    final ZooKeeperPartitionRepair.Result result = ZooKeeperPartitionRepair.repair(settings(server),
                        view, false, false);
                    assertEquals(4, result.written().leaderEpoch());
                    assertTrue(ProcessCluster.await(() -> null != role.controller() &&
                        null != role.controller().partition(1), 30_000), "served again after the repair");
                    assertTrue(ProcessCluster.await(() -> !client.damagedPartitions().containsKey(1), 10_000));
                    assertEquals(2, client.partitions("orders").size());
                }
                assertEquals(epochBefore + 2, epoch(admin), "one more bump: the restart that serves the repair");
            }
            assertEquals(0, errors.get(), "nothing reached the error handler");
            liveness.close();
        }
    }

    @Test
    void aControllerThatCannotLoadBacksOffWithoutBumpingItsEpochAndStepsDown() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework admin = settings(server).connectClient())
        {
            TidemarkHost.claimClusterId(admin, ROOT, "quarantine");
            try (ZooKeeperControllerStore store = new ZooKeeperControllerStore(admin, ROOT, false, 3))
            {
                store.create(state(0, "orders", 0));
            }
            final long epochBefore = epoch(admin);
            // this host may no longer list the partitions: it cannot load at all
            admin.setACL().withACL(List.of(new org.apache.zookeeper.data.ACL(org.apache.zookeeper.ZooDefs.Perms.ADMIN,
                settings(server).acl().get(0).getId()))).forPath(ROOT + "/partitions");
            final ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(admin, ROOT);
            final ControlChannel channel = new ControlChannel(3);
            try (ControllerRole role = new ControllerRole(0, admin, ROOT, new ReplicationContext()
                .hostLiveness(liveness).conclude(), (h) -> false, channel, (t) -> { }, 1))
            {
                role.start();
                // three attempts (100, 200 ms apart), then it leaves the election for the back-off
                assertTrue(ProcessCluster.await(() -> 0 == childrenOf(admin, ROOT + "/controller-election"), 30_000),
                    "stepped down from the election");
                assertFalse(role.isController());
                assertEquals(epochBefore, epoch(admin), "no epoch bump for a controller that could not load");
                assertNull(role.controller());
            }
            liveness.close();
        }
    }

    @Test
    void aTopicCutShortByAControllerChangeIsCompletedByTheNextController() throws Exception
    {
        try (TestingServer server = new TestingServer(true);
            CuratorFramework admin = settings(server).connectClient())
        {
            // the previous controller recorded topic "cut" (ids 0 to 2), created its partition 0 and died: the
            // request is still there
            TidemarkHost.claimClusterId(admin, ROOT, "quarantine");
            admin.create().creatingParentsIfNeeded().forPath(ROOT + "/" + ClusterZNodes.CREATE_TOPIC + "/cut",
                "3:1".getBytes(StandardCharsets.UTF_8));
            admin.create().creatingParentsIfNeeded().forPath(ROOT + "/" + ClusterZNodes.TOPICS + "/cut",
                "0:3".getBytes(StandardCharsets.UTF_8));
            try (ZooKeeperControllerStore store = new ZooKeeperControllerStore(admin, ROOT, false, 3))
            {
                store.create(new PartitionState(0, new TopicPartition("cut", 0), new int[]{ 0 }, new int[]{ 0 },
                    new int[0], new int[0], 0, 0, 0));
            }
            ZooKeeperHostLiveness.register(admin, ROOT, 0, 10_000);
            final ZooKeeperHostLiveness liveness = new ZooKeeperHostLiveness(admin, ROOT);
            try (ControllerRole role = new ControllerRole(0, admin, ROOT, new ReplicationContext()
                .hostLiveness(liveness).conclude(), (h) -> false, new ControlChannel(3), (t) -> { }, 1))
            {
                role.start();
                assertTrue(ProcessCluster.await(() -> null != role.controller() &&
                    role.controller().partitions().length == 3, 30_000), "the rest of the topic created");
                final PartitionState[] states = role.controller().partitions();
                for (int p = 0; p < 3; p++)
                {
                    assertEquals(p, states[p].partitionId());
                    assertEquals(new TopicPartition("cut", p), states[p].topicPartition());
                }
                assertTrue(ProcessCluster.await(() ->
                    childrenOf(admin, ROOT + "/" + ClusterZNodes.CREATE_TOPIC) == 0, 30_000), "the request is done");
            }
            liveness.close();
        }
    }

    private static int childrenOf(final CuratorFramework client, final String path)
    {
        try
        {
            return client.getChildren().forPath(path).size();
        }
        catch (final Exception ex)
        {
            return -1;
        }
    }
}
