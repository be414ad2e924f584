package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host registers what others need to reach it as its ephemeral node's data; others read it while the host's
 * session lives, and read nothing once it ends.
 */
class ZooKeeperHostDataTest
{
    private static final String ROOT = "/tidemark/host-data-test";

    @Test
    void registeredDataIsReadBackUntilTheHostsSessionEnds() throws Exception
    {
        try (TestingServer server = new TestingServer(true))
        {
            final ZooKeeperSettings settings = new ZooKeeperSettings()
                .connectString(server.getConnectString())
                .rootPath(ROOT)
                .user("tidemark")
                .password("secret")
                .sessionTimeoutMs(10_000)
                .connectionTimeoutMs(10_000);
            try (CuratorFramework reader = settings.connectClient())
            {
                final byte[] endpoint = "aeron:udp?endpoint=10.0.0.2:40123|incarnation=5"
                    .getBytes(StandardCharsets.UTF_8);
                final CuratorFramework host = settings.connectClient();
                try
                {
                    assertNull(ZooKeeperHostLiveness.hostData(reader, ROOT, 2), "not registered yet");
                    ZooKeeperHostLiveness.register(host, ROOT, 2, endpoint, 10_000);
                    assertArrayEquals(endpoint, ZooKeeperHostLiveness.hostData(reader, ROOT, 2));
                    assertNull(ZooKeeperHostLiveness.hostData(reader, ROOT, 3), "another host is not registered");

                    final ZooKeeperStoreException ex = assertThrows(ZooKeeperStoreException.class,
                        () -> ZooKeeperHostLiveness.register(reader, ROOT, 2, new byte[] {1}, 200),
                        "a second session cannot register the same host while the first lives");
                    assertTrue(ex.getMessage().contains("still registered"), ex.getMessage());
                    assertArrayEquals(endpoint, ZooKeeperHostLiveness.hostData(reader, ROOT, 2), "unchanged");

                    ZooKeeperHostLiveness.register(host, ROOT, 4, 10_000);
                    assertArrayEquals("host 4".getBytes(StandardCharsets.UTF_8),
                        ZooKeeperHostLiveness.hostData(reader, ROOT, 4), "the old overload's data");
                }
                finally
                {
                    host.close(); // the session ends: its ephemeral nodes go with it
                }
                assertNull(ZooKeeperHostLiveness.hostData(reader, ROOT, 2), "gone with the host's session");
                assertNull(ZooKeeperHostLiveness.hostData(reader, ROOT, 4), "gone with the host's session");
            }
        }
    }
}
