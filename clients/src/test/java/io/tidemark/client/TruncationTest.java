package io.tidemark.client;

import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consumer whose position (current or committed) is lost by an unclean election is told so, or reset per its
 * policy; it never skips the new leader's records silently, also when the new leader's log has already grown past
 * the position (detected by leader epochs, KIP-320).
 */
class TruncationTest
{
    @TempDir
    Path root;

    private static ConsumerContext group(final ConsumerContext.AutoOffsetReset policy)
    {
        return new ConsumerContext().groupId("g").autoOffsetReset(policy);
    }

    @Test
    void aTruncatedPositionIsReportedOrResetPerPolicyNeverSkipped()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().uncleanLeaderElectionEnable(true)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final int leader = d.leader(tp);
            for (int host = 0; host < 3; host++)
            {
                if (host != leader)
                {
                    d.cluster.transport().isolate(leader, host);
                }
            }
            final Producer first = d.producer(new ProducerContext());
            assertEquals(0, first.send(new ProducerRecord().topic("t").value("lost")), "committed by an ISR of one");
            try (Consumer reader = new Consumer(d.cluster, group(ConsumerContext.AutoOffsetReset.NONE)))
            {
                reader.assign(List.of(tp));
                reader.seekToBeginning(List.of(tp));
                assertEquals(List.of("lost"), Logs.drain(reader));
                reader.commitSync();

                d.cluster.killHost(leader);
                d.advanceUntil(() -> d.leader(tp) >= 0 && d.leader(tp) != leader, 5000, "an unclean election");
                assertTrue(d.cluster.controller().uncleanElections() >= 1, "an unclean election");
                final OffsetOutOfRangeException above = assertThrows(OffsetOutOfRangeException.class,
                    () -> reader.poll((p, r) -> { }));
                assertEquals(OffsetOutOfRangeException.Reason.ABOVE_LOG_END, above.reason());
                assertTrue(above.truncation());

                d.forget(first);
                final Producer second = d.producer(new ProducerContext());
                for (int i = 0; i < 3; i++)
                {
                    second.send(new ProducerRecord().topic("t").value("new-" + i));
                }
                final OffsetOutOfRangeException diverged = assertThrows(OffsetOutOfRangeException.class,
                    () -> reader.poll((p, r) -> { }), "the new leader's log grew past the position: still detected");
                assertEquals(OffsetOutOfRangeException.Reason.LOG_DIVERGED, diverged.reason());
                assertEquals(1, diverged.position());
            }
            try (Consumer resumed = new Consumer(d.cluster, group(ConsumerContext.AutoOffsetReset.NONE)))
            {
                resumed.assign(List.of(tp));
                assertEquals(1, resumed.committed(tp));
                assertEquals(OffsetOutOfRangeException.Reason.LOG_DIVERGED, assertThrows(OffsetOutOfRangeException.class,
                    () -> resumed.poll((p, r) -> { })).reason(), "the committed epoch travels with the offset");
            }
            try (Consumer earliest = new Consumer(d.cluster, group(ConsumerContext.AutoOffsetReset.EARLIEST)))
            {
                earliest.assign(List.of(tp));
                assertEquals(List.of("new-0", "new-1", "new-2"), Logs.drain(earliest), "reset to the start: nothing skipped");
            }
            try (Consumer latest = new Consumer(d.cluster, group(ConsumerContext.AutoOffsetReset.LATEST)))
            {
                latest.assign(List.of(tp));
                assertEquals(List.of(), Logs.drain(latest));
                assertEquals(3, latest.position(tp), "reset to the high watermark, as the policy asks");
            }
        }
    }

    @Test
    void aCleanFailoverNeverTripsTheCheck()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final Producer producer = d.producer(new ProducerContext());
            final ProducerRecord record = new ProducerRecord().topic("t");
            try (Consumer consumer = new Consumer(d.cluster, group(ConsumerContext.AutoOffsetReset.NONE)))
            {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final List<String> read = new ArrayList<>();
                for (int round = 0; round < 3; round++)
                {
                    for (int i = 0; i < 5; i++)
                    {
                        producer.send(record.value("r" + round + "-" + i));
                    }
                    read.addAll(Logs.drain(consumer));
                    consumer.commitSync();
                    final int old = d.leader(tp);
                    d.cluster.killHost(old);
                    d.advanceUntil(() -> d.leader(tp) >= 0 && d.leader(tp) != old, 5000, "a clean election");
                    d.cluster.restartHost(old);
                    d.advanceUntil(() -> d.cluster.state(tp).isr().length == 3, 10_000, "the ISR is whole again");
                }
                assertEquals(15, read.size());
                assertEquals(0, d.cluster.controller().uncleanElections());
                assertNotEquals(-1, consumer.committed(tp));
            }
        }
    }
}
