package io.tidemark.bench.multiprocess;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Copies a {@link LoopbackCluster}'s server logs into the report directory, each capped at
 * {@value #LOG_COPY_MAX_BYTES} bytes (its first and last halves): a saturated run can log a lot. Stateless.
 */
final class ServerLogs
{
    /** Largest copy of one log. */
    static final long LOG_COPY_MAX_BYTES = 8L * 1024 * 1024;

    private ServerLogs()
    {
    }

    /**
     * Copy the logs of a cluster's hosts (every launch of each) and of its ZooKeeper into the report.
     *
     * @param dir       the cluster's directory.
     * @param hosts     the hosts' processes (null where none runs).
     * @param launches  relaunches per host id.
     * @param logCopies where the copies go.
     */
    static void copyAll(final Path dir, final HostProcess[] hosts, final int[] launches, final Path logCopies)
    {
        try
        {
            Files.createDirectories(logCopies);
            for (final HostProcess host : hosts)
            {
                if (null != host && Files.exists(host.log()))
                {
                    copyCapped(host.log(), logCopies.resolve(host.log().getFileName()));
                }
            }
            for (int id = 0; id < launches.length; id++)
            {
                if (Files.exists(dir.resolve("host-" + id + ".log")))
                {
                    copyCapped(dir.resolve("host-" + id + ".log"), logCopies.resolve("host-" + id + ".log"));
                }
                for (int launch = 2; launch <= launches[id] + 1; launch++)
                {
                    final Path relaunched = dir.resolve("host-" + id + "-" + launch + ".log");
                    if (Files.exists(relaunched))
                    {
                        copyCapped(relaunched, logCopies.resolve(relaunched.getFileName()));
                    }
                }
            }
            if (Files.exists(dir.resolve("zookeeper.log")))
            {
                copyCapped(dir.resolve("zookeeper.log"), logCopies.resolve("zookeeper.log"));
            }
        }
        catch (final IOException ex)
        {
            System.err.println("tidemark-bench: could not copy the host logs to " + logCopies + ": " + ex);
        }
    }

    /** Copy a log; one larger than {@link #LOG_COPY_MAX_BYTES} keeps its first and last halves of that. */
    static void copyCapped(final Path from, final Path to) throws IOException
    {
        final long size = Files.size(from);
        if (size <= LOG_COPY_MAX_BYTES)
        {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
            return;
        }
        final byte[] all = Files.readAllBytes(from);
        final int half = (int)(LOG_COPY_MAX_BYTES / 2);
        try (OutputStream out = Files.newOutputStream(to))
        {
            out.write(all, 0, half);
            out.write(("\n[... " + (all.length - 2L * half) + " bytes left out by tidemark-bench ...]\n")
                .getBytes(StandardCharsets.UTF_8));
            out.write(all, all.length - half, half);
        }
    }
}
