package io.tidemark.bench.peer;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.BenchOptions;
import io.tidemark.bench.JvmFlags;
import io.tidemark.bench.report.Environment;
import io.tidemark.bench.report.PerfRun;
import org.HdrHistogram.Histogram;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * {@code tidemark-bench writer}: the single writer's append latency, at fixed rates and closed loop, on a disk file
 * system and on tmpfs, for Tidemark with its defaults, Tidemark with {@code dirty.bytes.max} of 4 MiB, and Chronicle
 * Queue, each cell in a JVM of its own ({@link WriterMain}), with the machine's state beside every figure; plus the
 * disk's sequential write bandwidth measured in the same run, and JFR profiles of the cells of the first run.
 * Writes {@code perf-results/<date>_writer-<sha>/}.
 */
@Command(
    name = "writer",
    mixinStandardHelpOptions = true,
    description = {
        "Single-writer append latency at fixed rates and closed loop, on a disk and on tmpfs, Tidemark with and " +
            "without dirty.bytes.max beside Chronicle Queue, each cell in its own JVM, with load, the JVM's CPU " +
            "and the page cache's dirty pages before and after every window; the disk's sequential write " +
            "bandwidth in the same run; JFR profiles of the first run. Writes perf-results/<date>_writer-<sha>/."})
public final class WriterBench implements Callable<Integer>
{
    /** The report directory's kind: {@code <date>_writer-<sha>}. */
    static final String KIND = "writer";

    @Spec
    CommandSpec spec;

    @Mixin
    BenchOptions.Results report = new BenchOptions.Results("perf-results");

    @Mixin
    BenchOptions.Window window;

    @Mixin
    BenchOptions.Runs runs;

    @Option(names = "--disk-dir", paramLabel = "DIR",
        description = "A directory on the disk file system (default: java.io.tmpdir).")
    Path diskDir;

    @Option(names = "--tmpfs-dir", paramLabel = "DIR", defaultValue = "/dev/shm",
        description = "A directory on tmpfs (default: ${DEFAULT-VALUE}); empty to skip tmpfs.")
    String tmpfsDir;

    @Option(names = "--peers", split = ",", paramLabel = "LIST",
        defaultValue = "tidemark,tidemark-dirty,chronicle",
        description = "Peers, in order (default: ${DEFAULT-VALUE}).")
    List<String> peers = new ArrayList<>();

    @Option(names = "--rates", split = ",", paramLabel = "LIST", defaultValue = "100000,1000000,0",
        description = "Records/s of each window; 0 is closed loop (default: ${DEFAULT-VALUE}).")
    List<Long> rates = new ArrayList<>();

    @Option(names = "--sizes", split = ",", paramLabel = "LIST", defaultValue = "100",
        description = "Record value bytes; several sizes measure what the bytes per record cost (the framing " +
            "study: a smaller value stands for the same value with less framing) (default: ${DEFAULT-VALUE}).")
    List<Integer> sizes = new ArrayList<>();

    @Option(names = "--bandwidth-bytes", paramLabel = "BYTES", defaultValue = "2147483648",
        description = "Bytes of the disk bandwidth probe, 0 to skip (default: ${DEFAULT-VALUE}).")
    long bandwidthBytes;

    @Option(names = "--jfr", negatable = true, defaultValue = "true",
        description = "JFR profile of each cell's window in the first run (default: ${DEFAULT-VALUE}).")
    boolean jfr;

    /** One measured cell. */
    record Cell(String fs, long rate, String peer, int size, int run, Properties result)
    {
        boolean ok()
        {
            return "ok".equals(result.getProperty("status"));
        }

        Histogram latency()
        {
            return PeerMain.decode(result.getProperty("latency"));
        }

        double number(final String key)
        {
            return Double.parseDouble(result.getProperty(key, "NaN"));
        }
    }

    @Override
    public Integer call() throws Exception
    {
        final PrintWriter out = spec.commandLine().getOut();
        final Path disk = null == diskDir ? Path.of(System.getProperty("java.io.tmpdir")) : diskDir;
        final Map<String, Path> fileSystems = new LinkedHashMap<>();
        fileSystems.put(Environment.fileSystem(disk).split(" ")[0], disk);
        if (!tmpfsDir.isBlank())
        {
            fileSystems.put("tmpfs", Path.of(tmpfsDir));
        }
        final PerfRun perfRun = PerfRun.start(report.dir(), Path.of("").toAbsolutePath(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()), KIND);
        final Path reportDir = perfRun.directory();
        final Path profiles = Files.createDirectories(reportDir.resolve("profiles"));
        out.println("tidemark-bench writer: " + reportDir);
        final List<double[]> bandwidth = new ArrayList<>();
        if (bandwidthBytes > 0)
        {
            bandwidth.add(diskBandwidth(disk, bandwidthBytes));
            out.printf(Locale.ROOT, "disk bandwidth: %.0f MB/s written and fsynced (%.0f MB/s into the page cache)%n",
                bandwidth.get(0)[0], bandwidth.get(0)[1]);
        }
        final List<Cell> cells = new ArrayList<>();
        for (int run = 1; run <= runs.runs(); run++)
        {
            for (final Map.Entry<String, Path> fs : fileSystems.entrySet())
            {
                for (final long rate : rates)
                {
                    for (final int size : sizes)
                    {
                        for (final String peer : peers)
                        {
                            final String name = fs.getKey() + "-" + (rate == 0 ? "closed" : rate) + "-" + peer +
                                (size == sizes.get(0) ? "" : "-" + size + "B");
                            final Path jfrFile = jfr && run == 1 ? profiles.resolve(name + ".jfr") : null;
                            final Properties result = fork(peer, size, rate, fs.getValue(), jfrFile);
                            final Cell cell = new Cell(fs.getKey(), rate, peer, size, run, result);
                            cells.add(cell);
                            out.println(line(cell));
                            out.flush();
                            if (null != jfrFile && result.containsKey("jfr.summary"))
                            {
                                Files.writeString(profiles.resolve(name + ".md"), "# JFR: " + name +
                                    ", writer thread\n\n" + result.getProperty("jfr.summary"), StandardCharsets.UTF_8);
                                Files.deleteIfExists(jfrFile); // the summary stays; recordings are large
                            }
                            if (cell.ok())
                            {
                                perfRun.writeHgrm(name + "-run" + run + ".hgrm", cell.latency(), 1000.0);
                            }
                        }
                    }
                }
            }
        }
        if (bandwidthBytes > 0)
        {
            bandwidth.add(diskBandwidth(disk, bandwidthBytes));
        }
        final Map<String, String> facts = perfRun.facts();
        final Map<String, String> env = Environment.describe(facts,
            List.of(String.join(" ", JvmFlags.FORKED_JVM_ARGS)));
        for (final Map.Entry<String, Path> fs : fileSystems.entrySet())
        {
            env.put("fs." + fs.getKey(), fs.getValue() + ": " + Environment.fileSystem(fs.getValue()));
        }
        env.put("vm.dirty", sysctl("dirty_background_ratio") + "% background, " + sysctl("dirty_ratio") +
            "% throttle, expire " + sysctl("dirty_expire_centisecs") + " cs");
        perfRun.writeEnvironment(env);
        perfRun.writeSummary(WriterReport.markdown(env, cells, bandwidth, fileSystems.keySet(), peers, rates, sizes));
        perfRun.writeJson(json(cells));
        perfRun.updateIndex();
        out.println("wrote " + reportDir.resolve(PerfRun.SUMMARY_FILE));
        return cells.stream().allMatch(Cell::ok) ? 0 : 1;
    }

    private static Map<String, Object> json(final List<Cell> cells)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", "writer");
        root.put("allVerified", cells.stream().allMatch(Cell::ok));
        root.put("targets", List.of());
        final List<Object> list = new ArrayList<>();
        for (final Cell cell : cells)
        {
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("fs", cell.fs());
            one.put("rate", cell.rate());
            one.put("peer", cell.peer());
            one.put("size", cell.size());
            one.put("run", cell.run());
            one.put("ok", cell.ok());
            if (cell.ok())
            {
                final Histogram h = cell.latency();
                one.put("recordsPerSecond", cell.number("records.per.second"));
                final Map<String, Object> micros = new LinkedHashMap<>();
                for (final double p : new double[]{50, 99, 99.9, 99.99})
                {
                    micros.put("p" + p, h.getValueAtPercentile(p) / 1e3);
                }
                micros.put("max", h.getMaxValue() / 1e3);
                one.put("latencyMicros", micros);
                for (final String key : List.of("before.load1", "after.load1", "cpus.used", "before.dirty.kib",
                    "after.dirty.kib", "peak.dirty.kib", "before.writeback.kib", "after.writeback.kib"))
                {
                    one.put(key, cell.number(key));
                }
            }
            else
            {
                one.put("failure", cell.result().getProperty("failure", ""));
            }
            list.add(one);
        }
        root.put("cells", list);
        return root;
    }

    private static String sysctl(final String name)
    {
        try
        {
            // not Files.readString: on a sysctl file (size 0) it returns the first character only
            try (InputStream in = Files.newInputStream(Path.of("/proc/sys/vm/" + name)))
            {
                return new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim();
            }
        }
        catch (final IOException ex)
        {
            return "?";
        }
    }

    static String line(final Cell cell)
    {
        if (!cell.ok())
        {
            return cell.fs() + " " + cell.rate() + " " + cell.peer() + ": FAILED " +
                cell.result().getProperty("failure", "").lines().findFirst().orElse("");
        }
        final Histogram h = cell.latency();
        return String.format(Locale.ROOT, "%-6s %-8s %-17s %4d B %,12.0f rec/s  p50 %8.2f  p99 %8.2f  p99.99 %9.2f  max %9.2f us" +
            "  | %s", cell.fs(), cell.rate() == 0 ? "closed" : Long.toString(cell.rate()), cell.peer(), cell.size(),
            cell.number("records.per.second"), h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3,
            h.getValueAtPercentile(99.99) / 1e3, h.getMaxValue() / 1e3, WriterReport.state(cell));
    }

    private Properties fork(final String peer, final int size, final long rate, final Path workDir,
        final Path jfrFile)
        throws IOException, InterruptedException
    {
        final Path outFile = Files.createTempFile("tidemark-writer-", ".properties");
        final Path logFile = Files.createTempFile("tidemark-writer-", ".log");
        try
        {
            final List<String> command = new ArrayList<>();
            command.add(PeerRunner.currentJava().toString());
            command.addAll(JvmFlags.FORKED_JVM_ARGS);
            if (PeerMain.CHRONICLE.equals(peer))
            {
                command.addAll(JvmFlags.CHRONICLE_QUEUE_JVM_ARGS);
            }
            command.addAll(Arrays.asList("-cp", System.getProperty("java.class.path"), WriterMain.class.getName(),
                peer, Integer.toString(size), Long.toString(rate), Long.toString(window.warmupMs()),
                Long.toString(window.durationMs()),
                workDir.toAbsolutePath().toString(), null == jfrFile ? "-" : jfrFile.toAbsolutePath().toString(),
                outFile.toAbsolutePath().toString()));
            final Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(logFile.toFile()).start();
            final long budgetMs = 6 * (2 * window.warmupMs() + window.durationMs()) + 120_000;
            final Properties props = new Properties();
            if (!process.waitFor(budgetMs, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                props.setProperty("status", "failed");
                props.setProperty("failure", "no result within " + budgetMs + " ms");
                return props;
            }
            if (Files.size(outFile) > 0)
            {
                try (InputStream in = Files.newInputStream(outFile))
                {
                    props.load(in);
                }
            }
            if (!props.containsKey("status"))
            {
                props.setProperty("status", "failed");
                props.setProperty("failure", "exit " + process.exitValue() + ": " +
                    Files.readString(logFile, StandardCharsets.UTF_8));
            }
            return props;
        }
        finally
        {
            Files.deleteIfExists(outFile);
            Files.deleteIfExists(logFile);
        }
    }

    /**
     * The disk's sequential write bandwidth: {@code bytes} written in 1 MiB writes to a new file, then fsync.
     *
     * @return {MB/s including the fsync (the disk), MB/s of the writes alone (the page cache)}.
     */
    static double[] diskBandwidth(final Path dir, final long bytes) throws IOException
    {
        final Path file = Files.createTempFile(dir, "tidemark-bandwidth-", ".dat");
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            final ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            while (chunk.hasRemaining())
            {
                chunk.put((byte)'x');
            }
            final long start = System.nanoTime();
            for (long written = 0; written < bytes; written += chunk.capacity())
            {
                chunk.clear();
                while (chunk.hasRemaining())
                {
                    channel.write(chunk);
                }
            }
            final long written = System.nanoTime();
            channel.force(false);
            final long synced = System.nanoTime();
            return new double[]{bytes / 1e6 / ((synced - start) / 1e9), bytes / 1e6 / ((written - start) / 1e9)};
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }
}
