package io.tidemark.replication;

import org.agrona.concurrent.EpochClock;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Logging for paths a remote party can trigger (a forged datagram, a malformed request, a misbehaving client): at
 * most one line per kind per interval, carrying how many more of that kind were suppressed since the last line, so
 * that a flood of bad input costs a bounded number of log lines and the process keeps serving.
 * <p>
 * Kinds are chosen by the code (a small fixed set: "fetch bad-tag", "gateway client-limit"), never taken from the
 * input, so the table of kinds stays small. The message may carry detail of the latest occurrence (a source
 * address, an id); it is built by the caller only when {@link #shouldLog} says a line is due.
 * <p>
 * Thread-safe.
 */
public final class RateLimitedLog
{
    /** Default interval between two lines of one kind. */
    public static final long DEFAULT_INTERVAL_MS = 10_000;

    private final System.Logger logger;
    private final long intervalMs;
    private final EpochClock clock;
    private final ConcurrentHashMap<String, Kind> kinds = new ConcurrentHashMap<>();

    /** When a kind last logged, and how many of it were suppressed since. */
    private static final class Kind
    {
        long lastLogMs = Long.MIN_VALUE / 2;
        long suppressed;
    }

    /**
     * @param logger     where lines go.
     * @param intervalMs at most one line per kind in this many milliseconds.
     * @param clock      the time.
     */
    public RateLimitedLog(final System.Logger logger, final long intervalMs, final EpochClock clock)
    {
        if (intervalMs < 0)
        {
            throw new IllegalArgumentException("interval must not be negative: " + intervalMs);
        }
        this.logger = logger;
        this.intervalMs = intervalMs;
        this.clock = clock;
    }

    /** @param logger where lines go; one line per kind every {@link #DEFAULT_INTERVAL_MS}, by the system clock. */
    public RateLimitedLog(final System.Logger logger)
    {
        this(logger, DEFAULT_INTERVAL_MS, org.agrona.concurrent.SystemEpochClock.INSTANCE);
    }

    /**
     * Count one occurrence of {@code kind}.
     *
     * @return the number of earlier occurrences suppressed since the last line (0 or more) when a line is due now,
     *         to be passed to {@link #log}; -1 when this occurrence is suppressed.
     */
    public long shouldLog(final String kind)
    {
        final Kind state = kinds.computeIfAbsent(kind, (k) -> new Kind());
        final long now = clock.time();
        synchronized (state)
        {
            if (now - state.lastLogMs >= intervalMs)
            {
                state.lastLogMs = now;
                final long suppressed = state.suppressed;
                state.suppressed = 0;
                return suppressed;
            }
            state.suppressed++;
            return -1;
        }
    }

    /**
     * Log one occurrence of {@code kind}, unless a line of that kind was logged within the interval (then it is
     * only counted).
     *
     * @return whether a line was written.
     */
    public boolean log(final System.Logger.Level level, final String kind, final String message)
    {
        final long suppressed = shouldLog(kind);
        if (suppressed < 0)
        {
            return false;
        }
        write(level, kind, message, suppressed, null);
        return true;
    }

    /**
     * As {@link #log(System.Logger.Level, String, String)}, with the error (its stack trace on the lines that are
     * written).
     */
    public boolean log(final System.Logger.Level level, final String kind, final String message,
        final Throwable error)
    {
        final long suppressed = shouldLog(kind);
        if (suppressed < 0)
        {
            return false;
        }
        write(level, kind, message, suppressed, error);
        return true;
    }

    /** Write a line {@link #shouldLog} allowed; {@code suppressed} is what it returned. */
    public void write(final System.Logger.Level level, final String kind, final String message,
        final long suppressed, final Throwable error)
    {
        final String line = suppressed > 0 ? message + " [" + kind + ": " + suppressed + " more since the last " +
            "line, at most one line per " + intervalMs + " ms]" : message;
        if (null == error)
        {
            logger.log(level, line);
        }
        else
        {
            logger.log(level, line, error);
        }
    }

    /**
     * An error handler for agents that may fail on remote input: each kind of error (its class and the code
     * location that threw it) gets at most one line with its stack trace per interval.
     *
     * @param prefix what the lines start with ("host 2").
     * @return the handler.
     */
    public org.agrona.ErrorHandler errorHandler(final String prefix)
    {
        return (error) ->
        {
            final StackTraceElement[] trace = error.getStackTrace();
            final String kind = "error " + error.getClass().getName() +
                (trace.length > 0 ? " at " + trace[0].getClassName() + ":" + trace[0].getLineNumber() : "");
            log(System.Logger.Level.ERROR, kind, prefix + ": " + error, error);
        };
    }
}
