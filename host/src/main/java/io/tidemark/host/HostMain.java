package io.tidemark.host;

import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperStoreException;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs one replica host until the process is told to stop (SIGTERM, Ctrl-C: a clean stop).
 * <pre>
 * java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp ... io.tidemark.host.HostMain --config host-0.properties
 * </pre>
 * ({@code tidemark host --config FILE} does the same.) Exit codes: 2 for a bad configuration, 3 when ZooKeeper
 * cannot be reached or holds the host id for another live process, 4 when the endpoint cannot be bound or the
 * directory is held by another host, 5 when the host's transport died while it ran (its Aeron client lost the media
 * driver: the host cannot serve, so it stops instead of running on). A stop by SIGTERM or Ctrl-C closes the host
 * cleanly first; the JVM then exits as a signalled JVM does (143 or 130).
 */
public final class HostMain
{
    /** Exit code when the host's transport died while it ran. */
    public static final int EXIT_TRANSPORT_DIED = 5;

    private static final String LOG_FORMAT_PROPERTY = "java.util.logging.SimpleFormatter.format";

    private HostMain()
    {
    }

    /**
     * @param args {@code --config FILE}.
     */
    public static void main(final String[] args)
    {
        if (args.length != 2 || !"--config".equals(args[0]))
        {
            System.err.println("usage: HostMain --config FILE");
            System.exit(2);
        }
        System.exit(run(Path.of(args[1])));
    }

    /**
     * A host's log is read when something went wrong across processes, so each record is one line with the time to
     * the millisecond (the JDK's default is two lines, to the second). An operator's own format, given as the
     * property or in a logging configuration file, is left alone. Takes effect only before the first record.
     */
    static void oneLineLogRecords()
    {
        if (null == System.getProperty(LOG_FORMAT_PROPERTY) &&
            null == System.getProperty("java.util.logging.config.file"))
        {
            System.setProperty(LOG_FORMAT_PROPERTY, "%1$tF %1$tT.%1$tL %4$s %3$s: %5$s%6$s%n");
        }
    }

    /**
     * Start a host from a configuration file and serve until this JVM shuts down.
     *
     * @return the exit code.
     */
    public static int run(final Path configFile)
    {
        oneLineLogRecords();
        final TidemarkHost host;
        try
        {
            host = TidemarkHost.start(HostConfig.load(configFile));
        }
        catch (final ConfigException ex)
        {
            System.err.println("tidemark host: configuration error: " + ex.getMessage());
            return 2;
        }
        catch (final ZooKeeperStoreException ex)
        {
            System.err.println("tidemark host: " + ex.getMessage() +
                (null != ex.getCause() ? " (" + ex.getCause() + ")" : ""));
            return 3;
        }
        catch (final HostStartException ex)
        {
            System.err.println("tidemark host: " + ex.getMessage());
            return 4;
        }
        final CountDownLatch stopped = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            host.close();
            // printed, not logged: java.util.logging resets itself in a shutdown hook of its own
            System.out.println("tidemark host " + host.hostId() + " stopped cleanly");
            System.out.flush();
            stopped.countDown();
        }, "tidemark-host-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        final long pid = ProcessHandle.current().pid();
        System.out.println("tidemark host " + host.hostId() + " running: pid " + pid + ", incarnation " +
            host.incarnation() +
            (null == host.kafkaListener() ? "" : ", Kafka listener " + host.kafkaListener().advertised().host() +
            ":" + host.kafkaListener().advertised().port() + " " + host.kafkaListener().securityDescription()) +
            " (stop: kill " + pid + ", or Ctrl-C in the foreground)");
        System.out.flush();
        try
        {
            final Throwable death = host.awaitEnd();
            if (null != death)
            {
                System.err.println("tidemark host " + host.hostId() + ": the Aeron transport died, the host cannot " +
                    "serve and stops: " + death);
                System.err.flush();
                host.close();
                return EXIT_TRANSPORT_DIED;
            }
            stopped.await();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
