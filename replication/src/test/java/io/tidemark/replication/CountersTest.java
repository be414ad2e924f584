package io.tidemark.replication;

import io.tidemark.store.file.CountersFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Per-partition replication counters, read from outside through the host's counters file. */
class CountersTest
{
    @TempDir
    Path root;

    @Test
    void leaderEpochHighWatermarkIsrSizeAndReplicaPositionsAreCounters() throws Exception
    {
        try (Harness h = new Harness(root, 3, new ReplicationContext()))
        {
            final TopicPartition tp = h.topic("t", 1, 3);
            for (int i = 0; i < 5; i++)
            {
                h.produceAndWait(tp, Acks.ALL, "m" + i, 100);
            }
            h.advance(100);
            final int leader = h.leader(tp);
            final Map<String, Long> values = new HashMap<>();
            try (CountersFile file = CountersFile.openReadOnly(root.resolve("host-" + leader).resolve("counters.dat")))
            {
                file.reader().forEach((id, type, key, label) -> values.put(label, file.reader().getCounterValue(id)));
            }
            final String name = tp + " host=" + leader;
            assertEquals(leader, values.get("partition-leader: " + name));
            assertEquals(0, values.get("partition-leader-epoch: " + name));
            assertEquals(5, values.get("partition-high-watermark: " + name));
            assertEquals(3, values.get("partition-isr-size: " + name));
            for (int host = 0; host < 3; host++)
            {
                assertEquals(5, values.get("replica-log-end-offset: " + name + " replica=" + host), "replica " + host);
                assertEquals(0, values.get("follower-lag: " + name + " replica=" + host));
            }
        }
    }
}
