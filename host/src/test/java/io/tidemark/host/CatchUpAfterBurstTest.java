package io.tidemark.host;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.SendCallback;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Session 6's failure, which every test passed: after the bench's acks=1 warm-up the followers, left behind by the
 * burst, never stayed in the ISR again (it flapped {@code [0] <-> [0, 2]} every 100-200 ms) and acks=all gave 0
 * records/s. Three host processes with their default threading (the idle strategies under test), RF=3,
 * {@code min.insync.replicas=2}, {@code replica.lag.time.max.ms=1000}, and fetches of at most 4 KiB so that the
 * followers copy more slowly than an acks=1 producer appends on any machine:
 * <ol>
 *     <li>an acks=1 producer writes as fast as it can until both followers have left the ISR (so the ISR is below
 *     min.insync and the high watermark stops; the one left is usually the leader, but a busy machine may move the
 *     leadership, which is no failure here);</li>
 *     <li>an acks=all producer then writes as fast as it can: the followers must catch up and rejoin, and from then
 *     on the ISR must not change at all for {@link #STABLE_MS} (the partition's state keeps its version) while
 *     acks=all acknowledgements go on.</li>
 * </ol>
 * Every wait is for a condition with a generous bound (a loaded machine is slow, not wrong); the one time span is
 * the observation window, and nothing in it is timed.
 */
class CatchUpAfterBurstTest
{
    private static final String TOPIC = "burst";
    /** How long the rejoined ISR is watched for a change. */
    private static final long STABLE_MS = 2_000;
    /**
     * ISR changes from the ISR of one to the full ISR: each follower joins once (2), plus room for one leave and
     * return of a follower starved for a second by a loaded machine (4 seen at load 19); the flap made 11 in 1.5 s
     * before it settled, and with session 6's idle change more than 20 without settling.
     */
    private static final long MAX_CHANGES_TO_REJOIN = 6;

    @TempDir
    Path tmp;

    @Test
    void followersLeftBehindByAnAcksOneBurstCatchUpRejoinAndStayWhileAcksAllGoesOn() throws Exception
    {
        final Properties replication = new Properties();
        replication.setProperty("min.insync.replicas", "2");
        replication.setProperty("replica.lag.time.max.ms", "1000");
        replication.setProperty("replica.fetch.max.bytes", "4096");
        // a host's default ZooKeeper session and connection timeouts (18 s, 15 s): nothing here is a ZooKeeper fault,
        // and the short ones of the fixture's default failed to connect at load 25
        try (ProcessCluster cluster = new ProcessCluster(tmp, 3, replication, 2_000))
        {
            cluster.start();
            final TidemarkClient client = cluster.client();
            cluster.createTopicInSync(TOPIC, 1);

            final AtomicReference<ProducerException> burstError = new AtomicReference<>();
            final AtomicReference<PartitionState> behind = new AtomicReference<>();
            final long burstStart = System.nanoTime();
            try (Producer burst = new Producer(client, new ProducerContext().acks(Acks.LEADER).lingerMs(1)
                .deliveryTimeoutMs(60_000)))
            {
                final AtomicLong burstAcked = new AtomicLong();
                final SendCallback counted = (tp, offset, error) ->
                {
                    if (null == error)
                    {
                        burstAcked.incrementAndGet();
                    }
                    else
                    {
                        burstError.compareAndSet(null, error);
                    }
                };
                final Thread watcher = new Thread(() ->
                {
                    try
                    {
                        ProcessCluster.await(() ->
                        {
                            final PartitionState state = cluster.state(TOPIC, 0);
                            if (1 == state.isr().length)
                            {
                                behind.set(state);
                            }
                            return null != behind.get();
                        }, 60_000);
                    }
                    catch (final InterruptedException ex)
                    {
                        Thread.currentThread().interrupt();
                    }
                }, "isr-watcher");
                watcher.start();
                final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                for (long i = 0; watcher.isAlive() && null == burstError.get(); i++)
                {
                    burst.sendAsync(record.value("burst-" + i), counted);
                }
                watcher.join();
                burst.flush();
                assertEquals(null, burstError.get(), "acks=1 writes succeed");
                assertTrue(null != behind.get(), "both followers fell behind the acks=1 burst and left the ISR " +
                    "within 60 s: " + cluster.state(TOPIC, 0));
                System.out.println("acks=1 burst: " + burstAcked.get() + " records in " +
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - burstStart) + " ms; the ISR was " + behind.get() +
                    ", now " + cluster.state(TOPIC, 0));
            }

            final AtomicLong acked = new AtomicLong();
            final AtomicLong failed = new AtomicLong();
            final AtomicBoolean producing = new AtomicBoolean(true);
            try (Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL).lingerMs(1)
                .deliveryTimeoutMs(120_000)))
            {
                final SendCallback counted = (tp, offset, error) -> (null == error ? acked : failed).incrementAndGet();
                final Thread writer = new Thread(() ->
                {
                    final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                    for (long i = 0; producing.get(); i++)
                    {
                        try
                        {
                            producer.sendAsync(record.value("all-" + i), counted); // blocks while buffer.memory is full
                        }
                        catch (final ProducerException ex)
                        {
                            failed.incrementAndGet(); // buffer.memory stayed full for max.block.ms: try again
                        }
                    }
                }, "acks-all-writer");
                writer.start();
                final long catchUpStart = System.nanoTime();
                assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 60_000),
                    "the followers caught up and rejoined the ISR: " + cluster.state(TOPIC, 0));
                final PartitionState rejoined = cluster.state(TOPIC, 0);
                final long ackedAtRejoin = acked.get();
                final long changes = rejoined.version() - behind.get().version();
                System.out.println("rejoined " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - catchUpStart) +
                    " ms after the burst: " + rejoined + ", " + changes + " ISR changes since " + behind.get() + ", " +
                    ackedAtRejoin + " acks=all records acknowledged");
                assertTrue(changes <= MAX_CHANGES_TO_REJOIN, "the ISR flapped while the followers caught up: " +
                    changes + " changes from " + behind.get() + " to " + rejoined);

                final long watchEnd = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(STABLE_MS);
                while (System.nanoTime() < watchEnd)
                {
                    final PartitionState now = cluster.state(TOPIC, 0);
                    assertEquals(rejoined.version(), now.version(), "the ISR changed after the followers rejoined " +
                        "(it flaps): " + rejoined + " then " + now);
                    Thread.sleep(20); // the observation's pace, not a wait for something
                }
                final long ackedInWindow = acked.get() - ackedAtRejoin;
                // acknowledgements go on: more arrive after the window, so a starved machine's slow window is no
                // failure, while a flapping ISR, with each spell's writes refused, would not get there
                assertTrue(ProcessCluster.await(() -> acked.get() > ackedAtRejoin + 1_000, 60_000),
                    "acks=all makes progress with the full ISR: " + (acked.get() - ackedAtRejoin) + " acknowledged, " +
                    failed.get() + " failed");
                assertEquals(rejoined.version(), cluster.state(TOPIC, 0).version(), "the ISR stayed: " +
                    cluster.state(TOPIC, 0));
                System.out.println("the ISR stayed full for " + STABLE_MS + " ms, " + ackedInWindow +
                    " acks=all records acknowledged in it; " + failed.get() + " failed");
                producing.set(false);
                writer.join(60_000);
            }
        }
    }
}
