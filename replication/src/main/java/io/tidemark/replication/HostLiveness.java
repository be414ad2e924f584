package io.tidemark.replication;

/**
 * A second source of host liveness for the controller, beside the hosts' heartbeats: a host it reports down is
 * treated as one whose session expired (its leaderships move, it leaves the ISRs), whatever its heartbeats say. The
 * ZooKeeper source (module {@code zookeeper}) reports a host down when its ephemeral registration node is gone,
 * that is, when its ZooKeeper session ended, as the seed design has it. The default reports nobody down.
 * <p>
 * Called on the controller's agent thread on every duty cycle: answer from memory, never with a round trip.
 */
@FunctionalInterface
public interface HostLiveness
{
    /** Nobody is ever reported down: heartbeats alone decide. */
    HostLiveness HEARTBEATS_ONLY = (hostId) -> false;

    /** @return whether the host is known to be down. */
    boolean isDown(int hostId);
}
