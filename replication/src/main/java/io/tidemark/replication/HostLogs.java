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
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

/**
 * The replica logs in a replica host's directory: at start every one is opened (recovered) before the host
 * registers, and kept open until its partition's state arrives and a {@link Replica} takes it over; a replica whose
 * log was not there at start gets a new one. Each open pretouches within what is left of the host's
 * {@code host.pretouch.budget.bytes}.
 * <p>
 * Owns the logs opened at start and the pretouch spent. Not thread-safe: one thread at a time, the starting thread
 * (whose {@link #openAll} opens the logs on helper threads too and joins them before it returns),
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
     * <p>
     * The logs open side by side, on up to one thread per core: each open after a kill re-validates its unflushed
     * tail, and one after the other they were a third of a restarted host's start (four logs, 1.7 s median on a
     * loaded 2-core machine). Each log's share of the pretouch budget is decided first, in the order of their names,
     * as when they opened one by one.
     *
     * @return whether a log's recovery found that flushed records are gone (a disk that lost blocks it had
     *         acknowledged): the host may have lost records it acknowledged, as after a power loss.
     */
    boolean openAll() throws IOException
    {
        final List<Path> logDirs;
        try (Stream<Path> dirs = Files.list(dir))
        {
            logDirs = dirs.filter((d) -> Files.isDirectory(d) && Files.exists(d.resolve("log.meta"))).sorted()
                .toList();
        }
        final long[] allowances = new long[logDirs.size()];
        long planned = pretouchSpent;
        for (int i = 0; i < allowances.length; i++)
        {
            allowances[i] = ctx.hostPretouchBudgetBytes() - planned;
            final long pretouch = ctx.logContextFactory().apply(logDirs.get(i)).pretouchBytes();
            if (pretouch <= allowances[i])
            {
                planned += pretouch;
            }
        }
        final Log[] logs = new Log[logDirs.size()];
        final Throwable[] failures = new Throwable[logDirs.size()];
        final int threads = Math.min(logDirs.size(), Runtime.getRuntime().availableProcessors());
        if (threads <= 1)
        {
            for (int i = 0; i < logs.length; i++)
            {
                open(logDirs, allowances, logs, failures, i);
            }
        }
        else
        {
            openSideBySide(logDirs, allowances, logs, failures, threads);
        }
        boolean lost = false;
        RuntimeException fatal = null;
        for (int i = 0; i < logs.length; i++)
        {
            final Path logDir = logDirs.get(i);
            final Log log = logs[i];
            if (null != log)
            {
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
            else if (failures[i] instanceof StorageException)
            {
                errorHandler.onError(failures[i]); // opened again when its partition's state arrives, failing then
            }
            else if (null == fatal)
            {
                fatal = failures[i] instanceof RuntimeException ? (RuntimeException)failures[i] :
                    new IllegalStateException("cannot open " + logDir, failures[i]);
            }
        }
        if (null != fatal)
        {
            throw fatal; // the logs opened are held here, closed with the host, as when an open in turn failed
        }
        return lost;
    }

    private void openSideBySide(
        final List<Path> logDirs, final long[] allowances, final Log[] logs, final Throwable[] failures,
        final int threads)
    {
        final AtomicInteger next = new AtomicInteger();
        final Thread[] openers = new Thread[threads - 1];
        final Runnable opener = () ->
        {
            for (int i = next.getAndIncrement(); i < logs.length; i = next.getAndIncrement())
            {
                open(logDirs, allowances, logs, failures, i);
            }
        };
        for (int t = 0; t < openers.length; t++)
        {
            openers[t] = new Thread(opener, "tidemark-log-open-" + hostId + "-" + t);
            openers[t].setDaemon(true);
            openers[t].start();
        }
        opener.run(); // the starting thread opens too
        for (final Thread thread : openers)
        {
            boolean interrupted = false;
            while (true)
            {
                try
                {
                    thread.join();
                    break;
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true; // the logs it opens must be held before the start goes on, or fails
                }
            }
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Open log {@code i}: into {@code logs[i]}, or its failure into {@code failures[i]}. */
    private void open(
        final List<Path> logDirs, final long[] allowances, final Log[] logs, final Throwable[] failures, final int i)
    {
        try
        {
            logs[i] = Replica.openLog(logDirs.get(i), ctx, counters, allowances[i]);
        }
        catch (final RuntimeException | Error ex)
        {
            failures[i] = ex;
        }
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
