package io.tidemark.bench.multiprocess;

import io.tidemark.bench.ServerStop;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A standalone ZooKeeper server in a JVM of its own (Apache ZooKeeper's {@code ZooKeeperServerMain}, from the bench's
 * class path), on a loopback port, with ZooKeeper's sample tick of 2 s: the Tidemark cluster's coordination service,
 * a process of its own as in a deployment, so that its CPU is counted with the cluster's and it can be restarted in a
 * fault drill. Not thread-safe.
 */
final class ZooKeeperProcess
{
    /** ZooKeeper's server entry point. */
    static final String MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain";
    private static final int TICK_MS = 2_000;

    private final Path dataDir;
    private final Path log;
    private final String classpath;
    private final int port;
    private Process process;

    /**
     * @param dataDir   its data directory (created).
     * @param log       where its output goes.
     * @param classpath a class path holding ZooKeeper's server.
     */
    ZooKeeperProcess(final Path dataDir, final Path log, final String classpath) throws IOException
    {
        this.dataDir = dataDir;
        this.log = log;
        this.classpath = classpath;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            this.port = socket.getLocalPort();
        }
    }

    /**
     * Start the server (again, after {@link #stop}) and wait until it accepts connections.
     *
     * @param timeoutMs longest wait.
     */
    void start(final long timeoutMs) throws IOException
    {
        Files.createDirectories(dataDir);
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Dzookeeper.admin.enableServer=false");
        command.add("-cp");
        command.add(classpath);
        command.add(MAIN_CLASS);
        command.add(Integer.toString(port));
        command.add(dataDir.toString());
        command.add(Integer.toString(TICK_MS));
        process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!accepts())
        {
            if (!process.isAlive())
            {
                throw new IllegalStateException("ZooKeeper exited at start, exit code " + process.exitValue() +
                    "; see " + log);
            }
            if (System.nanoTime() - deadline > 0)
            {
                throw new IllegalStateException("ZooKeeper did not accept connections on port " + port + " within " +
                    timeoutMs + " ms; see " + log);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    private boolean accepts()
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
            return true;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }

    /** @return {@code 127.0.0.1:port}. */
    String connectString()
    {
        return "127.0.0.1:" + port;
    }

    /** @return its process id, or -1 when not running. */
    long pid()
    {
        return null == process ? -1 : process.pid();
    }

    /** @return whether it runs. */
    boolean isAlive()
    {
        return null != process && process.isAlive();
    }

    /**
     * Stop it: SIGTERM (or SIGKILL when {@code kill}), wait, SIGKILL if it has not exited in {@code timeoutMs}.
     *
     * @return its exit code, or -1.
     */
    int stop(final boolean kill, final long timeoutMs)
    {
        if (null == process)
        {
            return -1;
        }
        if (kill)
        {
            process.destroyForcibly();
        }
        else
        {
            process.destroy();
        }
        ServerStop.awaitOrKill(process, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        return process.isAlive() ? -1 : process.exitValue();
    }
}
