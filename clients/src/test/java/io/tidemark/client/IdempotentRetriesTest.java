package io.tidemark.client;

import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retries under injected failures on a deterministic cluster: requests dropped before the leader, answers dropped
 * after the append, the leader killed mid-stream, batches failing for good in the middle of a pipeline. With
 * idempotence the partition holds every acknowledged record exactly once, in send order; without it the same
 * faults duplicate and reorder records, as the seed's design warned.
 */
class IdempotentRetriesTest
{
    private static final int RECORDS = 60;

    @TempDir
    Path root;

    /** Drops the first request of every 5th batch and the first answer of every 3rd (one record per batch). */
    private static final class EveryFewBatches implements ProduceFaults
    {
        final List<Long> droppedAnswers = new ArrayList<>();
        int droppedRequests;
        long attempts;

        @Override
        public boolean dropRequest(final TopicPartition tp, final long correlationId, final int attempt,
            final int sequence)
        {
            attempts++;
            // with idempotence the sequence numbers the batch; without, count the first attempts
            final long batch = sequence >= 0 ? sequence : correlationId;
            if (attempt == 1 && batch % 5 == 4)
            {
                droppedRequests++;
                return true;
            }
            if (attempt == 1 && batch % 3 == 2)
            {
                droppedAnswers.add(correlationId);
            }
            return false;
        }

        @Override
        public boolean dropResponse(final TopicPartition tp, final long correlationId, final ReplicationError error)
        {
            return droppedAnswers.contains(correlationId);
        }
    }

    private static ProducerContext oneRecordPerBatch()
    {
        return new ProducerContext().batchSize(64).lingerMs(0).requestTimeoutMs(200).retryBackoffMs(10)
            .deliveryTimeoutMs(60_000);
    }

    private static List<String> sendAll(final Deterministic d, final Producer producer, final TopicPartition tp,
        final Outcomes outcomes, final int count)
    {
        final List<String> sent = new ArrayList<>();
        final ProducerRecord record = new ProducerRecord().topic(tp.topic()).partition(tp.partition());
        for (int i = 0; i < count; i++)
        {
            // long enough that a 64-byte batch holds one record: with linger.ms=0 records sent while a request is in
            // flight batch up behind it (as Kafka's do), and these tests want a batch, and a fault, per record
            final String value = String.format("v%03d-%s", i, "x".repeat(40));
            producer.sendAsync(record.value(value), outcomes.callback(value));
            sent.add(value);
            d.settle();
        }
        d.advanceUntil(() -> outcomes.size() == count, 30_000, "every send completes");
        return sent;
    }

    @Test
    void withIdempotenceDroppedRequestsAndAnswersNeitherDuplicateNorReorder()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final EveryFewBatches faults = new EveryFewBatches();
            final Producer producer = d.producer(oneRecordPerBatch(), faults);
            assertTrue(producer.context().enableIdempotence(), "the default with acks=all");
            final Outcomes outcomes = new Outcomes();
            final List<String> sent = sendAll(d, producer, tp, outcomes, RECORDS);

            assertEquals(sent.size(), outcomes.acknowledged().size(), "every record acknowledged: " + outcomes.failed());
            assertEquals(sent, d.committed(tp), "exactly once, in send order");
            for (int i = 0; i < RECORDS; i++)
            {
                assertEquals(i, outcomes.get(sent.get(i)).offset(), "the retry was answered with the original offset");
            }
            assertTrue(faults.droppedRequests >= RECORDS / 5 && faults.droppedAnswers.size() >= RECORDS / 5,
                "faults were injected: " + faults.droppedRequests + " requests, " + faults.droppedAnswers.size() +
                " answers");
            assertTrue(faults.attempts > RECORDS, "records were resent: " + faults.attempts + " attempts");
        }
    }

    @Test
    void aBatchWhoseAnswerWasLostIsResentWhileLaterBatchesAreAcknowledgedAndStillLandsOnce()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final List<Long> dropped = new ArrayList<>();
            final Producer producer = d.producer(oneRecordPerBatch(), new ProduceFaults()
            {
                @Override
                public boolean dropRequest(final TopicPartition p, final long id, final int attempt, final int seq)
                {
                    if (attempt == 1 && seq % 7 == 3)
                    {
                        dropped.add(id); // drop the answer of this attempt: appended, never acknowledged
                    }
                    return false;
                }

                @Override
                public boolean dropResponse(final TopicPartition p, final long id, final ReplicationError error)
                {
                    return dropped.contains(id);
                }
            });
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0);
            final List<String> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
            {
                final String value = String.format("w%03d-%s", i, "x".repeat(40)); // one per batch, as in sendAll
                producer.sendAsync(record.value(value), outcomes.callback(value));
                sent.add(value);
                d.clock.advance(20); // the batches after an unanswered one keep being acknowledged meanwhile
                d.settle();
            }
            d.advanceUntil(() -> outcomes.size() == RECORDS, 30_000, "every send completes");
            assertEquals(List.of(), outcomes.failed(), "the resend stays within the leader's last 5 batches");
            assertEquals(sent, d.committed(tp));
            assertTrue(dropped.size() >= RECORDS / 7);
        }
    }

    @Test
    void withoutIdempotenceTheSameFaultsDuplicateAndReorder()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final EveryFewBatches faults = new EveryFewBatches();
            final Producer producer = d.producer(oneRecordPerBatch().enableIdempotence(false), faults);
            final Outcomes outcomes = new Outcomes();
            final List<String> sent = sendAll(d, producer, tp, outcomes, RECORDS);

            assertEquals(sent.size(), outcomes.acknowledged().size(), "every record acknowledged");
            final List<String> log = d.committed(tp);
            assertEquals(new LinkedHashSet<>(sent), new java.util.TreeSet<>(log), "nothing lost");
            assertTrue(log.size() > sent.size(), "a resent batch whose answer was lost is appended twice: " + log);
            assertNotEquals(sent, new ArrayList<>(new LinkedHashSet<>(log)),
                "a batch resent after later ones landed comes after them: " + log);
        }
    }

    @Test
    void withIdempotenceAKilledLeaderLosesNothingAndDuplicatesNothing()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final int[] resends = new int[1];
            final Producer producer = d.producer(new ProducerContext().batchSize(256).lingerMs(2).requestTimeoutMs(500)
                .retryBackoffMs(20), new ProduceFaults()
                {
                    @Override
                    public boolean dropRequest(final TopicPartition p, final long id, final int attempt, final int seq)
                    {
                        resends[0] += attempt > 1 ? 1 : 0;
                        return false;
                    }
                });
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0);
            final List<String> sent = new ArrayList<>();
            int killed = -1;
            for (int i = 0; i < 150; i++)
            {
                final String value = String.format("k%03d", i);
                producer.sendAsync(record.value(value), outcomes.callback(value));
                sent.add(value);
                if (i == 50 || i == 100)
                {
                    // mid-stream: batches queued to the leader, appended (and, the second time, partly
                    // replicated), not yet acknowledged
                    d.clock.advance(5);
                    producer.invokeAgent();
                    for (int cycle = 0; cycle < (i == 50 ? 1 : 3); cycle++)
                    {
                        d.cluster.invokeAgents();
                    }
                    killed = d.leader(tp);
                    d.cluster.killHost(killed);
                }
                else if (i % 3 == 0)
                {
                    d.clock.advance(1);
                    d.settle();
                }
                if (i == 75)
                {
                    final int restarted = killed;
                    d.cluster.restartHost(restarted);
                    d.advanceUntil(() -> d.cluster.state(tp).inIsr(restarted), 10_000, "the old leader rejoins");
                }
            }
            d.advanceUntil(() -> outcomes.size() == sent.size(), 30_000, "every send completes");
            assertEquals(sent.size(), outcomes.acknowledged().size(), "every record acknowledged: " + outcomes.failed());
            assertEquals(sent, d.committed(tp), "exactly once, in send order, across two leader kills");
            assertTrue(resends[0] > 0, "batches in flight to the killed leaders were resent");
            assertTrue(d.errors.isEmpty(), d.errors.toString());
        }
    }

    @Test
    void aBatchWhoseLeaderWasKilledGoesToTheNewLeaderOnceKnownWithoutWaitingOutTheBackOff()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final long backOffMs = 600_000;
            final Producer producer = d.producer(new ProducerContext().batchSize(256).lingerMs(0)
                .requestTimeoutMs(5_000).retryBackoffMs(backOffMs).deliveryTimeoutMs(3_600_000));
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0);
            final List<String> sent = new ArrayList<>();
            sent.add("before");
            producer.sendAsync(record.value("before"), outcomes.callback("before"));
            d.advanceUntil(() -> outcomes.size() == 1, 5_000, "a first batch acknowledged");
            // queued to the leader and not answered when it dies: in flight to a host that is gone
            for (int i = 0; i < 5; i++)
            {
                final String value = "during-" + i;
                producer.sendAsync(record.value(value), outcomes.callback(value));
                sent.add(value);
            }
            producer.invokeAgent();
            final int killed = d.leader(tp);
            d.cluster.killHost(killed);
            final long killedAtMs = d.clock.time();
            d.advanceUntil(() -> outcomes.size() == sent.size(), 30_000, "every send completes");
            assertTrue(d.clock.time() - killedAtMs < backOffMs, "resent to the new leader once it was known, not " +
                "after the back-off");
            assertEquals(sent.size(), outcomes.acknowledged().size(), "every record acknowledged: " + outcomes.failed());
            assertEquals(sent, d.committed(tp), "exactly once, in send order");
            assertTrue(d.leader(tp) != killed, "another host leads");
            assertTrue(d.errors.isEmpty(), d.errors.toString());
        }
    }

    @Test
    void aBatchFailingForGoodMidPipelineStartsANewEpochAndTheRestLandsOnceInOrder()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(2)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final Producer producer = d.producer(new ProducerContext().batchSize(64).lingerMs(0));
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0);
            final List<String> expected = new ArrayList<>();
            producer.sendAsync(record.value("first"), outcomes.callback("first"));
            d.advanceUntil(() -> outcomes.size() == 1, 1000, "the first batch (sent alone)");
            expected.add("first");
            final byte[] tooLarge = new byte[100 * 1024]; // above the log's max.message.bytes: INVALID_RECORDS
            for (int i = 0; i < 12; i++)
            {
                final String value = "after-" + i;
                if (i == 2)
                {
                    producer.sendAsync(record.value(tooLarge), outcomes.callback("too-large"));
                }
                producer.sendAsync(record.value(value), outcomes.callback(value));
                expected.add(value);
            }
            d.advanceUntil(() -> outcomes.size() == 14, 10_000, "every send completes");
            final ProducerException error = outcomes.get("too-large").error();
            assertEquals(ProducerErrorCode.REPLICATION, error.code());
            assertEquals(ReplicationError.INVALID_RECORDS, error.replicationError());
            assertFalse(error.outcomeUnknown());
            assertEquals(List.of("too-large"), outcomes.failed(), "the batches pipelined behind it are renumbered");
            assertEquals(expected, d.committed(tp), "exactly once, in order, around the hole");
        }
    }

    @Test
    void notEnoughReplicasForLongerThanTheDeliveryTimeoutFailsThoseRecordsAndTheNextOnesLandInOrder()
    {
        try (Deterministic d = new Deterministic(root, 3, Deterministic.ctx().minInsyncReplicas(3)))
        {
            final TopicPartition tp = d.topic("t", 1, 3);
            final Producer producer = d.producer(new ProducerContext().batchSize(64).lingerMs(0).requestTimeoutMs(300)
                .deliveryTimeoutMs(1000).retryBackoffMs(50));
            final Outcomes outcomes = new Outcomes();
            final ProducerRecord record = new ProducerRecord().topic("t").partition(0);
            producer.sendAsync(record.value("a"), outcomes.callback("a"));
            d.advanceUntil(() -> outcomes.size() == 1, 1000, "a");
            final int follower = (d.leader(tp) + 1) % 3;
            d.cluster.killHost(follower);
            d.advanceUntil(() -> !d.cluster.state(tp).inIsr(follower), 5000, "the ISR shrinks below min.insync");
            for (int i = 0; i < 4; i++)
            {
                producer.sendAsync(record.value("lost-" + i), outcomes.callback("lost-" + i));
            }
            d.advanceUntil(() -> outcomes.size() == 5, 5000, "the delivery timeout");
            for (int i = 0; i < 4; i++)
            {
                final ProducerException error = outcomes.get("lost-" + i).error();
                assertEquals(ProducerErrorCode.DELIVERY_TIMEOUT, error.code(), error.getMessage());
                assertEquals(ReplicationError.NOT_ENOUGH_REPLICAS, error.replicationError());
                assertFalse(error.outcomeUnknown(), "NOT_ENOUGH_REPLICAS: nothing was appended");
            }
            d.cluster.restartHost(follower);
            d.advanceUntil(() -> d.cluster.state(tp).inIsr(follower), 10_000, "the follower rejoins");
            for (int i = 0; i < 3; i++)
            {
                producer.sendAsync(record.value("b" + i), outcomes.callback("b" + i));
            }
            d.advanceUntil(() -> outcomes.size() == 8, 5000, "the later sends");
            assertNull(outcomes.get("b2").error());
            assertEquals(List.of("a", "b0", "b1", "b2"), d.committed(tp));
        }
    }
}
