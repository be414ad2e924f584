package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

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
            final TidemarkClient client = cluster.client();
            client.createTopic(TOPIC, 1, 3, 30_000);
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 30_000));

            final Map<Long, String> acked = new ConcurrentHashMap<>();
            final AtomicBoolean producing = new AtomicBoolean(true);
            try (Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL)
                .enableIdempotence(true).requestTimeoutMs(2_000).deliveryTimeoutMs(60_000)))
            {
                final Thread writer = new Thread(() ->
                {
                    final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                    for (int i = 0; producing.get(); i++)
                    {
                        final String value = "r-" + i;
                        acked.put(producer.send(record.value(value)), value);
                        try
                        {
                            Thread.sleep(2);
                        }
                        catch (final InterruptedException ex)
                        {
                            return;
                        }
                    }
                });
                writer.start();
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
                producing.set(false);
                writer.join(30_000);
            }
            final long highWatermark = ClusterChecker.highWatermark(client, TOPIC, 0);
            final PartitionState last = cluster.state(TOPIC, 0);
            assertEquals(3, last.isr().length);
            for (int id = 0; id < 3; id++)
            {
                cluster.stop(id);
            }
            ClusterChecker.checkReplicas(cluster, TOPIC, 0, last, highWatermark, acked);
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
