package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.replication.protocol.PartitionState;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The controller's sessions of its hosts: a host is alive while heartbeats arrive within the session timeout, in
 * the incarnation it registered with. A host the controller has not heard from yet (named by stored partition
 * state after a failover, or by a new topic) gets a grace session of unknown incarnation ({@code -1}) that its
 * first heartbeat adopts.
 * <p>
 * Owns the session table. Not thread-safe: every method but {@link #announce} runs under the {@link Controller}'s
 * monitor, which serializes its duty cycle and its admin calls. {@link #announce} runs on another thread and reads
 * only the volatile array of sessions, which is replaced, never changed in place, and the sessions' final host ids.
 */
final class HostSessions
{
    /** Outcome of {@link #heartbeat}: the session did not match (expired, another incarnation). */
    static final int HEARTBEAT_REJECTED = 0;
    /** Outcome of {@link #heartbeat}: the session was renewed. */
    static final int HEARTBEAT_RENEWED = 1;
    /** Outcome of {@link #heartbeat}: a grace session learned the host's incarnation from it and was renewed. */
    static final int HEARTBEAT_ADOPTED = 2;

    private final Map<Integer, Session> sessions = new HashMap<>();
    /** Replaced, never changed in place; volatile for {@link #announce}, which runs on another thread. */
    private volatile Session[] sessionArray = new Session[0];

    /** A host's session: alive while heartbeats arrive within the timeout. */
    static final class Session
    {
        private final int hostId;
        /** A grace session for a host no controller has seen register yet (a new topic names it). */
        private boolean neverRegistered;
        private long incarnation;
        private long lastHeartbeatMs;
        private boolean alive;

        private Session(final int hostId)
        {
            this.hostId = hostId;
        }

        int hostId()
        {
            return hostId;
        }

        boolean alive()
        {
            return alive;
        }

        /** @return whether the session is alive and heard nothing for more than {@code timeoutMs} by {@code now}. */
        boolean expired(final long now, final long timeoutMs)
        {
            return alive && now - lastHeartbeatMs > timeoutMs;
        }
    }

    private Session newSession(final int hostId)
    {
        final Session session = new Session(hostId);
        sessions.put(hostId, session);
        sessionArray = sessions.values().toArray(new Session[0]);
        return session;
    }

    /** @return every session; the array is not to be changed (iterated by the duty cycle, no allocation). */
    Session[] all()
    {
        return sessionArray;
    }

    /**
     * Hosts without a session get a grace session of one session timeout from {@code now} to (re-)appear before
     * they count as dead.
     *
     * @param firstSeen whether a new topic names them (no controller has seen them register yet).
     */
    void expect(final int[] hosts, final boolean firstSeen, final long now)
    {
        for (final int host : hosts)
        {
            if (!sessions.containsKey(host))
            {
                final Session session = newSession(host);
                session.lastHeartbeatMs = now;
                session.alive = true;
                session.incarnation = -1;
                session.neverRegistered = firstSeen;
            }
        }
    }

    /** Tell every host that has a session that the controller of {@code controllerEpoch} is alive (any thread). */
    void announce(final ControlChannel channel, final long controllerEpoch)
    {
        for (final Session session : sessionArray)
        {
            channel.toHost(session.hostId, new ControlMessage.ControllerAlive(session.hostId, controllerEpoch));
        }
    }

    /**
     * A grace session of a host that is alive and of unknown incarnation expires at {@code expiresAtMs} unless it
     * heartbeats (or earlier, if it would have anyway).
     */
    void shortenGrace(final int hostId, final long expiresAtMs, final long timeoutMs)
    {
        final Session session = sessions.get(hostId);
        if (null != session && session.alive && session.incarnation == -1)
        {
            session.lastHeartbeatMs = Math.min(session.lastHeartbeatMs, expiresAtMs - timeoutMs);
        }
    }

    /** Extend every session by {@code stalledMs} the controller did not run (its silence is not the hosts'). */
    void extend(final long stalledMs)
    {
        for (final Session session : sessionArray)
        {
            session.lastHeartbeatMs += stalledMs;
        }
    }

    /**
     * A heartbeat renews the session of the incarnation it names; a session of unknown incarnation (a new
     * controller's grace) is adopted by it: only a host that completed a registration heartbeats.
     *
     * @return {@link #HEARTBEAT_REJECTED}, {@link #HEARTBEAT_RENEWED} or {@link #HEARTBEAT_ADOPTED}.
     */
    int heartbeat(final int hostId, final long incarnation, final long now)
    {
        final Session session = sessions.get(hostId);
        if (null != session && session.alive && (session.incarnation == incarnation || session.incarnation == -1))
        {
            final boolean adopted = session.incarnation == -1;
            session.incarnation = incarnation;
            session.lastHeartbeatMs = now;
            return adopted ? HEARTBEAT_ADOPTED : HEARTBEAT_RENEWED;
        }
        return HEARTBEAT_REJECTED;
    }

    /**
     * The first step of a registration: a session for the host is made when it has none.
     *
     * @return whether the registration is a restart: the host has a live session of another incarnation (an
     *         unknown incarnation, a new controller's grace session, counts too: a running host re-registers only
     *         after its session expired), which the caller ends as a failure first.
     */
    boolean registering(final int hostId, final long incarnation)
    {
        final Session session = sessions.get(hostId);
        if (null == session)
        {
            newSession(hostId);
            return false;
        }
        return session.alive && session.incarnation != incarnation && !session.neverRegistered;
    }

    /** The last step of a registration (after {@link #registering}): the session is alive in {@code incarnation}. */
    void registered(final int hostId, final long incarnation, final long now)
    {
        final Session session = sessions.get(hostId);
        session.incarnation = incarnation;
        session.neverRegistered = false;
        session.lastHeartbeatMs = now;
        session.alive = true;
    }

    /** @return whether the host has a live session in {@code incarnation} (a departure it may announce). */
    boolean aliveAs(final int hostId, final long incarnation)
    {
        final Session session = sessions.get(hostId);
        return null != session && session.incarnation == incarnation && session.alive;
    }

    /** The host's session ends (expired, departed, restarted); it must have one. */
    void died(final int hostId)
    {
        sessions.get(hostId).alive = false;
    }

    boolean isAlive(final int host)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive;
    }

    /**
     * @return whether {@code host} is alive in the incarnation a leader counted ({@code -1}: not stated, any live
     *         one). A host whose incarnation this controller does not know yet (grace after a failover) does not
     *         qualify: the leader asks again once the host's heartbeats have told.
     */
    boolean isAliveIn(final int host, final long incarnation)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive && (incarnation < 0 || session.incarnation == incarnation);
    }

    /**
     * @return whether {@code host} has registered, or been heard from by heartbeat, and is alive: not merely given a
     *         grace session because partition state or a new topic names it.
     */
    boolean isRegistered(final int host)
    {
        final Session session = sessions.get(host);
        return null != session && session.alive && !session.neverRegistered && session.incarnation >= 0;
    }

    /** @return the live members of {@code hosts}, in their order. */
    int[] liveMembers(final int[] hosts)
    {
        return Arrays.stream(hosts).filter(this::isAlive).toArray();
    }

    /** @return the live members of {@code isr}, in the order of {@code ar}. */
    int[] liveInOrder(final int[] ar, final int[] isr)
    {
        return Arrays.stream(ar).filter((h) -> PartitionState.contains(isr, h) && isAlive(h)).toArray();
    }
}
