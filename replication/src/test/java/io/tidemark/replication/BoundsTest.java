package io.tidemark.replication;

import io.tidemark.store.LogContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounds a cluster keeps: partitions per topic and replicas per host are checked by the controller before
 * anything is created; the counters file holds every replica a host may have; the pretouch budget is shared by a
 * host's replicas; timeouts have upper bounds.
 */
class BoundsTest
{
    @TempDir
    Path tmp;

    @Test
    void topicsBeyondTheBoundsAreRefusedBeforeAnythingIsCreated()
    {
        final ReplicationContext ctx = new ReplicationContext().topicPartitionsMax(4).hostReplicasMax(5)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1 << 20).pretouchBytes(0));
        try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 3, ctx))
        {
            final IllegalArgumentException tooMany = assertThrows(IllegalArgumentException.class,
                () -> cluster.createTopic("wide", 5, 1));
            assertTrue(tooMany.getMessage().contains(ReplicationContext.TOPIC_PARTITIONS_MAX), tooMany.getMessage());
            assertEquals(0, cluster.partitions("wide").size(), "nothing created");
            cluster.createTopic("a", 3, 3); // 3 replicas on each host
            cluster.createTopic("b", 2, 3); // 5 on each: the bound
            final IllegalArgumentException full = assertThrows(IllegalArgumentException.class,
                () -> cluster.createTopic("c", 1, 1));
            assertTrue(full.getMessage().contains(ReplicationContext.HOST_REPLICAS_MAX), full.getMessage());
            assertEquals(0, cluster.partitions("c").size(), "nothing created");
            assertTrue(cluster.awaitLeaders("b", 30_000));
        }
    }

    @Test
    void aHostHoldsMoreReplicasThanTheOldFixedCountersBufferTookAndSharesItsPretouchBudget()
    {
        // 530 replicas x (4 log + 4 replica counters) = 4,240: more than the 4,096 the counters file used to have
        final int partitions = 530;
        final long pretouch = 64 * 1024;
        final ReplicationContext ctx = new ReplicationContext().hostReplicasMax(partitions)
            .hostPretouchBudgetBytes(3 * pretouch).hostSessionTimeoutMs(30_000).produceRingBytes(64 * 1024)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1 << 20).pretouchBytes(pretouch));
        assertTrue(ReplicaHost.countersCapacity(ctx, 1) >= partitions * 10);
        try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 1, ctx))
        {
            cluster.createTopic("many", partitions, 1);
            assertTrue(cluster.awaitLeaders("many", 120_000), "every partition has a leader");
            long pretouching = 0;
            for (int p = 0; p < partitions; p++)
            {
                pretouching += cluster.replica(0, new TopicPartition("many", p)).pretouchBytes > 0 ? 1 : 0;
            }
            assertEquals(3, pretouching, "the host pretouches three replicas' segments: its budget");
        }
    }

    @Test
    void timeoutsHaveUpperBounds()
    {
        for (final Map.Entry<String, String> bad : Map.of(
            ReplicationContext.REQUEST_TIMEOUT_MS, "2147483647",
            ReplicationContext.REPLICA_LAG_TIME_MAX_MS, "3600001",
            ReplicationContext.HOST_SESSION_TIMEOUT_MS, "600001",
            ReplicationContext.REPLICA_FETCH_WAIT_MAX_MS, "60001",
            ReplicationContext.TOPIC_PARTITIONS_MAX, "0").entrySet())
        {
            final io.tidemark.store.ConfigException ex = assertThrows(io.tidemark.store.ConfigException.class,
                () -> ReplicationContext.fromProperties(Map.of(bad.getKey(), bad.getValue())).conclude());
            assertEquals(bad.getKey(), ex.key());
        }
    }
}
