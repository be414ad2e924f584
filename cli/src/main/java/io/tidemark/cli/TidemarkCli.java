package io.tidemark.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
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
    /**
     * The subcommands, registered programmatically rather than in {@code @Command(subcommands)}: picocli builds the
     * model of every registered command by reflection, which took most of a file command's start-up, so a call
     * registers only the command it runs (all of them for the top-level help, {@code help} and unknown names).
     */
    private static final List<Class<?>> SUBCOMMANDS = List.of(
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
        SecretCommand.class,
        PartitionCommand.class,
        CommandLine.HelpCommand.class);

    @Spec
    CommandSpec spec;

    private OutputStream stdout = System.out;

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
        // Standard output buffered, flushed by the commands where it matters (a line per syscall made a long dump
        // slow), with the encoding picocli would pick; --raw writes bytes to the same stream.
        final OutputStream stdout = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        final CommandLine commandLine = commandLine(args, stdout);
        commandLine.setOut(new PrintWriter(new OutputStreamWriter(stdout, stdoutCharset()), false));
        final int exitCode = commandLine.execute(args);
        commandLine.getOut().flush();
        System.exit(exitCode);
    }

    private static Charset stdoutCharset()
    {
        for (final String property : new String[] {"stdout.encoding", "sun.stdout.encoding"})
        {
            final String name = System.getProperty(property);
            if (null != name && Charset.isSupported(name))
            {
                return Charset.forName(name);
            }
        }
        return Charset.defaultCharset();
    }

    /** @return the command with every subcommand, ready to {@link CommandLine#execute}. */
    public static CommandLine commandLine()
    {
        return commandLine(new String[0], System.out);
    }

    /**
     * @param args   the command line it will run.
     * @param stdout the byte stream under the command's standard output writer (where {@code --raw} writes).
     * @return the command with the subcommand {@code args} names (every one when it names none or an unknown one),
     *         ready to {@link CommandLine#execute}, with the exception handling and exit codes.
     */
    public static CommandLine commandLine(final String[] args, final OutputStream stdout)
    {
        final TidemarkCli top = new TidemarkCli();
        top.stdout = stdout;
        final CommandLine commandLine = new CommandLine(top);
        final String name = subcommandName(args);
        final boolean known = null != name && !"help".equals(name) &&
            SUBCOMMANDS.stream().anyMatch((type) -> names(type).contains(name));
        for (final Class<?> type : SUBCOMMANDS)
        {
            if (!known || names(type).contains(name))
            {
                commandLine.addSubcommand(type);
            }
        }
        final CommandLine bench = commandLine.getSubcommands().get("bench");
        if (null != bench)
        {
            bench.setStopAtPositional(true);
            bench.setUnmatchedOptionsArePositionalParams(true);
        }
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

    /**
     * @param spec a (sub)command of this command line.
     * @return the byte stream under its standard output writer: flush the writer before writing to it.
     */
    static OutputStream stdout(final CommandSpec spec)
    {
        return ((TidemarkCli)spec.root().userObject()).stdout;
    }

    /** @return the first argument that is not an option (the subcommand's name when there is one), or null. */
    private static String subcommandName(final String[] args)
    {
        for (final String arg : args)
        {
            if (!arg.startsWith("-"))
            {
                return arg;
            }
        }
        return null;
    }

    private static List<String> names(final Class<?> type)
    {
        final Command command = type.getAnnotation(Command.class);
        final List<String> names = new java.util.ArrayList<>(List.of(command.aliases()));
        names.add(command.name());
        return names;
    }

    @Override
    public Integer call()
    {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing required subcommand");
    }
}
