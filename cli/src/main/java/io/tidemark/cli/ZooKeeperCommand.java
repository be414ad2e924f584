package io.tidemark.cli;

import org.apache.zookeeper.server.ZooKeeperServerMain;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code tidemark zookeeper}: a single, standalone ZooKeeper server (Apache ZooKeeper's own
 * {@link ZooKeeperServerMain}, which ships in this jar as a dependency of Curator), for trying a cluster of host
 * processes out on one machine. Production runs a ZooKeeper ensemble of three or five servers.
 */
@Command(
    name = "zookeeper",
    mixinStandardHelpOptions = true,
    description = {
        "Run a standalone ZooKeeper server (Apache ZooKeeper's ZooKeeperServerMain) until Ctrl-C, to try a cluster " +
            "of `tidemark host` processes out on one machine. Production: a ZooKeeper ensemble of 3 or 5 servers " +
            "(any ZooKeeper 3.5 or later).",
        "Exit code: 3 when the data directory cannot be created; the server's own errors (port in use) are printed " +
            "by ZooKeeper."},
    sortOptions = false)
final class ZooKeeperCommand implements Callable<Integer>
{
    @Option(names = "--port", paramLabel = "PORT", defaultValue = "2181",
        description = "Client port (default: ${DEFAULT-VALUE}).")
    int port;

    @Option(names = "--dir", paramLabel = "DIR", required = true, description = "Data directory (created).")
    Path dir;

    @Override
    public Integer call()
    {
        try
        {
            Files.createDirectories(dir);
        }
        catch (final IOException ex)
        {
            throw new CliException(ExitCodes.IO, "cannot create " + dir + ": " + ex.getMessage(), ex);
        }
        System.setProperty("zookeeper.admin.enableServer", "false");
        final long pid = ProcessHandle.current().pid();
        System.out.println("zookeeper: serving 127.0.0.1:" + port + " and every other address of this machine, " +
            "data in " + dir + ": pid " + pid + " (stop: kill " + pid + ", or Ctrl-C in the foreground)");
        System.out.flush();
        ZooKeeperServerMain.main(new String[]{ Integer.toString(port), dir.toString() });
        return ExitCodes.OK;
    }
}
