package io.tidemark.cli;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(Cli.Transcript.class)
class ClusterTest
{
    private static final String[] SMALL = {"--config", "segment.bytes=1048576", "--config", "pretouch.bytes=0"};

    @TempDir
    Path tmp;

    @Test
    void produceAndConsumeOnAnEmbeddedReplicatedTopic() throws Exception
    {
        final Path root = tmp.resolve("cluster");
        final Path lines = Files.writeString(tmp.resolve("orders.txt"), "o-1:BUY\no-2:SELL\no-3:HOLD\n");
        final Cli.Result produce = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"produce", "--cluster",
            root.toString(), "--topic", "orders", "--partition", "1", "--partitions", "2", "--key-separator", ":",
            "--input", lines.toString()}, SMALL));
        assertEquals(ExitCodes.OK, produce.exitCode(), produce.toString());
        assertEquals("produced 3 of 3 record(s) to topic orders (acks=all), partition 1 offsets 0..2\n",
            produce.out());
        assertTrue(produce.err().contains("created topic orders (2 partition(s), replication factor 3)"),
            produce.err());
        assertTrue(Files.isDirectory(root.resolve("host-2").resolve("orders-1")));

        final Cli.Result consume = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"consume", "--cluster",
            root.toString(), "--topic", "orders", "--partition", "1", "--format", "kv", "--key-separator", "="},
            SMALL));
        assertEquals(ExitCodes.OK, consume.exitCode(), consume.toString());
        assertEquals("o-1=BUY\no-2=SELL\no-3=HOLD\n", consume.out());

        final Cli.Result fromOffset = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"tail", "--cluster",
            root.toString(), "--topic", "orders", "--partition", "1", "--from-offset", "2", "--format", "value"},
            SMALL));
        assertEquals("HOLD\n", fromOffset.out(), fromOffset.toString());

        // Every replica's log is a log directory the other commands read.
        assertEquals(ExitCodes.OK, Cli.run("verify", root.resolve("host-0/orders-1").toString()).exitCode());

        final Cli.Result noTopic = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"tail", "--cluster",
            root.toString(), "--topic", "payments", "--partition", "0"}, SMALL));
        assertEquals(ExitCodes.IO, noTopic.exitCode(), noTopic.toString());
        assertTrue(noTopic.err().contains("no topic payments"), noTopic.err());
        final Cli.Result noPartition = Cli.run(DumpVerifyRecoverTest.concat(new String[] {"tail", "--cluster",
            root.toString(), "--topic", "orders", "--partition", "5"}, SMALL));
        assertEquals(ExitCodes.USAGE, noPartition.exitCode(), noPartition.toString());
        assertEquals(ExitCodes.USAGE, Cli.run("tail", "--cluster", root.toString(), "--topic", "orders")
            .exitCode());
    }

    @Test
    void statShowsHighWatermarkIsrAndLagOfARunningCluster() throws Exception
    {
        final Path root = tmp.resolve("cluster");
        final ReplicationContext ctx = new ReplicationContext().minInsyncReplicas(2)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(1 << 20).pretouchBytes(0));
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, ctx))
        {
            cluster.createTopic("orders", 2, 3);
            assertTrue(cluster.awaitLeaders("orders", 60_000));
            try (Producer producer = new Producer(cluster, new ProducerContext()))
            {
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord().topic("orders").partition(0).value("v" + i));
                }
            }
            // on a busy machine a follower may drop out of the ISR for a while: wait until it is full again
            final TopicPartition orders0 = new TopicPartition("orders", 0);
            assertTrue(cluster.await(() -> cluster.state(orders0).isr().length == 3, 60_000),
                () -> "ISR of orders-0: " + cluster.state(orders0));
            final Cli.Result stat = Cli.run("stat", root.toString(), "--iterations", "1");
            assertEquals(ExitCodes.OK, stat.exitCode(), stat.toString());
            final String out = stat.out();
            for (int host = 0; host < 3; host++)
            {
                assertTrue(out.contains("host-" + host + "/counters.dat: pid " + ProcessHandle.current().pid() +
                    " running"), out);
            }
            boolean leaderRow = false;
            for (final String line : out.split("\n"))
            {
                final String[] c = line.trim().split("\\s+");
                if (c.length >= 11 && c[0].equals("orders-0") && c[2].equals("leader"))
                {
                    leaderRow = true;
                    assertEquals("10", c[4], line);   // LEO
                    assertEquals("10", c[5], line);   // HW
                    assertEquals("3", c[9], line);    // ISR size
                    assertTrue(line.contains("host ") && line.contains("=0"), line); // followers' lag
                }
            }
            assertTrue(leaderRow, out);
            assertTrue(out.contains("follower"), out);
        }
    }
}
