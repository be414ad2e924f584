package io.tidemark.replication;

import java.util.Arrays;

/**
 * Registry of producer sessions: a session id travels with every produce request, and the leader's host agent
 * finds the session's {@link ProduceListener} by it (an array read, no allocation). Registration is rare and
 * copy-on-write; lookups are lock-free from any thread.
 */
public final class ProducerSessions
{
    private volatile ProduceListener[] listeners = new ProduceListener[0];

    /**
     * @param listener receives the outcome of the session's requests.
     * @return the new session's id.
     */
    public synchronized int register(final ProduceListener listener)
    {
        final ProduceListener[] current = listeners;
        final ProduceListener[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = listener;
        listeners = next;
        return current.length;
    }

    /** Forget a session: later outcomes for it are dropped. */
    public synchronized void unregister(final int session)
    {
        final ProduceListener[] next = listeners.clone();
        if (session >= 0 && session < next.length)
        {
            next[session] = null;
        }
        listeners = next;
    }

    ProduceListener get(final int session)
    {
        final ProduceListener[] current = listeners;
        return session >= 0 && session < current.length ? current[session] : null;
    }

    void notify(final TopicPartition tp, final int session, final long correlationId, final long baseOffset,
        final ReplicationError error)
    {
        final ProduceListener listener = get(session);
        if (null != listener)
        {
            listener.onComplete(tp, correlationId, baseOffset, error);
        }
    }
}
