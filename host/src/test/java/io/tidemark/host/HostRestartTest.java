package io.tidemark.host;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host whose process was killed (SIGKILL) and is started again at once does not wait for its predecessor's
 * ZooKeeper session to expire: the registration that session left names this host's endpoint, which the new process
 * can bind (so no live process of this host holds it), and is removed. The session timeout here is ZooKeeper's
 * largest for the test server's tick (5 s), longer than a restart takes on an idle machine.
 */
class HostRestartTest
{
    @TempDir
    Path tmp;

    @Test
    void aKilledHostRestartedAtOnceRemovesItsPredecessorsRegistration() throws Exception
    {
        final Properties extra = new Properties();
        extra.setProperty("zookeeper.session.timeout.ms", "5000");
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, extra))
        {
            cluster.start();
            cluster.client().createTopic("restart", 1, 3, 60_000);
            final int victim = 1;
            final long before = cluster.client().incarnationOf(victim);
            final long killedAt = System.nanoTime();
            cluster.kill(victim);
            final ProcessCluster.HostProcess restarted = cluster.launch(victim);
            restarted.awaitLine("ready", 60_000);
            final long readyMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
            final boolean removed = restarted.output().contains("removed the registration its killed predecessor");
            System.out.println("host restart: ready " + readyMs + " ms after SIGKILL; stale registration removed: " +
                removed);
            // on a machine so busy that the restart took longer than the session, the registration expired on its
            // own and there was nothing to remove; otherwise it must have been removed, not waited for
            assertTrue(removed || readyMs >= 5_000, "ready after " + readyMs + " ms without removing the " +
                "predecessor's registration:\n" + restarted.output());
            assertTrue(ProcessCluster.await(() -> cluster.client().incarnationOf(victim) > before, 30_000),
                "the new incarnation is registered");
            assertTrue(ProcessCluster.await(() -> cluster.state("restart", 0).isr().length == 3, 60_000),
                "the restarted host rejoins the ISR: " + cluster.state("restart", 0));
        }
    }
}
