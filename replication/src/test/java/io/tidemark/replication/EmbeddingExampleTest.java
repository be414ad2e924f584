package io.tidemark.replication;

import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The example of docs/replication.md, "Embedding a replicated topic", compiled and run. The build's documentation
 * check (module docs-check) fails unless the lines between the markers are the page's code block, line for line.
 */
class EmbeddingExampleTest
{
    @TempDir
    Path dataDir;

    @Test
    void replicationPageExample() throws Exception
    {
        final List<String> consumed = new ArrayList<>();
        // EXAMPLE-START replication
        ReplicationContext ctx = new ReplicationContext()
            .minInsyncReplicas(2)                                        // acks=all needs 2 in-sync copies
            .logContextFactory(dir -> new LogContext().logDir(dir)       // each replica's log
                .segmentBytes(64L * 1024 * 1024));
        try (ReplicationCluster cluster = ReplicationCluster.start(dataDir, 3, ctx))   // 3 replica hosts
        {
            cluster.createTopic("orders", 4, 3);                         // 4 partitions, replication factor 3
            cluster.awaitLeaders("orders", 10_000);

            ConcurrentHashMap<Long, CompletableFuture<Long>> inFlight = new ConcurrentHashMap<>();
            int session = cluster.sessions().register((tp, correlationId, offset, error) ->
            {
                CompletableFuture<Long> f = inFlight.remove(correlationId);
                if (error == ReplicationError.NONE) f.complete(offset);
                else if (error.retriable()) f.complete(-1L);          // e.g. a leader change: send again
                else f.completeExceptionally(new IllegalStateException(error.name()));
            });

            TopicPartition tp = new TopicPartition("orders", 0);
            UnsafeBuffer key = new UnsafeBuffer("order-42".getBytes());
            UnsafeBuffer value = new UnsafeBuffer("BUY 100 XYZ @ 9.99".getBytes());
            long offset = -1;
            for (long correlationId = 1; offset < 0; correlationId++)
            {
                CompletableFuture<Long> acked = new CompletableFuture<>();
                inFlight.put(correlationId, acked);
                ReplicationError queued = cluster.produce(session, tp, correlationId, Acks.ALL, 5_000,
                    key, 0, key.capacity(), value, 0, value.capacity());  // non-blocking; NONE = queued
                if (queued != ReplicationError.NONE)                      // not queued (no leader yet, back-pressured)
                {
                    inFlight.remove(correlationId);
                    if (!queued.retriable()) throw new IllegalStateException(queued.name());
                    Thread.sleep(10);
                    continue;
                }
                offset = acked.get(5, TimeUnit.SECONDS);                  // committed on every in-sync replica, or -1
            }

            try (PartitionReader reader = cluster.openReader(tp))          // reads stop at the high watermark
            {
                reader.seek(offset);
                reader.poll(record -> consumed.add(record.valueAsString()), 100);
            }
        }
        // EXAMPLE-END replication
        assertEquals(List.of("BUY 100 XYZ @ 9.99"), consumed);
    }
}
