package io.tidemark.host;

import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramSocket;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host whose media driver goes away (here: an external driver that is closed) learns it from its Aeron client
 * within the driver timeout, and {@link TidemarkHost#awaitEnd()} returns the cause (HostMain then exits with
 * {@link HostMain#EXIT_TRANSPORT_DIED} and says why) instead of the host running on without a transport.
 */
class TransportDeathTest
{
    @TempDir
    Path tmp;

    @Test
    void aHostWhoseDriverDiedSaysSoInsteadOfRunningOn() throws Exception
    {
        final int port;
        try (DatagramSocket free = new DatagramSocket(0))
        {
            port = free.getLocalPort();
        }
        final String previousTimeout = System.getProperty("aeron.driver.timeout");
        System.setProperty("aeron.driver.timeout", "2000"); // the client's patience with a silent driver
        try (TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1,
            true, -1, 250, -1), true))
        {
            final io.aeron.driver.MediaDriver driver = io.aeron.driver.MediaDriver.launch(
                new io.aeron.driver.MediaDriver.Context().aeronDirectoryName(tmp.resolve("driver").toString())
                    .dirDeleteOnStart(true).dirDeleteOnShutdown(true)
                    .threadingMode(io.aeron.driver.ThreadingMode.SHARED));
            final Properties p = new Properties();
            p.setProperty("cluster.id", "transport-death");
            p.setProperty("zookeeper.connect", zooKeeper.getConnectString());
            p.setProperty("zookeeper.root", "/tidemark/transport-death");
            p.setProperty("zookeeper.user", "tidemark");
            p.setProperty("zookeeper.password", "pw");
            p.setProperty("aeron.dir", driver.aeronDirectoryName());
            io.tidemark.aeron.ClusterSecret.generate(tmp.resolve("cluster.secret"));
            p.setProperty("cluster.secret.file", tmp.resolve("cluster.secret").toString());
            p.setProperty("host.id", "0");
            p.setProperty("host.dir", tmp.resolve("host-0").toString());
            p.setProperty("cluster.hosts", "0@127.0.0.1:" + port);
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(p)))
            {
                final CompletableFuture<Throwable> end = CompletableFuture.supplyAsync(() ->
                {
                    try
                    {
                        return host.awaitEnd();
                    }
                    catch (final InterruptedException ex)
                    {
                        Thread.currentThread().interrupt();
                        return ex;
                    }
                });
                driver.close();
                final Throwable cause = end.get(60, TimeUnit.SECONDS);
                assertNotNull(cause, "the host reports why it cannot serve");
                assertTrue(io.tidemark.aeron.AeronMedia.isFatal(cause), cause.toString());
            }
        }
        finally
        {
            if (null == previousTimeout)
            {
                System.clearProperty("aeron.driver.timeout");
            }
            else
            {
                System.setProperty("aeron.driver.timeout", previousTimeout);
            }
        }
    }
}
