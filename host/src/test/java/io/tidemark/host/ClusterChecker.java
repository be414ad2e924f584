package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.RemoteReader;
import io.tidemark.replication.protocol.PartitionState;

import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The simulation's final checks applied to a multi-process run, from the outside: the client's log of
 * acknowledgements against a re-read of every replica's files after the hosts stopped. Durability (every acks=all
 * acknowledgement is in the committed log at its offset), exactly once (no value twice: idempotence), and replica
 * agreement (every in-sync replica holds the same records below the high watermark, and no replica holds a
 * different record at a committed offset).
 */
final class ClusterChecker
{
    private ClusterChecker()
    {
    }

    static void assertAckedPresentOnce(final Map<Long, String> acked, final Map<Long, String> log,
        final String where)
    {
        for (final Map.Entry<Long, String> e : acked.entrySet())
        {
            if (!e.getValue().equals(log.get(e.getKey())))
            {
                fail(where + ": acknowledged record '" + e.getValue() + "' at offset " + e.getKey() + " is " +
                    (null == log.get(e.getKey()) ? "missing" : "'" + log.get(e.getKey()) + "'"));
            }
        }
        final Set<String> seen = new HashSet<>();
        for (final Map.Entry<Long, String> e : new TreeMap<>(log).entrySet())
        {
            if (!seen.add(e.getValue()))
            {
                fail(where + ": '" + e.getValue() + "' appears twice (again at offset " + e.getKey() + ")");
            }
        }
    }

    /** @return the partition's high watermark as its leader reports it (waits for an answer). */
    static long highWatermark(final TidemarkClient client, final String topic, final int partition)
        throws InterruptedException
    {
        try (RemoteReader reader = client.openReader(topic, partition))
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline)
            {
                reader.seek(0);
                reader.poll((r) -> { }, 1);
                if (reader.highWatermark() >= 0)
                {
                    return reader.highWatermark();
                }
                Thread.sleep(20);
            }
        }
        throw new AssertionError("no high watermark from the leader of " + topic + "-" + partition);
    }

    /**
     * The end of a drill on one partition: take its high watermark and last state, stop every host, and check each
     * replica's files against the acknowledgements ({@link #checkReplicas}).
     *
     * @return the high watermark the replicas were checked against.
     */
    static long stopAllAndCheckReplicas(final ProcessCluster cluster, final String topic,
        final int partition, final Map<Long, String> acked) throws InterruptedException
    {
        final long highWatermark = highWatermark(cluster.client(), topic, partition);
        final PartitionState last = cluster.state(topic, partition);
        for (int id = 0; id < cluster.hostCount(); id++)
        {
            cluster.stop(id);
        }
        checkReplicas(cluster, topic, partition, last, highWatermark, acked);
        return highWatermark;
    }

    /**
     * Re-read each replica's files (hosts stopped) and check them against the acknowledgements.
     *
     * @param state         the partition's last state (its ISR).
     * @param highWatermark the leader's high watermark before the stop.
     */
    static void checkReplicas(final ProcessCluster cluster, final String topic, final int partition,
        final PartitionState state, final long highWatermark, final Map<Long, String> acked)
    {
        final long maxAcked = acked.keySet().stream().mapToLong(Long::longValue).max().orElse(-1);
        assertTrue(highWatermark > maxAcked, "high watermark " + highWatermark + " covers every acknowledged " +
            "offset (max " + maxAcked + ")");
        Map<Long, String> reference = null;
        int referenceHost = -1;
        for (final int host : state.assignedReplicas())
        {
            final Map<Long, String> replica = cluster.readReplica(host, topic, partition);
            final boolean inSync = state.inIsr(host);
            if (inSync)
            {
                assertAckedPresentOnce(acked, replica, "replica on host " + host);
                for (long offset = 0; offset < highWatermark; offset++)
                {
                    assertTrue(replica.containsKey(offset), "in-sync replica on host " + host +
                        " lacks committed offset " + offset);
                }
            }
            if (null == reference && inSync)
            {
                reference = replica;
                referenceHost = host;
            }
        }
        for (final int host : state.assignedReplicas())
        {
            final Map<Long, String> replica = cluster.readReplica(host, topic, partition);
            for (long offset = 0; offset < highWatermark; offset++)
            {
                final String mine = replica.get(offset);
                if (null != mine)
                {
                    assertEquals(reference.get(offset), mine, "host " + host + " and host " + referenceHost +
                        " disagree at committed offset " + offset);
                }
            }
        }
        System.out.println("checker: " + topic + "-" + partition + " acked=" + acked.size() + " high_watermark=" +
            highWatermark + " replicas=" + state.assignedReplicas().length + " isr=" + state.isr().length +
            " lost=0 duplicates=0 disagreements=0");
    }
}
