package io.tidemark.replication;

import io.tidemark.replication.protocol.FetchMessages;
import io.tidemark.replication.protocol.FetchSets;
import io.tidemark.replication.spi.Transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower fetches every partition it follows from one leader in one FETCH_SET, and the leader answers in one
 * FETCH_RESPONSE_SET: many partitions replicate with sets on the wire, to the same high watermarks as one at a time;
 * a set that is forged (an entry naming another replica) or truncated is dropped whole and counted.
 */
class FetchSetTest
{
    @TempDir
    Path tmp;

    /** Counts the messages of each type, then passes them on. */
    private static final class Counting extends ForwardingTransport
    {
        final InProcessTransport delegate = new InProcessTransport(3, 1 << 20, 16 << 20);
        final Map<Integer, AtomicLong> requests = new ConcurrentHashMap<>();
        final Map<Integer, AtomicLong> responses = new ConcurrentHashMap<>();

        @Override
        Transport delegate()
        {
            return delegate;
        }

        long requests(final int type)
        {
            return requests.computeIfAbsent(type, (t) -> new AtomicLong()).get();
        }

        long responses(final int type)
        {
            return responses.computeIfAbsent(type, (t) -> new AtomicLong()).get();
        }

        @Override
        public boolean sendRequest(final int fromHost, final int toHost, final int msgTypeId,
            final DirectBuffer buffer, final int offset, final int length)
        {
            requests.computeIfAbsent(msgTypeId, (t) -> new AtomicLong()).incrementAndGet();
            return delegate.sendRequest(fromHost, toHost, msgTypeId, buffer, offset, length);
        }

        @Override
        public boolean sendResponse(final int fromHost, final int toHost, final int msgTypeId,
            final DirectBuffer buffer, final int offset, final int length)
        {
            responses.computeIfAbsent(msgTypeId, (t) -> new AtomicLong()).incrementAndGet();
            return delegate.sendResponse(fromHost, toHost, msgTypeId, buffer, offset, length);
        }

        @Override
        public int maxMessageLength()
        {
            return delegate.maxMessageLength();
        }
    }

    private static ReplicationContext ctx()
    {
        // Lag and sessions a loaded machine's starved threads do not run out: the ISR stays whole.
        return new ReplicationContext().threadingMode(ReplicationContext.ThreadingMode.SHARED)
            .replicaLagTimeMaxMs(60_000).hostSessionTimeoutMs(60_000).transportResponseRingBytes(16 << 20);
    }

    @Test
    void manyPartitionsReplicateInSetsToTheSameHighWatermarks()
    {
        final Counting transport = new Counting();
        try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 3, ctx(), transport))
        {
            final int partitions = 12;
            cluster.createTopic("t", partitions, 3);
            assertTrue(cluster.awaitLeaders("t", 60_000));
            final Map<Long, ReplicationError> outcomes = new ConcurrentHashMap<>();
            final int session = cluster.sessions().register((tp, id, offset, error) -> outcomes.put(id, error));
            final UnsafeBuffer value = new UnsafeBuffer("value".getBytes(StandardCharsets.UTF_8));
            final int perPartition = 200;
            long id = 0;
            for (int round = 0; round < perPartition; round++)
            {
                for (int p = 0; p < partitions; p++)
                {
                    final TopicPartition tp = new TopicPartition("t", p);
                    final long correlationId = id++;
                    while (cluster.produce(session, tp, correlationId, Acks.ALL, 30_000, null, 0, -1, value, 0,
                        value.capacity()) != ReplicationError.NONE)
                    {
                        Thread.onSpinWait(); // a full produce ring: the leader drains it
                    }
                }
            }
            final long sent = id;
            assertTrue(cluster.await(() -> outcomes.size() == sent, 120_000), outcomes.size() + " of " + sent);
            assertTrue(outcomes.values().stream().allMatch((e) -> e == ReplicationError.NONE), outcomes.toString());
            for (int p = 0; p < partitions; p++)
            {
                final TopicPartition tp = new TopicPartition("t", p);
                final Replica leader = cluster.leaderReplica(tp);
                assertEquals(perPartition, leader.highWatermark.get());
                for (int host = 0; host < 3; host++)
                {
                    final Replica replica = cluster.replica(host, tp);
                    assertTrue(cluster.await(() -> replica.log.logEndOffset() == perPartition, 60_000),
                        tp + " on host " + host + ": log end " + replica.log.logEndOffset());
                }
            }
            assertTrue(transport.requests(FetchSets.FETCH_SET) > 0, "fetch sets sent: " + transport.requests);
            assertTrue(transport.responses(FetchSets.FETCH_RESPONSE_SET) > 0,
                "response sets sent: " + transport.responses);
        }
    }

    @Test
    void aForgedOrTruncatedSetIsDroppedWholeAndCounted()
    {
        final Counting transport = new Counting();
        try (ReplicationCluster cluster = ReplicationCluster.start(tmp, 3, ctx(), transport))
        {
            cluster.createTopic("t", 1, 3);
            assertTrue(cluster.awaitLeaders("t", 60_000));
            final TopicPartition tp = new TopicPartition("t", 0);
            final int leader = cluster.leaderOf(tp);
            final int follower = (leader + 1) % 3;
            final int other = (leader + 2) % 3;
            final int epoch = cluster.state(tp).leaderEpoch();
            final FetchServer server = cluster.host(leader).fetchServer();
            final long droppedBefore = server.droppedRequests();

            final UnsafeBuffer set = new UnsafeBuffer(new byte[FetchSets.ENTRIES_OFFSET +
                2 * FetchMessages.FetchRequest.LENGTH]);
            FetchSets.putHeader(set, 0, 2);
            final FetchMessages.FetchRequest request = new FetchMessages.FetchRequest();
            request.wrap(set, FetchSets.ENTRIES_OFFSET).encode(0, follower, epoch, 1 << 20, 1, 0, 77L);
            // the second entry claims the third host: the whole set is refused, the first entry included
            request.wrap(set, FetchSets.ENTRIES_OFFSET + FetchMessages.FetchRequest.LENGTH)
                .encode(0, other, epoch, 1 << 20, 1, 0, 78L);
            assertTrue(transport.sendRequest(follower, leader, FetchSets.FETCH_SET, set, 0, set.capacity()));
            assertTrue(cluster.await(() -> server.droppedRequests() == droppedBefore + 1, 60_000));

            request.wrap(set, FetchSets.ENTRIES_OFFSET + FetchMessages.FetchRequest.LENGTH)
                .encode(0, follower, epoch, 1 << 20, 1, 0, 78L);
            assertTrue(transport.sendRequest(follower, leader, FetchSets.FETCH_SET, set, 0, set.capacity() - 1));
            assertTrue(cluster.await(() -> server.droppedRequests() == droppedBefore + 2, 60_000));

            // the cluster keeps replicating
            final Map<Long, ReplicationError> outcomes = new ConcurrentHashMap<>();
            final int session = cluster.sessions().register((p, id, offset, error) -> outcomes.put(id, error));
            final UnsafeBuffer value = new UnsafeBuffer("after".getBytes(StandardCharsets.UTF_8));
            assertEquals(ReplicationError.NONE, cluster.produce(session, tp, 1, Acks.ALL, 30_000, null, 0, -1, value,
                0, value.capacity()));
            assertTrue(cluster.await(() -> outcomes.containsKey(1L), 60_000));
            assertEquals(ReplicationError.NONE, outcomes.get(1L));
        }
    }
}
