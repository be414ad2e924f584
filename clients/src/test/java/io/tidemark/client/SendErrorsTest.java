package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Typed errors of each send mode: not enough replicas (acks=all and acks=N; acks=1/0 not blocked), request timeout
 * (outcome unknown), delivery timeout, buffer full (back-pressure, then BUFFER_EXHAUSTED), record too large,
 * unknown topic or partition, closed producer, one-way failures reported to the error handler, and misuse.
 */
class SendErrorsTest
{
    @TempDir
    Path root;

    private static void shrinkIsrTo(final Deterministic d, final TopicPartition tp, final int size)
    {
        final int leader = d.leader(tp);
        for (int host = 0, killed = 0; host < 3 && 3 - killed > size; host++)
        {
            if (host != leader)
            {
                d.cluster.killHost(host);
                killed++;
            }
        }
        d.advanceUntil(() -> d.cluster.state(tp).isr().length == size, 5_000, "the ISR shrinks to " + size);
    }

    @Test
    void notEnoughReplicasIsTypedForAcksAllAndAcksNButNeverBlocksAcksOneOrZero()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            shrinkIsrTo(d, tp, 1);
            final ProducerRecord record = new ProducerRecord().topic("t").value("x");

            final Producer all = d.producer(new ProducerContext().retries(0));
            final ProducerException sync = assertThrows(ProducerException.class, () -> all.send(record));
            assertEquals(ProducerErrorCode.REPLICATION, sync.code());
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, sync.replicationError());
            assertFalse(sync.outcomeUnknown(), "rejected up front: nothing appended");
            assertEquals(tp, sync.partition());

            final Outcomes outcomes = new Outcomes();
            all.sendAsync(record, outcomes.callback("async"));
            d.advanceUntil(() -> outcomes.size() == 1, 1000, "the async outcome");
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, outcomes.get("async").error().replicationError());

            final Producer two = d.producer(new ProducerContext().acks(Acks.replicas(2)).retries(0));
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS,
                assertThrows(ProducerException.class, () -> two.send(record)).replicationError());

            final Producer patient = d.producer(new ProducerContext().deliveryTimeoutMs(1000).requestTimeoutMs(500)
                .lingerMs(0));
            final ProducerException timedOut = assertThrows(ProducerException.class, () -> patient.send(record));
            assertEquals(ProducerErrorCode.DELIVERY_TIMEOUT, timedOut.code(), "retried until delivery.timeout.ms");
            assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, timedOut.replicationError());

            assertEquals(0, d.producer(new ProducerContext().acks(Acks.LEADER)).send(record), "acks=1 ignores it");
            assertEquals(-1, d.producer(new ProducerContext().acks(Acks.NONE)).send(record), "acks=0 too");
            d.producer(new ProducerContext()).sendOneWay(record.value("one-way"));
            try (io.tidemark.replication.PartitionReader reader = d.cluster.openReader(tp))
            {
                d.advanceUntil(() -> reader.logEndOffset() == 3, 2000, "appended by the leader");
                assertEquals(0, reader.highWatermark(), "not committed: the HW is frozen below min.insync");
            }
            assertTrue(d.errors.isEmpty(), d.errors.toString());
        }
    }

    @Test
    void anUnansweredAcksAllRequestTimesOutWithAnUnknownOutcomeAndItsRetryIsNotDuplicated()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().replicaLagTimeMaxMs(60_000)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final int leader = d.leader(tp);
            for (int host = 0; host < 3; host++)
            {
                if (host != leader)
                {
                    d.cluster.transport().isolate(leader, host); // followers stay in the ISR but cannot fetch
                }
            }
            final ProducerRecord record = new ProducerRecord().topic("t").value("slow");
            final Producer once = d.producer(new ProducerContext().retries(0).requestTimeoutMs(300));
            final ProducerException timedOut = assertThrows(ProducerException.class, () -> once.send(record));
            assertEquals(ProducerErrorCode.REPLICATION, timedOut.code());
            assertEquals(ReplicationError.REQUEST_TIMED_OUT, timedOut.replicationError());
            assertTrue(timedOut.outcomeUnknown(), "the leader appended it; whether it commits is unknown");

            final Producer retrying = d.producer(new ProducerContext().requestTimeoutMs(300).lingerMs(0));
            final Outcomes outcomes = new Outcomes();
            retrying.sendAsync(record.value("retried"), outcomes.callback("retried"));
            d.advance(1000); // several timed-out attempts, each answered REQUEST_TIMED_OUT
            d.cluster.transport().heal();
            d.advanceUntil(() -> outcomes.size() == 1, 5000, "acknowledged once the followers catch up");
            assertEquals(1, outcomes.get("retried").offset());
            assertEquals(List.of("slow", "retried"), d.committed(tp), "appended once however often it was resent");
        }
    }

    @Test
    void aFullBufferBlocksUpToMaxBlockThenFailsAndNothingPendingIsDroppedSilently()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            final TopicPartition tp = d.topic("t", 1, 1);
            d.cluster.killHost(0); // no leader: nothing drains
            d.advance(1000);
            final Producer producer = d.producer(new ProducerContext().batchSize(128).bufferMemory(512)
                .maxBlockMs(200).lingerMs(0));
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0).value(new byte[90]);
            int accepted = 0;
            ProducerException full = null;
            while (null == full)
            {
                try
                {
                    producer.sendAsync(record, outcomes.callback("r" + accepted));
                    accepted++;
                }
                catch (final ProducerException ex)
                {
                    full = ex;
                }
            }
            assertEquals(ProducerErrorCode.BUFFER_EXHAUSTED, full.code());
            assertEquals(4, accepted, "four 128-byte batches fit 512 bytes");
            assertEquals(ProducerErrorCode.BUFFER_EXHAUSTED,
                assertThrows(ProducerException.class, () -> producer.send(record)).code(), "sync sends too");
            producer.close(0);
            assertEquals(accepted, outcomes.size(), "every accepted record heard of its fate");
            for (final String value : outcomes.failed())
            {
                assertEquals(ProducerErrorCode.CLOSED, outcomes.get(value).error().code());
            }
            assertEquals(accepted, outcomes.failed().size());
            assertTrue(tp.partition() == 0);
        }
    }

    @Test
    void withoutALeaderSendsFailAfterTheDeliveryTimeoutAndOneWayFailuresReachTheErrorHandler()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            d.topic("t", 1, 1);
            d.cluster.killHost(0);
            d.advance(1000);
            final Producer producer = d.producer(new ProducerContext().deliveryTimeoutMs(500).requestTimeoutMs(100)
                .lingerMs(0));
            final ProducerRecord record = new ProducerRecord().topic("t").value("x");
            final ProducerException ex = assertThrows(ProducerException.class, () -> producer.send(record));
            assertEquals(ProducerErrorCode.DELIVERY_TIMEOUT, ex.code());
            assertEquals(ReplicationError.LEADER_NOT_AVAILABLE, ex.replicationError());
            assertFalse(ex.outcomeUnknown());

            producer.sendOneWay(record);
            d.advanceUntil(() -> !d.errors.isEmpty(), 2000, "the one-way failure is reported");
            final ProducerException reported = (ProducerException)d.errors.get(0);
            assertEquals(ProducerErrorCode.DELIVERY_TIMEOUT, reported.code());
            assertTrue(reported.getMessage().contains("one-way"), reported.getMessage());
        }
    }

    @Test
    void misuseAndImpossibleRecordsFailAtOnce()
    {
        try (Deterministic d = new Deterministic(root, 1, Deterministic.ctx()))
        {
            d.topic("t", 2, 1);
            final Producer producer = d.producer(new ProducerContext().bufferMemory(64 * 1024));
            final ProducerRecord record = new ProducerRecord().topic("t").value("x");
            assertEquals(ProducerErrorCode.UNKNOWN_TOPIC,
                assertThrows(ProducerException.class, () -> producer.send(record.topic("nope"))).code());
            assertEquals(ProducerErrorCode.UNKNOWN_TOPIC,
                assertThrows(ProducerException.class, () -> producer.send(record.topic("t").partition(2))).code());
            record.partition(ProducerRecord.ANY_PARTITION);
            assertEquals(ProducerErrorCode.RECORD_TOO_LARGE, assertThrows(ProducerException.class,
                () -> producer.sendAsync(record.value(new byte[65 * 1024]), (tp, o, e) -> { })).code());
            assertThrows(IllegalArgumentException.class, () -> producer.sendAsync(record.value("x"), null));

            final ConfigException acks = assertThrows(ConfigException.class, () -> d.producer(new ProducerContext()
                .acks(3).enableIdempotence(false)).send(record));
            assertEquals(ProducerContext.ACKS, acks.key(), "acks=3 exceeds the replication factor 1");

            final Outcomes outcomes = new Outcomes();
            final ProducerException[] fromCallback = new ProducerException[1];
            final IllegalStateException[] refused = new IllegalStateException[1];
            producer.sendAsync(record, (tp, offset, error) ->
            {
                try
                {
                    producer.send(record);
                }
                catch (final IllegalStateException ex)
                {
                    refused[0] = ex;
                }
                fromCallback[0] = error;
                outcomes.callback("x").onCompletion(tp, offset, error);
            });
            producer.flush();
            assertTrue(null != refused[0] && null == fromCallback[0], "a sync send from a callback is refused");

            producer.close();
            producer.close();
            assertEquals(ProducerErrorCode.CLOSED,
                assertThrows(ProducerException.class, () -> producer.send(record)).code());
            assertEquals(ProducerErrorCode.CLOSED,
                assertThrows(ProducerException.class, () -> producer.sendOneWay(record)).code());
        }
    }
}
