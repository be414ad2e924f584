package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A test's ZooKeeper: a fresh in-process server for each test, and what the test opened against it (clients,
 * elections, stores) closed after the test, last opened first, the server last. Register with
 * {@code @RegisterExtension final TestZooKeeper zk = new TestZooKeeper();}.
 */
final class TestZooKeeper implements BeforeEachCallback, AfterEachCallback
{
    private final List<AutoCloseable> opened = new ArrayList<>();
    private TestingServer server;

    @Override
    public void beforeEach(final ExtensionContext context) throws Exception
    {
        server = new TestingServer(true);
    }

    @Override
    public void afterEach(final ExtensionContext context) throws Exception
    {
        Collections.reverse(opened);
        opened.add(server);
        try
        {
            for (final AutoCloseable closeable : opened)
            {
                closeable.close();
            }
        }
        finally
        {
            opened.clear();
            server = null;
        }
    }

    /** @return the server's address, for a client or settings. */
    String connectString()
    {
        return server.getConnectString();
    }

    /**
     * @param closeable opened by the test.
     * @return it, to be closed after the test.
     */
    <T extends AutoCloseable> T closeAfterTest(final T closeable)
    {
        opened.add(closeable);
        return closeable;
    }

    /** @return a started client without credentials (a stranger, or zkCli used by hand), closed after the test. */
    CuratorFramework anonymousClient()
    {
        final CuratorFramework client = closeAfterTest(CuratorFrameworkFactory.newClient(connectString(),
            new RetryOneTime(100)));
        client.start();
        return client;
    }
}
