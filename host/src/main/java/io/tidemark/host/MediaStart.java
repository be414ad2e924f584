package io.tidemark.host;

import io.aeron.exceptions.AeronException;
import io.tidemark.aeron.AeronMedia;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;

import java.util.Deque;

/**
 * The media driver, the Aeron client and (shared profile, embedded driver) the host's duty thread that runs them,
 * started on a thread of their own beside the ZooKeeper connection and registration. Either start may fail: a
 * failed media start fails the host when it is awaited; a failed ZooKeeper start abandons this one, which waits
 * for it to end and closes what it started, so that nothing is left running either way.
 */
final class MediaStart
{
    private final java.util.concurrent.CompletableFuture<AeronMedia> future =
        new java.util.concurrent.CompletableFuture<>();
    private volatile AgentRunner dutyRunner;
    private volatile HostDuty duty;
    private volatile long tookMs;

    /** @return the host's duty (shared profile, embedded driver), or null; once {@link #await} returned. */
    HostDuty duty()
    {
        return duty;
    }

    /** @return how long the start took, in ms; once {@link #await} returned. */
    long tookMs()
    {
        return tookMs;
    }

    static MediaStart begin(final HostConfig config, final ErrorHandler errorHandler,
        final java.util.function.Consumer<Throwable> onTransportDeath)
    {
        final MediaStart start = new MediaStart();
        final Thread thread = new Thread(() -> start.run(config, errorHandler, onTransportDeath),
            "tidemark-media-start-" + config.hostId());
        // not a daemon: the duty thread it starts inherits that, and runs as the starting thread started it before
        thread.setDaemon(false);
        thread.start();
        return start;
    }

    private void run(final HostConfig config, final ErrorHandler errorHandler,
        final java.util.function.Consumer<Throwable> onTransportDeath)
    {
        final long startNs = System.nanoTime();
        AeronMedia media = null;
        try
        {
            final boolean shared = config.threading() == AeronMedia.Profile.SHARED;
            // shared with an embedded driver: the driver and the Aeron client run in the host's one duty cycle
            media = null == config.aeronDir() ?
                AeronMedia.launchEmbedded(TidemarkHost.embeddedAeronDir(config), config.threading(), onTransportDeath::accept,
                    shared) :
                AeronMedia.connectExternal(config.aeronDir(), onTransportDeath::accept);
            // shared with an embedded driver: one thread runs the driver and the Aeron client from now on (the
            // driver expects the client's keepalives while ZooKeeper connects and the replica logs recover), and
            // the gateway and the replica host's agents join its duty cycle once they exist
            if (media.invoked())
            {
                final HostDuty hostDuty = new HostDuty(media, config.hostId());
                final AgentRunner runner = new AgentRunner(media.invokedIdleStrategy(hostDuty::driverWork),
                    errorHandler, null, hostDuty);
                AgentRunner.startOnThread(runner);
                duty = hostDuty;
                dutyRunner = runner;
            }
            tookMs = (System.nanoTime() - startNs) / 1_000_000;
            future.complete(media);
        }
        catch (final Throwable t)
        {
            CloseHelper.quietClose(media);
            future.completeExceptionally(t);
        }
    }

    /**
     * Wait for the media to start; push what it started onto {@code resources} (closed last-in first-out).
     *
     * @return the media.
     * @throws AeronException  as the start threw it (the endpoint cannot be bound, say).
     * @throws RuntimeException any other failure of the start.
     */
    AeronMedia await(final Deque<AutoCloseable> resources)
    {
        final AeronMedia media;
        try
        {
            media = future.get();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            abandon(this);
            throw new HostStartException("interrupted while the media driver started", ex);
        }
        catch (final java.util.concurrent.ExecutionException ex)
        {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new HostStartException("the media driver did not start: " + cause, cause);
        }
        resources.push(media);
        if (null != dutyRunner)
        {
            resources.push(dutyRunner);
        }
        return media;
    }

    /** The host did not start: wait for this start to end and close what it started. */
    static void abandon(final MediaStart start)
    {
        if (null == start)
        {
            return;
        }
        final AeronMedia media;
        try
        {
            media = start.future.join();
        }
        catch (final RuntimeException ex)
        {
            return; // it failed: it closed its media itself
        }
        CloseHelper.quietClose(start.dutyRunner);
        CloseHelper.quietClose(media);
    }
}
