package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;

import java.util.ArrayDeque;
import java.util.ArrayList;

/**
 * Sends one partition lane's batches and handles their outcomes: the agent-side half of a
 * {@link PartitionAccumulator}. Owned by the producer's agent thread.
 * <p>
 * A batch is QUEUED until sent, then AWAITING an answer, RETRY after a failed attempt (resent after
 * {@code retry.backoff.ms}, or once another live host is known to lead the partition when its leader was gone: a
 * failover), and completed on success or on a final failure: a non-retriable error, {@code retries}
 * used up, or {@code delivery.timeout.ms} passed (checked only between attempts, never while one is in flight). An
 * attempt counts as failed with an unknown outcome when its leader's host is gone (killed, stopped, restarted: its
 * queue died with it) or no answer came within twice {@code request.timeout.ms} (a lost request or answer).
 * <p>
 * <b>Idempotence</b> keeps the partition exactly-once and in send order under retries:
 * <ul>
 *   <li>Each batch gets the next base sequence when first sent, under this lane's producer id and epoch. The
 *       window of sent batches, from the oldest unacknowledged one to the newest, spans at most
 *       {@code max.in.flight} (at most 5) batches: an acknowledged batch keeps its place in the window until every
 *       batch before it is acknowledged too (answers can be lost independently, unlike Kafka's in-order TCP
 *       responses). So a batch that landed is always among the leader's last 5 for this producer, and its resend is
 *       answered with its original offset, never appended twice.</li>
 *   <li>Until a first batch is acknowledged only one is in flight: a leader with no state for this producer accepts
 *       any sequence, so a later batch could otherwise overtake a failed first one.</li>
 *   <li>Once an attempt fails (or a later one is refused with OUT_OF_ORDER_SEQUENCE because of the gap), no new
 *       batch is sent; when no attempt is in flight any more, the failed batches are resent one at a time in
 *       sequence order, then pipelining resumes.</li>
 *   <li>A batch that fails for good leaves a hole in the sequence. The lane then bumps its epoch (a new epoch starts
 *       again at sequence 0, which the leader accepts) and renumbers the unacknowledged batches after it; one of
 *       them whose earlier attempt may have landed is failed with an unknown outcome instead of being resent
 *       (resending it under the new epoch could duplicate it). Epochs are per partition lane: the leader keeps
 *       producer state per partition.</li>
 * </ul>
 * Without idempotence retried batches are simply resent: a resent batch that had landed is duplicated, and one
 * resent after a later batch landed is reordered.
 */
final class PartitionSender
{
    private final Sender agent;
    private final PartitionAccumulator source;
    private final TopicPartition tp;
    private final boolean idempotent;
    private final int acks;
    private final ArrayDeque<ProducerBatch> queued = new ArrayDeque<>();
    private final ArrayList<ProducerBatch> inFlight = new ArrayList<>();
    private long producerId;
    private short epoch;
    private int nextSequence;
    private boolean acknowledgedOnce;
    private boolean resetPending;

    PartitionSender(final Sender agent, final PartitionAccumulator source)
    {
        this.agent = agent;
        this.source = source;
        this.tp = source.topicPartition;
        this.acks = source.oneWay ? Acks.NONE : agent.acks();
        this.idempotent = !source.oneWay && agent.idempotent();
        this.producerId = idempotent ? agent.producerId() : -1;
        this.epoch = idempotent ? 0 : (short)-1;
    }

    TopicPartition topicPartition()
    {
        return tp;
    }

    int doWork(final long now, final boolean flushing)
    {
        int work = source.drainTo(queued, now, agent.lingerMs(), flushing, hasRoom());
        if (queued.isEmpty() && inFlight.isEmpty())
        {
            return work;
        }
        work += checkAwaiting(now);
        work += expire(now);
        if (resetPending)
        {
            work += reset();
        }
        if (acks == Acks.NONE)
        {
            work += sendOneWay(now);
        }
        else if (idempotent)
        {
            work += sendIdempotent(now);
        }
        else
        {
            work += sendPlain(now);
        }
        return work;
    }

    /** @return whether a batch handed over now would be sent at once: nothing queued, nothing to resend, a slot free. */
    private boolean hasRoom()
    {
        if (!queued.isEmpty())
        {
            return false;
        }
        if (acks == Acks.NONE)
        {
            return true;
        }
        if (resetPending)
        {
            return false;
        }
        for (int i = 0; i < inFlight.size(); i++)
        {
            if (inFlight.get(i).state == ProducerBatch.RETRY)
            {
                return false;
            }
        }
        return inFlight.size() < (idempotent && !acknowledgedOnce ? 1 : agent.maxInFlight());
    }

    /** The leader's answer to the attempt in flight of {@code batch}. */
    void onResponse(final ProducerBatch batch, final long baseOffset, final ReplicationError error, final long now)
    {
        if (error == ReplicationError.NONE)
        {
            acknowledgedOnce = true;
            if (idempotent)
            {
                batch.state = ProducerBatch.ACKED;
                batch.complete(this, baseOffset, null, agent.errorHandler());
                releaseAckedHead();
            }
            else
            {
                inFlight.remove(batch);
                complete(batch, baseOffset, null);
            }
            return;
        }
        onAttemptFailed(batch, error, now);
    }

    /** Let acknowledged batches at the head of the window go: every batch before them is acknowledged. */
    private void releaseAckedHead()
    {
        while (!inFlight.isEmpty() && inFlight.get(0).state == ProducerBatch.ACKED)
        {
            agent.release(inFlight.remove(0));
        }
    }

    private int checkAwaiting(final long now)
    {
        int work = 0;
        // looked up once per cycle, and once per target: the batches in flight almost always share one leader
        long leaderNow = ClusterConnection.NO_LEADER;
        boolean leaderLooked = false;
        long checkedTarget = ClusterConnection.NO_LEADER;
        boolean checkedGone = false;
        for (int i = 0; i < inFlight.size(); )
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.AWAITING)
            {
                // Gone: the host it went to stopped, or another host leads the partition now (the old one will
                // answer NOT_LEADER, if it can answer at all): either way, resend to the current leader at once.
                if (!leaderLooked)
                {
                    leaderNow = agent.channel().leaderInstance(source.partitionId);
                    leaderLooked = true;
                }
                if (batch.target != checkedTarget || ClusterConnection.NO_LEADER == checkedTarget)
                {
                    checkedTarget = batch.target;
                    checkedGone = agent.channel().isGone(batch.target);
                }
                final boolean gone = checkedGone ||
                    (leaderNow != ClusterConnection.NO_LEADER && leaderNow != batch.target);
                if (gone || now >= batch.attemptDeadlineMs)
                {
                    agent.untrack(batch);
                    onAttemptFailed(batch, gone ? ReplicationError.NOT_LEADER : ReplicationError.REQUEST_TIMED_OUT,
                        now);
                    work++;
                }
            }
            if (i < inFlight.size() && inFlight.get(i) == batch)
            {
                i++;
            }
        }
        return work;
    }

    private int expire(final long now)
    {
        int work = 0;
        final long timeout = agent.deliveryTimeoutMs();
        for (ProducerBatch batch = queued.peek(); null != batch && now - batch.createdMs >= timeout;
            batch = queued.peek())
        {
            queued.poll();
            complete(batch, -1, failure(ProducerErrorCode.DELIVERY_TIMEOUT, batch, "not sent within " +
                ProducerContext.DELIVERY_TIMEOUT_MS + "=" + timeout));
            work++;
        }
        for (int i = 0; i < inFlight.size(); )
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.RETRY && now - batch.createdMs >= timeout)
            {
                finalFailure(batch, ProducerErrorCode.DELIVERY_TIMEOUT, "not acknowledged within " +
                    ProducerContext.DELIVERY_TIMEOUT_MS + "=" + timeout + " (" + batch.attempts + " attempts)");
                work++;
                continue;
            }
            i++;
        }
        return work;
    }

    private int sendIdempotent(final long now)
    {
        int awaiting = 0;
        ProducerBatch firstRetry = null;
        for (int i = 0; i < inFlight.size(); i++)
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.AWAITING)
            {
                awaiting++;
            }
            else if (null == firstRetry && batch.state == ProducerBatch.RETRY)
            {
                firstRetry = batch;
            }
        }
        if (null != firstRetry)
        {
            if (awaiting == 0 && retryDue(firstRetry, now))
            {
                send(firstRetry, now); // recovery: one at a time, in sequence order
                return 1;
            }
            return 0;
        }
        final int limit = acknowledgedOnce ? agent.maxInFlight() : 1;
        int work = 0;
        while (!queued.isEmpty() && inFlight.size() < limit)
        {
            final ProducerBatch batch = queued.peek();
            if (nextSequence > Integer.MAX_VALUE - batch.recordCount)
            {
                if (!inFlight.isEmpty())
                {
                    break;
                }
                bumpEpoch(); // sequences would wrap: start a new epoch at 0 once nothing is in flight
            }
            queued.poll();
            batch.producerId = producerId;
            batch.epoch = epoch;
            batch.sequence = nextSequence;
            nextSequence += batch.recordCount;
            inFlight.add(batch);
            send(batch, now);
            work++;
            if (batch.state != ProducerBatch.AWAITING)
            {
                break;
            }
        }
        return work;
    }

    private int sendPlain(final long now)
    {
        int work = 0;
        int awaiting = 0;
        for (int i = 0; i < inFlight.size(); i++)
        {
            awaiting += inFlight.get(i).state == ProducerBatch.AWAITING ? 1 : 0;
        }
        for (int i = 0; i < inFlight.size() && awaiting < agent.maxInFlight(); )
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.RETRY && retryDue(batch, now))
            {
                send(batch, now);
                work++;
                awaiting += batch.state == ProducerBatch.AWAITING ? 1 : 0;
            }
            if (i < inFlight.size() && inFlight.get(i) == batch)
            {
                i++;
            }
        }
        while (!queued.isEmpty() && inFlight.size() < agent.maxInFlight())
        {
            final ProducerBatch batch = queued.poll();
            inFlight.add(batch);
            send(batch, now);
            work++;
            if (batch.state != ProducerBatch.AWAITING)
            {
                break;
            }
        }
        return work;
    }

    private int sendOneWay(final long now)
    {
        int work = 0;
        for (ProducerBatch batch = queued.peek(); null != batch && now >= batch.retryAtMs; batch = queued.peek())
        {
            final ReplicationError result = agent.channel().send(agent.session(), tp, source.partitionId,
                agent.nextCorrelationId(), Acks.NONE, agent.requestTimeoutMs(), -1, (short)-1, -1, batch.buffer,
                batch.length);
            work++;
            if (result == ReplicationError.NONE)
            {
                queued.poll();
                complete(batch, -1, null); // acks=0: queued to the leader is all that is ever known
                continue;
            }
            batch.lastError = result;
            if (!result.retriable())
            {
                queued.poll();
                complete(batch, -1, failure(ProducerErrorCode.REPLICATION, batch, "refused by the leader"));
                continue;
            }
            batch.retryAtMs = now + agent.retryBackoffMs();
            break;
        }
        return work;
    }

    private void send(final ProducerBatch batch, final long now)
    {
        final long correlationId = agent.nextCorrelationId();
        final long target = agent.channel().leaderInstance(source.partitionId);
        final ReplicationError result = agent.channel().send(agent.session(), tp, source.partitionId, correlationId,
            acks, agent.requestTimeoutMs(), batch.producerId, batch.epoch, batch.sequence, batch.buffer,
            batch.length);
        if (result == ReplicationError.NONE)
        {
            batch.attempts++;
            batch.state = ProducerBatch.AWAITING;
            batch.correlationId = correlationId;
            batch.target = target;
            batch.attemptDeadlineMs = now + 2L * agent.requestTimeoutMs();
            batch.owner = this;
            agent.track(batch);
        }
        else
        {
            batch.target = target; // the leader it was meant for: a retry to that one waits out the back-off
            onAttemptFailed(batch, result, now); // not queued: certainly not appended
        }
    }

    private void onAttemptFailed(final ProducerBatch batch, final ReplicationError error, final long now)
    {
        batch.lastError = error;
        batch.mayBeAppended |= ProducerBatch.unknownOutcome(error);
        final boolean retriable = error.retriable() || (idempotent && error == ReplicationError.OUT_OF_ORDER_SEQUENCE);
        if (!retriable)
        {
            finalFailure(batch, ProducerErrorCode.REPLICATION, "refused by the leader");
            return;
        }
        if (batch.attempts > agent.retries())
        {
            finalFailure(batch, ProducerErrorCode.REPLICATION, ProducerContext.RETRIES + "=" + agent.retries() +
                " used up");
            return;
        }
        if (now - batch.createdMs >= agent.deliveryTimeoutMs())
        {
            finalFailure(batch, ProducerErrorCode.DELIVERY_TIMEOUT, "not acknowledged within " +
                ProducerContext.DELIVERY_TIMEOUT_MS + "=" + agent.deliveryTimeoutMs());
            return;
        }
        if (idempotent && error == ReplicationError.OUT_OF_ORDER_SEQUENCE && firstUnacknowledged() == batch)
        {
            resetPending = true; // no earlier batch is pending, yet the leader lacks one: it lost this producer's state
        }
        batch.state = ProducerBatch.RETRY;
        batch.retryAtMs = now + agent.retryBackoffMs();
    }

    /**
     * @return whether a batch waiting to be resent (RETRY) is due: its back-off has passed, or it failed with
     *         NOT_LEADER and this client now knows another live host than the one its attempt went to as the
     *         partition's leader. The leader moved (a failover): the retry goes to the new one as soon as it is
     *         known, as Kafka's producer does once a NOT_LEADER answer names the new leader (KIP-951). The back-off
     *         is for a leader not known yet or one that refused the batch itself; waiting it out after the new
     *         leader was known added up to {@code retry.backoff.ms} (100 ms) to every failover's pause. The retry
     *         goes to the leader the client knows, so a NOT_LEADER from that one backs off: no loop.
     */
    private boolean retryDue(final ProducerBatch batch, final long now)
    {
        if (now >= batch.retryAtMs)
        {
            return true;
        }
        if (batch.lastError != ReplicationError.NOT_LEADER)
        {
            return false;
        }
        final long leader = agent.channel().leaderInstance(source.partitionId);
        return leader != ClusterConnection.NO_LEADER && leader != batch.target && !agent.channel().isGone(leader);
    }

    private ProducerBatch firstUnacknowledged()
    {
        for (int i = 0; i < inFlight.size(); i++)
        {
            if (inFlight.get(i).state != ProducerBatch.ACKED)
            {
                return inFlight.get(i);
            }
        }
        return null;
    }

    private void finalFailure(final ProducerBatch batch, final ProducerErrorCode code, final String detail)
    {
        inFlight.remove(batch);
        complete(batch, -1, failure(code, batch, detail));
        if (idempotent && batch.sequence >= 0)
        {
            resetPending = true; // its sequence is a hole now: the next batches cannot follow it
        }
        releaseAckedHead();
    }

    /**
     * After a batch failed for good: once nothing is in flight, start a new epoch at sequence 0 and renumber the
     * unacknowledged batches; one that may already have landed is failed rather than risk a duplicate.
     */
    private int reset()
    {
        for (int i = 0; i < inFlight.size(); i++)
        {
            if (inFlight.get(i).state == ProducerBatch.AWAITING)
            {
                return 0;
            }
        }
        resetPending = false;
        bumpEpoch();
        for (int i = 0; i < inFlight.size(); )
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.ACKED)
            {
                agent.release(inFlight.remove(i)); // in the log, completed: the old epoch's window is over
                continue;
            }
            if (batch.mayBeAppended)
            {
                inFlight.remove(i);
                complete(batch, -1, failure(ProducerErrorCode.REPLICATION, batch, "an earlier batch of the partition " +
                    "failed; this one may already be in the log, and is not resent under a new sequence (that could " +
                    "duplicate it)"));
                continue;
            }
            batch.producerId = producerId;
            batch.epoch = epoch;
            batch.sequence = nextSequence;
            nextSequence += batch.recordCount;
            i++;
        }
        return 1;
    }

    private void bumpEpoch()
    {
        if (epoch == Short.MAX_VALUE)
        {
            producerId = agent.channel().allocateProducerId();
            epoch = 0;
        }
        else
        {
            epoch++;
        }
        nextSequence = 0;
    }

    private ProducerException failure(final ProducerErrorCode code, final ProducerBatch batch, final String detail)
    {
        return new ProducerException(code, batch.lastError, tp, batch.mayBeAppended,
            batch.recordCount + " record(s) " + detail);
    }

    private void complete(final ProducerBatch batch, final long baseOffset, final ProducerException error)
    {
        batch.complete(this, baseOffset, error, agent.errorHandler());
        agent.release(batch);
    }

    /** @return the smallest serial of a batch this lane has not completed, or Long.MAX_VALUE. */
    long minSerial()
    {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < inFlight.size(); i++)
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state != ProducerBatch.ACKED)
            {
                min = Math.min(min, batch.serial);
            }
        }
        final ProducerBatch first = queued.peek();
        return null == first ? min : Math.min(min, first.serial);
    }

    /** Fail every batch of the lane (closing; the agent is stopped). */
    void failAll(final String detail)
    {
        source.takeAll(queued);
        for (int i = 0; i < inFlight.size(); i++)
        {
            final ProducerBatch batch = inFlight.get(i);
            if (batch.state == ProducerBatch.ACKED)
            {
                agent.release(batch);
                continue;
            }
            batch.mayBeAppended |= batch.state == ProducerBatch.AWAITING;
            agent.untrack(batch);
            complete(batch, -1, failure(ProducerErrorCode.CLOSED, batch, detail));
        }
        inFlight.clear();
        for (ProducerBatch batch = queued.poll(); null != batch; batch = queued.poll())
        {
            complete(batch, -1, failure(ProducerErrorCode.CLOSED, batch, detail));
        }
    }
}
