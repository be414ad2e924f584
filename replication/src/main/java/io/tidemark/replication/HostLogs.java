package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.StorageException;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.CountersManager;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The replica logs in a replica host's directory: at start every one is opened (recovered) before the host
 * registers, and kept open until its partition's state arrives and a {@link Replica} takes it over; a replica whose
 * log was not there at start gets a new one. Each open pretouches within what is left of the host's
 * {@code host.pretouch.budget.bytes}.
 * <p>
 * Owns the logs opened at start and the pretouch spent. Not thread-safe: one thread at a time, the starting thread,
 * then the host agent's thread or, for {@link #openReplica}, the {@link ReplicaOpener}'s where there is one (it
 * opens one replica at a time; the counters' manager is a {@code ConcurrentCountersManager}, so counters may be
 * allocated there while the agent thread runs).
 */
final class HostLogs
{
    private final int hostId;
    private final Path dir;
    private final ReplicationContext ctx;
    private final CountersManager counters;
    private final ErrorHandler errorHandler;
    /** Replica logs opened at start, before the host registers, until their partition's state arrives. */
    private final Map<Path, Log> openedAtStart = new HashMap<>();
    private long pretouchSpent;

    HostLogs(final int hostId, final Path dir, final ReplicationContext ctx, final CountersManager counters,
        final ErrorHandler errorHandler)
    {
        this.hostId = hostId;
        this.dir = dir;
        this.ctx = ctx;
        this.counters = counters;
        this.errorHandler = errorHandler;
    }

    /**
     * Open (recover) every replica log of this host, before it registers. A log that cannot be opened is reported
     * and opened again when its partition's state arrives, failing the host then.
     *
     * @return whether a log's recovery found that flushed records are gone (a disk that lost blocks it had
     *         acknowledged): the host may have lost records it acknowledged, as after a power loss.
     */
    boolean openAll() throws IOException
    {
        boolean lost = false;
        try (Stream<Path> dirs = Files.list(dir))
        {
            for (final Path logDir : dirs.filter((d) -> Files.isDirectory(d) && Files.exists(d.resolve("log.meta")))
                .sorted().toList())
            {
                try
                {
                    final Log log = Replica.openLog(logDir, ctx, counters,
                        ctx.hostPretouchBudgetBytes() - pretouchSpent);
                    pretouchSpent += log.context().pretouchBytes();
                    openedAtStart.put(logDir.getFileName(), log);
                    if (log.recoveryReport().flushedDataLost())
                    {
                        lost = true;
                        System.getLogger(ReplicaHost.class.getName()).log(System.Logger.Level.WARNING,
                            "host " + hostId + ": " + logDir + " lost flushed records " +
                            log.recoveryReport().losses() + ": reported to the controller as a possible data loss");
                    }
                }
                catch (final StorageException ex)
                {
                    errorHandler.onError(ex); // opened again when its partition's state arrives, failing the host then
                }
            }
        }
        return lost;
    }

    /** @return the log of {@code state}'s partition opened at start, now no longer held here; or null. */
    Log takeOpenedAtStart(final PartitionState state)
    {
        return openedAtStart.remove(Path.of(state.topicPartition().logName()));
    }

    /**
     * Open the replica of {@code state}: over its log opened at start (its pretouch counted then), or opening it,
     * within what is left of the host's pretouch budget.
     */
    Replica openReplica(final PartitionState state, final Log openedAtStart)
    {
        if (null != openedAtStart)
        {
            final Replica replica = Replica.open(hostId, state, openedAtStart, ctx, counters);
            replica.pretouchBytes = 0; // counted at start
            return replica;
        }
        final Replica replica = Replica.open(hostId, state, Replica.openLog(dir.resolve(
            state.topicPartition().logName()), ctx, counters, ctx.hostPretouchBudgetBytes() - pretouchSpent),
            ctx, counters);
        pretouchSpent += replica.pretouchBytes;
        return replica;
    }

    /** Close the logs opened at start that no replica took over (clean stop). */
    void close()
    {
        openedAtStart.values().forEach(Log::close);
        openedAtStart.clear();
    }

    /** Leave the logs opened at start that no replica took over as a killed process would. */
    void halt()
    {
        openedAtStart.values().forEach(Log::halt);
        openedAtStart.clear();
    }
}
