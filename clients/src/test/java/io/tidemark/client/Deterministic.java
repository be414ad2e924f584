package io.tidemark.client;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.CachedEpochClock;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;

/**
 * A deterministic cluster with its producers: INVOKER threading everywhere and one manual clock, so every step is
 * explicit and a failing run replays exactly. A step invokes the cluster's agents then every producer's agent.
 */
final class Deterministic implements AutoCloseable
{
    final CachedEpochClock clock = new CachedEpochClock();
    final ReplicationCluster cluster;
    final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final List<Producer> producers = new CopyOnWriteArrayList<>();

    Deterministic(final Path root, final int hosts, final ReplicationContext ctx)
    {
        this(root, hosts, ctx, UnaryOperator.identity());
    }

    Deterministic(final Path root, final int hosts, final ReplicationContext ctx, final UnaryOperator<LogContext> logs)
    {
        clock.update(1_000_000);
        cluster = ReplicationCluster.start(root, hosts, ctx
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .epochClock(clock)
            .errorHandler(errors::add)
            .logContextFactory((dir) -> logs.apply(new LogContext().logDir(dir).segmentBytes(1024 * 1024)
                .maxMessageBytes(64 * 1024).pretouchBytes(0))));
    }

    /** Short failure detection, as the replication scenario tests use. */
    static ReplicationContext ctx()
    {
        return new ReplicationContext().replicaLagTimeMaxMs(1000).hostSessionTimeoutMs(600)
            .hostHeartbeatIntervalMs(100).replicaFetchWaitMaxMs(100).requestTimeoutMs(5000);
    }

    TopicPartition topic(final String name, final int partitions, final int replicationFactor)
    {
        cluster.createTopic(name, partitions, replicationFactor);
        if (!cluster.awaitLeaders(name, 5_000))
        {
            throw new AssertionError("no leaders for " + name + ": " + cluster.partitions(name));
        }
        settle();
        return new TopicPartition(name, 0);
    }

    /** A producer run by the steps of this harness; a blocked call (sync send, flush) steps the clock by 1 ms. */
    Producer producer(final ProducerContext ctx, final ProduceFaults faults)
    {
        final ClusterConnection connection = ClusterConnection.of(cluster);
        final Producer producer = new Producer(faults == ProduceFaults.NONE ? connection :
            new FaultInjectingConnection(connection, faults), ctx.agentMode(ProducerContext.AgentMode.INVOKER)
            .errorHandler(errors::add)
            .invokerIdleAction(() ->
            {
                cluster.invokeAgents();
                clock.advance(1);
            }));
        producers.add(producer);
        return producer;
    }

    Producer producer(final ProducerContext ctx)
    {
        return producer(ctx, ProduceFaults.NONE);
    }

    void forget(final Producer producer)
    {
        producers.remove(producer);
    }

    /** Run every agent until nothing more happens (bounded), without moving the clock. */
    void settle()
    {
        for (int i = 0; i < 200; i++)
        {
            int work = cluster.invokeAgents();
            for (final Producer producer : producers)
            {
                work += producer.invokeAgent();
            }
            if (work == 0)
            {
                return;
            }
        }
    }

    /** Advance the clock in 10 ms steps, settling at each. */
    void advance(final long ms)
    {
        for (long done = 0; done < ms; done += 10)
        {
            clock.advance(Math.min(10, ms - done));
            settle();
        }
    }

    /** Advance until the condition holds; fails after {@code maxMs} of the manual clock. */
    void advanceUntil(final BooleanSupplier condition, final long maxMs, final String what)
    {
        settle();
        for (long waited = 0; !condition.getAsBoolean(); waited += 10)
        {
            if (waited > maxMs)
            {
                throw new AssertionError("not within " + maxMs + " ms: " + what + "; errors " + errors);
            }
            advance(10);
        }
    }

    int leader(final TopicPartition tp)
    {
        return cluster.leaderOf(tp);
    }

    /** Kill the leader of {@code tp} and wait for a new one. */
    int killLeader(final TopicPartition tp)
    {
        final int old = leader(tp);
        cluster.killHost(old);
        advanceUntil(() -> leader(tp) != old && leader(tp) >= 0 && readable(tp), 5_000, "a new leader of " + tp);
        return old;
    }

    private boolean readable(final TopicPartition tp)
    {
        try (PartitionReader reader = cluster.openReader(tp))
        {
            return reader.highWatermark() >= 0;
        }
    }

    /** Every committed record of a partition, as text. */
    List<String> committed(final TopicPartition tp)
    {
        return Logs.committed(cluster, tp);
    }

    @Override
    public void close()
    {
        for (final Producer producer : producers)
        {
            producer.close(0);
        }
        cluster.close();
    }
}
