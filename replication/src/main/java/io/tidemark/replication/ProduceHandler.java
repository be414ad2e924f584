package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.protocol.ProduceMessages;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.MessageHandler;

/**
 * The leader's produce path on one host: drains a leader replica's produce ring, checks the acks preconditions
 * (acks=all needs |ISR| >= min.insync.replicas; acks=N needs |ISR| >= N; otherwise NOT_ENOUGH_REPLICAS and
 * nothing is appended), appends each request as one batch stamped with the leader epoch, answers acks=1 at once
 * and queues acks=N / acks=all in the replica's {@link PendingAcks}, which {@link #completeAcks} resolves.
 * acks=0 requests are appended and never answered.
 * <p>
 * Runs on the host agent's thread: the only writer of a leader's log. No locks, no allocation per request.
 */
final class ProduceHandler
{
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ProducerSessions listeners;
    private final MessageHandler handler = this::onProduce;
    private Replica current;

    ProduceHandler(final ReplicationContext ctx, final ProducerSessions listeners)
    {
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.listeners = listeners;
    }

    ProducerSessions sessions()
    {
        return listeners;
    }

    int drain(final Replica replica)
    {
        current = replica;
        try
        {
            return replica.produceRing.read(handler, 256);
        }
        finally
        {
            current = null;
        }
    }

    int completeAcks(final Replica replica, final LeaderState leader)
    {
        if (leader.pendingAcks.size() == 0)
        {
            return 0;
        }
        return leader.pendingAcks.complete(leader, replica.topicPartition, listeners, clock.time(),
            ctx.minInsyncReplicas());
    }

    private void onProduce(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final Replica replica = current;
        final int session = buffer.getInt(index + ProduceMessages.SESSION_OFFSET);
        final int acks = buffer.getInt(index + ProduceMessages.ACKS_OFFSET);
        final long correlationId = buffer.getLong(index + ProduceMessages.CORRELATION_ID_OFFSET);
        final LeaderState leader = replica.leaderState;
        if (null == leader)
        {
            answer(replica, acks, session, correlationId, -1, replica.leaderId == PartitionState.NO_LEADER ?
                ReplicationError.LEADER_NOT_AVAILABLE : ReplicationError.NOT_LEADER);
            return;
        }
        final int isrSize = leader.isrSize();
        if ((acks == Acks.ALL && isrSize < ctx.minInsyncReplicas()) || (acks >= 2 && isrSize < acks))
        {
            answer(replica, acks, session, correlationId, -1, ReplicationError.NOT_ENOUGH_REPLICAS);
            return;
        }
        final int recordsLength = buffer.getInt(index + ProduceMessages.RECORDS_LENGTH_OFFSET);
        final long producerId = buffer.getLong(index + ProduceMessages.PRODUCER_ID_OFFSET);
        final short producerEpoch = buffer.getShort(index + ProduceMessages.PRODUCER_EPOCH_OFFSET);
        final int baseSequence = buffer.getInt(index + ProduceMessages.BASE_SEQUENCE_OFFSET);
        int recordCount = 0;
        if (producerId >= 0)
        {
            recordCount = RecordEncoder.countRecords(buffer, index + ProduceMessages.HEADER_LENGTH, recordsLength);
            if (recordCount <= 0)
            {
                answer(replica, acks, session, correlationId, -1, ReplicationError.INVALID_RECORDS);
                return;
            }
            final long check = replica.producerState.check(producerId, producerEpoch, baseSequence, recordCount);
            if (check == ProducerStateManager.OUT_OF_SEQUENCE || check == ProducerStateManager.FENCED_EPOCH)
            {
                answer(replica, acks, session, correlationId, -1, check == ProducerStateManager.FENCED_EPOCH ?
                    ReplicationError.INVALID_PRODUCER_EPOCH : ReplicationError.OUT_OF_ORDER_SEQUENCE);
                return;
            }
            if (check >= 0)
            {
                // a retry of a batch already in the log: nothing appended, answered with its original offsets once
                // its acks condition holds
                acknowledge(replica, leader, acks, session, correlationId, check, check + recordCount,
                    buffer.getInt(index + ProduceMessages.TIMEOUT_OFFSET));
                return;
            }
        }
        long baseOffset;
        BatchClaim claim = null;
        final long endBefore = replica.log.logEndOffset();
        try
        {
            claim = replica.log.tryClaim(RecordBatchDescriptor.HEADER_LENGTH + recordsLength)
                .leaderEpoch(leader.epoch)
                .producer(producerId, producerEpoch, baseSequence);
            recordCount = claim.addRecords(buffer, index + ProduceMessages.HEADER_LENGTH, recordsLength);
            baseOffset = claim.commit();
        }
        catch (final StorageException ex)
        {
            if (replica.log.logEndOffset() == endBefore)
            {
                answer(replica, acks, session, correlationId, -1, ex.code() == StorageErrorCode.RECORD_TOO_LARGE ?
                    ReplicationError.INVALID_RECORDS : ReplicationError.STORAGE_ERROR);
                if (FailStop.isFatal(ex))
                {
                    throw ex; // the host stops (fail-stop)
                }
                return;
            }
            // The batch was appended and the flush after it failed: the record is in the log and may commit.
            if (FailStop.isFatal(ex))
            {
                replica.producerState.onAppend(producerId, producerEpoch, baseSequence, recordCount, endBefore);
                answer(replica, acks, session, correlationId, -1, ReplicationError.NOT_LEADER); // outcome unknown
                throw ex; // the host stops (fail-stop)
            }
            baseOffset = endBefore; // a checkpoint left behind for lack of space: the data itself is forced
        }
        catch (final IllegalArgumentException | IllegalStateException ex)
        {
            if (null != claim)
            {
                claim.abort();
            }
            answer(replica, acks, session, correlationId, -1, ReplicationError.INVALID_RECORDS);
            return;
        }
        replica.producerState.onAppend(producerId, producerEpoch, baseSequence, recordCount, baseOffset);
        leader.maybeAdvanceHighWatermark();
        acknowledge(replica, leader, acks, session, correlationId, baseOffset, replica.log.logEndOffset(),
            buffer.getInt(index + ProduceMessages.TIMEOUT_OFFSET));
    }

    private void acknowledge(final Replica replica, final LeaderState leader, final int acks, final int session,
        final long correlationId, final long baseOffset, final long nextOffset, final int timeoutMs)
    {
        if (acks == Acks.LEADER)
        {
            PendingAcks.notify(listeners, replica.topicPartition, session, correlationId, baseOffset,
                ReplicationError.NONE);
        }
        else if (acks != Acks.NONE)
        {
            leader.pendingAcks.add(session, correlationId, baseOffset, nextOffset, acks,
                clock.time() + (timeoutMs > 0 ? timeoutMs : ctx.requestTimeoutMs()));
        }
    }

    private void answer(final Replica replica, final int acks, final int session, final long correlationId,
        final long offset, final ReplicationError error)
    {
        if (acks != Acks.NONE)
        {
            PendingAcks.notify(listeners, replica.topicPartition, session, correlationId, offset, error);
        }
    }
}
