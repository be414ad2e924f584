package io.tidemark.client;

import io.tidemark.replication.ProduceListener;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.EpochClock;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A {@link ClusterConnection} that injects {@link ProduceFaults} between a producer and the partition leaders: it
 * drops a request before it reaches the leader (the producer believes it sent) or the leader's answer. It numbers the
 * attempts of each batch itself: an idempotent batch by its producer id, epoch and base sequence, any other by its
 * partition and bytes (a resend sends the same bytes). Thread-safe.
 */
final class FaultInjectingConnection implements ClusterConnection
{
    private final ClusterConnection delegate;
    private final ProduceFaults faults;
    private final Map<BatchKey, Integer> attempts = new HashMap<>();

    private record BatchKey(int partitionId, long producerId, short epoch, int sequence, int length, int bytesHash)
    {
    }

    FaultInjectingConnection(final ClusterConnection delegate, final ProduceFaults faults)
    {
        this.delegate = delegate;
        this.faults = faults;
    }

    @Override
    public int register(final ProduceListener listener)
    {
        return delegate.register((tp, correlationId, baseOffset, error) ->
        {
            if (!faults.dropResponse(tp, correlationId, error))
            {
                listener.onComplete(tp, correlationId, baseOffset, error);
            }
        });
    }

    @Override
    public void unregister(final int session)
    {
        delegate.unregister(session);
    }

    @Override
    public ReplicationError send(final int session, final TopicPartition tp, final int partitionId,
        final long correlationId, final int acks, final int timeoutMs, final long producerId, final short producerEpoch,
        final int baseSequence, final DirectBuffer records, final int length)
    {
        final BatchKey key = baseSequence >= 0 ?
            new BatchKey(partitionId, producerId, producerEpoch, baseSequence, 0, 0) :
            new BatchKey(partitionId, -1, (short)-1, -1, length, hash(records, length));
        final int attempt;
        synchronized (attempts)
        {
            attempt = attempts.getOrDefault(key, 0) + 1;
        }
        if (faults.dropRequest(tp, correlationId, attempt, baseSequence))
        {
            counted(key, attempt);
            return ReplicationError.NONE;
        }
        final ReplicationError result = delegate.send(session, tp, partitionId, correlationId, acks, timeoutMs,
            producerId, producerEpoch, baseSequence, records, length);
        if (result == ReplicationError.NONE)
        {
            counted(key, attempt); // a send the connection refused is not an attempt (the producer does not count it)
        }
        return result;
    }

    private void counted(final BatchKey key, final int attempt)
    {
        synchronized (attempts)
        {
            attempts.put(key, attempt);
        }
    }

    private static int hash(final DirectBuffer records, final int length)
    {
        int hash = 1;
        for (int i = 0; i < length; i++)
        {
            hash = 31 * hash + records.getByte(i);
        }
        return hash;
    }

    @Override
    public void gatherSends()
    {
        delegate.gatherSends();
    }

    @Override
    public void flushSends()
    {
        delegate.flushSends();
    }

    @Override
    public long leaderInstance(final int partitionId)
    {
        return delegate.leaderInstance(partitionId);
    }

    @Override
    public boolean isGone(final long leaderInstance)
    {
        return delegate.isGone(leaderInstance);
    }

    @Override
    public List<PartitionState> partitions(final String topic)
    {
        return delegate.partitions(topic);
    }

    @Override
    public long allocateProducerId()
    {
        return delegate.allocateProducerId();
    }

    @Override
    public int maxRequestBytes()
    {
        return delegate.maxRequestBytes();
    }

    @Override
    public EpochClock epochClock()
    {
        return delegate.epochClock();
    }

    @Override
    public Runnable waitAction()
    {
        return delegate.waitAction();
    }
}
