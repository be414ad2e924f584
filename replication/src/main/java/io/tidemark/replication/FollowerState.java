package io.tidemark.replication;

import io.tidemark.store.LogReader;

/**
 * What a leader knows of one follower: its log end offset (from its last fetch), when it last fetched and when it
 * was last caught up, the incarnation of its host, the high watermark last sent to it, and its parked fetch (a
 * fetch with nothing new, held until data arrives or the wait expires).
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

    void park(final long correlationId, final long fetchOffset, final int maxBytes, final long deadlineMs)
    {
        parked = true;
        parkedCorrelationId = correlationId;
        parkedFetchOffset = fetchOffset;
        parkedMaxBytes = maxBytes;
        parkedDeadlineMs = deadlineMs;
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
