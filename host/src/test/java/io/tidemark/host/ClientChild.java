package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.ClientConfig;
import java.nio.file.Path;

/** A client in a process of its own, for a test to kill: connects, says READY with its pid, then waits. */
public final class ClientChild
{
    private ClientChild()
    {
    }

    /**
     * @param args the client's properties file.
     * @throws Exception never in practice: the test kills this process.
     */
    public static void main(final String[] args) throws Exception
    {
        final TidemarkClient client = TidemarkClient.connect(ClientConfig.load(Path.of(args[0])));
        System.out.println("READY " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
        client.close();
    }
}
