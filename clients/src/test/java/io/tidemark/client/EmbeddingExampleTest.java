package io.tidemark.client;

import io.tidemark.replication.PartitionState;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The README's client embedding example, verbatim between the markers, compiled and run. */
class EmbeddingExampleTest
{
    @TempDir
    Path dataDir;

    @Test
    void readmeExample()
    {
        final List<String> consumed = new ArrayList<>();
        final List<Throwable> failures = new ArrayList<>();
        final List<Long> acknowledged = new ArrayList<>();
        // README-EXAMPLE-START
        ReplicationContext replication = new ReplicationContext().minInsyncReplicas(2);
        try (ReplicationCluster cluster = ReplicationCluster.start(dataDir, 3, replication))
        {
            cluster.createTopic("orders", 4, 3);                      // 4 partitions, replication factor 3
            cluster.awaitLeaders("orders", 10_000);

            try (Producer producer = new Producer(cluster, new ProducerContext().lingerMs(2)))  // acks=all, idempotent
            {
                ProducerRecord record = new ProducerRecord().topic("orders");  // reusable: a send copies it
                long offset = producer.send(record.key("order-42").value("BUY 100 XYZ @ 9.99"));  // sync: the offset
                producer.sendAsync(record.key("order-42").value("CANCEL"),     // same key, same partition, after it
                    (tp, at, error) -> { if (error != null) failures.add(error); });
                producer.flush();                                      // every send above is complete
                acknowledged.add(offset);
            }

            try (Consumer consumer = new Consumer(cluster, new ConsumerContext()
                .groupId("billing")                                    // the group's committed offsets
                .autoOffsetReset(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                consumer.assign(cluster.partitions("orders").stream().map(PartitionState::topicPartition).toList());
                while (consumed.size() < 2)
                {
                    consumer.poll((tp, r) -> consumed.add(r.valueAsString()), 1_000);  // up to the high watermark
                }
                consumer.commitSync();                                 // after processing: where to resume
            }
        }
        // README-EXAMPLE-END
        assertEquals(List.of("BUY 100 XYZ @ 9.99", "CANCEL"), consumed);
        assertEquals(List.of(), failures);
        assertEquals(List.of(0L), acknowledged, "the first record of its partition");
    }
}
