package io.tidemark.client;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.TopicPartition;

import java.util.ArrayList;
import java.util.List;

/** Test helpers reading what a partition holds, and what a consumer gets. */
final class Logs
{
    private Logs()
    {
    }

    /** @return every committed record of the partition (below the leader's high watermark), as text. */
    static List<String> committed(final ReplicationCluster cluster, final TopicPartition tp)
    {
        final List<String> out = new ArrayList<>();
        try (PartitionReader reader = cluster.openReader(tp))
        {
            reader.seek(Math.max(0, reader.logStartOffset()));
            while (reader.poll((r) -> out.add(r.valueAsString()), 1000) > 0)
            {
                // read on
            }
        }
        return out;
    }

    /** @return what the consumer polls until a poll returns nothing, as text. */
    static List<String> drain(final Consumer consumer)
    {
        final List<String> out = new ArrayList<>();
        while (consumer.poll((tp, r) -> out.add(r.valueAsString())) > 0)
        {
            // read on
        }
        return out;
    }

    /** Wait (threaded cluster) until the partition's high watermark reaches {@code offset}. */
    static void awaitHighWatermark(final ReplicationCluster cluster, final TopicPartition tp, final long offset)
    {
        try (PartitionReader reader = cluster.openReader(tp))
        {
            if (!cluster.await(() -> reader.highWatermark() >= offset, 60_000))
            {
                throw new AssertionError(tp + " high watermark " + reader.highWatermark() + " never reached " + offset +
                    " (log end " + reader.logEndOffset() + "; partition " + cluster.state(tp) + ")");
            }
        }
    }
}
