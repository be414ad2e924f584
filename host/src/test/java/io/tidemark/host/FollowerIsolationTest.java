package io.tidemark.host;

import io.tidemark.replication.protocol.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower process is cut off the cluster's network (its fetches and control messages dropped at the transport;
 * its ZooKeeper session kept) while a producer writes: it must leave the ISR within 1.5 x
 * {@code replica.lag.time.max.ms}, writes go on with the two others (min.insync.replicas=2), and after healing it
 * catches up and rejoins.
 */
class FollowerIsolationTest
{
    private static final String TOPIC = "telemetry";
    private static final long LAG_MS = 1_000;

    @TempDir
    Path tmp;

    @Test
    void anIsolatedFollowerLeavesTheIsrInTimeAndRejoinsAfterHealing() throws Exception
    {
        final Properties replication = new Properties();
        replication.setProperty("min.insync.replicas", "2");
        replication.setProperty("replica.lag.time.max.ms", Long.toString(LAG_MS));
        // longer than the lag time: the follower must leave by the leader's lag check, not by a lost session
        replication.setProperty("host.session.timeout.ms", "5000");
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, replication))
        {
            cluster.start();
            cluster.createTopicInSync(TOPIC, 1);

            final Map<Long, String> acked;
            try (BackgroundWriter writer = new BackgroundWriter(cluster.client(), TOPIC, 0, "isolation-test-producer"))
            {
                acked = writer.acked;
                assertTrue(ProcessCluster.await(() -> acked.size() > 100, 30_000));

                final PartitionState before = cluster.state(TOPIC, 0);
                final int follower = pickFollower(cluster, before);
                final long isolatedAt = System.nanoTime();
                cluster.host(follower).command("isolate");
                assertTrue(ProcessCluster.await(() -> !cluster.state(TOPIC, 0).inIsr(follower), 60_000),
                    "the isolated follower left the ISR: " + cluster.state(TOPIC, 0));
                final long leftAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - isolatedAt);
                System.out.println("isolated follower (host " + follower + ") left the ISR " + leftAfterMs +
                    " ms after isolation (replica.lag.time.max.ms=" + LAG_MS + ")");
                assertTrue(leftAfterMs <= LAG_MS * 3 / 2, "left the ISR after " + leftAfterMs + " ms, more than " +
                    "1.5 x replica.lag.time.max.ms");

                final int ackedWhileIsolated = acked.size();
                assertTrue(ProcessCluster.await(() -> acked.size() > ackedWhileIsolated + 100, 30_000),
                    "acks=all writes go on with two in-sync replicas");

                final long healedAt = System.nanoTime();
                cluster.host(follower).command("heal");
                assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).inIsr(follower), 30_000),
                    "the healed follower rejoins the ISR: " + cluster.state(TOPIC, 0));
                System.out.println("healed follower rejoined the ISR after " +
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healedAt) + " ms");
                writer.stop();
                assertEquals(0, writer.failed.get(), "sends that failed");
            }
            assertEquals(3, cluster.state(TOPIC, 0).isr().length);
            ClusterChecker.stopAllAndCheckReplicas(cluster, TOPIC, 0, acked);
        }
    }

    /** A follower that does not run the controller (cutting the controller off would test something else). */
    private static int pickFollower(final ProcessCluster cluster, final PartitionState state) throws Exception
    {
        for (final int host : state.isr())
        {
            if (host != state.leader())
            {
                cluster.host(host).commands.println("status");
                final String status = cluster.host(host).awaitLine("status", 60_000);
                if (status.contains("controller=false"))
                {
                    return host;
                }
            }
        }
        throw new AssertionError("no follower outside the controller in " + state);
    }
}
