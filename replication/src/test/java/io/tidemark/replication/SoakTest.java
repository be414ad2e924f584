package io.tidemark.replication;

import io.tidemark.store.LogContext;
import io.tidemark.store.LogReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Writers with acks=all, readers and leader kills running together on real threads; afterwards an invariant
 * checker finds nothing: every acknowledged record is present at its acknowledged offset on every replica, the
 * logs are identical below the high watermark, and no reader ever saw a record at or above the high watermark
 * (readers read through {@link PartitionReader}, which stops there; each record read must also be in the final
 * log at its offset, with the same content). Short by default; {@code -Dtidemark.long=true} runs longer.
 */
class SoakTest
{
    private static final boolean LONG = Boolean.getBoolean("tidemark.long");
    private static final int KILLS = LONG ? 40 : 4;
    private static final int PARTITIONS = 2;

    @TempDir
    Path root;

    @Test
    @Timeout(180)
    void ackedRecordsSurviveLeaderKillsAndReplicasAgree() throws Exception
    {
        final Map<String, Long> acked = new ConcurrentHashMap<>();
        final Map<Long, String> pending = new ConcurrentHashMap<>();
        final AtomicReference<String> failure = new AtomicReference<>();
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicLong reads = new AtomicLong();
        final List<Map<Long, String>> seen = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++)
        {
            seen.add(new ConcurrentHashMap<>());
        }
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .threadingMode(ReplicationContext.ThreadingMode.PER_HOST)
            .requestTimeoutMs(3000)
            .logContextFactory((dir) -> new LogContext().logDir(dir).segmentBytes(256 * 1024)
                .maxMessageBytes(64 * 1024).pretouchBytes(64 * 1024))))
        {
            cluster.createTopic("soak", PARTITIONS, 3);
            assertTrue(cluster.awaitLeaders("soak", 60_000));
            final int session = cluster.sessions().register((tp, id, offset, error) ->
            {
                final String value = pending.remove(id);
                if (null != value && error == ReplicationError.NONE)
                {
                    acked.put(tp.partition() + ":" + value, offset);
                }
            });
            final Thread writer = new Thread(() ->
            {
                final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
                long id = 0;
                while (running.get())
                {
                    final int p = (int)(id % PARTITIONS);
                    final String value = "v" + id;
                    final int length = buffer.putStringWithoutLengthAscii(0, value);
                    pending.put(id, value);
                    final ReplicationError queued = cluster.produce(session, new TopicPartition("soak", p), id,
                        Acks.ALL, 3000, null, 0, -1, buffer, 0, length);
                    if (queued != ReplicationError.NONE)
                    {
                        pending.remove(id);
                        Thread.onSpinWait();
                    }
                    id++;
                    if (pending.size() > 1000)
                    {
                        Thread.yield();
                    }
                }
            }, "soak-writer");
            final List<Thread> readers = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                final int partition = p;
                readers.add(new Thread(() ->
                {
                    try (PartitionReader reader = cluster.openReader(new TopicPartition("soak", partition)))
                    {
                        while (running.get())
                        {
                            final int n = reader.poll((r) ->
                            {
                                final String previous = seen.get(partition).put(r.offset(), r.valueAsString());
                                if (null != previous && !previous.equals(r.valueAsString()))
                                {
                                    failure.compareAndSet(null, "offset " + r.offset() + " read as " + previous +
                                        " then " + r.valueAsString());
                                }
                            }, 100);
                            reads.addAndGet(n);
                            if (n == 0)
                            {
                                Thread.yield();
                            }
                        }
                    }
                    catch (final RuntimeException ex)
                    {
                        failure.compareAndSet(null, "reader: " + ex);
                    }
                }, "soak-reader-" + p));
            }
            writer.start();
            readers.forEach(Thread::start);
            for (int kill = 0; kill < KILLS; kill++)
            {
                Thread.sleep(300);
                final int victim = cluster.leaderOf(new TopicPartition("soak", kill % PARTITIONS));
                if (victim >= 0)
                {
                    cluster.killHost(victim);
                    Thread.sleep(900);
                    cluster.restartHost(victim);
                }
            }
            Thread.sleep(300);
            running.set(false);
            writer.join();
            for (final Thread reader : readers)
            {
                reader.join();
            }
            assertNull(failure.get());
            // heal and quiesce: every replica back in the ISR with the same log
            for (int p = 0; p < PARTITIONS; p++)
            {
                final TopicPartition tp = new TopicPartition("soak", p);
                assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 3 && null != cluster.leaderReplica(tp),
                    20_000), "ISR not restored: " + cluster.state(tp));
                final Replica leader = cluster.leaderReplica(tp);
                assertTrue(cluster.await(() -> allCaughtUp(cluster, tp, leader.log.logEndOffset()), 20_000));
                final List<String> reference = Harness.values(leader);
                for (int host = 0; host < 3; host++)
                {
                    assertEquals(reference, Harness.values(cluster.replica(host, tp)), "replica " + host + " of " + tp);
                }
                for (final Map.Entry<Long, String> read : seen.get(p).entrySet())
                {
                    assertEquals(reference.get((int)(long)read.getKey()), read.getValue(),
                        "a record read before was replaced: it was read above the HW");
                }
                final long hw = leader.highWatermark.get();
                assertEquals(reference.size(), hw, "at quiescence the HW is the log end");
            }
            final List<List<String>> logs = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                logs.add(Harness.values(cluster.leaderReplica(new TopicPartition("soak", p))));
            }
            int checked = 0;
            for (final Map.Entry<String, Long> entry : acked.entrySet())
            {
                final int p = Integer.parseInt(entry.getKey().substring(0, entry.getKey().indexOf(':')));
                final String value = entry.getKey().substring(entry.getKey().indexOf(':') + 1);
                final List<String> log = logs.get(p);
                assertEquals(value, log.get((int)(long)entry.getValue()), "acked record missing at its offset");
                checked++;
            }
            System.out.println("replication-soak: kills=" + KILLS + " acked=" + checked + " reads=" + reads.get() +
                " lost=0 replicas_identical=true");
            assertTrue(checked > 100, "too few acked records to be meaningful: " + checked);
        }
    }

    private static boolean allCaughtUp(final ReplicationCluster cluster, final TopicPartition tp, final long end)
    {
        for (int host = 0; host < 3; host++)
        {
            final Replica replica = cluster.replica(host, tp);
            if (null == replica || replica.log.logEndOffset() != end || replica.highWatermark.get() != end)
            {
                return false;
            }
        }
        return true;
    }

    static long count(final LogReader reader)
    {
        long n = 0;
        int delivered;
        while ((delivered = reader.poll((r) -> { }, Long.MAX_VALUE, 1000)) > 0)
        {
            n += delivered;
        }
        return n;
    }
}
