package io.tidemark.aeron;

import io.tidemark.replication.RateLimitedLog;
import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a process dropped at its network edge, by stream and reason: messages that failed authentication, came from
 * another cluster, replayed an earlier message, named an identity their sender does not have, or were refused for a
 * limit. Each drop is counted (as an Agrona counter {@code tidemark stat} reads from outside the process, when a
 * counters manager is given) and logged at most once per stream, reason and interval, with the count of the rest
 * ({@link RateLimitedLog}).
 * <p>
 * Thread-safe.
 */
public final class EdgeCounters implements AutoCloseable
{
    /** Counter type id of the dropped-message counters ({@code tidemark stat}). */
    public static final int DROPPED_TYPE_ID = 3001;

    /** The streams of the edge. */
    public enum Stream
    {
        /** Fetch requests and responses between hosts. */
        FETCH,
        /** Control messages between hosts and the controller. */
        CONTROL,
        /** Requests from clients to a host. */
        CLIENT,
        /** Answers from hosts to a client. */
        REPLY;

        /** @return the name in counter labels and log lines. */
        public String label()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** Why a message was dropped. */
    public enum Reason
    {
        /** Shorter than its frame or its type, an unknown version or flag, a field out of range. */
        MALFORMED,
        /** Carries another cluster's id (two clusters share endpoints). */
        FOREIGN_CLUSTER,
        /** No authentication tag, while this process requires one. */
        UNAUTHENTICATED,
        /** The authentication tag does not match: forged, damaged, or keyed with another secret. */
        BAD_TAG,
        /** A sender this stream does not take (a host id outside the cluster, a client on a host stream). */
        UNKNOWN_SENDER,
        /** The sender's incarnation (or client session) is not the registered one. */
        STALE_SENDER,
        /** Addressed to another incarnation of this host, or to another client. */
        WRONG_RECEIVER,
        /** A sequence number already seen, or too old for the replay window. */
        REPLAYED,
        /** A message that speaks for a host other than its sender. */
        MISATTRIBUTED,
        /** A request of a client this host does not know (it introduces itself again). */
        UNKNOWN_CLIENT,
        /** A client refused for the limits on clients (total, per source address). */
        CLIENT_LIMIT,
        /** A request this host cannot serve as sent (its type, length or fields). */
        BAD_REQUEST;

        /** @return the name in counter labels and log lines. */
        public String label()
        {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    private static final Stream[] STREAMS = Stream.values();
    private static final Reason[] REASONS = Reason.values();

    private final String owner;
    private final RateLimitedLog log;
    private final AtomicLongArray counts = new AtomicLongArray(STREAMS.length * REASONS.length);
    private final AtomicCounter[] counters = new AtomicCounter[STREAMS.length * REASONS.length];
    private final String[] kinds = new String[STREAMS.length * REASONS.length];
    private volatile boolean attached;

    /**
     * @param manager where the counters live so that {@code tidemark stat} sees them, or null to count in memory
     *                only.
     * @param owner   who drops, in labels and log lines ({@code "host=0"}, {@code "client"}).
     * @param log     the rate-limited log of drops.
     */
    public EdgeCounters(final CountersManager manager, final String owner, final RateLimitedLog log)
    {
        this.owner = owner;
        this.log = log;
        for (final Stream stream : STREAMS)
        {
            for (final Reason reason : REASONS)
            {
                final int index = index(stream, reason);
                kinds[index] = "drop " + stream.label() + " " + reason.label();
            }
        }
        if (null != manager)
        {
            attach(manager);
        }
    }

    /**
     * Allocate the counters in a counters file now (once), carrying the counts so far, so that {@code tidemark stat}
     * sees them from outside the process.
     *
     * @param manager the file's manager; allocation is not thread-safe, so call it before others allocate.
     */
    public synchronized void attach(final CountersManager manager)
    {
        if (attached)
        {
            throw new IllegalStateException("counters already attached");
        }
        for (final Stream stream : STREAMS)
        {
            for (final Reason reason : REASONS)
            {
                final int index = index(stream, reason);
                counters[index] = manager.newCounter("dropped-messages: " + owner + " stream=" + stream.label() +
                    " reason=" + reason.label(), DROPPED_TYPE_ID);
                counters[index].setRelease(counts.get(index));
            }
        }
        attached = true;
    }

    /** @param owner who drops; counts in memory only, logs to this class's logger. */
    public EdgeCounters(final String owner)
    {
        this(null, owner, new RateLimitedLog(System.getLogger(EdgeCounters.class.getName())));
    }

    private static int index(final Stream stream, final Reason reason)
    {
        return stream.ordinal() * REASONS.length + reason.ordinal();
    }

    /**
     * Count a dropped message; log it if no line of this stream and reason was written within the interval.
     *
     * @param stream   where it arrived.
     * @param reason   why it was dropped.
     * @param senderId the sender it claimed (a host or client id), for the log line.
     * @param source   where it came from (an address, a stream), for the log line; may be null.
     */
    public void drop(final Stream stream, final Reason reason, final long senderId, final String source)
    {
        final int index = index(stream, reason);
        final long total = counts.incrementAndGet(index);
        if (attached)
        {
            counters[index].increment();
        }
        final long suppressed = log.shouldLog(kinds[index]);
        if (suppressed >= 0)
        {
            log.write(System.Logger.Level.WARNING, kinds[index], owner + " dropped a message on the " +
                stream.label() + " stream: " + reason.label() + " (sender " + senderId +
                (null == source ? "" : ", from " + source) + "); " + total + " of this kind so far", suppressed, null);
        }
    }

    /** @return messages dropped on {@code stream} for {@code reason}. */
    public long dropped(final Stream stream, final Reason reason)
    {
        return counts.get(index(stream, reason));
    }

    /** @return messages dropped on {@code stream}, for any reason. */
    public long dropped(final Stream stream)
    {
        long total = 0;
        for (final Reason reason : REASONS)
        {
            total += dropped(stream, reason);
        }
        return total;
    }

    /** @return messages dropped for any reason on any stream. */
    public long total()
    {
        long total = 0;
        for (int i = 0; i < counts.length(); i++)
        {
            total += counts.get(i);
        }
        return total;
    }

    @Override
    public void close()
    {
        for (final AtomicCounter counter : counters)
        {
            CloseHelper.quietClose(counter);
        }
    }
}
