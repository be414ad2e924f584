package io.tidemark.client.remote;

import io.tidemark.replication.ReplicationError;
import org.agrona.DirectBuffer;

/**
 * Fault drills through a {@link TidemarkClient}, for tests only: requests the client's own routing would never send,
 * built from the client's parts (its links to hosts and its produce path), so that production code carries no hook
 * for them.
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
        return client.produce.send(client.links.linkTo(hostId), session, partitionId, correlationId, acks, timeoutMs,
            -1, (short)-1, -1, records, length);
    }
}
