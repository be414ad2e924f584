package io.tidemark.zookeeper;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.TopicPartition;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a test produced to one partition, by the offset each record was acknowledged at, and the check that the
 * partition serves every one of them there. Not thread-safe.
 */
final class AckedRecords
{
    private final Map<Long, String> byOffset = new HashMap<>();
    private final ProducerRecord record;

    AckedRecords(final TopicPartition tp)
    {
        record = new ProducerRecord().topic(tp.topic()).partition(tp.partition());
    }

    /** Send {@code prefix-0} to {@code prefix-<count-1>}, each waiting for its acknowledgement. */
    void send(final Producer producer, final String prefix, final int count)
    {
        for (int i = 0; i < count; i++)
        {
            final String value = prefix + "-" + i;
            byOffset.put(producer.send(record.value(value)), value);
        }
    }

    int size()
    {
        return byOffset.size();
    }

    /** Read the partition from its start (for 10 s at most) and check every acknowledged record at its offset. */
    void assertReadBack(final ReplicationCluster cluster, final TopicPartition tp)
    {
        final Map<Long, String> read = new HashMap<>();
        try (PartitionReader reader = cluster.openReader(tp))
        {
            reader.seek(0);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (read.size() < byOffset.size() && System.nanoTime() < deadline)
            {
                reader.poll((r) -> read.put(r.offset(), r.valueAsString()), 1_000);
            }
        }
        for (final Map.Entry<Long, String> e : byOffset.entrySet())
        {
            assertEquals(e.getValue(), read.get(e.getKey()), "record at offset " + e.getKey());
        }
    }
}
