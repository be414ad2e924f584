package io.tidemark.cli;

import io.tidemark.client.remote.RemoteReader;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.RecordHandler;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** {@code tidemark read}: print the committed records of a partition of a cluster of host processes. */
@Command(
    name = "read",
    mixinStandardHelpOptions = true,
    description = {
        "Print the committed records (up to the high watermark) of a topic partition of a cluster of host " +
            "processes (`tidemark host`), read from its leader from an offset (default 0, or a consumer group's " +
            "committed offset), in the formats of " +
            "`tail`. A leader change is followed: reading goes on at the new leader from the same offset.",
        "Without --follow it stops at the high watermark; with --follow it stops after --max-records, after " +
            "--idle-timeout-ms without a new record, or on Ctrl-C.",
        "Exit code: 0 when done, 1 when a damaged batch arrived, 2 for bad arguments or configuration (an offset " +
            "out of range), 3 when FILE or the topic is missing or ZooKeeper cannot be reached, 6 when the " +
            "leader did not answer (or no leader) for --timeout-ms without --follow."},
    sortOptions = false)
final class ReadCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = "--topic", paramLabel = "TOPIC", required = true, description = "Topic.")
    String topic;

    @Option(names = "--partition", paramLabel = "P", required = true, description = "Partition.")
    int partition;

    @Option(names = {"--from", "--from-offset"}, paramLabel = "OFFSET",
        description = "First offset to read (default: the group's committed offset with --group, else 0).")
    Long from;

    @Option(names = {"-n", "--last"}, paramLabel = "N",
        description = "The last N committed records (as tail -n N): from the high watermark minus N.")
    Long last;

    @Option(names = "--group", paramLabel = "GROUP",
        description = "A consumer group: start at its committed offset (0 when it has none) unless --from is " +
            "given, and commit the position reached when reading stops (kept in ZooKeeper).")
    String group;

    @Mixin
    RecordOutputOptions output;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "15000",
        description = "Without --follow: fail when the leader made no progress for MS milliseconds (default: " +
            "${DEFAULT-VALUE}).")
    long timeoutMs;

    private StopOnSignal stop;
    private long printed;
    private RecordOutputOptions.Printer out;

    private final RecordHandler printer = (record) ->
    {
        out.print(record);
        printed++;
    };

    @Override
    public Integer call()
    {
        if (partition < 0 || null != from && from < 0 || timeoutMs < 1 ||
            output.anyNegative())
        {
            throw new ParameterException(spec.commandLine(), "--partition, --from, --max-records and " +
                "--idle-timeout-ms must be >= 0, --timeout-ms >= 1");
        }
        output.checkFollow(spec);
        if (null != last && (last < 0 || null != from || null != group))
        {
            throw new ParameterException(spec.commandLine(), "--last must be >= 0 and goes without --from and " +
                "--group");
        }
        out = output.printer(spec);
        stop = new StopOnSignal("tidemark-read-stop"); // Ctrl-C: stop polling and close cleanly
        try (TidemarkClient connection = client.connect())
        {
            read(connection);
        }
        finally
        {
            stop.close();
            out.flush();
        }
        return ExitCodes.OK;
    }

    private void read(final TidemarkClient connection)
    {
        final List<PartitionState> partitions = connection.partitions(topic);
        if (partitions.isEmpty())
        {
            throw ClientOptions.noTopic(topic);
        }
        if (partition >= partitions.size())
        {
            throw new ParameterException(spec.commandLine(), "topic " + topic + " has " + partitions.size() +
                " partition(s): no partition " + partition);
        }
        final long committed = null == group ? -1 : connection.committedOffset(group, topic, partition);
        final long start = null != from ? from : Math.max(0, committed);
        try (RemoteReader reader = connection.openReader(topic, partition))
        {
            reader.seek(start);
            if (null != last)
            {
                reader.seek(Math.max(0, highWatermark(connection, reader) - last));
            }
            try
            {
                readFrom(connection, reader, start);
            }
            finally
            {
                if (null != group && reader.position() != committed)
                {
                    connection.commitOffset(group, topic, partition, reader.position());
                    spec.commandLine().getErr().println("committed offset " + reader.position() + " of group " +
                        group + " for " + topic + "-" + partition);
                }
            }
        }
    }

    private void readFrom(final TidemarkClient connection, final RemoteReader reader, final long start)
    {
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 10_000_000);
        long lastRecordNs = System.nanoTime();
        long lastProgressNs = lastRecordNs;
        long lastHighWatermark = -1;
        while (!stop.requested() && !output.limitReached(printed))
        {
            final int budget = output.budget(printed);
            final int delivered = reader.poll(printer, budget);
            final long highWatermark = reader.highWatermark();
            final long now = System.nanoTime();
            if (lastHighWatermark < 0 && highWatermark >= 0 && start > highWatermark)
            {
                throw new StorageException(StorageErrorCode.OFFSET_OUT_OF_RANGE, "offset " + start +
                    " is beyond the high watermark " + highWatermark + " of " + topic + "-" + partition);
            }
            if (delivered > 0 || highWatermark != lastHighWatermark)
            {
                lastProgressNs = now;
                lastHighWatermark = highWatermark;
            }
            if (delivered > 0)
            {
                lastRecordNs = now;
                out.flush();
            }
            else if (!output.follow && highWatermark >= 0 && reader.position() >= highWatermark)
            {
                break; // caught up
            }
            else if (!output.follow && now - lastProgressNs >= TimeUnit.MILLISECONDS.toNanos(timeoutMs))
            {
                throw unavailable(connection, reader, highWatermark);
            }
            else if (output.follow && null != output.idleTimeoutMs &&
                now - lastRecordNs >= TimeUnit.MILLISECONDS.toNanos(output.idleTimeoutMs))
            {
                break;
            }
            idle.idle(delivered);
        }
    }

    /** @return the partition's high watermark, asked of its leader without reading a record. */
    private long highWatermark(final TidemarkClient connection, final RemoteReader reader)
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 10_000_000);
        while (reader.highWatermark() < 0)
        {
            reader.poll(printer, 0);
            if (System.nanoTime() - deadline > 0 && reader.highWatermark() < 0)
            {
                throw unavailable(connection, reader, -1);
            }
            idle.idle(0);
        }
        return reader.highWatermark();
    }

    private CliException unavailable(final TidemarkClient connection, final RemoteReader reader, final long hw)
    {
        final PartitionState state = connection.partitions(topic).get(partition);
        final String leader = state.leader() == PartitionState.NO_LEADER ? "it has no leader" :
            "its leader, host " + state.leader() + ", did not answer";
        return new CliException(ExitCodes.UNAVAILABLE, "no progress reading " + topic + "-" + partition + " at " +
            "offset " + reader.position() + (hw < 0 ? "" : " (high watermark " + hw + ")") + " for " + timeoutMs +
            " ms: " + leader);
    }
}
