package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;

import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The controller's store in the fault simulation: a {@link FileControllerStore} whose writes may, on the simulation's
 * seeded schedule, fail (an I/O error: nothing written) or stop the controller before or after the write reached the
 * store ({@link Crash}: the controller fails over in the middle of handling a message, between one store write and
 * the next, with the messages it already sent on their way).
 */
final class SimControllerStore extends ForwardingControllerStore
{
    /** What happens at a write. */
    enum Fault
    {
        NONE,
        IO_ERROR,
        CRASH_BEFORE,
        CRASH_AFTER
    }

    /** Decides what happens at each write. */
    @FunctionalInterface
    interface Faults
    {
        Fault at(String write);
    }

    /** The controller stops here: thrown out of its duty cycle; the simulation starts a new controller. */
    static final class Crash extends Error
    {
        private static final long serialVersionUID = 1L;

        Crash(final String where)
        {
            super("controller stops " + where, null, false, false);
        }
    }

    private final Faults faults;

    SimControllerStore(final Path dir, final Faults faults)
    {
        super(new FileControllerStore(dir));
        this.faults = faults;
    }

    private Fault before(final String write)
    {
        final Fault fault = faults.at(write);
        if (fault == Fault.IO_ERROR)
        {
            throw new UncheckedIOException(new FaultyFileSync.InjectedIOException("Input/output error (injected at " +
                "the controller's " + write + ")"));
        }
        if (fault == Fault.CRASH_BEFORE)
        {
            throw new Crash("before its " + write);
        }
        return fault;
    }

    private static void after(final Fault fault, final String write)
    {
        if (fault == Fault.CRASH_AFTER)
        {
            throw new Crash("after its " + write);
        }
    }

    @Override
    public PartitionState compareAndSet(final int expectedVersion, final PartitionState next)
    {
        final String write = "write of " + next;
        final Fault fault = before(write);
        final PartitionState stored = delegate.compareAndSet(expectedVersion, next);
        after(fault, write);
        return stored;
    }

    /** @return whether a throwable comes from an injected fault (its cause chain holds one). */
    static boolean injected(final Throwable failure)
    {
        for (Throwable t = failure; null != t; t = t.getCause() == t ? null : t.getCause())
        {
            if (t instanceof FaultyFileSync.InjectedIOException || String.valueOf(t.getMessage()).contains("(injected"))
            {
                return true;
            }
            for (final Throwable suppressed : t.getSuppressed())
            {
                if (injected(suppressed))
                {
                    return true;
                }
            }
        }
        return false;
    }
}
