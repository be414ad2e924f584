package io.tidemark.host;

import io.tidemark.replication.spi.HostLiveness;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;

/**
 * A host process's liveness source for its controller: a host is down when its ZooKeeper registration is gone (its
 * session ended) or when the process of the incarnation registered now was seen to exit ({@link ProcessExitWatch}),
 * whichever comes first; the latter within milliseconds of a process's end instead of a heartbeat session's
 * {@code host.session.timeout.ms}. The incarnations are ZooKeeper's: a new incarnation's registration resets the
 * exit of the previous one, so a restarted host is up again as soon as it registers.
 * <p>
 * Thread-safe: both sources answer from memory.
 */
final class HostExitLiveness implements HostLiveness
{
    private final ZooKeeperHostLiveness registrations;
    private final ProcessExitWatch exits;

    HostExitLiveness(final ZooKeeperHostLiveness registrations, final ProcessExitWatch exits)
    {
        this.registrations = registrations;
        this.exits = exits;
    }

    @Override
    public boolean isDown(final int hostId)
    {
        return registrations.isDown(hostId) || processExited(hostId);
    }

    /** @return whether the process of the host's incarnation registered now was seen to exit. */
    boolean processExited(final int hostId)
    {
        return exits.exited(hostId, registrations.registeredIncarnation(hostId));
    }

    @Override
    public long registeredIncarnation(final int hostId)
    {
        return registrations.registeredIncarnation(hostId);
    }
}
