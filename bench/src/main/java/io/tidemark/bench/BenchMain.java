package io.tidemark.bench;

import io.tidemark.bench.multiprocess.AuthOverheadCommand;
import io.tidemark.bench.multiprocess.KafkaClientsCommand;
import io.tidemark.bench.multiprocess.MultiProcessCommand;
import io.tidemark.bench.report.JmhSummary;
import io.tidemark.bench.report.PerfRun;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.ProfilerConfig;
import org.openjdk.jmh.runner.options.TimeValue;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark-bench}: the TPS/latency harness and the JMH microbenchmarks; every command writes a report to
 * {@code perf-results/local/<yyyy-MM-dd>_<git short sha>/} (see {@link #DEFAULT_RESULTS_DIR}) and updates the index
 * there.
 * <pre>
 *   java -jar bench/target/tidemark-bench.jar quick                 # the matrix in reduced form, ~2 minutes
 *   java -jar bench/target/tidemark-bench.jar full                  # the full matrix, ~20 minutes
 *   java -jar bench/target/tidemark-bench.jar run --acks all --partitions 4 --load open --rate 50000
 *   java -jar bench/target/tidemark-bench.jar multiprocess          # 3 host JVMs on loopback, acks sweep, ~3 min
 *   java -jar bench/target/tidemark-bench.jar kafka-clients         # KafkaProducer: Tidemark's listener vs Kafka
 *   java -jar bench/target/tidemark-bench.jar jmh-quick             # JMH, short (~5 minutes)
 *   java -jar bench/target/tidemark-bench.jar jmh -f 3 -wi 5 -i 10  # JMH, any JMH options
 *   java -jar bench/target/tidemark-bench.jar jmh -h                # JMH's own options
 * </pre>
 */
@Command(
    name = "tidemark-bench",
    mixinStandardHelpOptions = true,
    version = "tidemark-bench 0.1.0-SNAPSHOT (JMH 1.37)",
    description = "Runs Tidemark's benchmarks and writes a report to " +
        "<results-dir>/<yyyy-MM-dd>_<git short sha or 'nogit'>/ (summary.md, env.txt, and summary.json, .hgrm files " +
        "and charts for the harness, jmh-result.json for JMH; multiprocess: <yyyy-MM-dd>_multiprocess-<sha>/, " +
        "kafka-clients: <yyyy-MM-dd>_kafka-clients-<sha>/), " +
        "then indexes it in <results-dir>/README.md.",
    subcommands = {HarnessCommands.Quick.class, HarnessCommands.Full.class, RunCommand.class,
        MultiProcessCommand.class, KafkaClientsCommand.class, AuthOverheadCommand.class,
        io.tidemark.bench.peer.WriterBench.class, IsrFlapBench.class, BenchMain.JmhQuick.class, BenchMain.Jmh.class,
        CommandLine.HelpCommand.class})
public final class BenchMain implements Callable<Integer>
{
    /**
     * Where a run's report directory goes unless {@code --results-dir} says otherwise: under the repository's
     * {@code perf-results/} but ignored by git, so that a user's run changes nothing tracked (neither a new directory
     * nor the index). The project publishes a run with {@code --results-dir perf-results}, which also rewrites the
     * tracked index {@code perf-results/README.md}.
     */
    public static final String DEFAULT_RESULTS_DIR = "perf-results/local";

    /**
     * Every JMH benchmark of the bench: the store's and the replication's, through their public API (the benchmarks
     * of package-private parts live in the owning module's test sources).
     */
    public static final String STORE_BENCHMARKS = "io\\.tidemark\\.bench\\.jmh\\.[A-Za-z]+Benchmark\\..*";

    @Spec
    CommandSpec spec;

    /**
     * @param args command line.
     */
    public static void main(final String[] args)
    {
        System.setProperty("java.awt.headless", "true");
        if (null == System.getProperty("java.util.logging.config.file"))
        {
            // Expected events (a killed host's session expiring) are logged at INFO; keep the console for the bar.
            java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        }
        System.exit(commandLine().execute(args));
    }

    /** @return the command, ready to {@link CommandLine#execute}. */
    public static CommandLine commandLine()
    {
        return new CommandLine(new BenchMain());
    }

    @Override
    public Integer call()
    {
        throw new ParameterException(spec.commandLine(),
            "Missing subcommand: quick (start here), full, run, multiprocess, jmh-quick or jmh");
    }

    /** A short JMH run of every microbenchmark. */
    @Command(
        name = "jmh-quick",
        mixinStandardHelpOptions = true,
        description = "Short JMH run of the microbenchmarks with the GC profiler: 1 fork, 2 warmup and 3 " +
            "measurement iterations of 1 s each; about 5 minutes on 2 cores.")
    static final class JmhQuick implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Mixin
        BenchOptions.Results report;

        @Option(names = "--include", paramLabel = "REGEX", defaultValue = STORE_BENCHMARKS,
            description = "Benchmarks to run (JMH include regex; default: ${DEFAULT-VALUE}).")
        String include;

        @Option(names = {"-p", "--param"}, paramLabel = "NAME=V1[,V2...]",
            description = "Override a benchmark @Param, e.g. -p valueSize=100. Repeatable.")
        Map<String, String> params = new LinkedHashMap<>();

        @Option(names = "--forks", paramLabel = "N", defaultValue = "1",
            description = "JMH forks (default: ${DEFAULT-VALUE}).")
        int forks;

        @Option(names = "--warmup-iterations", paramLabel = "N", defaultValue = "2",
            description = "Warmup iterations (default: ${DEFAULT-VALUE}).")
        int warmupIterations;

        @Option(names = "--iterations", paramLabel = "N", defaultValue = "3",
            description = "Measurement iterations (default: ${DEFAULT-VALUE}).")
        int iterations;

        @Option(names = "--time", paramLabel = "TIME", defaultValue = "1s", converter = TimeValueConverter.class,
            description = "Duration of each warmup and measurement iteration (default: ${DEFAULT-VALUE}).")
        TimeValue time;

        @Override
        public Integer call() throws IOException
        {
            final ChainedOptionsBuilder options = new OptionsBuilder()
                .include(include)
                .forks(forks)
                .warmupIterations(warmupIterations)
                .warmupTime(time)
                .measurementIterations(iterations)
                .measurementTime(time)
                .addProfiler(GCProfiler.class)
                .jvmArgsAppend(JvmFlags.FORKED_JVM_ARGS.toArray(new String[0]))
                .shouldFailOnError(true);
            params.forEach((name, values) -> options.param(name, values.split(",")));
            return runAndReport(spec, report, options, JvmFlags.FORKED_JVM_ARGS);
        }
    }

    /** Pass-through of JMH's command line, for full runs. */
    @Command(
        name = "jmh",
        customSynopsis = "tidemark-bench jmh [--no-gc-profiler] [--results-dir=DIR] [JMH options] [regexps]",
        description = {
            "Runs JMH with the given JMH command-line options (see 'jmh -h'), e.g. jmh -f 3 -wi 5 -i 10 " +
                "StoreAppendBenchmark. Added unless already given: -prof gc, and the add-exports flag Agrona " +
                "needs in -jvmArgsAppend. The JSON result always goes to the report directory (-rf/-rff are " +
                "overridden)."})
    static final class Jmh implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Mixin
        BenchOptions.Results report;

        @Option(names = "--no-gc-profiler", description = "Do not add -prof gc.")
        boolean noGcProfiler;

        @Unmatched
        List<String> jmhArgs = new ArrayList<>();

        @Override
        public Integer call() throws IOException
        {
            final PrintWriter out = spec.commandLine().getOut();
            final PrintWriter err = spec.commandLine().getErr();
            if (jmhArgs.contains("--help"))
            {
                spec.commandLine().usage(out);
                out.println("JMH's own options: tidemark-bench jmh -h");
                return 0;
            }
            final CommandLineOptions jmh;
            try
            {
                jmh = new CommandLineOptions(jmhArgs.toArray(new String[0]));
            }
            catch (final CommandLineOptionException ex)
            {
                err.println("Invalid JMH options: " + ex.getMessage());
                return 2;
            }
            if (jmh.shouldHelp())
            {
                jmh.showHelp();
                return 0;
            }
            if (jmh.shouldListProfilers())
            {
                jmh.listProfilers();
                return 0;
            }
            if (jmh.shouldListResultFormats())
            {
                jmh.listResultFormats();
                return 0;
            }
            if (jmh.shouldList() || jmh.shouldListWithParams())
            {
                final Runner runner = new Runner(jmh);
                if (jmh.shouldListWithParams())
                {
                    runner.listWithParams(jmh);
                }
                else
                {
                    runner.list();
                }
                return 0;
            }
            if (jmh.getResult().hasValue() || jmh.getResultFormat().hasValue())
            {
                out.println("tidemark-bench: -rf/-rff ignored: the JSON result goes to the report directory.");
            }
            final List<String> jvmArgsAppend = mergeJvmArgsAppend(
                jmh.getJvmArgsAppend().hasValue() ? jmh.getJvmArgsAppend().get() : List.of());
            final ChainedOptionsBuilder options = new OptionsBuilder()
                .parent(jmh)
                .jvmArgsAppend(jvmArgsAppend.toArray(new String[0]));
            if (!noGcProfiler && !hasGcProfiler(jmh.getProfilers()))
            {
                options.addProfiler(GCProfiler.class);
            }
            return runAndReport(spec, report, options, jvmArgsAppend);
        }
    }

    /**
     * @param given the user's -jvmArgsAppend.
     * @return them, followed by the add-exports flag unless already there.
     */
    static List<String> mergeJvmArgsAppend(final Collection<String> given)
    {
        final List<String> merged = new ArrayList<>(given);
        final String joined = String.join(" ", given);
        if (!joined.contains(JvmFlags.MISC_TO_UNNAMED))
        {
            merged.addAll(JvmFlags.FORKED_JVM_ARGS);
        }
        return merged;
    }

    /**
     * @param profilers profilers given on the JMH command line.
     * @return whether one of them is the GC profiler.
     */
    static boolean hasGcProfiler(final List<ProfilerConfig> profilers)
    {
        for (final ProfilerConfig profiler : profilers)
        {
            if ("gc".equals(profiler.getKlass()) || GCProfiler.class.getName().equals(profiler.getKlass()))
            {
                return true;
            }
        }
        return false;
    }

    private static int runAndReport(
        final CommandSpec spec,
        final BenchOptions.Results report,
        final ChainedOptionsBuilder options,
        final List<String> forkedJvmArgs) throws IOException
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PrintWriter err = spec.commandLine().getErr();
        final PerfRun run = PerfRun.start(report.dir(), Path.of("").toAbsolutePath(),
            commandLineText(spec.commandLine().getParseResult().originalArgs()));
        options.resultFormat(ResultFormatType.JSON).result(run.jsonFile().toString());
        out.println("tidemark-bench: report directory " + run.directory().toAbsolutePath());
        out.flush();

        int exitCode = 0;
        try
        {
            new Runner(options.build()).run();
        }
        catch (final RunnerException ex)
        {
            err.println("tidemark-bench: the JMH run failed: " + ex.getMessage());
            exitCode = 1;
        }
        final List<JmhSummary.Row> rows = run.finish(forkedJvmArgs);

        out.println();
        out.println(JmhSummary.table(rows));
        out.println("Report: " + run.summaryFile().toAbsolutePath());
        out.println("        " + run.jsonFile().toAbsolutePath());
        out.println("        " + run.envFile().toAbsolutePath());
        out.flush();
        return rows.isEmpty() ? Math.max(exitCode, 1) : exitCode;
    }

    /**
     * @param args the original arguments.
     * @return the command line as a shell would take it back (arguments quoted where needed).
     */
    public static String commandLineText(final List<String> args)
    {
        final StringBuilder text = new StringBuilder("tidemark-bench");
        for (final String arg : args)
        {
            text.append(' ');
            if (!arg.isEmpty() && arg.matches("[A-Za-z0-9_./=:,@%+-]+"))
            {
                text.append(arg);
            }
            else
            {
                text.append('\'').append(arg.replace("'", "'\\''")).append('\'');
            }
        }
        return text.toString();
    }

    /** Reads JMH durations such as {@code 1s}, {@code 500ms}. */
    static final class TimeValueConverter implements CommandLine.ITypeConverter<TimeValue>
    {
        @Override
        public TimeValue convert(final String value)
        {
            try
            {
                return TimeValue.fromString(value);
            }
            catch (final IllegalArgumentException ex)
            {
                throw new CommandLine.TypeConversionException("not a duration (e.g. 1s, 500ms): " + value);
            }
        }
    }
}
