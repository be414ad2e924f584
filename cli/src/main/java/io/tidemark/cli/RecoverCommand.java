package io.tidemark.cli;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.inspect.LogInspector;
import io.tidemark.store.RecoveryReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/** {@code tidemark recover}: open the log (which runs recovery), print the report, close it cleanly. */
@Command(
    name = "recover",
    mixinStandardHelpOptions = true,
    description = {
        "Run the store's recovery explicitly: open the log as an application would (after an unclean shutdown " +
            "every batch from the recovery point on is re-validated, a torn tail is truncated, indexes are " +
            "rebuilt), print the recovery report, and close the log cleanly.",
        "This MODIFIES the directory. It refuses a directory that a running process has open.",
        "Exit code: 0 when the log opened (the report says what was repaired), 1 when it is damaged beyond " +
            "what recovery repairs (CORRUPT_LOG), 3 when the directory is missing or not a log, 4 when locked."},
    sortOptions = false)
final class RecoverCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "<log dir>", description = "The log directory.")
    Path dir;

    @Mixin
    LogOptions logOptions;

    @Override
    public Integer call()
    {
        LogInspector.open(dir); // must exist and be a log: Log.open would create a new, empty one
        final PrintWriter out = spec.commandLine().getOut();
        final LogContext ctx = logOptions.context(dir).agentMode(LogContext.AgentMode.INVOKER);
        final RecoveryReport report;
        final long logEnd;
        final long recoveryPoint;
        try (Log log = Log.open(ctx))
        {
            report = log.recoveryReport();
            logEnd = log.logEndOffset();
            recoveryPoint = log.recoveryPoint();
        }
        out.println("Recovered " + dir.toAbsolutePath().normalize());
        out.println("  previous shutdown: " + (report.cleanShutdown() ? "clean (nothing to re-validate)" :
            "unclean (re-validated from the recovery point)"));
        out.println("  checkpoint: " + report.checkpointStatus() + ", recovery point " + report.recoveryPoint());
        out.println("  segments: " + report.segmentsLoaded() + " loaded, " + report.segmentsRecovered() +
            " re-validated, " + report.segmentsDeleted() + " deleted; indexes rebuilt: " + report.indexesRebuilt());
        out.println("  scanned: " + report.batchesScanned() + " batch(es), " + report.recordsScanned() +
            " record(s), " + Formats.bytes(report.bytesScanned()));
        out.println("  truncated: " + report.bytesTruncated() + " byte(s)");
        out.println("  log: offsets [" + report.logStartOffset() + ", " + report.logEndOffset() + ")");
        out.println("  took: " + String.format("%.1f ms", report.durationNanos() / 1e6));
        for (final String note : report.notes())
        {
            out.println("  note: " + note);
        }
        out.println("Closed cleanly: log end offset " + logEnd + ", recovery point " + recoveryPoint);
        out.flush();
        return ExitCodes.OK;
    }
}
