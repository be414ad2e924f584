package io.tidemark.client;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The examples of README.md ("A replicated topic") and docs/clients.md, compiled and run. The build's documentation
 * check (module docs-check) fails unless the lines between each pair of markers are the page's code block, line for
 * line.
 */
class EmbeddingExampleTest
{
    @TempDir
    Path dataDir;

    @Test
    void clientsPageExample()
    {
        final List<String> consumed = new ArrayList<>();
        final List<Throwable> failures = new ArrayList<>();
        final List<Long> acknowledged = new ArrayList<>();
        // EXAMPLE-START clients
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
        // EXAMPLE-END clients
        assertEquals(List.of("BUY 100 XYZ @ 9.99", "CANCEL"), consumed);
        assertEquals(List.of(), failures);
        assertEquals(List.of(0L), acknowledged, "the first record of its partition");
    }

    @Test
    void readmeExample()
    {
        final PrintStream stdout = System.out;
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try
        {
            // EXAMPLE-START readme
            try (ReplicationCluster cluster = ReplicationCluster.start(dataDir, 3, new ReplicationContext().minInsyncReplicas(2)))
            {
                cluster.createTopic("orders", 4, 3);                            // 4 partitions, replication factor 3
                cluster.awaitLeaders("orders", 10_000);
                try (Producer producer = new Producer(cluster, new ProducerContext()))
                {
                    long offset = producer.send(new ProducerRecord().topic("orders").key("order-42").value("BUY 100 XYZ"));
                    System.out.println("committed on every in-sync replica at offset " + offset);
                }
            }
            // EXAMPLE-END readme
        }
        finally
        {
            System.setOut(stdout);
        }
        assertTrue(printed.toString(StandardCharsets.UTF_8).contains("committed on every in-sync replica at offset 0"),
            printed.toString(StandardCharsets.UTF_8));
    }
}
