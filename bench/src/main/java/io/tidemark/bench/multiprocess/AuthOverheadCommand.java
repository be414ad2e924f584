package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.BenchOptions;
import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.PerfRun;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code tidemark-bench auth-overhead}: what authenticating every message costs on the acks=all round trip across
 * processes. Three host JVMs on loopback (as {@link MultiProcessCommand} runs them), one partition with RF=3 and
 * min.insync.replicas=2, and one record at a time: a synchronous acks=all send, linger 0, from the bench JVM
 * (closed loop), whose round trip is the client's frame to the leader, the leader's fetch responses to the two
 * followers, their next fetches, and the answer: about six authenticated frames. The same measurement runs on a
 * cluster with a secret and on one with {@code cluster.insecure=true}, alternating which goes first, for
 * {@code --runs} rounds; the report gives each run's percentiles, the medians over runs and the difference.
 * <p>
 * With {@code --jfr} one more authenticated round runs after the measured ones, with the leader's JVM and this one
 * profiled (JFR, execution samples; its latencies are not compared, since the profiler costs time on one side only),
 * and the share of samples inside the HMAC is reported: where the added time goes. The cost of one tag and one check
 * alone is {@code FrameAuthenticationBenchmark} (JMH).
 */
@Command(
    name = "auth-overhead",
    mixinStandardHelpOptions = true,
    description = {
        "The acks=all round trip across processes with authenticated traffic beside the same without (insecure), " +
            "in one run: three host JVMs on loopback, RF=3, one record at a time (closed loop, linger 0). " +
            "Alternates the two clusters for --runs rounds; --jfr adds a profiled authenticated round. Writes " +
            "<results-dir>/<date>_auth-overhead-<sha>/ (summary.md, summary.json, env.txt, a latency histogram " +
            "per cluster and round, the hosts' logs) and indexes it in <results-dir>/README.md."})
public final class AuthOverheadCommand implements Callable<Integer>
{
    static final String KIND = "auth-overhead";
    private static final String TOPIC = "auth";

    @Spec
    CommandSpec spec;

    @Mixin
    BenchOptions.Results report;

    @Mixin
    BenchOptions.Runs rounds = new BenchOptions.Runs(3);

    @Option(names = "--dir", paramLabel = "DIR",
        description = "Where the clusters' temporary directories go (default: java.io.tmpdir).")
    Path dir;

    @Option(names = "--round-trips", paramLabel = "N", defaultValue = "20000",
        description = "Measured round trips per cluster and run (default: ${DEFAULT-VALUE}).")
    int roundTrips;

    @Option(names = "--warmup-round-trips", paramLabel = "N", defaultValue = "5000",
        description = "Unmeasured round trips first (default: ${DEFAULT-VALUE}).")
    int warmupRoundTrips;

    @Option(names = "--size", paramLabel = "BYTES", defaultValue = "100",
        description = "Value bytes per record (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = "--jfr", description = "After the measured rounds, one more authenticated round with the " +
        "leader's JVM and this one profiled (JFR): the share of their samples in the HMAC.")
    boolean jfr;

    @Option(names = "--host-classpath", paramLabel = "PATH",
        description = "Class path of the host JVMs (default: this JVM's, i.e. the bench jar).")
    String hostClasspath;

    /** One cluster's measurement. */
    record Measurement(int run, boolean authenticated, Histogram rtt, double hmacShareLeader,
        double hmacShareClient)
    {
        long percentileNs(final double p)
        {
            return rtt.getValueAtPercentile(p);
        }
    }

    @Override
    public Integer call() throws Exception
    {
        final int runs = rounds.runs();
        if (runs < 1 || roundTrips < 100 || warmupRoundTrips < 0 || size < RecordValues.ID_LENGTH)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), "--runs >= 1, --round-trips >= 100, " +
                "--warmup-round-trips >= 0, --size >= " + RecordValues.ID_LENGTH);
        }
        final PrintWriter out = spec.commandLine().getOut();
        // only the fields a LoopbackCluster reads matter: RF=3 on three hosts, min.insync.replicas=2, the timeouts
        final MultiProcessPlan plan = new MultiProcessPlan(List.of("tidemark"), List.of(Acks.ALL), List.of(1), 0, 0,
            1, 1, 1, 0, 0, 0, size, 1, 2, 16384, 0, 0, 32L * 1024 * 1024, 1, Map.of(),
            null == dir ? Path.of(System.getProperty("java.io.tmpdir")) : dir, false,
            null == hostClasspath ? ClusterOptions.classpathOfThisJvm() : hostClasspath, null, 90_000, 30_000,
            60_000, false).validate();
        final PerfRun perfRun = PerfRun.start(report.dir(), Path.of("").toAbsolutePath(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()), KIND);
        final Path reportDir = perfRun.directory();
        out.println("tidemark-bench: report directory " + reportDir.toAbsolutePath());
        out.flush();
        final List<Measurement> results = new ArrayList<>();
        for (int run = 1; run <= runs; run++)
        {
            final boolean[] order = run % 2 == 1 ? new boolean[]{ true, false } : new boolean[]{ false, true };
            for (final boolean authenticated : order)
            {
                final Measurement m = measure(plan, reportDir, run, authenticated, false, out);
                results.add(m);
                perfRun.writeHgrm((authenticated ? "authenticated" : "insecure") + "-run" + run + ".hgrm", m.rtt(),
                    1000.0);
                out.println(String.format(Locale.ROOT, "  run %d %-13s p50 %7.1f us  p90 %7.1f us  p99 %7.1f us",
                    run, authenticated ? "authenticated" : "insecure", m.percentileNs(50) / 1e3,
                    m.percentileNs(90) / 1e3, m.percentileNs(99) / 1e3));
                out.flush();
            }
        }
        final Measurement profiled = jfr ? measure(plan, reportDir, runs + 1, true, true, out) : null;
        if (null != profiled)
        {
            out.println(String.format(Locale.ROOT, "  profiled round: HMAC %.2f %% of the leader's samples, %.2f %% " +
                "of this JVM's", 100 * profiled.hmacShareLeader(), 100 * profiled.hmacShareClient()));
            out.flush();
        }
        final Map<String, String> env = Environment.describe(perfRun.facts(), List.of(String.join(" ",
            io.tidemark.bench.JvmFlags.FORKED_JVM_ARGS)));
        perfRun.writeEnvironment(env);
        final String summary = summary(results, profiled, env);
        perfRun.writeSummary(summary);
        perfRun.writeJson(json(results, profiled));
        perfRun.updateIndex();
        out.println();
        out.println(summary);
        out.flush();
        return 0;
    }

    private Measurement measure(final MultiProcessPlan plan, final Path reportDir, final int run,
        final boolean authenticated, final boolean profile, final PrintWriter out) throws Exception
    {
        final String name = (authenticated ? "authenticated" : "insecure") + (profile ? "-profiled" : "-run" + run);
        Files.createDirectories(plan.workDir());
        final Path runDir = Files.createTempDirectory(plan.workDir(), "tidemark-auth-overhead-");
        final Histogram rtt = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        double leaderShare = Double.NaN;
        double clientShare = Double.NaN;
        try (LoopbackCluster cluster = LoopbackCluster.create(runDir, plan, reportDir.resolve("hosts-" + name),
            !authenticated))
        {
            cluster.start(out);
            final TidemarkClient client = cluster.client();
            client.createTopic(TOPIC, 1, LoopbackCluster.HOSTS, plan.startTimeoutMs());
            if (!cluster.awaitFullIsr(TOPIC, 1, plan.startTimeoutMs()))
            {
                throw new IllegalStateException("the ISR did not fill: " + client.partitions(TOPIC));
            }
            final byte[] value = new byte[size];
            try (Producer producer = new Producer(client, new ProducerContext().acks(Acks.ALL).lingerMs(0)
                .enableIdempotence(true)))
            {
                final ProducerRecord record = new ProducerRecord().topic(TOPIC).partition(0);
                for (int i = 0; i < warmupRoundTrips; i++)
                {
                    producer.send(record.value(value));
                }
                final Profile profiler = profile ?
                    Profile.start(cluster.hostPid(client.partitions(TOPIC).get(0).leader()), reportDir, name) : null;
                for (int i = 0; i < roundTrips; i++)
                {
                    final long start = System.nanoTime();
                    producer.send(record.value(value));
                    rtt.recordValue(Math.min(System.nanoTime() - start, rtt.getHighestTrackableValue()));
                }
                if (null != profiler)
                {
                    final double[] shares = profiler.stop();
                    leaderShare = shares[0];
                    clientShare = shares[1];
                }
            }
        }
        return new Measurement(run, authenticated, rtt, leaderShare, clientShare);
    }

    private Map<String, Object> json(final List<Measurement> results, final Measurement profiled)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", KIND);
        root.put("allVerified", true); // every round trip was acknowledged (a failed send ends the run)
        root.put("targets", List.of());
        root.put("roundTrips", roundTrips);
        root.put("warmupRoundTrips", warmupRoundTrips);
        root.put("recordSize", size);
        final List<Object> list = new ArrayList<>();
        for (final Measurement m : results)
        {
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("run", m.run());
            one.put("cluster", m.authenticated() ? "authenticated" : "insecure");
            final Map<String, Object> micros = new LinkedHashMap<>();
            for (final double p : new double[]{50, 90, 99, 99.9})
            {
                micros.put("p" + p, m.percentileNs(p) / 1e3);
            }
            micros.put("mean", m.rtt().getMean() / 1e3);
            micros.put("max", m.rtt().getMaxValue() / 1e3);
            one.put("roundTripMicros", micros);
            list.add(one);
        }
        root.put("measurements", list);
        root.put("medianP50MicrosAuthenticated", median(results, true, 50) / 1e3);
        root.put("medianP50MicrosInsecure", median(results, false, 50) / 1e3);
        if (null != profiled)
        {
            root.put("hmacShareOfLeaderSamples", profiled.hmacShareLeader());
            root.put("hmacShareOfClientSamples", profiled.hmacShareClient());
        }
        return root;
    }

    private String summary(final List<Measurement> results, final Measurement profiled, final Map<String, String> env)
    {
        final StringBuilder s = new StringBuilder();
        s.append("# Authentication overhead on the acks=all round trip across processes\n\n");
        s.append("- Date: ").append(env.get("date")).append('\n');
        s.append("- Command: `").append(env.get("command")).append("`\n\n");
        s.append("Three host JVMs on loopback UDP (Aeron), one partition, RF=3, min.insync.replicas=2; the bench JVM ")
            .append("sends one ").append(size).append("-byte record at a time (synchronous acks=all, linger 0, ")
            .append("idempotent) and times each round trip: ").append(roundTrips).append(" measured after ")
            .append(warmupRoundTrips).append(" unmeasured, per cluster and run. `authenticated`: a cluster secret, ")
            .append("every frame tagged (HMAC-SHA256, truncated to 16 bytes) and checked; `insecure`: ")
            .append("`cluster.insecure=true`, the same frames without the tag. The two alternate (run 1 ")
            .append("authenticated first, run 2 insecure first, ...).\n\n");
        s.append("Machine: ").append(env.get("cpu.model")).append(", ").append(env.get("cpu.logical"))
            .append(" logical CPUs, ").append(env.get("memory.total")).append("; ").append(env.get("jdk.version"))
            .append("; load average ").append(env.get("loadavg.start")).append(" at the start, ")
            .append(env.get("loadavg.end")).append(" at the end (the machine is shared: other builds run ")
            .append("beside). Full description: `env.txt`.\n\n");
        s.append("| run | cluster | p50 (us) | p90 (us) | p99 (us) | p99.9 (us) | mean (us) |\n");
        s.append("|---|---|---|---|---|---|---|\n");
        for (final Measurement m : results)
        {
            s.append(String.format(Locale.ROOT, "| %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f |%n", m.run(),
                m.authenticated() ? "authenticated" : "insecure", m.percentileNs(50) / 1e3,
                m.percentileNs(90) / 1e3, m.percentileNs(99) / 1e3, m.percentileNs(99.9) / 1e3,
                m.rtt().getMean() / 1e3));
        }
        final double authP50 = median(results, true, 50);
        final double insecureP50 = median(results, false, 50);
        final double authP99 = median(results, true, 99);
        final double insecureP99 = median(results, false, 99);
        s.append(String.format(Locale.ROOT, "%nMedian over runs: p50 %.1f us authenticated, %.1f us insecure " +
            "(difference %+.1f us, %+.1f %%); p99 %.1f us and %.1f us (%+.1f us).%n", authP50 / 1e3,
            insecureP50 / 1e3, (authP50 - insecureP50) / 1e3, 100 * (authP50 - insecureP50) / insecureP50,
            authP99 / 1e3, insecureP99 / 1e3, (authP99 - insecureP99) / 1e3));
        s.append(String.format(Locale.ROOT, "Spread of the run medians (p50): authenticated %.1f to %.1f us, " +
            "insecure %.1f to %.1f us.%n", extreme(results, true, false) / 1e3, extreme(results, true, true) / 1e3,
            extreme(results, false, false) / 1e3, extreme(results, false, true) / 1e3));
        if (null != profiled)
        {
            s.append(String.format(Locale.ROOT, "%nWhere the time goes (a further authenticated round under JFR, " +
                "latencies not compared): %.2f %% of the leader JVM's execution samples and %.2f %% of this " +
                "JVM's have the HMAC (HmacSha256 or the JDK's SHA-256) on the stack; recordings " +
                "`profile-leader-authenticated-profiled.jfr` and `profile-client-authenticated-profiled.jfr`.%n",
                100 * profiled.hmacShareLeader(), 100 * profiled.hmacShareClient()));
        }
        s.append("\nThe cost of one tag and one check alone: `java -jar bench/target/tidemark-bench.jar jmh-quick " +
            "--include FrameAuthenticationBenchmark`.\n");
        return s.toString();
    }

    private static double median(final List<Measurement> results, final boolean authenticated, final double p)
    {
        final List<Long> values = results.stream().filter((m) -> m.authenticated() == authenticated)
            .map((m) -> m.percentileNs(p)).sorted().toList();
        final int n = values.size();
        return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2.0;
    }

    private static double extreme(final List<Measurement> results, final boolean authenticated, final boolean max)
    {
        final java.util.stream.LongStream values = results.stream().filter((m) -> m.authenticated() == authenticated)
            .mapToLong((m) -> m.percentileNs(50));
        return max ? values.max().orElse(0) : values.min().orElse(0);
    }

    /** JFR recordings of the leader's JVM (by jcmd) and this one, and the share of their samples in the HMAC. */
    private static final class Profile
    {
        private final long pid;
        private final Path leaderFile;
        private final Path clientFile;
        private final jdk.jfr.Recording recording;

        private Profile(final long pid, final Path leaderFile, final Path clientFile, final jdk.jfr.Recording recording)
        {
            this.pid = pid;
            this.leaderFile = leaderFile;
            this.clientFile = clientFile;
            this.recording = recording;
        }

        static Profile start(final long pid, final Path reportDir, final String name) throws Exception
        {
            final Path leaderFile = reportDir.resolve("profile-leader-" + name + ".jfr").toAbsolutePath();
            final Path clientFile = reportDir.resolve("profile-client-" + name + ".jfr").toAbsolutePath();
            jcmd(pid, "JFR.start", "name=auth", "settings=profile", "filename=" + leaderFile);
            final jdk.jfr.Recording recording = new jdk.jfr.Recording(jdk.jfr.Configuration.getConfiguration(
                "profile"));
            recording.start();
            return new Profile(pid, leaderFile, clientFile, recording);
        }

        double[] stop() throws Exception
        {
            recording.stop();
            recording.dump(clientFile);
            recording.close();
            jcmd(pid, "JFR.stop", "name=auth");
            return new double[]{ hmacShare(leaderFile), hmacShare(clientFile) };
        }

        private static void jcmd(final long pid, final String... args) throws Exception
        {
            final List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
            command.add(Long.toString(pid));
            command.addAll(List.of(args));
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0)
            {
                throw new IllegalStateException("jcmd " + String.join(" ", args) + " failed: " + output);
            }
        }

        /** @return the share of execution samples with a frame of the HMAC (ours or the JDK's SHA-256) on the stack. */
        private static double hmacShare(final Path file) throws IOException
        {
            long total = 0;
            long hmac = 0;
            for (final jdk.jfr.consumer.RecordedEvent event : jdk.jfr.consumer.RecordingFile.readAllEvents(file))
            {
                if (!"jdk.ExecutionSample".equals(event.getEventType().getName()) || null == event.getStackTrace())
                {
                    continue;
                }
                total++;
                for (final jdk.jfr.consumer.RecordedFrame frame : event.getStackTrace().getFrames())
                {
                    final String type = frame.getMethod().getType().getName();
                    if (type.equals("io.tidemark.aeron.HmacSha256") || type.startsWith("sun.security.provider.SHA") ||
                        type.startsWith("sun.security.provider.DigestBase"))
                    {
                        hmac++;
                        break;
                    }
                }
            }
            return total == 0 ? Double.NaN : (double)hmac / total;
        }
    }
}
