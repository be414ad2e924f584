package io.tidemark.cli;

import io.tidemark.store.RecordView;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** How {@code tail} and {@code read} print records and when they stop: the options they share. */
final class RecordOutputOptions
{
    @Option(names = {"-f", "--follow"}, description = "Keep waiting for new records.")
    boolean follow;

    @Option(names = {"--max", "--max-records"}, paramLabel = "N", description = "Stop after N records.")
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

    @Option(names = "--raw", description = "Print keys and values as the bytes that were produced. By default " +
        "they are printed safely: valid UTF-8 as it is, but backslash, tab, newline and other control characters " +
        "escaped (\\\\, \\t, \\n, \\u001b) and bytes that are not UTF-8 as \\xNN, so that a record stays on one " +
        "line and no value can send escape sequences to the terminal.")
    boolean raw;

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

    /**
     * @param spec the command.
     * @return a printer of records in the chosen format, to the command's standard output.
     */
    Printer printer(final CommandSpec spec)
    {
        return new Printer(spec.commandLine().getOut(), TidemarkCli.stdout(spec));
    }

    /** Prints records, escaped to the command's writer or (--raw) as bytes to its standard output stream. */
    final class Printer
    {
        private final PrintWriter out;
        private final OutputStream bytes;
        private final byte[] separator = keySeparator.getBytes(StandardCharsets.UTF_8);

        private Printer(final PrintWriter out, final OutputStream bytes)
        {
            this.out = out;
            this.bytes = bytes;
            if (raw)
            {
                out.flush(); // what the writer holds goes first
            }
        }

        void print(final RecordView record)
        {
            if (!raw)
            {
                out.println(Formats.record(record, format, keySeparator));
                return;
            }
            try
            {
                Formats.writeRaw(record, format, separator, bytes);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        }

        void flush()
        {
            out.flush();
            if (raw)
            {
                try
                {
                    bytes.flush();
                }
                catch (final IOException ex)
                {
                    throw new UncheckedIOException(ex);
                }
            }
        }
    }
}
