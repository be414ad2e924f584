package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A deterministic cluster for scripted scenarios: INVOKER threading and a manual clock, so every step is
 * explicit. Records every produce outcome by correlation id.
 */
final class Harness implements AutoCloseable
{
    final CachedEpochClock clock = new CachedEpochClock();
    private final Path root;
    final ReplicationCluster cluster;
    final int session;
    final Map<Long, Outcome> outcomes = new ConcurrentHashMap<>();
    final List<Throwable> errors = new ArrayList<>();
    final java.util.concurrent.atomic.AtomicReference<String> bootId =
        new java.util.concurrent.atomic.AtomicReference<>("boot-1");
    /** Faults injected into the replica logs' durable steps (none unless a test sets them). */
    volatile FaultyFileSync.Faults faults = (host, step, path) -> FaultyFileSync.Fault.NONE;
    final FaultyFileSync.Renames renames = new FaultyFileSync.Renames();
    private final Map<Integer, String> hostBoots = new ConcurrentHashMap<>();
    private long nextCorrelation = 1;

    record Outcome(long offset, ReplicationError error)
    {
    }

    Harness(final Path root, final int hosts, final ReplicationContext ctx)
    {
        this(root, hosts, ctx, Long.MAX_VALUE);
    }

    /** @param flushIntervalMessages the replica logs' {@code flush.interval.messages} (Long.MAX_VALUE: none). */
    Harness(final Path root, final int hosts, final ReplicationContext ctx, final long flushIntervalMessages)
    {
        this.root = root;
        clock.update(1_000_000);
        cluster = ReplicationCluster.start(root, hosts, ctx
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .epochClock(clock)
            .errorHandler(errors::add)
            .bootIdSupplier((host) -> bootId.get() + hostBoots.getOrDefault(host, ""))
            .logContextFactory((dir) -> replicaLogContext(dir).pretouchBytes(0)
                .flushIntervalMessages(flushIntervalMessages)
                .fileSync(new FaultyFileSync(FaultyFileSync.hostOf(dir), (host, step, path) -> faults.at(host, step, path),
                    renames))));
        session = cluster.sessions().register((tp, id, offset, error) -> outcomes.put(id, new Outcome(offset, error)));
    }

    /** The machine "reboots": hosts restarted from now on see a new boot id, as after a power loss. */
    void powerCycle()
    {
        bootId.set("boot-" + System.nanoTime());
    }

    /** The machine of one host "reboots" (hosts on several machines): only that host sees a new boot id. */
    void powerCycle(final int host)
    {
        hostBoots.put(host, "-" + System.nanoTime());
    }

    /** The replica logs' sizes (small segments, so that tests roll them). */
    private static LogContext replicaLogContext(final Path dir)
    {
        return new LogContext().logDir(dir).segmentBytes(256 * 1024).maxMessageBytes(64 * 1024);
    }

    /**
     * Simulate a lost unflushed tail: cut the last records off a halted host's replica log. The log stays marked as
     * not closed cleanly, as the killed host left it (this tool's own close must not hide that).
     */
    void dropTail(final int host, final TopicPartition tp, final int records)
    {
        final Path logDir = root.resolve("host-" + host).resolve(tp.logName());
        try (Log log = Log.open(replicaLogContext(logDir).agentMode(LogContext.AgentMode.EXTERNAL)))
        {
            log.truncateTo(log.logEndOffset() - records);
        }
        try
        {
            Files.delete(logDir.resolve(".clean-shutdown"));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    /** Run every agent until nothing more happens (bounded), without moving the clock. */
    void settle()
    {
        for (int i = 0; i < 200; i++)
        {
            if (cluster.invokeAgents() == 0)
            {
                return;
            }
        }
    }

    /** Advance the clock in 20 ms steps (below the heartbeat interval), running the agents at each. */
    void advance(final long ms)
    {
        advance(ms, 20);
    }

    /** Advance the clock in steps, running the agents at each. */
    void advance(final long ms, final long step)
    {
        for (long done = 0; done < ms; done += step)
        {
            clock.advance(Math.min(step, ms - done));
            settle();
        }
    }

    TopicPartition topic(final String name, final int partitions, final int rf)
    {
        cluster.createTopic(name, partitions, rf);
        if (!cluster.awaitLeaders(name, 5_000))
        {
            throw new AssertionError("no leaders for " + name + ": " + cluster.partitions(name) + " errors " + errors);
        }
        settle();
        return new TopicPartition(name, 0);
    }

    /** Produce one record; returns its correlation id. */
    long produce(final TopicPartition tp, final int acks, final String value)
    {
        final long id = nextCorrelation++;
        final UnsafeBuffer v = new UnsafeBuffer(value.getBytes(StandardCharsets.UTF_8));
        final ReplicationError queued = cluster.produce(session, tp, id, acks, 0, null, 0, -1, v, 0, v.capacity());
        if (queued != ReplicationError.NONE)
        {
            outcomes.put(id, new Outcome(-1, queued));
        }
        return id;
    }

    /** Produce and run the agents until it is answered (or the deadline passes on the manual clock). */
    Outcome produceAndWait(final TopicPartition tp, final int acks, final String value, final long maxMs)
    {
        final long id = produce(tp, acks, value);
        settle();
        for (long waited = 0; null == outcome(id) && waited < maxMs; waited += 20)
        {
            advance(20);
        }
        return outcome(id);
    }

    Outcome outcome(final long id)
    {
        return outcomes.get(id);
    }

    int leader(final TopicPartition tp)
    {
        return cluster.leaderOf(tp);
    }

    PartitionState state(final TopicPartition tp)
    {
        return cluster.state(tp);
    }

    Replica replica(final int host, final TopicPartition tp)
    {
        return cluster.replica(host, tp);
    }

    /** Every record of a replica's log, as text. */
    static List<String> values(final Replica replica)
    {
        final List<String> out = new ArrayList<>();
        try (LogReader reader = replica.log.openReader())
        {
            while (reader.poll((r) -> out.add(r.valueAsString()), Long.MAX_VALUE, 1000) > 0)
            {
                // read on
            }
        }
        return out;
    }

    @Override
    public void close()
    {
        cluster.close();
    }
}
