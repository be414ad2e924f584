package io.tidemark.replication;


/**
 * Produce requests appended by a leader and waiting for their acks condition (acks=all: the high watermark passed
 * their last offset; acks=N: N members of the ISR hold it). Kept in preallocated parallel arrays in append order:
 * registering, checking and completing allocate nothing. Owned by the leader's host agent thread.
 */
final class PendingAcks
{
    private int[] sessions = new int[64];
    private long[] correlations = new long[64];
    private long[] baseOffsets = new long[64];
    private long[] nextOffsets = new long[64];
    private int[] acks = new int[64];
    private long[] deadlines = new long[64];
    private int size;

    int size()
    {
        return size;
    }

    void add(final int session, final long correlationId, final long baseOffset, final long nextOffset,
        final int acksMode, final long deadlineMs)
    {
        if (size == sessions.length)
        {
            grow();
        }
        sessions[size] = session;
        correlations[size] = correlationId;
        baseOffsets[size] = baseOffset;
        nextOffsets[size] = nextOffset;
        acks[size] = acksMode;
        deadlines[size] = deadlineMs;
        size++;
    }

    private void grow()
    {
        final int n = sessions.length * 2;
        sessions = java.util.Arrays.copyOf(sessions, n);
        correlations = java.util.Arrays.copyOf(correlations, n);
        baseOffsets = java.util.Arrays.copyOf(baseOffsets, n);
        nextOffsets = java.util.Arrays.copyOf(nextOffsets, n);
        acks = java.util.Arrays.copyOf(acks, n);
        deadlines = java.util.Arrays.copyOf(deadlines, n);
    }

    /**
     * Complete every request whose condition holds, fail those that timed out or whose ISR shrank below
     * min.insync.replicas (acks=all).
     *
     * @return requests completed.
     */
    int complete(final LeaderState leader, final TopicPartition tp, final ProducerSessions listeners,
        final long nowMs, final int minInsyncReplicas)
    {
        int done = 0;
        int kept = 0;
        final long highWatermark = leader.highWatermark();
        final int isrSize = leader.isrSize();
        for (int i = 0; i < size; i++)
        {
            final long next = nextOffsets[i];
            final int mode = acks[i];
            ReplicationError outcome = null;
            if (mode == Acks.ALL)
            {
                if (highWatermark >= next)
                {
                    outcome = ReplicationError.NONE;
                }
                else if (isrSize < minInsyncReplicas)
                {
                    outcome = ReplicationError.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
                }
            }
            else if (leader.isrMembersHolding(next) >= Math.min(mode, isrSize))
            {
                outcome = ReplicationError.NONE; // acks=N: N ISR members hold it; N >= |ISR| means all of them
            }
            if (null == outcome && nowMs >= deadlines[i])
            {
                outcome = ReplicationError.REQUEST_TIMED_OUT;
            }
            if (null != outcome)
            {
                notify(listeners, tp, sessions[i], correlations[i], baseOffsets[i], outcome);
                done++;
            }
            else
            {
                move(i, kept++);
            }
        }
        size = kept;
        return done;
    }

    /** Fail everything (leadership lost): the outcome is unknown to the clients. */
    void failAll(final TopicPartition tp, final ProducerSessions listeners,
        final ReplicationError error)
    {
        for (int i = 0; i < size; i++)
        {
            notify(listeners, tp, sessions[i], correlations[i], baseOffsets[i], error);
        }
        size = 0;
    }

    private void move(final int from, final int to)
    {
        if (from != to)
        {
            sessions[to] = sessions[from];
            correlations[to] = correlations[from];
            baseOffsets[to] = baseOffsets[from];
            nextOffsets[to] = nextOffsets[from];
            acks[to] = acks[from];
            deadlines[to] = deadlines[from];
        }
    }

    static void notify(final ProducerSessions listeners, final TopicPartition tp, final int session,
        final long correlationId, final long baseOffset, final ReplicationError error)
    {
        listeners.notify(tp, session, correlationId, baseOffset, error);
    }
}
