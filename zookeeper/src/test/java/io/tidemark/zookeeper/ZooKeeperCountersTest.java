package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Incarnation counters: every value handed out is greater than every value handed out before it, to any client;
 * concurrent increments never hand out one value twice nor skip one.
 */
class ZooKeeperCountersTest
{
    private static final String ROOT = "/tidemark/counters-test";
    private static final String COUNTER = ROOT + "/incarnations/3";

    @RegisterExtension
    final TwoClients zk = new TwoClients(ROOT);

    private CuratorFramework first;
    private CuratorFramework second;

    @BeforeEach
    void clients()
    {
        first = zk.first;
        second = zk.second;
    }

    @Test
    void aMissingCounterStartsAtZeroSoTheFirstValueIsOne() throws Exception
    {
        assertEquals(1, ZooKeeperCounters.incrementAndGet(first, COUNTER));
        assertEquals(1, ZooKeeperCounters.decode(COUNTER, first.getData().forPath(COUNTER)));
        assertEquals(2, ZooKeeperCounters.incrementAndGet(first, COUNTER));
        assertEquals(1, ZooKeeperCounters.incrementAndGet(first, ROOT + "/incarnations/4"), "one counter per host");
    }

    @Test
    void valuesIncreaseAcrossClients()
    {
        long last = 0;
        for (int i = 0; i < 20; i++)
        {
            final long value = ZooKeeperCounters.incrementAndGet(0 == i % 2 ? first : second, COUNTER);
            assertEquals(last + 1, value, "increment " + i);
            last = value;
        }
    }

    @Test
    void concurrentIncrementsFromTwoClientsHandOutEveryValueOnce() throws Exception
    {
        final int perThread = 200;
        final CountDownLatch go = new CountDownLatch(1);
        final ExecutorService threads = Executors.newFixedThreadPool(2);
        try
        {
            final List<Future<long[]>> results = new ArrayList<>();
            for (final CuratorFramework client : new CuratorFramework[] {first, second})
            {
                final Callable<long[]> increments = () ->
                {
                    go.await();
                    final long[] values = new long[perThread];
                    for (int i = 0; i < perThread; i++)
                    {
                        values[i] = ZooKeeperCounters.incrementAndGet(client, COUNTER);
                    }
                    return values;
                };
                results.add(threads.submit(increments));
            }
            go.countDown();
            final boolean[] seen = new boolean[2 * perThread + 1];
            for (final Future<long[]> result : results)
            {
                final long[] values = result.get(30, TimeUnit.SECONDS);
                for (int i = 0; i < values.length; i++)
                {
                    final int value = (int)values[i];
                    assertTrue(value >= 1 && value <= 2 * perThread, "value in [1, 400]: " + value);
                    assertTrue(!seen[value], "value " + value + " handed out twice");
                    seen[value] = true;
                    assertTrue(0 == i || values[i - 1] < value, "each thread's values increase");
                }
            }
            assertEquals(2L * perThread, ZooKeeperCounters.decode(COUNTER, first.getData().forPath(COUNTER)),
                "no value skipped: 400 increments, 400 distinct values, counter at 400");
        }
        finally
        {
            threads.shutdownNow();
            assertTrue(threads.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aDamagedCounterIsATypedErrorNamingTheZnode() throws Exception
    {
        first.create().creatingParentsIfNeeded().forPath(COUNTER, new byte[] {1, 2, 3});
        final IllegalStateException ex = assertThrows(IllegalStateException.class,
            () -> ZooKeeperCounters.incrementAndGet(first, COUNTER));
        assertTrue(ex.getMessage().contains(COUNTER), ex.getMessage());
    }
}
