package io.tidemark.host;

import io.tidemark.replication.ControlChannel;
import io.tidemark.zookeeper.ZooKeeperControllerFailover;

import java.util.concurrent.TimeUnit;

/**
 * A host's watch over the controller another host runs: it follows the controller's announcements the control
 * channel records ({@link ControlChannel#controllerHeardNanos}); after {@code controller.timeout.ms} of silence it
 * votes against the controller and deposes it once a majority agrees ({@link ZooKeeperControllerFailover}), and it
 * withdraws the vote when the controller speaks again. A controller whose process was seen to exit
 * ({@link ProcessExitWatch}: its verified liveness connection closed) is voted against at once: that is certain
 * evidence, where silence may be a stall. The majority and the depose transaction are the same. A controller not heard since the watch began gets
 * {@link #FIRST_WORD_TIMEOUTS} timeouts; a new controller, or a stall of this host's own, starts the watch afresh.
 * <p>
 * Owns this host's candidacy and votes in the failover, and the watch's timing. Not thread-safe: confined to the
 * controller role's thread.
 */
final class ControllerWatch
{
    /**
     * Silence from a controller this host has not heard since it began watching it is suspected only after this many
     * controller timeouts. At a cluster's start the hosts' control streams connect over a few seconds while the JVMs
     * start and compile (a measured run: a controller elected at start was deposed 4 s later, its announcements
     * dropped by hosts that did not know its endpoint yet); once heard, the plain timeout applies.
     */
    static final int FIRST_WORD_TIMEOUTS = 5;

    private final int hostId;
    private final ControlChannel channel;
    private final ZooKeeperControllerFailover failover;
    private final long controllerTimeoutMs;
    private final long controllerTimeoutNs;
    /** Between two votes of this host, at least. */
    private final long voteIntervalNs;
    private final System.Logger logger = System.getLogger(ControllerRole.class.getName());
    private int watchedController = -1;
    private long watchedSinceNs;
    private long lastWatchNs = System.nanoTime();
    private long nextVoteNs;
    private final java.util.function.IntPredicate processExited;

    /**
     * @param failover            this host's part in the failover votes.
     * @param controllerTimeoutMs silence after which this host suspects the controller.
     * @param voteIntervalMs      between two votes of this host, at least.
     * @param processExited       whether a host's process, in the incarnation registered now, was seen to exit.
     */
    ControllerWatch(final int hostId, final ControlChannel channel, final ZooKeeperControllerFailover failover,
        final long controllerTimeoutMs, final long voteIntervalMs, final java.util.function.IntPredicate processExited)
    {
        this.processExited = processExited;
        this.hostId = hostId;
        this.channel = channel;
        this.failover = failover;
        this.controllerTimeoutMs = controllerTimeoutMs;
        this.controllerTimeoutNs = TimeUnit.MILLISECONDS.toNanos(controllerTimeoutMs);
        this.voteIntervalNs = TimeUnit.MILLISECONDS.toNanos(voteIntervalMs);
    }

    /**
     * Remove candidacies a previous incarnation of this host left (it was killed); see
     * {@link ZooKeeperControllerFailover#deleteStaleCandidacies}.
     *
     * @return candidacies removed.
     */
    int clearStaleCandidacies(final long sessionId) throws Exception
    {
        return failover.deleteStaleCandidacies(sessionId);
    }

    /** Withdraw this host's vote against the controller, if it cast one. */
    void withdraw()
    {
        failover.withdraw();
    }

    /**
     * One step of the watch.
     *
     * @param controllerHost the host elected controller, or -1 while none is known.
     * @return 1 when this host voted, else 0.
     */
    int watch(final long nowNs, final int controllerHost)
    {
        final long gapNs = nowNs - lastWatchNs;
        lastWatchNs = nowNs;
        final int current = controllerHost;
        if (current < 0 || current == hostId)
        {
            watchedController = -1;
            failover.withdraw();
            return 0;
        }
        if (current != watchedController || gapNs > controllerTimeoutNs / 2 ||
            nowNs - channel.readingNanos() > controllerTimeoutNs / 4)
        {
            // a new controller gets a whole timeout to load and speak; after a stall of this host's own (this thread,
            // or the serving thread that reads the control stream: creating a new topic's logs on a busy machine),
            // its silence may be ours: watch afresh
            watchedController = current;
            watchedSinceNs = nowNs;
        }
        final long heard = channel.controllerHeardNanos(hostId);
        final boolean heardIt = 0 != heard && heard - watchedSinceNs > 0;
        final long lastSign = heardIt ? heard : watchedSinceNs;
        // the controller's process exited (its liveness connection closed): no silence to wait for
        final boolean exited = processExited.test(current);
        if (!exited && nowNs - lastSign <= (heardIt ? controllerTimeoutNs : FIRST_WORD_TIMEOUTS * controllerTimeoutNs))
        {
            failover.withdraw();
            return 0;
        }
        if (nowNs - nextVoteNs < 0)
        {
            return 0;
        }
        nextVoteNs = nowNs + voteIntervalNs;
        final ZooKeeperControllerFailover.Incumbent incumbent = failover.incumbent();
        if (null == incumbent || incumbent.hostId() != current)
        {
            return 0; // the election moved: the next read of it catches up
        }
        failover.suspect(incumbent);
        if (failover.tryDepose(incumbent))
        {
            logger.log(System.Logger.Level.WARNING, "host " + hostId + " deposed the controller on host " + current +
                (exited ? ": its process exited" : ": a majority of the cluster's hosts did not hear it for " +
                controllerTimeoutMs + " ms"));
        }
        return 1;
    }
}
