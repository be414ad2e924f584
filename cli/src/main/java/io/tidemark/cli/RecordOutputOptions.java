package io.tidemark.cli;

import io.tidemark.store.RecordView;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/** How {@code tail} and {@code read} print records and when they stop: the options they share. */
final class RecordOutputOptions
{
    @Option(names = {"-f", "--follow"}, description = "Keep waiting for new records.")
    boolean follow;

    @Option(names = {"-n", "--max", "--max-records"}, paramLabel = "N", description = "Stop after N records.")
    Long maxRecords;

    @Option(names = "--idle-timeout-ms", paramLabel = "MS",
        description = "With --follow: stop when no record arrived for MS milliseconds.")
    Long idleTimeoutMs;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "full",
        description = "full: offset, timestamp, key, value (tab-separated); kv: key<SEP>value; value: the value " +
            "only (default: ${DEFAULT-VALUE}).")
    Formats.RecordFormat format;

    @Option(names = {"-k", "--key-separator"}, paramLabel = "SEP", defaultValue = "\t",
        description = "Separator of --format kv (default: tab).")
    String keySeparator;

    /** @return whether --max-records or --idle-timeout-ms is negative. */
    boolean anyNegative()
    {
        return null != maxRecords && maxRecords < 0 || null != idleTimeoutMs && idleTimeoutMs < 0;
    }

    /** @throws ParameterException when --idle-timeout-ms is given without --follow. */
    void checkFollow(final CommandSpec spec)
    {
        if (null != idleTimeoutMs && !follow)
        {
            throw new ParameterException(spec.commandLine(), "--idle-timeout-ms goes with --follow");
        }
    }

    /** @return how many records the next poll may deliver, {@code printed} having been printed. */
    int budget(final long printed)
    {
        return null == maxRecords ? 1000 : (int)Math.min(1000, maxRecords - printed);
    }

    /** @return whether --max-records have been printed. */
    boolean limitReached(final long printed)
    {
        return null != maxRecords && printed >= maxRecords;
    }

    /** @return the record in the chosen format. */
    String line(final RecordView record)
    {
        return Formats.record(record, format, keySeparator);
    }
}
