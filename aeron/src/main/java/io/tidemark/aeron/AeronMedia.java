package io.tidemark.aeron;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.exceptions.AeronException;
import io.aeron.exceptions.ConductorServiceTimeoutException;
import io.aeron.exceptions.DriverTimeoutException;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.IntSupplier;

/**
 * An Aeron client with its media driver: an embedded driver (the default: inside this JVM, its files under a
 * directory of its own) or an external driver already running on the machine (by its directory). Closing closes the
 * client, then the embedded driver and its files.
 * <p>
 * <b>Threading profiles.</b> {@link Profile#SHARED} (the default) fits a machine whose cores are shared with other
 * processes: the embedded driver runs its conductor, sender and receiver on one thread that parks when there is
 * nothing to do, or on none at all, invoked by the process's own duty cycle
 * ({@link #launchEmbedded(Path, Profile, Consumer, boolean)}: a host does that) ({@link #sharedIdleStrategy()}: a few spins and yields, then parks growing to 1 ms), so an idle
 * process costs next to nothing. {@link Profile#LATENCY} fits a dedicated machine with cores to spare (pinned, or
 * isolated): sender and receiver each on a thread of their own that busy-spins, the lowest latency at the price of
 * two busy cores per driver.
 * <p>
 * <b>Transport death.</b> When the client loses its driver (the driver died, or the client's conductor thread was
 * starved longer than the driver's timeout) Aeron closes the client; every later send fails. The {@code onFatal}
 * callback hears of it once, so that the process can stop with a clear error instead of running on without a
 * transport.
 */
public final class AeronMedia implements AutoCloseable
{
    /** How the driver's and the agents' threads wait when there is nothing to do. */
    public enum Profile
    {
        /** Few threads, parking when idle: for machines whose cores are shared (the default). */
        SHARED,
        /** Busy-spinning sender and receiver threads: for dedicated machines with cores to spare. */
        LATENCY
    }

    private static final System.Logger LOGGER = System.getLogger(AeronMedia.class.getName());

    private final MediaDriver driver;
    private final Aeron aeron;
    private final ReentrantLock clientLock;
    private final DatagramWait datagramWait;

    private AeronMedia(final MediaDriver driver, final Aeron aeron, final ReentrantLock clientLock)
    {
        this.driver = driver;
        this.aeron = aeron;
        this.clientLock = clientLock;
        this.datagramWait = null == clientLock ? null : DatagramWait.of(driver);
        if (null != clientLock && null == datagramWait)
        {
            LOGGER.log(System.Logger.Level.WARNING, "waiting on the media driver's sockets is not possible (" +
                DatagramWait.unreachableReason(driver) + "): threads that wait for a datagram park instead, and a " +
                "message waits up to the park");
        }
    }

    /**
     * @return the idle strategy of the shared profile: 10 spins, 5 yields, then parks from 1 us doubling to 1 ms.
     *         An idle thread wakes at most 1,000 times a second; a message arriving after a quiet spell waits at most
     *         1 ms for it.
     */
    public static IdleStrategy sharedIdleStrategy()
    {
        return new BackoffIdleStrategy(10, 5, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1));
    }

    /**
     * @param driverWork the driver's work in the last duty cycle ({@link #invoke} of it), which asks for another cycle
     *                   at once but does not count as the caller's work.
     * @return the idle strategy of the one thread that runs this invoked driver in its duty cycle
     *         ({@link #launchEmbedded(Path, Profile, Consumer, boolean)}): a {@link DatagramWaitIdleStrategy} that waits
     *         for the next datagram on the driver's sockets ({@link #awaitDatagram}), at most as long as it has had no
     *         work, from 1 ms to {@value DatagramWaitIdleStrategy#DEEP_WAIT_MS} ms (the graduated bound), and reads a
     *         burst of datagrams cycle after cycle without a park ({@link #datagramReady}); a
     *         {@link QuietIdleStrategy} (parks of 1 ms after work, 10 ms once quiet) when the driver's sockets cannot
     *         be reached. Each empty duty cycle of a driver polls every
     *         socket with a system call, so spinning buys no latency here, only CPU (a profile of three hosts at
     *         saturation showed the sockets' empty reads as nine in ten of their system calls).
     */
    public IdleStrategy invokedIdleStrategy(final IntSupplier driverWork)
    {
        if (null == datagramWait)
        {
            return new QuietIdleStrategy();
        }
        // after a cycle in which only the driver worked: one cycle more at once, then parks from 1 us; no yield (on
        // loaded cores a yield queues the thread behind the others for a time slice)
        return new DatagramWaitIdleStrategy(this::awaitDatagram, driverWork, this::datagramReady, System::nanoTime,
            new BackoffIdleStrategy(1, 0, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MILLISECONDS.toNanos(1)), true);
    }

    /**
     * Wait until a datagram arrives on a socket of this invoked driver, {@link #wakeDatagramWait} is called, or
     * {@code timeoutMs} passed; the datagram is left for the driver's next {@link #invoke}. Parks for
     * {@code timeoutMs} when the driver is not invoked or its sockets cannot be reached ({@link DatagramWait}).
     * One thread at a time: the thread that runs the driver's duty cycle, or threads that serialise their waits
     * with a lock of their own.
     *
     * @param timeoutMs at least 1.
     */
    public void awaitDatagram(final long timeoutMs)
    {
        final DatagramWait wait = datagramWait;
        if (null == wait)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeoutMs)));
            return;
        }
        clientLock.lock(); // the driver adds and closes channels only under it: its key sets are read here
        try
        {
            wait.resync();
        }
        finally
        {
            clientLock.unlock();
        }
        wait.select(timeoutMs);
    }

    /**
     * @return whether a datagram waits on a socket of this invoked driver now (one the last {@link #awaitDatagram}
     *         watched), without waiting; false without a datagram wait. Consumes a pending {@link #wakeDatagramWait},
     *         as any wait does: call it only from the thread that runs the driver, before a cycle of its own.
     */
    public boolean datagramReady()
    {
        final DatagramWait wait = datagramWait;
        return null != wait && wait.ready();
    }

    /**
     * End an {@link #awaitDatagram} in progress, or the next one at once, from any thread: a doorbell for work handed
     * to the waiting thread from within the process. Without a datagram wait it does nothing (the park ends on its
     * own).
     */
    public void wakeDatagramWait()
    {
        final DatagramWait wait = datagramWait;
        if (null != wait)
        {
            wait.wakeup();
        }
    }

    /** @return whether {@link #awaitDatagram} ends on a datagram (else it parks for its whole timeout). */
    public boolean waitsForDatagrams()
    {
        return null != datagramWait;
    }

    /**
     * Launch an embedded media driver in {@code aeronDir} with the shared profile and connect a client to it.
     *
     * @param aeronDir the driver's directory; on Linux {@code /dev/shm/...} keeps its buffers in memory.
     * @return the client and driver.
     */
    public static AeronMedia launchEmbedded(final Path aeronDir)
    {
        return launchEmbedded(aeronDir, Profile.SHARED, null);
    }

    /**
     * Launch an embedded media driver in {@code aeronDir} (created; a stale driver's files there are removed) and
     * connect a client to it.
     *
     * @param aeronDir the driver's directory; on Linux {@code /dev/shm/...} keeps its buffers in memory.
     * @param profile  the threading profile.
     * @param onFatal  told once when the client has lost its driver (see the class comment), or null.
     * @return the client and driver.
     */
    public static AeronMedia launchEmbedded(final Path aeronDir, final Profile profile,
        final Consumer<Throwable> onFatal)
    {
        return launchEmbedded(aeronDir, profile, onFatal, false);
    }

    /**
     * Launch an embedded media driver in {@code aeronDir} (created; a stale driver's files there are removed) and
     * connect a client to it.
     * <p>
     * <b>Invoked</b> (the shared profile only): the driver's conductor, sender and receiver and the client's conductor
     * run on no thread of their own; the caller runs them in its own duty cycle with {@link #invoke()}. A process
     * whose work is one duty cycle (a host: its gateway and replication agents) then hands no message between threads
     * on its way in or out, wakes one thread instead of three, and polls its sockets once per cycle instead of on a
     * loop of their own. The driver runs under the Aeron client's lock, which every other thread's addition or
     * closing of a publication or subscription also takes (and runs the driver while it waits for the answer): any
     * thread may still do those. The caller must invoke from the start on (the driver expects the client's keepalive
     * within its client timeout, 10 s); if the invoking thread stalls for longer than the driver timeout (10 s) the
     * client counts the driver as dead ({@code onFatal}).
     *
     * @param aeronDir the driver's directory; on Linux {@code /dev/shm/...} keeps its buffers in memory.
     * @param profile  the threading profile.
     * @param onFatal  told once when the client has lost its driver (see the class comment), or null.
     * @param invoked  whether the caller runs the driver and client in its duty cycle ({@link #invoke()}); only with
     *                 {@link Profile#SHARED}.
     * @return the client and driver.
     */
    public static AeronMedia launchEmbedded(final Path aeronDir, final Profile profile,
        final Consumer<Throwable> onFatal, final boolean invoked)
    {
        if (invoked && profile != Profile.SHARED)
        {
            throw new IllegalArgumentException("only the shared profile runs invoked, not " + profile);
        }
        final MediaDriver.Context ctx = new MediaDriver.Context()
            .aeronDirectoryName(aeronDir.toAbsolutePath().toString())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .termBufferSparseFile(true)
            // the executor resolves names of new channels (rare: a new client or host link): polled every 50 ms at
            // most when idle (at 10 ms it was 130 wake-ups a second, 0.7-0.8 % of a core, of an idle host process)
            .asyncExecutorIdleStrategy(new BackoffIdleStrategy(1, 1, TimeUnit.MICROSECONDS.toNanos(1),
                TimeUnit.MILLISECONDS.toNanos(50)));
        if (profile == Profile.LATENCY)
        {
            ctx.threadingMode(ThreadingMode.DEDICATED)
                .senderIdleStrategy(new BusySpinIdleStrategy())
                .receiverIdleStrategy(new BusySpinIdleStrategy())
                .conductorIdleStrategy(sharedIdleStrategy());
        }
        else if (invoked)
        {
            ctx.threadingMode(ThreadingMode.INVOKER);
        }
        else
        {
            ctx.threadingMode(ThreadingMode.SHARED).sharedIdleStrategy(sharedIdleStrategy());
        }
        final MediaDriver driver = MediaDriver.launch(ctx);
        try
        {
            final Aeron.Context client = clientContext(driver.aeronDirectoryName(), onFatal);
            final ReentrantLock lock = invoked ? new ReentrantLock() : null;
            if (invoked)
            {
                client.useConductorAgentInvoker(true).driverAgentInvoker(driver.sharedAgentInvoker())
                    .clientLock(lock);
            }
            return new AeronMedia(driver, Aeron.connect(client), lock);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(driver);
            throw ex;
        }
    }

    /**
     * Connect to a media driver that runs outside this JVM.
     *
     * @param aeronDirectoryName the external driver's directory.
     * @return the client (closing it leaves the driver running).
     */
    public static AeronMedia connectExternal(final String aeronDirectoryName)
    {
        return connectExternal(aeronDirectoryName, null);
    }

    /**
     * Connect to a media driver that runs outside this JVM.
     *
     * @param aeronDirectoryName the external driver's directory.
     * @param onFatal            told once when the client has lost the driver, or null.
     * @return the client (closing it leaves the driver running).
     */
    public static AeronMedia connectExternal(final String aeronDirectoryName, final Consumer<Throwable> onFatal)
    {
        return new AeronMedia(null, Aeron.connect(clientContext(aeronDirectoryName, onFatal)), null);
    }

    private static Aeron.Context clientContext(final String dir, final Consumer<Throwable> onFatal)
    {
        final Aeron.Context ctx = new Aeron.Context().aeronDirectoryName(dir);
        if (null != onFatal)
        {
            ctx.errorHandler(fatalAware(onFatal));
        }
        return ctx;
    }

    /**
     * @return an error handler that logs every error and tells {@code onFatal} (once) of the first that leaves the
     *         client without its driver.
     */
    static ErrorHandler fatalAware(final Consumer<Throwable> onFatal)
    {
        final java.util.concurrent.atomic.AtomicBoolean told = new java.util.concurrent.atomic.AtomicBoolean();
        return (t) ->
        {
            if (isFatal(t))
            {
                if (told.compareAndSet(false, true))
                {
                    onFatal.accept(t);
                }
                return;
            }
            LOGGER.log(System.Logger.Level.WARNING, "Aeron client error", t);
        };
    }

    /** @return whether an error of the Aeron client means it has lost its driver for good. */
    public static boolean isFatal(final Throwable t)
    {
        return t instanceof DriverTimeoutException || t instanceof ConductorServiceTimeoutException ||
            (t instanceof AeronException ae && ae.category() == AeronException.Category.FATAL);
    }

    /** @return the Aeron client. */
    public Aeron aeron()
    {
        return aeron;
    }

    /** @return whether the caller runs the driver and the client ({@link #invoke()}). */
    public boolean invoked()
    {
        return null != clientLock;
    }

    /**
     * One duty cycle of the driver's agents, then of the client's conductor, when {@link #invoked()}: from one
     * thread (see {@link #launchEmbedded(Path, Profile, Consumer, boolean)}).
     *
     * @return work done (0: nothing to do).
     */
    public int invoke()
    {
        if (null == clientLock)
        {
            return 0;
        }
        final AgentInvoker drivers = driver.sharedAgentInvoker();
        final AgentInvoker client = aeron.conductorAgentInvoker();
        clientLock.lock();
        try
        {
            return drivers.invoke() + client.invoke();
        }
        finally
        {
            clientLock.unlock();
        }
    }

    /** @return the embedded driver, or null with an external one. */
    MediaDriver driver()
    {
        return driver;
    }

    /** @return whether the driver is embedded in this JVM. */
    public boolean embedded()
    {
        return null != driver;
    }

    @Override
    public void close()
    {
        CloseHelper.closeAll(aeron, driver, datagramWait);
    }
}
