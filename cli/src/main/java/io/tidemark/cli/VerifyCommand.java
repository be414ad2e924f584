package io.tidemark.cli;

import io.tidemark.store.inspect.LogInspectionReport;
import io.tidemark.store.inspect.LogInspector;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code tidemark verify}: checks a log directory as recovery would, changing nothing. */
@Command(
    name = "verify",
    mixinStandardHelpOptions = true,
    description = {
        "Check every batch of a log directory (length, magic, record structure, CRC32C, offset continuity within " +
            "and across segments, non-decreasing leader epochs), garbage after the data, both sparse indexes " +
            "against the batches, and log.meta and log.checkpoint against the data; report leftovers the next " +
            "open would delete. Each finding names the file, position and offsets, and what the next open " +
            "would do about it.",
        "Reads the files without taking the lock and changes nothing.",
        "Exit code: 0 when clean (warnings allowed unless --strict), 1 when an error (or with --strict a " +
            "warning) was found, 3 when the directory is missing or not a log."},
    sortOptions = false)
final class VerifyCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "<log dir>", description = "The log directory.")
    Path dir;

    @Option(names = "--strict", description = "Fail on warnings too (an unclean shutdown, leftovers).")
    boolean strict;

    @Option(names = {"-q", "--quiet"}, description = "Print only the findings and the result line.")
    boolean quiet;

    @Override
    public Integer call()
    {
        if (Files.exists(dir) && !Files.isDirectory(dir))
        {
            throw new CliException(ExitCodes.IO, dir + " is not a directory: verify takes a log directory " +
                "(use `tidemark dump " + dir + "` for one segment)");
        }
        final PrintWriter out = spec.commandLine().getOut();
        final LogInspector inspector = LogInspector.open(dir);
        final LogInspectionReport report = inspector.verify();
        if (!quiet)
        {
            out.println("Verifying " + dir.toAbsolutePath().normalize());
            Inspect.describeState(inspector, out);
            for (final LogInspectionReport.SegmentSummary s : report.segments())
            {
                out.println("  segment " + s.baseOffset() + ": offsets [" + s.baseOffset() + ", " + s.endOffset() +
                    "), " + s.batches() + " batch(es), " + s.records() + " record(s), data " + s.dataSize() + " of " +
                    s.fileSize() + " bytes, index " + entries(s.offsetIndexEntries()) + ", time index " +
                    entries(s.timeIndexEntries()) + (s.damagedBatches() > 0 ? ", " + s.damagedBatches() +
                    " damaged" : ""));
            }
            out.println("  log: offsets [" + report.logStartOffset() + ", " + report.logEndOffset() + "), " +
                report.segments().size() + " segment(s), " + report.batches() + " batch(es), " + report.records() +
                " record(s), " + Formats.bytes(report.bytes()));
        }
        for (final LogInspectionReport.Finding finding : report.findings())
        {
            if (!quiet || finding.severity() != LogInspectionReport.Severity.INFO)
            {
                out.println(finding);
            }
        }
        final int errors = report.errors().size();
        final int warnings = report.warnings().size();
        final boolean failed = errors > 0 || (strict && warnings > 0);
        out.println("Result: " + (failed ? "FAILED" : "OK") + " (" + errors + " error(s), " + warnings +
            " warning(s))");
        out.flush();
        return failed ? ExitCodes.CORRUPT : ExitCodes.OK;
    }

    private static String entries(final int n)
    {
        return n < 0 ? "unusable" : n + " entr" + (n == 1 ? "y" : "ies");
    }
}
