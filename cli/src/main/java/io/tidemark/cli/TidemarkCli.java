package io.tidemark.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code tidemark}: the operator's command for Tidemark logs and embedded replicated topics.
 * <pre>
 *   ./tidemark dump data/orders-0 --index        # batches, records and index entries, with their CRC status
 *   ./tidemark verify data/orders-0              # exit 0 when clean, 1 with a precise report when not
 *   ./tidemark recover data/orders-0             # run the store's recovery explicitly, print its report
 *   ./tidemark produce data/orders-0 --key-separator=: &lt; lines.txt
 *   ./tidemark tail data/orders-0 --from-end --follow
 *   ./tidemark stat data/orders-0                # live counters of the process that has the log open
 *   ./tidemark bench quick                       # the bench module's quick run
 *
 *   # a cluster of host processes (one `tidemark host` per machine; ZooKeeper for partition state)
 *   ./tidemark zookeeper --dir /tmp/zk           # a standalone ZooKeeper to try it on one machine
 *   ./tidemark host --config host-0.properties   # runs replica host 0 until Ctrl-C / SIGTERM
 *   ./tidemark topic create --config client.properties --topic orders --partitions 3 --replication-factor 3
 *   ./tidemark topic list --config client.properties
 *   ./tidemark send --config client.properties --topic orders --key-separator=: &lt; lines.txt
 *   ./tidemark read --config client.properties --topic orders --partition 0 --from 0 --follow
 * </pre>
 */
@Command(
    name = "tidemark",
    mixinStandardHelpOptions = true,
    version = "tidemark 0.1.0-SNAPSHOT",
    description = "Operator tools for Tidemark logs (a log directory), embedded replicated topics " +
        "(--cluster <root>) and clusters of host processes (host, topic, send, read with --config <file>).",
    subcommands = {
        DumpCommand.class,
        VerifyCommand.class,
        RecoverCommand.class,
        ProduceCommand.class,
        TailCommand.class,
        StatCommand.class,
        BenchCommand.class,
        HostCommand.class,
        TopicCommand.class,
        SendCommand.class,
        ReadCommand.class,
        ZooKeeperCommand.class,
        CommandLine.HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        "0:ok",
        "1:verification failed / corruption found",
        "2:usage error (bad arguments, bad configuration, offset out of range)",
        "3:I/O error, missing file or not a log directory, missing topic, ZooKeeper unreachable",
        "4:log directory locked by a running process (host: its endpoint or directory in use)",
        "5:stat: no running process (or no counters file)",
        "6:replicated topic unavailable or produce failed",
        "70:internal error (rerun with --verbose)"})
public final class TidemarkCli implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Option(names = "--verbose", scope = ScopeType.INHERIT,
        description = "Print stack traces of errors and the library's log messages.")
    boolean verbose;

    /**
     * @param args command line.
     */
    public static void main(final String[] args)
    {
        final boolean verbose = List.of(args).contains("--verbose");
        if (null == System.getProperty("java.util.logging.config.file"))
        {
            // Recovery notes and replication events are logged; the commands print what matters themselves.
            Logger.getLogger("").setLevel(verbose ? Level.INFO : Level.SEVERE);
        }
        System.exit(commandLine().execute(args));
    }

    /** @return the command, ready to {@link CommandLine#execute}, with the exception handling and exit codes. */
    public static CommandLine commandLine()
    {
        final TidemarkCli top = new TidemarkCli();
        final CommandLine commandLine = new CommandLine(top);
        final CommandLine bench = commandLine.getSubcommands().get("bench");
        bench.setStopAtPositional(true);
        bench.setUnmatchedOptionsArePositionalParams(true);
        commandLine.setExecutionExceptionHandler((ex, cmd, parseResult) ->
        {
            final PrintWriter err = cmd.getErr();
            err.println(cmd.getCommandSpec().qualifiedName() + ": " + Errors.message(ex));
            if (top.verbose)
            {
                ex.printStackTrace(err);
            }
            err.flush();
            return Errors.exitCode(ex);
        });
        return commandLine;
    }

    @Override
    public Integer call()
    {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing required subcommand");
    }
}
