package io.tidemark.kafka;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What outside peers did wrong to one listener, counted, and logged at most once per
 * {@code kafka.error.log.interval.ms} (the rest are counted as suppressed): bad frames, refused connections, failed
 * authentications and requests that did not arrive in time. The listener keeps serving everyone else.
 * <p>
 * The log is the agent thread's; the counters may be read from any thread.
 */
final class ListenerFaults
{
    private final int brokerId;
    private final long logIntervalMs;
    private final System.Logger logger = System.getLogger(KafkaListener.class.getName());
    private final AtomicLong badFrames = new AtomicLong();
    private final AtomicLong refusedConnections = new AtomicLong();
    private final AtomicLong failedAuthentications = new AtomicLong();
    private final AtomicLong slowRequests = new AtomicLong();
    private long nextLogMs;
    private long suppressed;

    ListenerFaults(final int brokerId, final long logIntervalMs)
    {
        this.brokerId = brokerId;
        this.logIntervalMs = logIntervalMs;
    }

    /** A connection sent something that is not a Kafka request (the caller closes it). */
    void badFrame(final KafkaConnection connection, final String why)
    {
        badFrames.incrementAndGet();
        log("closed connection " + connection.remote + " to broker " + brokerId + ": " + why);
    }

    /** A connection failed to authenticate (the caller closes it). */
    void failedAuthentication(final KafkaConnection connection, final String why)
    {
        failedAuthentications.incrementAndGet();
        log("authentication of connection " + connection.remote + " to broker " + brokerId + " failed: " + why);
    }

    /** A connection was refused at accept. */
    void refusedConnection(final String why)
    {
        refusedConnections.incrementAndGet();
        log(why);
    }

    /** A request's bytes did not all arrive in time (the caller closes its connection). */
    void slowRequest(final KafkaConnection connection, final long timeoutMs)
    {
        slowRequests.incrementAndGet();
        log("closed connection " + connection.remote + " to broker " + brokerId + ": a request's bytes did not all " +
            "arrive within " + timeoutMs + " ms (" + KafkaContext.REQUEST_READ_TIMEOUT_MS + "), holding " +
            connection.reservedBytes + " bytes");
    }

    private void log(final String line)
    {
        final long now = System.currentTimeMillis();
        if (now >= nextLogMs)
        {
            nextLogMs = now + logIntervalMs;
            final String note = suppressed > 0 ? " (" + suppressed + " similar lines suppressed)" : "";
            suppressed = 0;
            logger.log(System.Logger.Level.WARNING, line + note);
        }
        else
        {
            suppressed++;
        }
    }

    long badFrames()
    {
        return badFrames.get();
    }

    long refusedConnections()
    {
        return refusedConnections.get();
    }

    long failedAuthentications()
    {
        return failedAuthentications.get();
    }

    long slowRequests()
    {
        return slowRequests.get();
    }
}
