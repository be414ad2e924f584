package io.tidemark.client.remote;

import io.tidemark.replication.ReplicationError;
import org.agrona.DirectBuffer;

/**
 * Fault drills through a {@link TidemarkClient}, for tests only: requests the client's own routing would never send.
 */
public final class FaultDrills
{
    private FaultDrills()
    {
    }

    /**
     * Send a produce request to a given host, whatever the partition state says (e.g. to a deposed leader); not
     * idempotent (no producer id).
     *
     * @return as {@link TidemarkClient#send}.
     */
    public static ReplicationError sendTo(final TidemarkClient client, final int hostId, final int session,
        final int partitionId, final long correlationId, final int acks, final int timeoutMs,
        final DirectBuffer records, final int length)
    {
        return client.sendTo(hostId, session, partitionId, correlationId, acks, timeoutMs, records, length);
    }
}
