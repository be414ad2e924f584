package io.tidemark.replication;

import io.tidemark.store.LogContext;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Advancing the high watermark:
 * <ul>
 *     <li>{@link #advanceTo}: {@code HighWatermark.advanceTo}, the lock-free CAS max, one thread, always moving up.</li>
 *     <li>{@link #leaderRule}: {@code LeaderState.maybeAdvanceHighWatermark} on a leader of RF=3 (ISR of three):
 *     both followers' log end offsets move up by one and the leader recomputes {@code min(LEO)} over the ISR and
 *     advances: the work an acks=all acknowledgement waits for, without the fetch round trips.</li>
 *     <li>{@code contended} group: two threads advancing the same high watermark to the same rising candidates (one
 *     wins each CAS, the other finds it already there), as two fetcher-driven updates racing.</li>
 * </ul>
 * This benchmark lives in replication's test sources because {@code HighWatermark} and {@code LeaderState} are
 * package-private; it takes them from a real leader of an INVOKER-mode cluster, whose agents never run during the
 * measurement. {@code HighWatermarkBenchmarkTest} runs it once as a test; to measure it, run JMH on the module's
 * test class path (the commands: docs/benchmarks.md), e.g.
 * {@code java -cp <replication test class path> org.openjdk.jmh.Main HighWatermarkBenchmark}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
@State(Scope.Benchmark)
public class HighWatermarkBenchmark
{
    /** Where the leader's log end offset sits: far enough that the followers never reach it within a run. */
    static final long LEADER_END = 1L << 50;

    Path dir;
    ReplicationCluster cluster;
    HighWatermark highWatermark;
    LeaderState leader;
    FollowerState follower1;
    FollowerState follower2;
    private long next;

    /**
     * A real leader of RF=3: a three-host cluster in INVOKER mode (no threads: nothing runs unless invoked), one
     * partition, its leader's log emptied to restart at {@link #LEADER_END}.
     */
    @Setup(Level.Trial)
    public void start() throws IOException
    {
        dir = Files.createTempDirectory("tidemark-bench-hw-");
        cluster = ReplicationCluster.start(dir, 3, new ReplicationContext()
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(1 << 20)));
        cluster.createTopic("bench", 1, 3);
        final TopicPartition tp = new TopicPartition("bench", 0);
        if (!cluster.awaitLeaders("bench", 10_000))
        {
            throw new IllegalStateException("no leader");
        }
        final Replica replica = cluster.leaderReplica(tp);
        replica.log.truncateFullyAndStartAt(LEADER_END);
        leader = replica.leaderState;
        highWatermark = replica.highWatermark;
        final int[] followers = new int[2];
        int n = 0;
        for (int host = 0; host < 3; host++)
        {
            if (host != replica.hostId)
            {
                followers[n++] = host;
            }
        }
        follower1 = leader.follower(followers[0]);
        follower2 = leader.follower(followers[1]);
        follower1.logEndOffset = 0;
        follower2.logEndOffset = 0;
        highWatermark.reset(0);
    }

    /** Stop the cluster and delete the directory. */
    @TearDown(Level.Trial)
    public void stop()
    {
        if (null != cluster)
        {
            cluster.close();
        }
        deleteTree(dir);
    }

    /** @return whether it moved (always). */
    @Benchmark
    public boolean advanceTo()
    {
        return highWatermark.advanceTo(++next);
    }

    /** @return whether the high watermark advanced (always). */
    @Benchmark
    public boolean leaderRule()
    {
        final long leo = ++next;
        follower1.logEndOffset = leo;
        follower2.logEndOffset = leo;
        return leader.maybeAdvanceHighWatermark();
    }

    /** Each contending thread's own rising candidate. */
    @State(Scope.Thread)
    public static class Candidate
    {
        /** The last candidate this thread tried. */
        public long value;
    }

    /**
     * @param candidate this thread's candidate.
     * @return whether this thread moved it.
     */
    @Benchmark
    @Group("contended")
    @GroupThreads(2)
    public boolean contendedAdvanceTo(final Candidate candidate)
    {
        return highWatermark.advanceTo(++candidate.value);
    }

    private static void deleteTree(final Path dir)
    {
        if (null == dir || !Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
        catch (final IOException ex)
        {
            System.err.println("could not delete " + dir + ": " + ex);
        }
    }
}
