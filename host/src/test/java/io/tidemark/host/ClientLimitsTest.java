package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.Acks;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code client.max}: a host serves at most that many clients; one more is dropped at its HELLO (counted as
 * {@code client-limit}) and served once a client has gone (its GOODBYE, or the idle timeout, frees the place).
 */
class ClientLimitsTest
{
    @TempDir
    Path tmp;

    @Test
    void aHostServesAtMostClientMaxClientsAndTheNextOnceOneLeaves() throws Exception
    {
        final int port = OneHostSettings.freeUdpPort();
        try (TestingServer zooKeeper = new TestingServer(new InstanceSpec(tmp.resolve("zk").toFile(), -1, -1, -1,
            true, -1, 250, -1), true))
        {
            final Properties common = OneHostSettings.common("limits", zooKeeper.getConnectString());
            common.setProperty("zookeeper.session.timeout.ms", "5000");
            common.setProperty("zookeeper.connection.timeout.ms", "5000");
            OneHostSettings.secret(common, tmp.resolve("cluster.secret"));
            final Properties hostProperties = OneHostSettings.host(common, tmp.resolve("host-0"), port);
            hostProperties.setProperty("client.max", "2");
            hostProperties.setProperty("client.max.per.address", "2");
            TidemarkClient a = null;
            try (TidemarkHost host = TidemarkHost.start(HostConfig.fromProperties(hostProperties)))
            {
                // clients introduce themselves to every host when they connect: a and b take the two places
                a = TidemarkClient.connect(ClientConfig.fromProperties(common));
                a.createTopic("limited", 1, 1, 60_000);
                final TidemarkClient b = TidemarkClient.connect(ClientConfig.fromProperties(common));
                final TidemarkClient first = a;
                assertTrue(ProcessCluster.await(() -> host.clientCount() == 2, 30_000), "a and b served");
                try (b; TidemarkClient c = TidemarkClient.connect(ClientConfig.fromProperties(common)))
                {
                    runWith(host, first, b, c);
                }
            }
            finally
            {
                if (null != a)
                {
                    a.close();
                }
            }
        }
    }

    private static void runWith(final TidemarkHost host, final TidemarkClient a, final TidemarkClient b,
        final TidemarkClient c) throws Exception
    {
        final ProducerRecord record = new ProducerRecord().topic("limited").partition(0).value("v");
        final ProducerContext served = new ProducerContext().acks(Acks.ALL).lingerMs(0)
            .deliveryTimeoutMs(60_000);
        try (Producer pa = new Producer(a, served); Producer pb = new Producer(b, served))
        {
            pa.send(record);
            pb.send(record);
            assertEquals(2, host.clientCount());
            try (Producer pc = new Producer(c, new ProducerContext().acks(Acks.ALL).lingerMs(0)
                .requestTimeoutMs(1_000).deliveryTimeoutMs(3_000)))
            {
                assertThrows(ProducerException.class, () -> pc.send(record), "a third client is not served");
            }
            assertTrue(ProcessCluster.await(() -> host.droppedMessages().dropped(EdgeCounters.Stream.CLIENT,
                EdgeCounters.Reason.CLIENT_LIMIT) > 0, 30_000), "its HELLOs were dropped and counted");
            assertEquals(2, host.clientCount());
        }
        a.close(); // its GOODBYE (or, were it lost, the idle timeout) frees a place; closed again by the caller
        try (Producer pc = new Producer(c, new ProducerContext().acks(Acks.ALL).lingerMs(0)
            .deliveryTimeoutMs(120_000)))
        {
            pc.send(record); // c, which keeps saying HELLO, takes it
        }
        assertEquals(2, host.clientCount());
    }
}
