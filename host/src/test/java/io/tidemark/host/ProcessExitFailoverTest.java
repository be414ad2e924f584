package io.tidemark.host;

import io.tidemark.replication.protocol.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three host processes with a host's default settings (a 6 s heartbeat session, an 18 s ZooKeeper session, a 1 s
 * controller timeout): a SIGKILLed host's exit is seen through its liveness connections ({@link ProcessExitWatch}),
 * so its leaderships move, and a killed controller is deposed, on that evidence, not on a session's expiry or the
 * controller's silence. Each step waits for its outcome with a generous bound; what the test checks is which evidence
 * the cluster acted on (the hosts' log lines), never how fast.
 */
class ProcessExitFailoverTest
{
    private static final String TOPIC = "exits";

    @TempDir
    Path tmp;

    @Test
    void aKilledLeaderAndAKilledControllerAreSeenByTheirProcessExit() throws Exception
    {
        final Properties defaults = new Properties();
        defaults.putAll(HostConfig.PROCESS_DEFAULTS); // instead of the fixture's 600 ms session
        defaults.setProperty("min.insync.replicas", "2");
        // a tick above 250 ms: the hosts' ZooKeeper sessions are a host's default 18 s
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, defaults, 1_000))
        {
            cluster.start();
            cluster.createTopicInSync(TOPIC, 3);
            final int controller = cluster.controllerHost();
            final int plain = cluster.partitionLedBy(TOPIC, (leader) -> leader != controller);
            final int killed = cluster.state(TOPIC, plain).leader();

            cluster.kill(killed);
            assertTrue(ProcessCluster.await(() -> newLeader(cluster, plain, killed), 60_000),
                "a new leader: " + cluster.state(TOPIC, plain));
            // the election is in ZooKeeper before every log line that led to it is written out: wait for them
            assertTrue(ProcessCluster.await(() -> cluster.host(controller).output().contains(
                "host " + controller + ": the process of host " + killed), 30_000),
                "the controller's host saw the process exit:\n" + cluster.host(controller).output());
            assertTrue(ProcessCluster.await(() -> cluster.host(controller).output().contains(
                "host " + killed + " reported down by its liveness source"), 30_000),
                "and acted on it:\n" + cluster.host(controller).output());
            final String controllerLog = cluster.host(controller).output();
            assertFalse(controllerLog.contains("host " + killed + " session expired"),
                "not on the heartbeat session:\n" + controllerLog);

            cluster.restart(killed);
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, plain).isr().length == 3, 60_000),
                "the restarted host rejoins: " + cluster.state(TOPIC, plain));

            final int controllerPartition = cluster.partitionLedBy(TOPIC, (leader) -> leader == controller);
            cluster.kill(controller);
            assertTrue(ProcessCluster.await(() -> newLeader(cluster, controllerPartition, controller), 60_000),
                "a new leader: " + cluster.state(TOPIC, controllerPartition));
            assertTrue(ProcessCluster.await(() -> deposedOnExit(cluster, controller), 30_000), "a host deposed the killed controller on its exit:\n" +
                cluster.host((controller + 1) % 3).output() + "\n" + cluster.host((controller + 2) % 3).output());
        }
    }

    private static boolean deposedOnExit(final ProcessCluster cluster, final int controller)
    {
        for (int id = 0; id < 3; id++)
        {
            if (id != controller && cluster.host(id).output().contains("deposed the controller on host " +
                controller + ": its process exited"))
            {
                return true;
            }
        }
        return false;
    }

    private static boolean newLeader(final ProcessCluster cluster, final int partition, final int old)
    {
        final PartitionState state = cluster.state(TOPIC, partition);
        return state.leader() >= 0 && state.leader() != old;
    }
}
