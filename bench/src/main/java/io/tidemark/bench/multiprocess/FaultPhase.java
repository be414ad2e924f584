package io.tidemark.bench.multiprocess;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.SendCallback;
import io.tidemark.client.remote.ClientConfig;
import io.tidemark.replication.Acks;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import io.tidemark.zookeeper.ZooKeeperControllerElection;
import io.tidemark.zookeeper.ZooKeeperControllerStore;
import org.apache.curator.framework.CuratorFramework;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * Tidemark's availability under faults, measured from outside: an idempotent acks=all producer sends at a fixed
 * rate to one partition while a fault is injected, and the pause is the longest time after the fault during which no
 * acknowledgement arrived. The faults: SIGKILL of a plain leader (a host that is not the controller), SIGKILL of the
 * leader that is also the controller, each host restarted at once (the time until it is registered again and back in
 * the ISR is its recovery), SIGKILL of a plain leader restarted only after the measured window (no restart tells the
 * controller the old process is gone: its exit, seen through its liveness connections, does, or else its heartbeats'
 * silence), SIGKILL of the leader that is also the controller again, restarted only after the measured
 * window (the dead controller is then found by the hosts' failover, not by its restart), and a restart of ZooKeeper (the controller epoch before and after says whether it cost a
 * controller). Every acknowledged record must stay acknowledged: failed sends are counted.
 * <p>
 * One use: build, {@link #run}, discard.
 */
final class FaultPhase
{
    /** The drill's topic: 3 partitions, one led by each host. */
    static final String TOPIC = "faults";
    private static final long RATE = 1_000;
    private static final long BEFORE_MS = 2_000;
    private static final long AFTER_MS = 8_000;

    private final LoopbackCluster cluster;
    private final MultiProcessPlan plan;
    private final PrintWriter out;

    /**
     * What one fault cost.
     *
     * @param fault      the fault, in words.
     * @param pauseMs    longest time after the fault without an acknowledgement.
     * @param recoveryMs the killed host's restart until it was registered again and back in the ISR (-1: not
     *                   applicable, or it did not come back in time).
     * @param acked      acknowledged records.
     * @param failed     failed sends.
     * @param epochs     the controller epoch before and after.
     * @param note       what else was seen.
     */
    record Outcome(String fault, long pauseMs, long recoveryMs, long acked, long failed, String epochs, String note)
    {
    }

    FaultPhase(final LoopbackCluster cluster, final MultiProcessPlan plan, final PrintWriter out)
    {
        this.cluster = cluster;
        this.plan = plan;
        this.out = out;
    }

    /** Run every fault in turn. */
    List<Outcome> run() throws Exception
    {
        final List<Outcome> outcomes = new ArrayList<>();
        cluster.client().createTopic(TOPIC, LoopbackCluster.HOSTS, LoopbackCluster.HOSTS, plan.startTimeoutMs());
        cluster.awaitFullIsr(TOPIC, LoopbackCluster.HOSTS, plan.startTimeoutMs());
        final ZooKeeperSettingsClient zk = new ZooKeeperSettingsClient(cluster);
        try
        {
            final int controller = zk.controllerHost();
            final int plain = partitionLedBy((h) -> h != controller && h >= 0);
            outcomes.add(kill("SIGKILL of a plain leader", plain, zk, true));
            awaitSettled();
            // no restart to tell the controller the old process is gone: its exit does (its liveness connections
            // close), or else its heartbeats' silence
            final int controllerThen = zk.controllerHost();
            final int plainAgain = partitionLedBy((h) -> h != controllerThen && h >= 0);
            outcomes.add(kill("SIGKILL of a plain leader", plainAgain, zk, false));
            awaitSettled();
            final int controllerNow = zk.controllerHost();
            final int ledByController = partitionLedBy((h) -> h == controllerNow);
            outcomes.add(kill("SIGKILL of the leader that is also the controller", ledByController, zk, true));
            awaitSettled();
            final int controllerLater = zk.controllerHost();
            final int ledByControllerLater = partitionLedBy((h) -> h == controllerLater);
            outcomes.add(kill("SIGKILL of the leader that is also the controller", ledByControllerLater, zk, false));
            awaitSettled();
            outcomes.add(zooKeeperRestart(zk));
            awaitSettled();
        }
        finally
        {
            zk.close();
        }
        return outcomes;
    }

    private void awaitSettled()
    {
        if (!cluster.awaitFullIsr(TOPIC, LoopbackCluster.HOSTS, plan.settleTimeoutMs()))
        {
            out.println("  note: the ISR of " + TOPIC + " was not full after " + plan.settleTimeoutMs() + " ms");
        }
    }

    /** @return a partition of the drill's topic whose leader matches, or -1. */
    private int partitionLedBy(final java.util.function.IntPredicate leader)
    {
        for (final PartitionState state : cluster.client().partitions(TOPIC))
        {
            if (leader.test(state.leader()))
            {
                return state.topicPartition().partition();
            }
        }
        return -1;
    }

    private Outcome kill(final String fault, final int partition, final ZooKeeperSettingsClient zk,
        final boolean restartAtOnce) throws Exception
    {
        if (partition < 0)
        {
            return new Outcome(fault, -1, -1, 0, 0, "-", "no partition had such a leader: not run");
        }
        final int victim = cluster.client().state(partitionId(partition)).leader();
        final long incarnation = cluster.client().incarnationOf(victim);
        final String epochBefore = zk.controllerEpoch();
        final Load load = new Load(partition);
        load.start();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(BEFORE_MS));
        final long faultAt = System.nanoTime();
        cluster.kill(victim);
        final long restartAt = System.nanoTime();
        if (restartAtOnce)
        {
            cluster.relaunch(victim);
        }
        final long recoveryMs = restartAtOnce ? awaitBackInIsr(victim, incarnation, partition, restartAt) : -1;
        final long until = Math.max(faultAt + TimeUnit.MILLISECONDS.toNanos(AFTER_MS), System.nanoTime());
        LockSupport.parkNanos(Math.max(0, until - System.nanoTime()));
        load.stop();
        final PartitionState after = cluster.client().state(partitionId(partition));
        final String newLeader = "partition " + partition + ": leader " + victim + " -> " +
            (null == after ? "?" : after.leader());
        final String epochs = epochBefore + " -> " + zk.controllerEpoch();
        long laterRecoveryMs = -1;
        if (!restartAtOnce)
        {
            final long laterRestartAt = System.nanoTime();
            cluster.relaunch(victim);
            laterRecoveryMs = awaitBackInIsr(victim, incarnation, partition, laterRestartAt);
        }
        final Outcome outcome = new Outcome(fault + " (host " + victim + (restartAtOnce ? ", restarted at once)" :
            ", restarted after the measured window)"), load.pauseMs(faultAt), restartAtOnce ? recoveryMs :
            laterRecoveryMs, load.acked.sum(), load.failed.sum(), epochs, newLeader);
        out.println("  " + describe(outcome));
        out.flush();
        return outcome;
    }

    /**
     * @return ms from {@code restartAt} until the relaunched {@code victim} is registered again and back in the ISR,
     *         or -1 when it is not within a minute. The victim must first be seen out of the ISR: the new process
     *         registers (and so shows a new incarnation) before the controller has taken the dead one out, and an
     *         ISR read in between would count a host that does not serve yet.
     */
    private long awaitBackInIsr(final int victim, final long incarnation, final int partition, final long restartAt)
    {
        long recoveryMs = -1;
        boolean seenOut = false;
        final long deadline = restartAt + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() - deadline < 0)
        {
            final PartitionState state = cluster.client().state(partitionId(partition));
            final boolean inIsr = null != state && java.util.Arrays.stream(state.isr()).anyMatch((h) -> h == victim);
            seenOut |= null != state && !inIsr;
            if (seenOut && inIsr && cluster.client().incarnationOf(victim) > incarnation)
            {
                recoveryMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - restartAt);
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        return recoveryMs;
    }

    private Outcome zooKeeperRestart(final ZooKeeperSettingsClient zk) throws Exception
    {
        final int partition = 0;
        final String epochBefore = zk.controllerEpoch();
        final int controllerBefore = zk.controllerHost();
        final Load load = new Load(partition);
        load.start();
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(BEFORE_MS));
        final long faultAt = System.nanoTime();
        cluster.stopZooKeeper();
        cluster.startZooKeeper();
        final long restartedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - faultAt);
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(AFTER_MS));
        load.stop();
        zk.awaitConnected();
        final Outcome outcome = new Outcome("ZooKeeper restarted (SIGTERM, then started again: " + restartedMs +
            " ms)", load.pauseMs(faultAt), -1, load.acked.sum(), load.failed.sum(),
            epochBefore + " -> " + zk.controllerEpoch(), "controller host " + controllerBefore + " -> " +
            zk.controllerHost());
        out.println("  " + describe(outcome));
        out.flush();
        return outcome;
    }

    private int partitionId(final int partition)
    {
        for (final PartitionState state : cluster.client().partitions(TOPIC))
        {
            if (state.topicPartition().partition() == partition)
            {
                return state.partitionId();
            }
        }
        throw new IllegalStateException("no partition " + partition + " of " + TOPIC);
    }

    static String describe(final Outcome o)
    {
        return String.format(Locale.ROOT, "fault: %s: acknowledgements paused %d ms%s; %d acknowledged, %d failed; " +
            "controller epoch %s; %s", o.fault(), o.pauseMs(), o.recoveryMs() >= 0 ? ", restarted host registered " +
            "and back in the ISR " + o.recoveryMs() + " ms after its restart" : "", o.acked(), o.failed(),
            o.epochs(), o.note());
    }

    /** An idempotent acks=all producer at a fixed rate on one partition, recording when acknowledgements arrive. */
    private final class Load implements SendCallback
    {
        private final int partition;
        private final LongAdder acked = new LongAdder();
        private final LongAdder failed = new LongAdder();
        private final List<Long> ackTimes = java.util.Collections.synchronizedList(new ArrayList<>());
        private final AtomicLong lastAck = new AtomicLong();
        private volatile boolean stop;
        private Thread thread;
        private Producer producer;

        Load(final int partition)
        {
            this.partition = partition;
        }

        void start()
        {
            producer = new Producer(cluster.client(), new ProducerContext().acks(Acks.ALL).enableIdempotence(true)
                .lingerMs(0));
            thread = new Thread(this::send, "bench-fault-load");
            thread.setDaemon(true);
            thread.start();
        }

        private void send()
        {
            final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(partition);
            final org.agrona.concurrent.UnsafeBuffer value = RecordValues.filled(plan.recordSize());
            final long start = System.nanoTime();
            for (long i = 0; !stop; i++)
            {
                final long due = start + i * (1_000_000_000L / RATE);
                LockSupport.parkNanos(Math.max(0, due - System.nanoTime()));
                try
                {
                    producer.sendAsync(record.value(value, 0, plan.recordSize()), this);
                }
                catch (final ProducerException ex)
                {
                    failed.increment();
                }
            }
        }

        @Override
        public void onCompletion(final TopicPartition tp, final long offset, final ProducerException error)
        {
            if (null == error)
            {
                acked.increment();
                ackTimes.add(System.nanoTime());
            }
            else
            {
                failed.increment();
            }
        }

        void stop() throws InterruptedException
        {
            stop = true;
            thread.join(10_000);
            producer.close(60_000);
        }

        /** @return the longest gap between acknowledgements after {@code faultAt}, in milliseconds. */
        long pauseMs(final long faultAt)
        {
            final List<Long> times;
            synchronized (ackTimes)
            {
                times = new ArrayList<>(ackTimes);
            }
            times.sort(Comparator.naturalOrder());
            long pause = 0;
            long previous = faultAt;
            for (final long t : times)
            {
                if (t > faultAt)
                {
                    pause = Math.max(pause, t - previous);
                    previous = t;
                }
            }
            return TimeUnit.NANOSECONDS.toMillis(pause);
        }
    }

    /** The drill's own ZooKeeper client: the controller's host and epoch. */
    private static final class ZooKeeperSettingsClient implements AutoCloseable
    {
        private final CuratorFramework client;

        ZooKeeperSettingsClient(final LoopbackCluster cluster)
        {
            final java.util.Properties p = cluster.zooKeeperSettings();
            this.client = ClientConfig.fromProperties(p).zooKeeper().connectClient();
        }

        void awaitConnected() throws InterruptedException
        {
            client.blockUntilConnected(60, TimeUnit.SECONDS);
        }

        /** @return the host id of the elected controller: the candidate with the lowest sequence number. */
        int controllerHost() throws Exception
        {
            final String path = LoopbackCluster.root() + "/" + ZooKeeperControllerElection.ELECTION;
            final List<String> children = new ArrayList<>(client.getChildren().forPath(path));
            children.sort(Comparator.comparing((String c) -> c.substring(c.lastIndexOf('-') + 1)));
            return children.isEmpty() ? -1 : Integer.parseInt(new String(client.getData().forPath(path + "/" +
                children.get(0)), StandardCharsets.UTF_8).trim());
        }

        String controllerEpoch()
        {
            try
            {
                final byte[] data = client.getData().forPath(LoopbackCluster.root() + "/" +
                    ZooKeeperControllerStore.CONTROLLER_EPOCH);
                // the store's 8-byte little-endian counter (ZooKeeperCounters)
                return data.length == 8 ? Long.toString(java.nio.ByteBuffer.wrap(data)
                    .order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong()) :
                    new String(data, StandardCharsets.UTF_8).trim();
            }
            catch (final Exception ex)
            {
                return "?";
            }
        }

        @Override
        public void close()
        {
            client.close();
        }
    }
}
