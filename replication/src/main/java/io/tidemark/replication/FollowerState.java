package io.tidemark.replication;

import io.tidemark.store.LogReader;

/**
 * What a leader knows of one follower: its log end offset (from its last fetch), when it last fetched and when it
 * was last caught up, the incarnation of its host, the high watermark last sent to it, and its parked fetch (a
 * fetch with nothing new, held until data arrives or the wait expires) with the rules of parking and of sending
 * again an answer the transport refused ({@link #park}, {@link #answerDue}, {@link #onAnswerSent},
 * {@link #onAnswerRefused}).
 * <p>
 * Written by the leader's host agent only; {@link #logEndOffset} is volatile so that produce completion and
 * counters may read it.
 */
final class FollowerState
{
    final int hostId;
    volatile long logEndOffset = -1;
    long lastFetchTimeMs;
    long lastCaughtUpTimeMs;
    long lastFetchLeaderEndOffset = -1;
    long incarnation = -1;
    long highWatermarkSent = -1;
    LogReader reader;

    boolean parked;
    long parkedCorrelationId;
    long parkedFetchOffset;
    int parkedMaxBytes;
    long parkedDeadlineMs;
    /** A response the transport refused is sent again from this time (0: none pending). */
    long responseRetryAtMs;
    /** Until when a refused response is sent again (0: no refusal outstanding). */
    long responseRetryUntilMs;

    FollowerState(final int hostId, final long nowMs)
    {
        this.hostId = hostId;
        this.lastCaughtUpTimeMs = nowMs;
        this.lastFetchTimeMs = nowMs;
    }

    /**
     * A fetch arrived at {@code fetchOffset} while the leader's log ended at {@code leaderEndOffset}. The follower
     * is caught up as of this fetch if it reached the leader's end, or as of the previous fetch if it reached the
     * end the leader had then (so a follower under a steady trickle of writes counts as caught up).
     */
    void onFetch(final long fetchOffset, final long leaderEndOffset, final long nowMs)
    {
        if (fetchOffset >= leaderEndOffset)
        {
            lastCaughtUpTimeMs = nowMs;
        }
        else if (lastFetchLeaderEndOffset >= 0 && fetchOffset >= lastFetchLeaderEndOffset)
        {
            lastCaughtUpTimeMs = Math.max(lastCaughtUpTimeMs, lastFetchTimeMs);
        }
        logEndOffset = fetchOffset;
        lastFetchLeaderEndOffset = leaderEndOffset;
        lastFetchTimeMs = nowMs;
        responseRetryAtMs = 0; // a new fetch supersedes an answer still being retried
        responseRetryUntilMs = 0;
    }

    /** The follower's host restarted: nothing known of the previous incarnation counts any more. */
    void resetForIncarnation(final long newIncarnation, final long nowMs)
    {
        incarnation = newIncarnation;
        logEndOffset = -1;
        lastFetchLeaderEndOffset = -1;
        lastFetchTimeMs = nowMs;
        highWatermarkSent = -1;
        parked = false;
        responseRetryAtMs = 0;
        responseRetryUntilMs = 0;
    }

    /**
     * Hold a fetch with nothing new to answer until data arrives or {@code deadlineMs}.
     *
     * @param correlationId the fetch's correlation id.
     * @param fetchOffset   where it fetches from.
     * @param maxBytes      most bytes it takes.
     * @param deadlineMs    when it is answered even with nothing new.
     */
    void park(final long correlationId, final long fetchOffset, final int maxBytes, final long deadlineMs)
    {
        parked = true;
        parkedCorrelationId = correlationId;
        parkedFetchOffset = fetchOffset;
        parkedMaxBytes = maxBytes;
        parkedDeadlineMs = deadlineMs;
    }

    /** The parked fetch, if any, is answered now or needs no answer (refused, or superseded). */
    void unpark()
    {
        parked = false;
    }

    /**
     * @param leaderEndOffset the leader's log end offset now.
     * @param nowMs           the time.
     * @return whether the parked fetch is to be answered now: it has something new or waited long enough, and no
     *         refused answer is waiting for its next try.
     */
    boolean answerDue(final long leaderEndOffset, final long nowMs)
    {
        return parked && nowMs >= responseRetryAtMs &&
            (leaderEndOffset > parkedFetchOffset || nowMs >= parkedDeadlineMs);
    }

    /**
     * An answer reached the transport.
     *
     * @param highWatermark the high watermark it carried.
     */
    void onAnswerSent(final long highWatermark)
    {
        highWatermarkSent = highWatermark;
        responseRetryAtMs = 0;
        responseRetryUntilMs = 0;
    }

    /**
     * The transport refused an answer (back-pressure, or the follower's side not connected right now): keep the
     * fetch parked and answer it again in a millisecond, for up to {@code retryForMs} from the first refusal, rather
     * than leave the follower to notice the silence after its fetch timeout (the fetch wait plus a session timeout),
     * long enough to cost it its ISR membership. After that, give up: the follower re-sends its fetch.
     *
     * @param correlationId the fetch's correlation id.
     * @param fetchOffset   where it fetches from.
     * @param maxBytes      most bytes it takes.
     * @param nowMs         the time.
     * @param retryForMs    how long refused answers are tried again (the fetch wait).
     */
    void onAnswerRefused(final long correlationId, final long fetchOffset, final int maxBytes, final long nowMs,
        final long retryForMs)
    {
        if (0 == responseRetryUntilMs)
        {
            responseRetryUntilMs = nowMs + retryForMs;
        }
        if (nowMs < responseRetryUntilMs)
        {
            park(correlationId, fetchOffset, maxBytes, nowMs);
            responseRetryAtMs = nowMs + 1;
        }
        else
        {
            responseRetryAtMs = 0;
            responseRetryUntilMs = 0; // given up: the follower re-sends its fetch
        }
    }

    void close()
    {
        if (null != reader)
        {
            reader.close();
            reader = null;
        }
    }
}
