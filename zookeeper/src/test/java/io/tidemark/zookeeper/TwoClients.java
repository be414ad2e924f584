package io.tidemark.zookeeper;

import org.agrona.CloseHelper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A test's ZooKeeper: a fresh in-process server for each test and two clients of it with the same digest credentials
 * (two processes' view of one ensemble), closed after the test. Register with
 * {@code @RegisterExtension final TwoClients zk = new TwoClients(ROOT);}.
 */
final class TwoClients implements BeforeEachCallback, AfterEachCallback
{
    private final String root;
    private TestingServer server;
    CuratorFramework first;
    CuratorFramework second;

    TwoClients(final String root)
    {
        this.root = root;
    }

    @Override
    public void beforeEach(final ExtensionContext context) throws Exception
    {
        server = new TestingServer(true);
        final ZooKeeperSettings settings = new ZooKeeperSettings()
            .connectString(server.getConnectString())
            .rootPath(root)
            .user("tidemark")
            .password("secret")
            .sessionTimeoutMs(10_000)
            .connectionTimeoutMs(10_000);
        first = settings.connectClient();
        second = settings.connectClient();
    }

    @Override
    public void afterEach(final ExtensionContext context) throws Exception
    {
        CloseHelper.closeAll(first, second, server); // all of them, then the first failure
        server = null;
    }
}
