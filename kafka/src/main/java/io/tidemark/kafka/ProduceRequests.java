package io.tidemark.kafka;

import io.tidemark.replication.LeaderPartitions;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.collections.Long2ObjectHashMap;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.List;

/**
 * Produce: each partition's record batch (Kafka's layout) is decoded into Tidemark's and queued to the partition's
 * leader on this host with the request's acks and timeout, and with the batch's producer id, epoch and base
 * sequence, so that the leader's idempotence checks (the last five batches of each producer) apply to Kafka's
 * idempotent producer as to Tidemark's. The answer is sent when every partition's outcome is known: at once for
 * errors, when the leader appended (acks=1), when the high watermark passed the batch (acks=all); never for acks=0
 * (where an error closes the connection, as Kafka does, so that the client refreshes its metadata).
 * <p>
 * A full leader queue (back-pressure) holds the rest of the connection's requests until the batch is queued, so the
 * batches of one connection reach each partition in the order they were sent. Once a request's partitions are
 * queued, the leader's agent thread is woken once ({@link LeaderPartitions#wakeUp()}), so that the request does not
 * wait out that thread's idle park. On the listener's agent thread.
 */
final class ProduceRequests
{
    private final KafkaListener listener;
    private final KafkaBatchDecoder decoder = new KafkaBatchDecoder();
    private final Long2ObjectHashMap<Slot> waiting = new Long2ObjectHashMap<>();
    private long nextToken = 1;
    private int blocked;

    /** A produce request waiting for the outcomes of its partitions. */
    final class Pending
    {
        final InFlight request;
        final ProduceResponseData response = new ProduceResponseData();
        final short acks;
        final int timeoutMs;
        final long deadlineMs;
        final ArrayDeque<Retry> retries = new ArrayDeque<>();
        int outstanding;
        boolean anyError;

        Pending(final InFlight request, final short acks, final int timeoutMs, final long nowMs)
        {
            this.request = request;
            this.acks = acks;
            this.timeoutMs = timeoutMs;
            this.deadlineMs = nowMs + Math.max(timeoutMs, 0);
        }
    }

    /** One partition of a waiting request. */
    private record Slot(Pending pending, ProduceResponseData.PartitionProduceResponse partition)
    {
    }

    /** A decoded batch a full leader queue did not take yet. */
    private record Retry(Slot slot, int partitionId, long producerId, short producerEpoch, int baseSequence,
        UnsafeBuffer records)
    {
    }

    ProduceRequests(final KafkaListener listener)
    {
        this.listener = listener;
    }

    void produce(final InFlight request, final ProduceRequestData data)
    {
        final Pending pending = new Pending(request, data.acks(), data.timeoutMs(), System.currentTimeMillis());
        final boolean byId = request.version() >= 13;
        final LeaderPartitions partitions = listener.partitions();
        final Iterable<PartitionState> states = listener.metadata().partitions();
        boolean queuedAny = false;
        for (final ProduceRequestData.TopicProduceData topic : data.topicData())
        {
            final String name = byId ? listener.topicIds().nameOf(topic.topicId(), states) : topic.name();
            final ProduceResponseData.TopicProduceResponse topicResponse =
                new ProduceResponseData.TopicProduceResponse();
            if (byId)
            {
                topicResponse.setTopicId(topic.topicId());
            }
            else
            {
                topicResponse.setName(topic.name());
            }
            pending.response.responses().add(topicResponse);
            for (final ProduceRequestData.PartitionProduceData partition : topic.partitionData())
            {
                final ProduceResponseData.PartitionProduceResponse partitionResponse =
                    new ProduceResponseData.PartitionProduceResponse().setIndex(partition.index())
                        .setBaseOffset(-1).setLogAppendTimeMs(-1).setLogStartOffset(-1);
                topicResponse.partitionResponses().add(partitionResponse);
                final Slot slot = new Slot(pending, partitionResponse);
                if (data.transactionalId() != null)
                {
                    fail(slot, Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, "transactions are not supported");
                    continue;
                }
                if (data.acks() != -1 && data.acks() != 0 && data.acks() != 1)
                {
                    fail(slot, Errors.INVALID_REQUIRED_ACKS, "acks must be -1, 0 or 1");
                    continue;
                }
                if (null == name || !KafkaTopics.exists(states, name))
                {
                    fail(slot, byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
                    continue;
                }
                final int partitionId = null == partitions ? -1 :
                    partitions.partitionIdOf(new TopicPartition(name, partition.index()));
                if (partitionId < 0 || !partitions.isLeading(partitionId))
                {
                    fail(slot, KafkaTopics.partitionExists(states, name, partition.index()) ?
                        Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION, null);
                    continue;
                }
                final ByteBuffer records = partition.records() instanceof MemoryRecords memory ? memory.buffer() :
                    null;
                final Errors decoded = null == records ? Errors.CORRUPT_MESSAGE :
                    decoder.decode(records, partitions.maxProduceLength(partitionId));
                if (decoded != Errors.NONE)
                {
                    fail(slot, decoded, decoder.reason());
                    continue;
                }
                partitionResponse.setLogStartOffset(partitions.logStartOffset(partitionId));
                if (!pending.retries.isEmpty())
                {
                    pending.retries.addLast(retryOf(slot, partitionId));
                    pending.outstanding++;
                    continue;
                }
                final long token = nextToken++;
                final ReplicationError queued = partitions.produce(listener.session(), partitionId, token,
                    data.acks(), data.timeoutMs(), decoder.producerId(), decoder.producerEpoch(),
                    decoder.baseSequence(), decoder.buffer(), 0, decoder.encodedLength());
                if (queued == ReplicationError.NONE)
                {
                    queuedAny = true;
                    if (data.acks() != 0)
                    {
                        waiting.put(token, slot);
                        pending.outstanding++;
                    }
                }
                else if (queued == ReplicationError.BACK_PRESSURED)
                {
                    pending.retries.addLast(retryOf(slot, partitionId));
                    pending.outstanding++;
                }
                else
                {
                    fail(slot, queued == ReplicationError.INVALID_RECORDS ? Errors.MESSAGE_TOO_LARGE :
                        KafkaErrors.of(queued), null);
                }
            }
        }
        if (queuedAny)
        {
            partitions.wakeUp(); // once per request, not per partition
        }
        if (!pending.retries.isEmpty())
        {
            request.connection.blockedProduce = pending;
            blocked++;
        }
        maybeAnswer(pending);
    }

    private Retry retryOf(final Slot slot, final int partitionId)
    {
        final byte[] copy = new byte[decoder.encodedLength()];
        decoder.buffer().getBytes(0, copy);
        return new Retry(slot, partitionId, decoder.producerId(), decoder.producerEpoch(), decoder.baseSequence(),
            new UnsafeBuffer(copy));
    }

    private void fail(final Slot slot, final Errors error, final String message)
    {
        slot.partition.setErrorCode(error.code()).setErrorMessage(message);
        slot.pending.anyError = true;
    }

    /** A produce outcome from the leader. */
    void onComplete(final long token, final long baseOffset, final int errorCode)
    {
        final Slot slot = waiting.remove(token);
        if (null == slot)
        {
            return;
        }
        final ReplicationError error = KafkaErrors.replicationError(errorCode);
        if (error == ReplicationError.NONE)
        {
            slot.partition.setBaseOffset(baseOffset);
        }
        else
        {
            fail(slot, KafkaErrors.of(error), null);
        }
        slot.pending.outstanding--;
        maybeAnswer(slot.pending);
    }

    private void maybeAnswer(final Pending pending)
    {
        if (pending.outstanding > 0 || pending.request.isDone())
        {
            return;
        }
        if (pending.acks == 0)
        {
            if (pending.anyError)
            {
                pending.request.closeConnection();
            }
            else
            {
                pending.request.noResponse();
            }
            return;
        }
        pending.request.respond(pending.response);
    }

    /** Queue the batches full leader queues refused, oldest first. */
    int retryBlocked(final List<KafkaConnection> connections, final long nowMs)
    {
        if (blocked == 0)
        {
            return 0;
        }
        int work = 0;
        boolean queuedAny = false;
        final LeaderPartitions partitions = listener.partitions();
        for (int i = 0; i < connections.size(); i++)
        {
            final KafkaConnection connection = connections.get(i);
            final Pending pending = connection.blockedProduce;
            if (null == pending)
            {
                continue;
            }
            Retry retry;
            while (null != (retry = pending.retries.peekFirst()))
            {
                final ReplicationError queued;
                if (nowMs > pending.deadlineMs || null == partitions)
                {
                    queued = null == partitions ? ReplicationError.NOT_LEADER : ReplicationError.REQUEST_TIMED_OUT;
                }
                else
                {
                    final long token = nextToken++;
                    queued = partitions.produce(listener.session(), retry.partitionId, token, pending.acks,
                        pending.timeoutMs, retry.producerId, retry.producerEpoch, retry.baseSequence, retry.records, 0,
                        retry.records.capacity());
                    if (queued == ReplicationError.NONE)
                    {
                        queuedAny = true;
                    }
                    if (queued == ReplicationError.NONE && pending.acks != 0)
                    {
                        waiting.put(token, retry.slot);
                        pending.retries.pollFirst();
                        work++;
                        continue;
                    }
                }
                if (queued == ReplicationError.BACK_PRESSURED)
                {
                    break;
                }
                pending.retries.pollFirst();
                pending.outstanding--;
                work++;
                if (queued != ReplicationError.NONE)
                {
                    fail(retry.slot, KafkaErrors.of(queued), null);
                }
            }
            if (pending.retries.isEmpty())
            {
                connection.blockedProduce = null;
                blocked--;
                maybeAnswer(pending);
            }
        }
        if (queuedAny)
        {
            partitions.wakeUp();
        }
        return work;
    }

    boolean hasBlocked()
    {
        return blocked > 0;
    }

    void onClose(final KafkaConnection connection)
    {
        if (null != connection.blockedProduce)
        {
            connection.blockedProduce = null;
            blocked--;
        }
    }
}
