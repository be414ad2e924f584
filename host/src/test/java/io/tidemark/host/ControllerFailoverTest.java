package io.tidemark.host;

import io.tidemark.client.remote.RemoteReader;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import io.tidemark.zookeeper.ZooKeeperSettings;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The controller's host dies or pauses while it also leads a partition, with the ZooKeeper session of a host
 * process's default (18 s): the other hosts, not hearing the controller, depose it by majority and the next one takes
 * over while the dead host's session, and with it its ephemeral znodes, still lives. Acknowledged records survive,
 * exactly once. A controller paused with SIGSTOP and resumed after the failover finds itself deposed and steps down:
 * one controller, and the cluster goes on taking records.
 */
class ControllerFailoverTest
{
    private static final String TOPIC = "orders";
    private static final String ROOT = "/tidemark/" + ProcessCluster.CLUSTER;

    @TempDir
    Path tmp;

    private static Properties settings()
    {
        final Properties p = new Properties();
        p.setProperty("min.insync.replicas", "2");
        p.setProperty("replica.lag.time.max.ms", "1000");
        return p;
    }

    /** A ZooKeeper tick of 2 s, so that the server grants a host's default session of 18 s. */
    private ProcessCluster cluster() throws Exception
    {
        return new ProcessCluster(tmp, 3, settings(), 2_000);
    }

    @Test
    void killingTheControllerThatLeadsMovesBothWithoutWaitingForItsSession() throws Exception
    {
        try (ProcessCluster cluster = cluster())
        {
            cluster.start();
            final int controller = startTopic(cluster);
            final int partition = cluster.partitionLedBy(TOPIC, (leader) -> leader == controller);
            try (CuratorFramework zk = zooKeeper(cluster))
            {
                final Map<Long, String> acked = new ConcurrentHashMap<>();
                final List<Long> ackTimes = new ArrayList<>();
                final long killedAtNs;
                final int[] newController = {-1};
                try (Producer producer = producer(cluster))
                {
                    final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(partition);
                    send(producer, record, acked, ackTimes, "before", 200);
                    killedAtNs = System.nanoTime();
                    cluster.kill(controller);
                    send(producer, record, acked, ackTimes, "after", 200);
                    assertTrue(ProcessCluster.await(() ->
                    {
                        newController[0] = controllerAmong(cluster, controller);
                        return newController[0] >= 0;
                    }, 60_000), "another host took over as controller");
                }
                // the dead host's session has not expired: its registration is still in ZooKeeper, so the takeover
                // did not wait for it
                assertNotNull(zk.checkExists().forPath(ROOT + "/" + ZooKeeperHostLiveness.HOSTS + "/" + controller),
                    "the killed controller's ZooKeeper session still lives (18 s): the takeover did not wait for it");
                final PartitionState after = cluster.state(TOPIC, partition);
                assertNotEquals(controller, after.leader(), "leadership moved: " + after);
                assertEquals(400, acked.size(), "every acknowledgement names its own offset");
                System.out.println("controller failover: acknowledgements paused " +
                    TimeUnit.NANOSECONDS.toMillis(pause(ackTimes, killedAtNs)) + " ms after SIGKILL of the controller " +
                    "and leader (host " + controller + "); new controller host " + newController[0] + ", new leader " +
                    after.leader());
                assertEveryAckedRecordReadable(cluster, partition, acked);
            }
        }
    }

    @Test
    void aPausedControllerResumesDeposedAndStepsDown() throws Exception
    {
        try (ProcessCluster cluster = cluster())
        {
            cluster.start();
            final int controller = startTopic(cluster);
            final int partition = cluster.partitionLedBy(TOPIC, (leader) -> leader == controller);
            final Map<Long, String> acked = new ConcurrentHashMap<>();
            final List<Long> ackTimes = new ArrayList<>();
            try (Producer producer = producer(cluster))
            {
                final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(partition);
                send(producer, record, acked, ackTimes, "before", 100);
                signal(cluster, controller, "STOP");
                final int[] newController = {-1};
                try
                {
                    send(producer, record, acked, ackTimes, "paused", 100);
                    assertTrue(ProcessCluster.await(() ->
                    {
                        newController[0] = controllerAmong(cluster, controller);
                        return newController[0] >= 0;
                    }, 60_000), "another host took over while the controller was paused");
                }
                finally
                {
                    signal(cluster, controller, "CONT");
                }
                // resumed: it finds itself deposed (its store was fenced by the depose) and steps down
                assertTrue(ProcessCluster.await(() -> cluster.host(controller).output().contains("was deposed") ||
                    cluster.host(controller).output().contains("a newer controller took over") ||
                    cluster.host(controller).output().contains("no longer the controller"), 60_000),
                    "the resumed controller noticed it was replaced:\n" + cluster.host(controller).output());
                assertTrue(ProcessCluster.await(() -> !isController(cluster, controller), 60_000),
                    "the resumed controller is not the controller any more");
                assertEquals(newController[0], controllerAmong(cluster, controller), "one controller");
                send(producer, record, acked, ackTimes, "resumed", 100);
            }
            assertEquals(300, acked.size(), "every acknowledgement names its own offset");
            System.out.println("paused controller (host " + controller + "), after it resumed: " +
                cluster.host(controller).output().lines().filter((l) -> l.contains("deposed") ||
                l.contains("controller")).toList());
            assertEveryAckedRecordReadable(cluster, partition, acked);
        }
    }

    /** Create a topic of three partitions, one led by each host, all in sync. @return the controller's host. */
    private static int startTopic(final ProcessCluster cluster) throws Exception
    {
        assertEquals(3, cluster.client().createTopic(TOPIC, 3, 3, 30_000).size());
        for (int p = 0; p < 3; p++)
        {
            final int partition = p;
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, partition).isr().length == 3, 60_000),
                "all three replicas in sync: " + cluster.state(TOPIC, partition));
        }
        final int[] controller = {-1};
        assertTrue(ProcessCluster.await(() ->
        {
            controller[0] = controllerAmong(cluster, -1);
            return controller[0] >= 0;
        }, 30_000), "a controller");
        return controller[0];
    }

    private static Producer producer(final ProcessCluster cluster)
    {
        return new Producer(cluster.client(), new ProducerContext()
            .acks(Acks.ALL)
            .enableIdempotence(true)
            .requestTimeoutMs(2_000)
            .deliveryTimeoutMs(120_000));
    }

    private static void send(final Producer producer, final ProducerRecord record, final Map<Long, String> acked,
        final List<Long> ackTimes, final String phase, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final String value = phase + "-" + i;
            assertEquals(null, acked.put(producer.send(record.value(value)), value), "an offset acknowledged twice");
            ackTimes.add(System.nanoTime());
        }
    }

    private static long pause(final List<Long> ackTimes, final long faultAtNs)
    {
        long pauseNs = 0;
        for (int i = 1; i < ackTimes.size(); i++)
        {
            if (ackTimes.get(i) > faultAtNs)
            {
                pauseNs = Math.max(pauseNs, ackTimes.get(i) - Math.max(ackTimes.get(i - 1), faultAtNs));
            }
        }
        return pauseNs;
    }

    private static void assertEveryAckedRecordReadable(final ProcessCluster cluster, final int partition,
        final Map<Long, String> acked) throws Exception
    {
        final Map<Long, String> read = new HashMap<>();
        try (RemoteReader reader = cluster.client().openReader(TOPIC, partition))
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (read.size() < acked.size() && System.nanoTime() < deadline)
            {
                reader.poll((r) -> read.put(r.offset(), r.valueAsString()), 1_000);
            }
        }
        ClusterChecker.assertAckedPresentOnce(acked, read, "read from the new leader");
    }

    /** @return the one live host other than {@code except} that says it runs the controller, or -1. */
    private static int controllerAmong(final ProcessCluster cluster, final int except)
    {
        int found = -1;
        for (int id = 0; id < 3; id++)
        {
            if (id != except && cluster.host(id).process.isAlive() && isController(cluster, id))
            {
                assertEquals(-1, found, "two hosts say they run the controller");
                found = id;
            }
        }
        return found;
    }

    private static boolean isController(final ProcessCluster cluster, final int id)
    {
        try
        {
            cluster.host(id).commands.println("status");
            return cluster.host(id).awaitLine("status", 30_000).contains("controller=true");
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new AssertionError(ex);
        }
    }

    private static void signal(final ProcessCluster cluster, final int id, final String signal) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal,
            Long.toString(cluster.host(id).process.pid())).inheritIO().start();
        assertEquals(0, kill.waitFor(), "kill -" + signal);
    }

    private static CuratorFramework zooKeeper(final ProcessCluster cluster)
    {
        return new ZooKeeperSettings().connectString(cluster.connectString()).rootPath(ROOT)
            .user(ProcessCluster.USER).password(ProcessCluster.PASSWORD).sessionTimeoutMs(18_000)
            .connectionTimeoutMs(10_000).conclude().connectClient();
    }
}
