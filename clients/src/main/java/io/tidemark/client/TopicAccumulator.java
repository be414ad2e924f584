package io.tidemark.client;

import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.ConfigException;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One topic's partitions as the producer sees them: an accumulator per partition and lane (acked, one-way), and the
 * partitioner: an explicit partition, the hash of the key (Kafka's murmur2, so keys land where Kafka puts them), or
 * for keyless records the sticky partition (kept until its batch is full or sent, then the next partition with a
 * leader) or round-robin. Thread-safe.
 */
final class TopicAccumulator
{
    final String topic;
    private final PartitionAccumulator[] acked;
    private final PartitionAccumulator[] oneWay;
    private final ClusterChannel channel;
    private final ProducerContext.Partitioner partitioner;
    private final AtomicInteger roundRobin = new AtomicInteger();
    private volatile int sticky = -1;

    TopicAccumulator(final RecordAccumulator owner, final String topic, final List<PartitionState> partitions,
        final ClusterChannel channel, final ProducerContext ctx)
    {
        this.topic = topic;
        this.channel = channel;
        this.partitioner = ctx.partitioner();
        this.acked = new PartitionAccumulator[partitions.size()];
        this.oneWay = new PartitionAccumulator[partitions.size()];
        for (final PartitionState state : partitions)
        {
            final int acks = ctx.acks();
            if (acks > state.assignedReplicas().length)
            {
                throw new ConfigException(ProducerContext.ACKS, "acks=" + Acks.describe(acks) +
                    " exceeds the replication factor " + state.assignedReplicas().length + " of topic " + topic);
            }
            final TopicPartition tp = state.topicPartition();
            acked[tp.partition()] = new PartitionAccumulator(owner, tp, state.partitionId(), acks == Acks.NONE);
            oneWay[tp.partition()] = new PartitionAccumulator(owner, tp, state.partitionId(), true);
        }
    }

    int partitionCount()
    {
        return acked.length;
    }

    PartitionAccumulator accumulator(final int partition, final boolean oneWayLane)
    {
        return oneWayLane ? oneWay[partition] : acked[partition];
    }

    void forEach(final java.util.function.Consumer<PartitionAccumulator> action)
    {
        for (int i = 0; i < acked.length; i++)
        {
            action.accept(acked[i]);
            action.accept(oneWay[i]);
        }
    }

    /**
     * @return the partition for a record.
     * @throws ProducerException UNKNOWN_TOPIC for an explicit partition out of range.
     */
    int partition(final ProducerRecord record)
    {
        final int explicit = record.partition();
        if (explicit != ProducerRecord.ANY_PARTITION)
        {
            if (explicit < 0 || explicit >= acked.length)
            {
                throw ProducerException.of(ProducerErrorCode.UNKNOWN_TOPIC, "partition " + explicit + " of topic " +
                    topic + " does not exist (it has " + acked.length + ")");
            }
            return explicit;
        }
        if (record.keyLength() >= 0)
        {
            return Murmur2.partition(record.keyBuffer(), record.keyOffset(), record.keyLength(), acked.length);
        }
        if (partitioner == ProducerContext.Partitioner.ROUND_ROBIN)
        {
            return nextAvailable(Math.floorMod(roundRobin.getAndIncrement(), acked.length));
        }
        final int current = sticky;
        if (current >= 0)
        {
            return current;
        }
        final int chosen = nextAvailable(0);
        sticky = chosen;
        return chosen;
    }

    /** A keyless record started a new batch on {@code partition}: the sticky partitioner moves to the next one. */
    void onNewBatch(final ProducerRecord record, final int partition)
    {
        if (partitioner == ProducerContext.Partitioner.STICKY && record.keyLength() < 0 &&
            record.partition() == ProducerRecord.ANY_PARTITION && sticky == partition)
        {
            sticky = nextAvailable((partition + 1) % acked.length);
        }
    }

    private int nextAvailable(final int from)
    {
        for (int i = 0; i < acked.length; i++)
        {
            final int candidate = (from + i) % acked.length;
            if (channel.hasLeader(acked[candidate].partitionId))
            {
                return candidate;
            }
        }
        return from;
    }
}
