package io.tidemark.aeron;

import io.aeron.driver.MediaDriver;
import org.agrona.nio.TransportPoller;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * A wait that ends when a datagram arrives on any socket of an embedded media driver, or when its time is up,
 * whichever comes first: the thread that runs the driver in its duty cycle blocks in the kernel's readiness wait on
 * the driver's own sockets instead of parking blind for a fixed time.
 * <p>
 * The driver registers every receive socket (data, setup and heartbeat frames of its subscriptions' channels) with
 * the {@link Selector} of its data transport poller, and every send socket (status messages, NAKs and RTT
 * measurements for its publications) with that of its control transport poller, whether it polls them through the
 * selectors or one by one. This wait registers the same channels with a selector of its own, for reading, and waits
 * on it: the driver's selectors and their selected-key sets are never touched, and every datagram stays unread for
 * the driver's next cycle. A channel the driver closes leaves this selector with it; one it adds is registered here
 * before the next wait that sees the driver's key count change, and in any case within {@value #RESYNC_EVERY} waits.
 * <p>
 * <b>Reflection.</b> Aeron does not expose the pollers: they are reached by reflection, the package-private
 * accessors {@code MediaDriver.Context.dataTransportPoller()} and {@code controlTransportPoller()} and Agrona's
 * {@code TransportPoller.selector} field, checked against Aeron 1.51.0 (the version the build pins;
 * {@code DatagramWaitTest} fails on an upgrade that moves them). Neither Aeron nor Agrona is a named module, so
 * {@code setAccessible} needs no JVM flag ({@code --add-opens} is never used). It is safe because nothing of the
 * driver is written: the channels are only registered, for reading, with a selector of this wait's own, which never
 * reads from them; the driver reads every datagram in its own cycle as before. The driver's key sets are read only
 * where the driver cannot run meanwhile ({@link #resync}). When the reflection fails (another Aeron version, a
 * driver without pollers), {@link #of} gives null, the reason is logged once, and the caller parks as it did
 * before this wait existed ({@link QuietIdleStrategy}): slower to wake, never wrong.
 * <p>
 * Not thread-safe: one thread at a time waits ({@link #select}), and {@link #resync} runs where the driver cannot
 * run meanwhile; {@link #wakeup} from any thread.
 */
final class DatagramWait implements AutoCloseable
{
    /** Waits between two full re-reads of the driver's channels, whatever their count says. */
    static final int RESYNC_EVERY = 128;

    private static final Consumer<SelectionKey> IGNORE = (key) ->
    {
    };

    private final Selector data;
    private final Selector control;
    private final Selector own;
    private int dataKeys = -1;
    private int controlKeys = -1;
    private int sinceResync;

    private DatagramWait(final Selector data, final Selector control, final Selector own)
    {
        this.data = data;
        this.control = control;
        this.own = own;
    }

    /**
     * @param driver an embedded driver.
     * @return its wait, or null when the driver's selectors cannot be reached (the reason is in
     *         {@link #unreachableReason}).
     */
    static DatagramWait of(final MediaDriver driver)
    {
        try
        {
            final Selector data = selectorOf(driver, "dataTransportPoller");
            final Selector control = selectorOf(driver, "controlTransportPoller");
            return null == data || null == control ? null : new DatagramWait(data, control, Selector.open());
        }
        catch (final ReflectiveOperationException | IOException | RuntimeException ex)
        {
            return null;
        }
    }

    /** @return why {@link #of} gives null for this driver, or null when it does not. */
    static String unreachableReason(final MediaDriver driver)
    {
        try
        {
            return null == selectorOf(driver, "dataTransportPoller") ||
                null == selectorOf(driver, "controlTransportPoller") ? "the driver has no transport pollers" : null;
        }
        catch (final ReflectiveOperationException | RuntimeException ex)
        {
            return ex.toString();
        }
    }

    private static Selector selectorOf(final MediaDriver driver, final String pollerAccessor)
        throws ReflectiveOperationException
    {
        final Method accessor = MediaDriver.Context.class.getDeclaredMethod(pollerAccessor);
        accessor.setAccessible(true);
        final Object poller = accessor.invoke(driver.context());
        if (null == poller)
        {
            return null;
        }
        final Field selector = TransportPoller.class.getDeclaredField("selector");
        selector.setAccessible(true);
        return (Selector)selector.get(poller);
    }

    /**
     * Wait until a datagram is ready on one of the driver's sockets, {@link #wakeup} is called, or {@code timeoutMs}
     * passed: {@link #resync} then {@link #select}, for a caller that holds whatever keeps the driver from changing
     * its channels meanwhile.
     *
     * @param timeoutMs at least 1.
     */
    void await(final long timeoutMs)
    {
        resync();
        select(timeoutMs);
    }

    /**
     * Wait until a datagram is ready on one of the channels registered here by the last {@link #resync}, {@link #wakeup}
     * is called, or {@code timeoutMs} passed. Touches only this wait's own selector: no lock of the driver is needed.
     *
     * @param timeoutMs at least 1.
     */
    void select(final long timeoutMs)
    {
        try
        {
            own.select(IGNORE, Math.max(1, timeoutMs));
        }
        catch (final IOException | ClosedSelectorException | CancelledKeyException ex)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeoutMs))); // the driver is closing
        }
    }

    /**
     * @return whether a datagram is ready now on one of the channels registered here by the last {@link #resync},
     *         without waiting. Clears a pending {@link #wakeup}, as {@link #select} does.
     */
    boolean ready()
    {
        try
        {
            return own.selectNow(IGNORE) > 0;
        }
        catch (final IOException | ClosedSelectorException | CancelledKeyException ex)
        {
            return false; // the driver is closing
        }
    }

    /**
     * Register here the channels the driver added since the last call. Reads the driver's selectors' key sets, which
     * are not thread-safe: call it where the driver cannot run on another thread (under the Aeron client's lock of an
     * invoked driver, which every thread that runs the driver holds).
     */
    void resync()
    {
        try
        {
            final int dataCount = data.keys().size();
            final int controlCount = control.keys().size();
            if (dataCount == dataKeys && controlCount == controlKeys && ++sinceResync < RESYNC_EVERY)
            {
                return;
            }
            sinceResync = 0;
            dataKeys = dataCount;
            controlKeys = controlCount;
            watch(data);
            watch(control);
        }
        catch (final IOException | ClosedSelectorException | CancelledKeyException ex)
        {
            // the driver is closing: the next select parks instead
        }
    }

    private void watch(final Selector driverSelector) throws IOException
    {
        for (final SelectionKey key : driverSelector.keys())
        {
            final SelectableChannel channel = key.channel();
            if (key.isValid() && channel.isOpen() && null == channel.keyFor(own))
            {
                try
                {
                    channel.register(own, SelectionKey.OP_READ);
                }
                catch (final ClosedChannelException ex)
                {
                    // closed since the check: nothing to wait for on it
                }
            }
        }
    }

    /** End a wait in progress, or the next one at once, from any thread. */
    void wakeup()
    {
        own.wakeup();
    }

    @Override
    public void close()
    {
        try
        {
            own.close();
        }
        catch (final IOException ignore)
        {
            // nothing was read through it: closing it loses nothing
        }
    }
}
