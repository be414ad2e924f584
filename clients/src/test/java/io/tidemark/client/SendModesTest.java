package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Every send mode (synchronous, asynchronous, one-way) with every acks mode (0, 1, N=2, all) on a threaded cluster
 * of 3 hosts (min.insync.replicas=2): the records land once, in send order, and each mode reports what its acks
 * promise (offsets for acks 1/N/all, -1 for acks=0, nothing for one-way).
 */
class SendModesTest
{
    private static final int RECORDS = 25;

    @TempDir
    static Path root;
    private static ReplicationCluster cluster;

    enum Mode
    {
        SYNC, ASYNC, ONE_WAY
    }

    @BeforeAll
    static void start()
    {
        // acks 0 and 1 promise nothing across a leader change (the new leader may lack the last records), and the
        // in-process 600 ms heartbeat session expired at load 20 and moved leaders with no fault; a 6 s session keeps
        // the leaders where this test, which is about send modes and not failover, needs them
        cluster = ReplicationCluster.start(root, 3, new ReplicationContext().minInsyncReplicas(2)
            .hostSessionTimeoutMs(6_000));
    }

    @AfterAll
    static void stop()
    {
        cluster.close();
    }

    static Stream<Arguments> cases()
    {
        final List<Arguments> cases = new ArrayList<>();
        for (final int acks : new int[]{ Acks.NONE, Acks.LEADER, Acks.replicas(2), Acks.ALL })
        {
            for (final Mode mode : Mode.values())
            {
                cases.add(Arguments.of(acks, mode));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "acks={0} {1}")
    @MethodSource("cases")
    void recordsLandOnceInOrderAndEachModeReportsWhatItsAcksPromise(final int acks, final Mode mode)
    {
        final String topic = "modes-" + (acks < 0 ? "all" : Integer.toString(acks)) + "-" + mode.name().toLowerCase();
        cluster.createTopic(topic, 1, 3);
        cluster.awaitLeaders(topic, 60_000);
        final TopicPartition tp = new TopicPartition(topic, 0);
        final List<String> sent = new ArrayList<>();
        final List<Long> offsets = new ArrayList<>();
        final Outcomes outcomes = new Outcomes();
        try (Producer producer = new Producer(cluster, new ProducerContext().acks(acks).lingerMs(1)))
        {
            assertEquals(acks == Acks.ALL, producer.context().enableIdempotence());
            final ProducerRecord record = new ProducerRecord().topic(topic);
            for (int i = 0; i < RECORDS; i++)
            {
                final String value = topic + "/" + i;
                record.key("key-" + i).value(value);
                sent.add(value);
                switch (mode)
                {
                    case SYNC: offsets.add(producer.send(record)); break;
                    case ASYNC: producer.sendAsync(record, outcomes.callback(value)); break;
                    default: producer.sendOneWay(record); break;
                }
            }
            producer.flush();
        }
        Logs.awaitHighWatermark(cluster, tp, RECORDS);
        assertEquals(sent, Logs.committed(cluster, tp), "once each, in send order");
        for (int i = 0; i < RECORDS; i++)
        {
            final long expected = acks == Acks.NONE ? -1 : i;
            if (mode == Mode.SYNC)
            {
                assertEquals(expected, offsets.get(i), "sync send returns the offset (-1 for acks=0)");
            }
            else if (mode == Mode.ASYNC)
            {
                final Outcomes.Outcome outcome = outcomes.get(sent.get(i));
                assertNull(outcome.error());
                assertEquals(expected, outcome.offset(), "the callback gets the offset (-1 for acks=0)");
                assertEquals(tp, outcome.partition());
            }
        }
        if (mode == Mode.ASYNC)
        {
            assertEquals(sent, outcomes.completionOrder, "callbacks of one partition run in send order");
        }
    }
}
