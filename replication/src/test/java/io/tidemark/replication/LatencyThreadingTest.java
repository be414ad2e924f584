package io.tidemark.replication;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link ReplicationContext.ThreadingMode#LATENCY}: one thread runs the replication agents, one more runs the replica
 * logs' agents (here: their interval flushes and the high watermark checkpoints), and records are replicated and
 * acknowledged as in any other mode. The same log-maintenance thread beside invoked replication agents
 * ({@link ReplicationContext#logMaintenanceThread}, what a host process runs): the logs' agents run on it, never in
 * {@code invokeAgents}.
 */
class LatencyThreadingTest
{
    @TempDir
    Path dir;

    @Test
    void oneReplicationThreadAndOneHousekeepingThreadReplicateAndFlush() throws Exception
    {
        final Set<String> checkpointThreads = ConcurrentHashMap.newKeySet();
        final FileSync recording = new FileSync()
        {
            public void force(final MappedByteBuffer mapping, final int offset, final int length)
            {
                FileSync.SYSTEM.force(mapping, offset, length);
            }

            public void force(final FileChannel channel, final boolean metadata) throws IOException
            {
                FileSync.SYSTEM.force(channel, metadata);
            }

            public void forceDirectory(final Path dir) throws IOException
            {
                FileSync.SYSTEM.forceDirectory(dir);
            }

            public void rename(final Path source, final Path target) throws IOException
            {
                if (target.getFileName().toString().equals(HighWatermark.FILE_NAME))
                {
                    checkpointThreads.add(Thread.currentThread().getName());
                }
                FileSync.SYSTEM.rename(source, target);
            }
        };
        final ReplicationContext ctx = new ReplicationContext()
            .minInsyncReplicas(2)
            .threadingMode(ReplicationContext.ThreadingMode.LATENCY)
            .highWatermarkCheckpointIntervalMs(5)
            .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(1024 * 1024)
                .flushIntervalMs(5).fileSync(recording));
        try (ReplicationCluster cluster = ReplicationCluster.start(dir, 3, ctx))
        {
            final Set<String> threads = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter((name) -> name.startsWith("tidemark-")).collect(Collectors.toSet());
            assertEquals(Set.of("tidemark-shared", "tidemark-log-maintenance"), threads, "threads: " + threads);

            cluster.createTopic("t", 1, 3);
            assertTrue(cluster.awaitLeaders("t", 30_000));
            final TopicPartition tp = new TopicPartition("t", 0);
            final ConcurrentHashMap<Long, Long> acked = new ConcurrentHashMap<>();
            final int session = cluster.sessions().register((p, correlationId, offset, error) ->
            {
                if (error == ReplicationError.NONE)
                {
                    acked.put(correlationId, offset);
                }
            });
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            long sent = 0;
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (acked.size() < 500 && System.nanoTime() < deadline)
            {
                if (sent - acked.size() < 16 && cluster.produce(session, tp, sent, Acks.ALL, 30_000, null, 0, -1,
                    value, 0, value.capacity()) == ReplicationError.NONE)
                {
                    sent++;
                }
                else
                {
                    Thread.sleep(1);
                }
            }
            assertTrue(acked.size() >= 500, "acknowledged " + acked.size());

            // Only the housekeeping thread runs the logs' agents, so only it can flush on flush.interval.ms.
            while (System.nanoTime() < deadline && !allFlushed(cluster, tp, 500))
            {
                Thread.sleep(5);
            }
            assertTrue(allFlushed(cluster, tp, 500), "every replica's log flushed by its agent");

            // The high watermark checkpoint (a forced file and directory) is housekeeping too: never on the
            // spinning replication thread, where an fsync waiting for a journal commit would stall every partition.
            while (System.nanoTime() < deadline && !checkpointThreads.contains("tidemark-log-maintenance"))
            {
                Thread.sleep(5);
            }
            assertEquals(Set.of("tidemark-log-maintenance"), checkpointThreads, "threads that checkpointed the HW");
        }
    }

    @Test
    void invokedReplicationAgentsLeaveTheLogsAgentsToTheLogMaintenanceThread() throws Exception
    {
        final ReplicationContext ctx = new ReplicationContext()
            .minInsyncReplicas(2)
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .logMaintenanceThread(true)
            .logContextFactory((logDir) -> new LogContext().logDir(logDir).segmentBytes(1024 * 1024)
                .flushIntervalMs(5));
        try (ReplicationCluster cluster = ReplicationCluster.start(dir, 3, ctx))
        {
            final Set<String> threads = Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter((name) -> name.startsWith("tidemark-")).collect(Collectors.toSet());
            assertEquals(Set.of("tidemark-log-maintenance"), threads, "threads: " + threads);

            cluster.createTopic("t", 1, 3);
            assertTrue(cluster.awaitLeaders("t", 30_000));
            final TopicPartition tp = new TopicPartition("t", 0);
            final ConcurrentHashMap<Long, Long> acked = new ConcurrentHashMap<>();
            final int session = cluster.sessions().register((p, correlationId, offset, error) ->
            {
                if (error == ReplicationError.NONE)
                {
                    acked.put(correlationId, offset);
                }
            });
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            for (long i = 0; i < 200; i++)
            {
                assertEquals(ReplicationError.NONE, cluster.produce(session, tp, i, Acks.ALL, 30_000, null, 0, -1,
                    value, 0, value.capacity()));
                final long correlationId = i;
                assertTrue(cluster.await(() -> acked.containsKey(correlationId), 30_000), "acknowledged " + i);
            }

            assertTrue(cluster.await(() -> allAppended(cluster, tp, 200), 30_000), "every replica has the records");

            // The replication agents are not invoked any more: only the maintenance thread can flush the logs now.
            final long deadline = System.nanoTime() + 60_000_000_000L;
            while (System.nanoTime() < deadline && !allFlushed(cluster, tp, 200))
            {
                Thread.sleep(5);
            }
            assertTrue(allFlushed(cluster, tp, 200), "every replica's log flushed by its agent");
        }
    }

    private static boolean allAppended(final ReplicationCluster cluster, final TopicPartition tp, final long upTo)
    {
        for (int host = 0; host < 3; host++)
        {
            final Replica replica = cluster.replica(host, tp);
            if (null == replica || replica.log.logEndOffset() < upTo)
            {
                return false;
            }
        }
        return true;
    }

    private static boolean allFlushed(final ReplicationCluster cluster, final TopicPartition tp, final long upTo)
    {
        for (int host = 0; host < 3; host++)
        {
            final Replica replica = cluster.replica(host, tp);
            if (null == replica || replica.log.recoveryPoint() < upTo)
            {
                return false;
            }
        }
        return true;
    }
}
