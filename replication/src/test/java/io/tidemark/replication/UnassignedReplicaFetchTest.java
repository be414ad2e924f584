package io.tidemark.replication;

import io.tidemark.replication.protocol.FetchMessages;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.spi.Transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A host serves fetches of a partition only to the partition's assigned replicas: a fetch from any other host
 * (a stale or misconfigured one) is answered with NOT_ASSIGNED_REPLICA and moves nothing (no follower state, no
 * ISR change, no high watermark).
 */
class UnassignedReplicaFetchTest
{
    @TempDir
    Path tmp;

    /** Records the error of every fetch response sent to host 3, then passes it on. */
    private static final class Recording extends ForwardingTransport
    {
        final InProcessTransport delegate = new InProcessTransport(4, 1 << 20, 4 << 20);
        final Queue<ReplicationError> toHost3 = new ConcurrentLinkedQueue<>();
        private final FetchMessages.FetchResponse response = new FetchMessages.FetchResponse();

        @Override
        Transport delegate()
        {
            return delegate;
        }

        @Override
        public synchronized boolean sendResponse(final int fromHost, final int toHost, final int msgTypeId,
            final DirectBuffer buffer, final int offset, final int length)
        {
            if (toHost == 3 && msgTypeId == FetchMessages.FETCH_RESPONSE)
            {
                final UnsafeBuffer copy = new UnsafeBuffer(new byte[length]);
                copy.putBytes(0, buffer, offset, length);
                toHost3.add(response.wrap(copy, 0).error());
            }
            return delegate.sendResponse(fromHost, toHost, msgTypeId, buffer, offset, length);
        }
    }

    @Test
    void aFetchFromAHostOutsideTheAssignedReplicasIsRefused()
    {
        final Recording transport = new Recording();
        // Lag and sessions a loaded machine's starved threads do not run out: only the stranger could change the ISR.
        final ReplicationContext ctx = new ReplicationContext().threadingMode(ReplicationContext.ThreadingMode.SHARED)
            .replicaLagTimeMaxMs(60_000).hostSessionTimeoutMs(60_000);
        try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 4, ctx, transport))
        {
            // partition 0 of the topic is on hosts 0, 1, 2: host 3 is not one of its replicas
            final PartitionState state = cluster.createTopic("t", 1, 3).get(0);
            assertTrue(cluster.awaitLeaders("t", 60_000));
            assertTrue(!state.assigned(3), state.toString());
            final TopicPartition tp = new TopicPartition("t", 0);
            final PartitionState current = cluster.state(tp);
            final Replica leader = cluster.leaderReplica(tp);
            final long hwBefore = leader.highWatermark.get();

            final UnsafeBuffer request = new UnsafeBuffer(new byte[FetchMessages.FetchRequest.LENGTH]);
            new FetchMessages.FetchRequest().wrap(request, 0).encode(current.partitionId(), 3, current.leaderEpoch(),
                1 << 20, 1, 0, 42L);
            assertTrue(transport.sendRequest(3, current.leader(), FetchMessages.FETCH_REQUEST, request, 0,
                request.capacity()));
            assertTrue(cluster.await(() -> transport.toHost3.contains(ReplicationError.NOT_ASSIGNED_REPLICA), 60_000),
                "responses to host 3: " + transport.toHost3);

            assertEquals(null, leader.leaderState.follower(3), "no follower state for a stranger");
            assertEquals(3, cluster.state(tp).isr().length);
            assertEquals(hwBefore, leader.highWatermark.get());
        }
    }
}
