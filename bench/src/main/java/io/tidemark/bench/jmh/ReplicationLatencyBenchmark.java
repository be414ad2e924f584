package io.tidemark.bench.jmh;

import io.tidemark.aeron.AeronMedia;
import io.tidemark.aeron.AeronTransport;
import io.tidemark.bench.JvmFlags;
import io.tidemark.replication.Acks;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogContext;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Append-to-acknowledge latency of one 100-byte record on a topic with one partition and replication factor 3, in
 * one JVM: the benchmark thread produces one record and waits (spinning) for its acknowledgement, so each
 * operation is one full round trip: produce queue, leader append, (for acks=all) fetch by both followers, their
 * appends, their next fetches advancing the high watermark, completion. {@code Mode.SampleTime} gives the
 * latency distribution; the GC profiler's {@code gc.alloc.rate.norm} covers every thread of the JVM, so it shows
 * whether the whole replication path allocates per record.
 * <p>
 * Threading: {@code SHARED} runs every agent (controller, three hosts, their fetchers and logs) on one busy-spinning
 * thread, which with the benchmark thread fills this 2-core machine exactly; {@code PER_HOST} gives each host its
 * own thread (more threads than cores here, so they back off and park).
 * <p>
 * Transport: {@code RINGS} is the in-process Agrona ring-buffer transport; {@code AERON_IPC} carries the same fetch
 * messages over Aeron IPC through an embedded media driver (one more thread, backing off when idle), as hosts in
 * separate processes of one machine would exchange them.
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Benchmark)
public class ReplicationLatencyBenchmark
{
    /** acks mode: 1 (leader) or -1 (all). */
    @Param({"1", "-1"})
    public int acks;

    /** Agent threading. */
    @Param({"SHARED", "PER_HOST"})
    public String threading;

    /** Transport between the hosts. */
    @Param({"RINGS", "AERON_IPC"})
    public String transport;

    private Path dir;
    private AeronMedia media;
    private AeronTransport aeronTransport;
    private ReplicationCluster cluster;
    private TopicPartition partition;
    private int session;
    private UnsafeBuffer value;
    private long correlationId;
    private volatile long lastAcknowledged;
    private volatile long failures;

    /** Start a 3-host cluster with one partition, RF=3. */
    @Setup(Level.Trial)
    public void start() throws IOException
    {
        dir = BenchLogs.createTempDir("replication");
        value = BenchLogs.value(100);
        final ReplicationContext.ThreadingMode mode = ReplicationContext.ThreadingMode.valueOf(threading);
        final ReplicationContext ctx = new ReplicationContext()
            .threadingMode(mode)
            .idleStrategySupplier(mode == ReplicationContext.ThreadingMode.SHARED ?
                BusySpinIdleStrategy::new : new ReplicationContext().idleStrategySupplier())
            .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(BenchLogs.SEGMENT_BYTES)
                .retentionBytes(BenchLogs.RETENTION_BYTES)
                .retentionCheckIntervalMs(BenchLogs.RETENTION_CHECK_INTERVAL_MS));
        if ("AERON_IPC".equals(transport))
        {
            media = AeronMedia.launchEmbedded(dir.resolve("aeron"));
            aeronTransport = new AeronTransport(media.aeron(), false, 3, AeronTransport.ipc());
            cluster = ReplicationCluster.start(dir.resolve("data"), 3, ctx, aeronTransport);
        }
        else
        {
            cluster = ReplicationCluster.start(dir, 3, ctx);
        }
        cluster.createTopic("latency", 1, 3);
        if (!cluster.awaitLeaders("latency", 10_000))
        {
            throw new IllegalStateException("no leader: " + cluster.partitions("latency"));
        }
        partition = new TopicPartition("latency", 0);
        session = cluster.sessions().register((tp, id, offset, error) ->
        {
            if (error != ReplicationError.NONE)
            {
                failures++;
            }
            lastAcknowledged = id;
        });
    }

    /** Stop the cluster and delete its files. */
    @TearDown(Level.Trial)
    public void stop()
    {
        cluster.close();
        CloseHelper.closeAll(aeronTransport, media);
        BenchLogs.deleteRecursively(dir);
        if (failures > 0)
        {
            throw new IllegalStateException(failures + " produce requests failed");
        }
    }

    /**
     * Produce one record and wait for its acknowledgement.
     *
     * @return the acknowledged correlation id.
     */
    @Benchmark
    public long produceAndAwaitAck()
    {
        final long id = ++correlationId;
        while (cluster.produce(session, partition, id, acks, 30_000, null, 0, -1, value, 0, 100) !=
            ReplicationError.NONE)
        {
            Thread.onSpinWait();
        }
        while (lastAcknowledged != id)
        {
            Thread.onSpinWait();
        }
        return id;
    }

    /** @return a fresh ack mode name for reports. */
    static String describe(final int acks)
    {
        return Acks.describe(acks);
    }
}
