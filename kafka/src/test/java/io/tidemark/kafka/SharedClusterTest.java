package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.agrona.CloseHelper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

/**
 * The base of the test classes whose tests share one in-process cluster, started before the first test and closed
 * after the last: three hosts (min.insync.replicas=2) behind one Kafka listener per host on an ephemeral port.
 * Sessions and lag limits are of seconds: on a busy 2-core machine the 600 ms defaults move leaders without a fault.
 * Groups form at once (no initial rebalance delay).
 * <p>
 * A subclass that needs more before its tests (a topic) does it in a {@code @BeforeAll} method of another name, which
 * JUnit runs after this one.
 */
abstract class SharedClusterTest
{
    @TempDir
    static Path root;
    static ReplicationCluster cluster;
    static InProcessKafka kafka;

    @BeforeAll
    static void startCluster()
    {
        cluster = ReplicationCluster.start(root, 3, new ReplicationContext().minInsyncReplicas(2)
            .hostSessionTimeoutMs(3_000).replicaLagTimeMaxMs(3_000));
        kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")
            .groupInitialRebalanceDelayMs(0));
    }

    @AfterAll
    static void stopCluster()
    {
        CloseHelper.closeAll(kafka, cluster);
    }
}
