package io.tidemark.client;

import io.tidemark.replication.protocol.PartitionState;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every topic the producer has sent to, with its partition accumulators, plus what sending threads and the agent
 * share: the buffer pool, batch serial numbers (for {@code flush()}), flushes in progress and the closed flag. A
 * topic is looked up by name (no allocation) and registered on first use; the agent iterates a copy-on-write array
 * of all partition accumulators. Thread-safe.
 */
final class RecordAccumulator
{
    private final ConcurrentHashMap<String, TopicAccumulator> topics = new ConcurrentHashMap<>();
    private final ClusterChannel channel;
    private final ProducerContext ctx;
    private final BufferPool pool;
    private final AtomicLong serials = new AtomicLong();
    private final AtomicInteger flushes = new AtomicInteger();
    private volatile PartitionAccumulator[] all = new PartitionAccumulator[0];
    private volatile boolean closed;

    RecordAccumulator(final ClusterChannel channel, final ProducerContext ctx, final BufferPool pool)
    {
        this.channel = channel;
        this.ctx = ctx;
        this.pool = pool;
    }

    /**
     * @return the topic's accumulators, registered on first use.
     * @throws ProducerException UNKNOWN_TOPIC when the cluster has no such topic.
     */
    TopicAccumulator topic(final String name)
    {
        final TopicAccumulator known = topics.get(name);
        return null != known ? known : register(name);
    }

    private synchronized TopicAccumulator register(final String name)
    {
        TopicAccumulator topic = topics.get(name);
        if (null == topic)
        {
            if (null == name)
            {
                throw ProducerException.of(ProducerErrorCode.UNKNOWN_TOPIC, "no topic given");
            }
            final List<PartitionState> partitions = channel.partitions(name);
            if (partitions.isEmpty())
            {
                throw ProducerException.of(ProducerErrorCode.UNKNOWN_TOPIC, "topic " + name + " does not exist");
            }
            topic = new TopicAccumulator(this, name, partitions, channel, ctx);
            final PartitionAccumulator[] next = Arrays.copyOf(all, all.length + 2 * topic.partitionCount());
            final int[] at = { all.length };
            topic.forEach((accumulator) -> next[at[0]++] = accumulator);
            all = next;
            topics.put(name, topic);
        }
        return topic;
    }

    /** @return every partition accumulator (an immutable snapshot). */
    PartitionAccumulator[] all()
    {
        return all;
    }

    BufferPool pool()
    {
        return pool;
    }

    long maxBlockMs()
    {
        return ctx.maxBlockMs();
    }

    long nextSerial()
    {
        return serials.incrementAndGet();
    }

    /** @return the serial of the latest batch started. */
    long lastSerial()
    {
        return serials.get();
    }

    void beginFlush()
    {
        flushes.incrementAndGet();
    }

    void endFlush()
    {
        flushes.decrementAndGet();
    }

    /** @return whether a flush is in progress (batches go out without lingering). */
    boolean flushing()
    {
        return flushes.get() > 0;
    }

    boolean isClosed()
    {
        return closed;
    }

    /** Refuse every later append, and wait for the appends in progress to finish. */
    void close()
    {
        synchronized (this)
        {
            closed = true;
        }
        for (final PartitionAccumulator accumulator : all)
        {
            accumulator.barrier();
        }
    }
}
