package io.tidemark.replication.protocol;

/**
 * Control-plane messages between replica hosts and the controller (objects on queues: they are rare, unlike the
 * fetch path's flyweights).
 * <p>
 * Internal: public only so that the replication packages share it; not part of the API.
 */
public sealed interface ControlMessage
{
    /** A message that names one host: the host it speaks for, or the host it is for. */
    sealed interface HostMessage extends ControlMessage
    {
        /** @return the host the message names. */
        int hostId();
    }

    /**
     * Host to controller: a host (re)starts, or re-registers after its session expired. {@code possibleDataLoss}:
     * the machine restarted since the host last ran without a clean stop (power loss), so unflushed records of
     * its replicas may be gone.
     */
    record RegisterHost(int hostId, long incarnation, boolean possibleDataLoss) implements HostMessage
    {
    }

    /**
     * Host to controller: liveness, with a digest of the partition states the host has applied. When it differs
     * from the controller's, the controller sends the host its partitions' states again: an update lost on the way
     * (a dropped message, a short disconnection) is repaired within a heartbeat.
     */
    record Heartbeat(int hostId, long incarnation, long stateDigest) implements HostMessage
    {
    }

    /** Host to controller: clean shutdown; leadership moves away at once. */
    record UnregisterHost(int hostId, long incarnation) implements HostMessage
    {
    }

    /**
     * Leader to controller: change the ISR, if the partition is still at {@code expectedVersion}.
     * {@code incarnations[i]} is the incarnation of host {@code newIsr[i]} whose fetches the leader counted (-1: not
     * stated); a host added to the ISR must still be in that incarnation, so that a fetch from a host that has died
     * since (its request delayed in the network) cannot bring the host's next incarnation, which may have lost
     * records, into the ISR.
     */
    record AlterIsr(int partitionId, int leaderId, int leaderEpoch, int expectedVersion, int[] newIsr,
        long[] incarnations) implements ControlMessage
    {
        /** A request that states no incarnation (a host added is then accepted in whatever incarnation is alive). */
        public AlterIsr(final int partitionId, final int leaderId, final int leaderEpoch, final int expectedVersion,
            final int[] newIsr)
        {
            this(partitionId, leaderId, leaderEpoch, expectedVersion, newIsr, null);
        }

        public long incarnationOf(final int host)
        {
            if (null != incarnations)
            {
                for (int i = 0; i < newIsr.length && i < incarnations.length; i++)
                {
                    if (newIsr[i] == host)
                    {
                        return incarnations[i];
                    }
                }
            }
            return -1;
        }
    }

    /** Controller to host: a partition's current state (leader, epoch, ISR). */
    record PartitionUpdate(PartitionState state) implements ControlMessage
    {
    }

    /** Controller to leader: outcome of an ISR change request, with the state now stored. */
    record AlterIsrResponse(int partitionId, boolean accepted, PartitionState current) implements ControlMessage
    {
    }

    /** Controller to host: the registration of this incarnation is done; heartbeats may start. */
    record Registered(int hostId, long incarnation) implements HostMessage
    {
    }

    /** Controller to host: the host's session is gone (no heartbeat within the timeout); it must re-register. */
    record SessionExpired(int hostId) implements HostMessage
    {
    }

    /**
     * Controller to host, every heartbeat interval: the controller of {@code controllerEpoch} is alive. A host that
     * has not heard it from the host elected as controller for longer than the controller timeout suspects the
     * controller dead (see the host module's controller role and {@code ZooKeeperControllerFailover}); a message of
     * an older epoch than one the host already heard is stale and ignored. {@code hostId} is the destination.
     */
    record ControllerAlive(int hostId, long controllerEpoch) implements HostMessage
    {
    }
}
