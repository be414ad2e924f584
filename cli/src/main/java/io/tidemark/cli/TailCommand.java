package io.tidemark.cli;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.inspect.LogInspector;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code tidemark tail} (alias {@code consume}): print records from an offset, a timestamp or the end. */
@Command(
    name = "tail",
    aliases = "consume",
    mixinStandardHelpOptions = true,
    description = {
        "Print the records of a local log or of a replicated topic partition, from the beginning (default), an " +
            "offset, a timestamp, the last N records (-n N) or the end, and with --follow keep printing new " +
            "records as they arrive. Keys and values are printed safely (escaped) unless --raw.",
        "A local log is opened as an application would (recovery included; nothing is appended). When a running " +
            "process has it open (locked), or with --read-only, its files are read without the lock and " +
            "nothing is changed, following the owner's appends. A replicated topic is read up to its high " +
            "watermark from the partition's leader, in an embedded cluster started for the command.",
        "Without --follow it stops at the end; with --follow it stops after --max-records, after " +
            "--idle-timeout-ms without a new record, or on Ctrl-C.",
        "Exit code: 0 when done, 1 when a damaged batch stops it, 2 for bad arguments (an offset out of range), " +
            "3 when the log is missing, 6 when the topic has no leader."},
    sortOptions = false)
final class TailCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Mixin
    TargetOptions target;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Start start;

    /** Where to start: one of these. */
    static final class Start
    {
        @Option(names = "--from-beginning", description = "From the log start offset (the default).")
        boolean beginning;

        @Option(names = "--from-offset", paramLabel = "OFFSET", description = "From this offset.")
        Long offset;

        @Option(names = "--from-timestamp", paramLabel = "TIME",
            description = "From the first record with a timestamp at or after TIME (epoch millis or ISO-8601, " +
                "e.g. 2026-11-29T12:00:00Z).")
        String timestamp;

        @Option(names = "--from-end", description = "From the end: only records appended from now on.")
        boolean end;

        @Option(names = {"-n", "--last"}, paramLabel = "N", description = "The last N records (as tail -n N): " +
            "from the log end offset minus N (on a topic, the high watermark minus N), then stop at the end, or " +
            "keep following with --follow.")
        Long last;
    }

    @Mixin
    RecordOutputOptions output;

    @Option(names = "--read-only", description = "Local log: read the files without opening the log (no lock, no " +
        "recovery), even when no process has it open.")
    boolean readOnly;

    @Mixin
    LogOptions logOptions;

    private StopOnSignal stop;
    private long printed;
    private long lastRecordNs;
    private RecordOutputOptions.Printer out;

    @Override
    public Integer call()
    {
        target.validate(spec, true);
        if (output.anyNegative() || null != start && null != start.last && start.last < 0)
        {
            throw new ParameterException(spec.commandLine(), "--last, --max-records and --idle-timeout-ms must be " +
                ">= 0");
        }
        output.checkFollow(spec);
        if (readOnly && target.isCluster())
        {
            throw new ParameterException(spec.commandLine(), "--read-only is for a local log");
        }
        final long fromTimestamp = null != start && null != start.timestamp ?
            parseTimestamp(start.timestamp) : Long.MIN_VALUE;
        out = output.printer(spec);
        stop = new StopOnSignal("tidemark-tail-stop"); // Ctrl-C: stop polling and close cleanly
        try
        {
            if (target.isCluster())
            {
                tailCluster(fromTimestamp);
            }
            else
            {
                tailLog(fromTimestamp);
            }
        }
        finally
        {
            stop.close();
            out.flush();
        }
        spec.commandLine().getErr().flush();
        return ExitCodes.OK;
    }

    private long parseTimestamp(final String text)
    {
        try
        {
            return Formats.parseTimestamp(text);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ParameterException(spec.commandLine(), "--from-timestamp: " + ex.getMessage());
        }
    }

    private final RecordHandler printer = (record) ->
    {
        out.print(record);
        printed++;
    };

    private int budget()
    {
        return output.budget(printed);
    }

    /** @return whether to stop after a poll that delivered {@code delivered} records. */
    private boolean shouldStop(final int delivered, final boolean caughtUp)
    {
        final long now = System.nanoTime();
        if (delivered > 0)
        {
            lastRecordNs = now;
            out.flush();
        }
        if (stop.requested() || output.limitReached(printed))
        {
            return true;
        }
        if (!output.follow)
        {
            return caughtUp;
        }
        return null != output.idleTimeoutMs && delivered == 0 &&
            now - lastRecordNs >= output.idleTimeoutMs * 1_000_000L;
    }

    /** With --follow: say on stderr where following starts (scripts and tests wait for this line). */
    private void announce(final long position)
    {
        if (output.follow)
        {
            final PrintWriter err = spec.commandLine().getErr();
            err.println("tail: following " + (target.isCluster() ? target.topic + "-" + target.partition :
                target.logDir) + " from offset " + position + " (Ctrl-C stops)");
            err.flush();
        }
    }

    private IdleStrategy idle()
    {
        return new BackoffIdleStrategy(10, 10, 1_000, 10_000_000);
    }

    // --------------------------------------------------------------------------------------------------------
    // Local log
    // --------------------------------------------------------------------------------------------------------

    private void tailLog(final long fromTimestamp)
    {
        final LogInspector inspector = LogInspector.open(target.logDir);
        if (!readOnly)
        {
            final Log log;
            try
            {
                log = Log.open(logOptions.context(target.logDir).agentMode(LogContext.AgentMode.INVOKER));
            }
            catch (final StorageException ex)
            {
                if (ex.code() != StorageErrorCode.LOCKED)
                {
                    throw ex;
                }
                spec.commandLine().getErr().println("tail: " + target.logDir + " is open in another process " +
                    "(locked): reading its files read-only");
                tailFiles(inspector, fromTimestamp);
                return;
            }
            try (log; LogReader reader = log.openReader())
            {
                if (null != start && null != start.offset)
                {
                    reader.seek(start.offset);
                }
                else if (null != start && null != start.timestamp)
                {
                    reader.seekToTimestamp(fromTimestamp);
                }
                else if (null != start && start.end)
                {
                    reader.seekToEnd();
                }
                else if (null != start && null != start.last)
                {
                    reader.seek(Math.max(log.logStartOffset(), log.logEndOffset() - start.last));
                }
                announce(reader.position());
                final IdleStrategy idle = idle();
                lastRecordNs = System.nanoTime();
                while (true)
                {
                    final int budget = budget();
                    final int delivered = budget <= 0 ? 0 : reader.poll(printer, Long.MAX_VALUE, budget);
                    if (shouldStop(delivered, delivered == 0))
                    {
                        break;
                    }
                    idle.idle(delivered);
                }
            }
            return;
        }
        tailFiles(inspector, fromTimestamp);
    }

    private void tailFiles(final LogInspector inspector, final long fromTimestamp)
    {
        final FileTail tail = new FileTail(inspector);
        if (null != start && null != start.offset)
        {
            tail.seek(start.offset);
        }
        else if (null != start && null != start.timestamp)
        {
            tail.seekToTimestamp(fromTimestamp);
        }
        else if (null != start && start.end)
        {
            tail.seekToEnd();
        }
        else if (null != start && null != start.last)
        {
            tail.seek(Math.max(tail.logStartOffset(), tail.logEndOffset() - start.last));
        }
        announce(tail.position());
        final IdleStrategy idle = idle();
        lastRecordNs = System.nanoTime();
        while (true)
        {
            final int budget = budget();
            final int delivered = budget <= 0 ? 0 : tail.poll(printer, budget);
            if (shouldStop(delivered, delivered == 0 && !tail.blockedOnDamage()))
            {
                break;
            }
            idle.idle(delivered);
        }
    }

    // --------------------------------------------------------------------------------------------------------
    // Replicated topic
    // --------------------------------------------------------------------------------------------------------

    private void tailCluster(final long fromTimestamp)
    {
        final TopicPartition tp = new TopicPartition(target.topic, target.partition);
        try (ReplicationCluster cluster = target.startCluster(logOptions))
        {
            if (cluster.partitions(target.topic).isEmpty())
            {
                throw new CliException(ExitCodes.IO, "no topic " + target.topic + " in the cluster at " +
                    target.cluster + " (produce to it first)");
            }
            if (null == cluster.state(tp))
            {
                throw new ParameterException(spec.commandLine(), "topic " + target.topic + " has " +
                    cluster.partitions(target.topic).size() + " partition(s): no partition " + target.partition);
            }
            target.awaitLeaders(cluster);
            try (PartitionReader reader = cluster.openReader(tp))
            {
                // Let the (new) leader's high watermark reach its log end, so that "the end" is where it was.
                final boolean settled = cluster.await(() ->
                    reader.highWatermark() >= 0 && reader.highWatermark() >= reader.logEndOffset(),
                    target.awaitLeadersMs);
                if (!settled && !output.follow)
                {
                    spec.commandLine().getErr().println("tail: the high watermark of " + tp + " is behind its log " +
                        "end (followers catching up); reading what is committed");
                }
                position(cluster, reader, fromTimestamp);
                announce(reader.position());
                final IdleStrategy idle = idle();
                lastRecordNs = System.nanoTime();
                while (true)
                {
                    final int budget = budget();
                    final int delivered = budget <= 0 ? 0 : reader.poll(printer, budget);
                    final long hw = reader.highWatermark();
                    if (shouldStop(delivered, delivered == 0 && hw >= 0 && reader.position() >= hw))
                    {
                        break;
                    }
                    idle.idle(delivered);
                }
            }
        }
    }

    private void position(final ReplicationCluster cluster, final PartitionReader reader, final long fromTimestamp)
    {
        if (null != start && null != start.offset)
        {
            final long logStart = reader.logStartOffset();
            final long hw = reader.highWatermark();
            if (start.offset < logStart || start.offset > hw)
            {
                throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "offset " + start.offset +
                    " is outside [" + logStart + ", " + hw + "] (log start, high watermark) of " + target.topic + "-" + target.partition);
            }
            reader.seek(start.offset);
        }
        else if (null != start && null != start.timestamp)
        {
            final long offset = reader.offsetForTimestamp(fromTimestamp);
            if (offset >= 0)
            {
                reader.seek(offset);
            }
            else
            {
                seekToEnd(cluster, reader);
            }
        }
        else if (null != start && start.end)
        {
            seekToEnd(cluster, reader);
        }
        else if (null != start && null != start.last)
        {
            reader.seek(Math.max(Math.max(0, reader.logStartOffset()), reader.highWatermark() - start.last));
        }
        else
        {
            reader.seek(Math.max(0, reader.logStartOffset()));
        }
    }

    private void seekToEnd(final ReplicationCluster cluster, final PartitionReader reader)
    {
        final boolean ok = cluster.await(() ->
        {
            try
            {
                reader.seekToEnd();
                return true;
            }
            catch (final StorageException ex)
            {
                return false; // a new leader still catching up
            }
        }, target.awaitLeadersMs);
        if (!ok)
        {
            throw new CliException(ExitCodes.UNAVAILABLE, "no latest offset available for " + target.topic + "-" +
                target.partition + " after " + target.awaitLeadersMs + " ms");
        }
    }
}
