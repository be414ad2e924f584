package io.tidemark.cli;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Ctrl-C (or any JVM shutdown) for a command that polls until told to stop: a shutdown hook sets
 * {@link #requested()} and waits up to 3 s for the command to {@link #close()}, so that it stops polling and
 * closes its log or connection cleanly instead of being cut off. Closing removes the hook.
 */
final class StopOnSignal implements AutoCloseable
{
    private final CountDownLatch done = new CountDownLatch(1);
    private final Thread hook;
    private volatile boolean requested;

    /** @param threadName the hook's thread name. Installs the hook. */
    StopOnSignal(final String threadName)
    {
        hook = new Thread(() ->
        {
            requested = true;
            try
            {
                done.await(3, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ignore)
            {
                Thread.currentThread().interrupt();
            }
        }, threadName);
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** @return whether the JVM is shutting down: stop polling. */
    boolean requested()
    {
        return requested;
    }

    /** The command is done: let a running hook go on, or remove it. */
    @Override
    public void close()
    {
        done.countDown();
        try
        {
            Runtime.getRuntime().removeShutdownHook(hook);
        }
        catch (final IllegalStateException shuttingDown)
        {
            // the hook is running: it waited for this
        }
    }
}
