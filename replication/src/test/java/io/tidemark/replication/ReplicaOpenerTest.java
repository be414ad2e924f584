package io.tidemark.replication;

import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Where the host agent's thread also serves the network (invoked agents beside a log-maintenance thread: a host
 * process), new replicas are opened on a thread of their own ({@link ReplicaOpener}): a slow open does not hold the
 * duty cycle, the partition is unknown to its host until the open is done, then it serves; a failed open is
 * reported and tried again when the controller sends the state again.
 */
class ReplicaOpenerTest
{
    @TempDir
    Path dir;

    @Test
    void aSlowOpenDoesNotHoldTheHostsDutyCycle() throws Exception
    {
        final CountDownLatch release = new CountDownLatch(1);
        final Set<String> openingThreads = ConcurrentHashMap.newKeySet();
        final ReplicationContext ctx = context((logDir) ->
        {
            openingThreads.add(Thread.currentThread().getName());
            if (logDir.getFileName().toString().startsWith("slow"))
            {
                awaitQuietly(release);
            }
            return new LogContext().logDir(logDir).segmentBytes(1024 * 1024);
        });
        try (ReplicationCluster cluster = ReplicationCluster.start(dir, 3, ctx))
        {
            cluster.createTopic("slow", 1, 3);
            final TopicPartition tp = new TopicPartition("slow", 0);
            // every host asks its opener, which blocks: the duty cycles go on (this thread invokes them)
            assertTrue(cluster.await(() -> openingThreads.size() >= 3, 30_000), "openers: " + openingThreads);
            for (int i = 0; i < 100; i++)
            {
                cluster.invokeAgents();
            }
            for (int host = 0; host < 3; host++)
            {
                assertNull(cluster.replica(host, tp), "host " + host + " knows the partition before its open ends");
            }
            final int session = cluster.sessions().register((p, correlationId, offset, error) ->
            {
            });
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            assertFalse(ReplicationError.NONE == cluster.produce(session, tp, 0, Acks.ALL, 30_000, null, 0, -1, value,
                0, value.capacity()), "a produce to a replica still opening is refused (and retried by a client)");

            release.countDown();
            assertTrue(cluster.awaitLeaders("slow", 30_000));
            assertProduces(cluster, tp);
            for (final String thread : openingThreads)
            {
                assertTrue(thread.startsWith("tidemark-replica-opener-"), "opened on " + openingThreads);
            }
        }
    }

    @Test
    void aFailedOpenIsReportedAndTriedAgain() throws Exception
    {
        final AtomicBoolean failOnce = new AtomicBoolean(true);
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final ReplicationContext ctx = context((logDir) ->
        {
            if (logDir.toString().contains("host-1") && failOnce.compareAndSet(true, false))
            {
                throw new IllegalStateException("planted: the first open of a replica on host 1 fails");
            }
            return new LogContext().logDir(logDir).segmentBytes(1024 * 1024);
        }).errorHandler(errors::add);
        try (ReplicationCluster cluster = ReplicationCluster.start(dir, 3, ctx))
        {
            cluster.createTopic("t", 1, 3);
            final TopicPartition tp = new TopicPartition("t", 0);
            assertTrue(cluster.await(() -> null != cluster.replica(1, tp), 60_000), "host 1 opens it at last");
            assertFalse(failOnce.get(), "the planted failure happened");
            assertTrue(errors.stream().anyMatch((e) -> String.valueOf(e.getMessage()).contains("planted")),
                "reported: " + errors);
            assertTrue(cluster.awaitLeaders("t", 30_000));
            assertTrue(cluster.await(() -> cluster.state(tp).isr().length == 3, 60_000), "host 1 joins the ISR");
            assertProduces(cluster, tp);
        }
    }

    private static ReplicationContext context(final java.util.function.Function<Path, LogContext> logs)
    {
        return new ReplicationContext()
            .minInsyncReplicas(2)
            .threadingMode(ReplicationContext.ThreadingMode.INVOKER)
            .logMaintenanceThread(true)
            .logContextFactory(logs);
    }

    private static void assertProduces(final ReplicationCluster cluster, final TopicPartition tp)
    {
        final ConcurrentHashMap<Long, Long> acked = new ConcurrentHashMap<>();
        final int session = cluster.sessions().register((p, correlationId, offset, error) ->
        {
            if (error == ReplicationError.NONE)
            {
                acked.put(correlationId, offset);
            }
        });
        final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
        for (long i = 0; i < 20; i++)
        {
            assertEquals(ReplicationError.NONE, cluster.produce(session, tp, i, Acks.ALL, 30_000, null, 0, -1, value,
                0, value.capacity()));
            final long correlationId = i;
            assertTrue(cluster.await(() -> acked.containsKey(correlationId), 30_000), "acknowledged " + i);
        }
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            if (!latch.await(60, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("never released");
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
