package io.tidemark.replication.spi;

/**
 * A second source of host liveness for the controller, beside the hosts' heartbeats: a host it reports down is
 * treated as one whose session expired (its leaderships move, it leaves the ISRs), whatever its heartbeats say. The
 * ZooKeeper source (module {@code zookeeper}) reports a host down when its ephemeral registration node is gone,
 * that is, when its ZooKeeper session ended, as the seed design has it. The default reports nobody down.
 * <p>
 * A source may also say which incarnation each host registered with ({@link #registeredIncarnation}): then an
 * incarnation is never taken from a message. The controller registers a host only in that incarnation, and a
 * leader counts only fetches that carry it, so a forged or delayed message naming another incarnation can neither
 * reset a follower's position nor pass for a restart.
 * <p>
 * Called on the controller's and the hosts' agent threads: answer from memory, never with a round trip.
 */
@FunctionalInterface
public interface HostLiveness
{
    /** Nobody is ever reported down: heartbeats alone decide. */
    HostLiveness HEARTBEATS_ONLY = (hostId) -> false;

    /** {@link #registeredIncarnation} of a source that does not track incarnations (in one JVM). */
    long ANY_INCARNATION = -1;
    /** {@link #registeredIncarnation} of a host that is not registered now. */
    long NOT_REGISTERED = -2;

    /** @return whether the host is known to be down. */
    boolean isDown(int hostId);

    /**
     * @return the incarnation the host registered with (a positive number), {@link #NOT_REGISTERED} when it is not
     *         registered now, or {@link #ANY_INCARNATION} when this source does not track incarnations (the hosts
     *         of one JVM, which exchange no messages from outside): then the messages' incarnations are used, a
     *         newer one replacing an older.
     */
    default long registeredIncarnation(final int hostId)
    {
        return ANY_INCARNATION;
    }
}
