package io.tidemark.host;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.ZooKeeper;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A replica host process for the multi-process tests: {@link TidemarkHost} from a configuration file, driven by
 * commands on stdin (one per line, each answered on stdout): {@code isolate} / {@code heal} cut this host off the
 * cluster's network and restore it; {@code zombie} expires the host's ZooKeeper session and cuts its control channel
 * while the process lives on; {@code unzombie} restores the control channel; {@code status}; {@code stop}.
 */
public final class DrillHostMain
{
    private DrillHostMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final IsolatingTransport[] network = new IsolatingTransport[1];
        final TidemarkHost host = TidemarkHost.start(HostConfig.load(Path.of(args[0])),
            (transport) -> network[0] = new IsolatingTransport(transport));
        System.out.println("ready " + host.incarnation());
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while (null != (line = in.readLine()))
        {
            switch (line.trim())
            {
                case "isolate" -> isolate(host, network[0], true);
                case "heal" -> isolate(host, network[0], false);
                case "zombie" ->
                {
                    host.channel.disconnect(host.hostId());
                    expireSession(host.client);
                }
                case "unzombie" -> host.channel.reconnect(host.hostId());
                case "status" -> System.out.println("status controller=" + host.isController());
                case "stop" ->
                {
                    host.close();
                    System.out.println("stopped");
                    System.out.flush();
                    System.exit(0);
                }
                default -> System.out.println("unknown command " + line);
            }
            System.out.println("ok " + line.trim());
            System.out.flush();
        }
        host.close();
    }

    /**
     * Cut the host off the cluster's network (fetches and control messages both ways), or heal it; its ZooKeeper
     * session is not affected.
     */
    private static void isolate(final TidemarkHost host, final IsolatingTransport network, final boolean isolated)
    {
        network.isolate(isolated);
        if (isolated)
        {
            host.channel.disconnect(host.hostId());
        }
        else
        {
            host.channel.reconnect(host.hostId());
        }
    }

    /** End the client's ZooKeeper session from the server's side, as a long pause or a partition from ZK would. */
    private static void expireSession(final CuratorFramework client) throws Exception
    {
        final ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        final CountDownLatch connected = new CountDownLatch(1);
        final ZooKeeper twin = new ZooKeeper(client.getZookeeperClient().getCurrentConnectionString(),
            zk.getSessionTimeout(), (event) ->
            {
                if (event.getState() == org.apache.zookeeper.Watcher.Event.KeeperState.SyncConnected)
                {
                    connected.countDown();
                }
            }, zk.getSessionId(), zk.getSessionPasswd());
        connected.await(10, TimeUnit.SECONDS);
        twin.close();
    }
}
