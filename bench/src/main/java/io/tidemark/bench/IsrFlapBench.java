package io.tidemark.bench;

import io.tidemark.bench.harness.IsrFlapRun;
import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.replication.ReplicationContext;
import io.tidemark.replication.ReplicationError;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.ToDoubleFunction;

/**
 * {@code tidemark-bench isr-flap}: the cost of {@code replica.lag.max.messages} (issue 21). acks=all writes in bursts,
 * RF=3, {@code min.insync.replicas=2}, one partition, the count rule off and on, runs interleaved (off, on, off, on,
 * ...); per run the ISR changes per burst, the time the ISR spent below min.insync.replicas, the requests that failed,
 * and the latency of the acknowledged ones from their burst's due time; every acknowledged record verified. Writes
 * {@code <results-dir>/<date>_isr-flap-<sha>/}.
 */
@Command(
    name = "isr-flap",
    mixinStandardHelpOptions = true,
    description = {"acks=all writes in bursts (RF=3, min.insync.replicas=2, one partition) with " +
        "replica.lag.max.messages off and on, runs interleaved: ISR changes per burst, time below min.insync, " +
        "failed requests, p50/p99/p99.9 latency of the acknowledged ones from their burst's due time. Writes " +
        "<results-dir>/<date>_isr-flap-<sha>/."})
public final class IsrFlapBench implements Callable<Integer>
{
    /** The report directory's kind: {@code <date>_isr-flap-<sha>}. */
    static final String KIND = "isr-flap";

    @Spec
    CommandSpec spec;

    @Mixin
    BenchOptions.Results report;

    @Mixin
    BenchOptions.Window window;

    @Mixin
    BenchOptions.Runs runs = new BenchOptions.Runs(3);

    @Option(names = "--work-dir", paramLabel = "DIR",
        description = "Where the temporary logs go (default: java.io.tmpdir).")
    Path workDir;

    @Option(names = "--lag-max-messages", paramLabel = "N", defaultValue = "1000",
        description = "replica.lag.max.messages of the 'on' cell (default: ${DEFAULT-VALUE}); the 'off' cell has 0.")
    long lagMaxMessages;

    @Option(names = "--burst", paramLabel = "RECORDS", defaultValue = "50000",
        description = "Records per burst (default: ${DEFAULT-VALUE}), queued at once in requests of --batch.")
    int burstRecords;

    @Option(names = "--interval", paramLabel = "TIME", defaultValue = "1s", converter = Durations.class,
        description = "Time between two bursts (default: ${DEFAULT-VALUE}).")
    long intervalMs;

    @Option(names = "--batch", paramLabel = "N", defaultValue = "64",
        description = "Records per request (default: ${DEFAULT-VALUE}).")
    int batch;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100",
        description = "Value bytes per record (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--jit-warmup", paramLabel = "TIME", defaultValue = "3s", converter = Durations.class,
        description = "An unreported run of the 'on' cell first, for the JIT (default: ${DEFAULT-VALUE}; 0 to skip).")
    long jitWarmupMs;

    @Option(names = "--threading", paramLabel = "MODE", defaultValue = "PER_HOST",
        description = "Replication agent threading, busy-spinning when idle (default: ${DEFAULT-VALUE}: one thread " +
            "per host, as hosts in processes of their own; in SHARED one thread runs leader and followers in turn, " +
            "so a follower is never more than one duty cycle behind and the count rule cannot fire).")
    ReplicationContext.ThreadingMode threading;

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final PerfRun perfRun = PerfRun.start(report.dir(), Path.of("").toAbsolutePath(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()), KIND);
        final Path reportDir = perfRun.directory();
        final Path work = null == workDir ? Path.of(System.getProperty("java.io.tmpdir")) : workDir;
        final IsrFlapRun cell = new IsrFlapRun(work, threading, size, batch, burstRecords, intervalMs * 1_000_000L);
        out.println("tidemark-bench isr-flap: " + reportDir);
        out.flush();
        if (jitWarmupMs > 0)
        {
            cell.run(lagMaxMessages, 0, jitWarmupMs * 1_000_000L);
        }
        final List<IsrFlapRun.Result> results = new ArrayList<>();
        for (int run = 1; run <= runs.runs(); run++)
        {
            for (final long lag : new long[]{ 0, lagMaxMessages })
            {
                final IsrFlapRun.Result result = cell.run(lag, window.warmupMs() * 1_000_000L,
                    window.durationMs() * 1_000_000L);
                results.add(result);
                out.println(line(run, result));
                out.flush();
                perfRun.writeHgrm(name(lag) + "-run" + run + ".hgrm", result.latency(), 1000.0);
            }
        }
        final Map<String, String> env = Environment.describe(perfRun.facts(), List.of("(in process)"));
        perfRun.writeEnvironment(env);
        perfRun.writeSummary(markdown(env, results));
        perfRun.writeJson(json(results));
        perfRun.updateIndex();
        out.println("wrote " + reportDir.resolve(PerfRun.SUMMARY_FILE));
        return results.stream().allMatch((r) -> null == r.problem()) ? 0 : 1;
    }

    private static String name(final long lag)
    {
        return lag == 0 ? "rule-off" : "rule-" + lag;
    }

    private static String line(final int run, final IsrFlapRun.Result r)
    {
        return String.format(Locale.ROOT, "run %d %-10s bursts %3d  ISR changes %4d (%.2f per burst)  below " +
            "min.insync %5d ms  failed %d of %d requests %s  p50 %.0f us  p99 %.0f us  p99.9 %.0f us  cpus %.2f  " +
            "load %.1f  %s", run, name(r.lagMaxMessages()), r.bursts(), r.isrShrinks() + r.isrExpansions(),
            r.changesPerBurst(), r.msBelowMinInsync(), r.failed(), r.requestsSent(), failures(r),
            micros(r.latency(), 50), micros(r.latency(), 99), micros(r.latency(), 99.9), r.cpus(), r.load1(),
            null == r.problem() ? "verified" : "FAILED: " + r.problem());
    }

    private static String failures(final IsrFlapRun.Result r)
    {
        final StringBuilder text = new StringBuilder();
        for (final Map.Entry<ReplicationError, Long> e : r.outcomes().entrySet())
        {
            if (e.getKey() != ReplicationError.NONE)
            {
                text.append(text.length() == 0 ? "(" : ", ").append(e.getKey()).append(' ').append(e.getValue());
            }
        }
        return text.length() == 0 ? "" : text.append(')').toString();
    }

    private static double micros(final Histogram h, final double percentile)
    {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e3;
    }

    private String markdown(final Map<String, String> env, final List<IsrFlapRun.Result> results)
    {
        final StringBuilder md = new StringBuilder();
        md.append("# ISR flap: replica.lag.max.messages off and on\n\n");
        md.append("- Date: ").append(env.get("date")).append('\n');
        md.append("- Command: `").append(env.get("command")).append("`\n");
        md.append("- Machine: ").append(env.get("cpu.model")).append(", ").append(env.get("cpu.logical"))
            .append(" logical CPUs, ").append(env.get("memory.total")).append("; ").append(env.get("jdk.version"))
            .append("; load ").append(env.get("loadavg.start")).append(" at the start, ").append(env.get("loadavg.end"))
            .append(" at the end (env.txt)\n");
        md.append(String.format(Locale.ROOT, "- Cell: acks=all, RF=3, min.insync.replicas=2, one partition, %s " +
            "threading; bursts of %,d records of %d B every %d ms, in requests of %d records queued at once; the " +
            "replication defaults otherwise (replica.lag.time.max.ms=1000: ISR checked every 125 ms); %d s " +
            "windows after %d s of warm-up; runs interleaved.%n%n", threading, burstRecords, size, intervalMs, batch,
            window.durationMs() / 1000, window.warmupMs() / 1000));
        md.append("Latency: from the moment a request's burst was due to its acknowledgement, acknowledged requests " +
            "only (failed ones are counted apart). ISR changes: shrinks and expansions the controller committed at " +
            "the leader's request. Below min.insync: milliseconds in which the controller's ISR had one member " +
            "(sampled every millisecond).\n\n");
        md.append("| Cell | Run | Bursts | ISR changes | per burst | ms below min.insync | failed requests | " +
            "p50 us | p99 us | p99.9 us | max us | records/s | CPUs | load | verified |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < results.size(); i++)
        {
            final IsrFlapRun.Result r = results.get(i);
            md.append(String.format(Locale.ROOT, "| %s | %d | %d | %d | %.2f | %d | %d of %d %s | %.0f | %.0f | %.0f " +
                "| %.0f | %.0f | %.2f | %.1f | %s |%n", name(r.lagMaxMessages()), i / 2 + 1, r.bursts(),
                r.isrShrinks() + r.isrExpansions(), r.changesPerBurst(), r.msBelowMinInsync(), r.failed(),
                r.requestsSent(), failures(r), micros(r.latency(), 50), micros(r.latency(), 99),
                micros(r.latency(), 99.9), r.latency().getTotalCount() == 0 ? Double.NaN :
                r.latency().getMaxValue() / 1e3, r.recordsPerSecond(), r.cpus(), r.load1(),
                null == r.problem() ? "yes" : "**no**: " + r.problem()));
        }
        md.append("\n## Medians (min-max) over the runs\n\n");
        md.append("| Cell | ISR changes per burst | ms below min.insync | failed requests | p99 us | p99.9 us |\n");
        md.append("|---|---|---|---|---|---|\n");
        for (final long lag : new long[]{ 0, lagMaxMessages })
        {
            final List<IsrFlapRun.Result> cell = results.stream().filter((r) -> r.lagMaxMessages() == lag).toList();
            md.append("| ").append(name(lag)).append(" | ").append(spread(cell, IsrFlapRun.Result::changesPerBurst))
                .append(" | ").append(spread(cell, (r) -> r.msBelowMinInsync())).append(" | ")
                .append(spread(cell, (r) -> r.failed())).append(" | ")
                .append(spread(cell, (r) -> micros(r.latency(), 99))).append(" | ")
                .append(spread(cell, (r) -> micros(r.latency(), 99.9))).append(" |\n");
        }
        return md.toString();
    }

    private static String spread(final List<IsrFlapRun.Result> cell, final ToDoubleFunction<IsrFlapRun.Result> f)
    {
        final double[] values = cell.stream().mapToDouble(f).sorted().toArray();
        if (values.length == 0)
        {
            return "-";
        }
        final double median = values.length % 2 == 1 ? values[values.length / 2] :
            (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
        return values.length < 3 ? String.format(Locale.ROOT, "%.2f", median) :
            String.format(Locale.ROOT, "%.2f (%.2f-%.2f)", median, values[0], values[values.length - 1]);
    }

    private Map<String, Object> json(final List<IsrFlapRun.Result> results)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", "isr-flap");
        root.put("allVerified", results.stream().allMatch((r) -> null == r.problem()));
        root.put("targets", List.of());
        root.put("burstRecords", burstRecords);
        root.put("intervalMs", intervalMs);
        root.put("batchRecords", batch);
        root.put("messageSize", size);
        final List<Object> runsJson = new ArrayList<>();
        for (int i = 0; i < results.size(); i++)
        {
            final IsrFlapRun.Result r = results.get(i);
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("replicaLagMaxMessages", r.lagMaxMessages());
            one.put("run", i / 2 + 1);
            one.put("bursts", r.bursts());
            one.put("isrShrinks", r.isrShrinks());
            one.put("isrExpansions", r.isrExpansions());
            one.put("msBelowMinInsync", r.msBelowMinInsync());
            one.put("requests", r.requestsSent());
            final Map<String, Object> outcomes = new LinkedHashMap<>();
            r.outcomes().forEach((k, v) -> outcomes.put(k.name(), v));
            one.put("outcomes", outcomes);
            final Map<String, Object> micros = new LinkedHashMap<>();
            for (final double p : new double[]{ 50, 99, 99.9 })
            {
                micros.put("p" + p, micros(r.latency(), p));
            }
            one.put("latencyMicros", micros);
            one.put("recordsPerSecond", r.recordsPerSecond());
            one.put("cpus", r.cpus());
            one.put("load1", r.load1());
            one.put("verified", null == r.problem());
            if (null != r.problem())
            {
                one.put("problem", r.problem());
            }
            runsJson.add(one);
        }
        root.put("runs", runsJson);
        return root;
    }
}
