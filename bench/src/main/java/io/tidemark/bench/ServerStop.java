package io.tidemark.bench;

import java.util.concurrent.TimeUnit;

/**
 * The last step of stopping a server process the bench started (a host, a Kafka broker, ZooKeeper): once it has been
 * asked to stop (SIGTERM), wait for it, and kill it (SIGKILL) when it does not exit in time. Stateless; thread-safe.
 */
public final class ServerStop
{
    /** How long to wait for a process to be gone after SIGKILL. */
    public static final long KILL_WAIT_MS = 10_000;

    private ServerStop()
    {
    }

    /**
     * Wait up to {@code timeoutNanos} for a process that was asked to stop, then SIGKILL it and wait up to
     * {@link #KILL_WAIT_MS} for it to be gone. An interrupted wait kills it at once and keeps the interrupt.
     *
     * @param process      the process, already sent SIGTERM.
     * @param timeoutNanos how long it may take to exit by itself (0 or less: kill it now unless it has exited).
     * @return true when it had to be killed.
     */
    public static boolean awaitOrKill(final Process process, final long timeoutNanos)
    {
        try
        {
            if (!process.waitFor(Math.max(0, timeoutNanos), TimeUnit.NANOSECONDS))
            {
                process.destroyForcibly();
                process.waitFor(KILL_WAIT_MS, TimeUnit.MILLISECONDS);
                return true;
            }
            return false;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return true;
        }
    }
}
