package io.tidemark.bench.peer;

import io.tidemark.bench.JvmFlags;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * Runs a {@link PeerMain} in a forked JVM: {@code <java> --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp
 * <this JVM's class path> io.tidemark.bench.peer.PeerMain ...}: the one flag Tidemark allows. The Chronicle Queue
 * peer's JVM (Chronicle code only) also gets the flags Chronicle documents for Java 17
 * ({@link JvmFlags#CHRONICLE_QUEUE_JVM_ARGS}) unless the runner is strict. Each peer gets a JVM of its own (no JIT
 * profile or heap state shared).
 */
public final class PeerRunner
{
    private final Path workDir;
    private final String classPath;
    private final boolean chronicleStrict;

    /**
     * @param workDir         where the peers' temporary directories go.
     * @param chronicleStrict run Chronicle Queue with Tidemark's one flag only (on Java 17+ it then cannot map its
     *                        files, and the failure is the result).
     */
    public PeerRunner(final Path workDir, final boolean chronicleStrict)
    {
        this(workDir, System.getProperty("java.class.path"), chronicleStrict);
    }

    PeerRunner(final Path workDir, final String classPath, final boolean chronicleStrict)
    {
        this.workDir = workDir;
        this.classPath = classPath;
        this.chronicleStrict = chronicleStrict;
    }

    /**
     * @param javaHome a JDK or JRE home.
     * @return its {@code bin/java}.
     */
    public static Path javaIn(final Path javaHome)
    {
        return javaHome.resolve("bin").resolve("java");
    }

    /** @return this JVM's {@code java}. */
    public static Path currentJava()
    {
        return javaIn(Path.of(System.getProperty("java.home")));
    }

    /**
     * @param java         the {@code java} to run.
     * @param peer         peer name.
     * @param size         record size.
     * @param warmupMs     warm-up.
     * @param throughputMs throughput phase.
     * @param latencyMs    each latency phase.
     * @param rate         records/s of the latency phases.
     * @return the JVM's command line.
     */
    public List<String> command(final Path java, final String peer, final int size, final long warmupMs,
        final long throughputMs, final long latencyMs, final long rate, final Path outFile)
    {
        final List<String> command = new ArrayList<>();
        command.add(java.toString());
        command.addAll(JvmFlags.FORKED_JVM_ARGS);
        if (PeerMain.CHRONICLE.equals(peer) && !chronicleStrict)
        {
            command.addAll(JvmFlags.CHRONICLE_QUEUE_JVM_ARGS);
        }
        command.add("-cp");
        command.add(classPath);
        command.add(PeerMain.class.getName());
        command.add(peer);
        command.add(Integer.toString(size));
        command.add(Long.toString(warmupMs));
        command.add(Long.toString(throughputMs));
        command.add(Long.toString(latencyMs));
        command.add(Long.toString(rate));
        command.add(workDir.toAbsolutePath().toString());
        command.add(outFile.toAbsolutePath().toString());
        return command;
    }

    /**
     * Run one peer in a forked JVM.
     *
     * @return its result; a JVM that died or wrote nothing is a failed result carrying the JVM's output.
     */
    public PeerResult run(final Path java, final String peer, final int size, final long warmupMs,
        final long throughputMs, final long latencyMs, final long rate) throws IOException, InterruptedException
    {
        Files.createDirectories(workDir);
        final Path outFile = Files.createTempFile(workDir, "peer-" + peer + "-", ".properties");
        final Path logFile = Files.createTempFile(workDir, "peer-" + peer + "-", ".log");
        try
        {
            final Process process = new ProcessBuilder(
                command(java, peer, size, warmupMs, throughputMs, latencyMs, rate, outFile))
                .redirectErrorStream(true)
                .redirectOutput(logFile.toFile())
                .start();
            final long budgetMs = 4 * (warmupMs + throughputMs + 2 * latencyMs) + 60_000;
            if (!process.waitFor(budgetMs, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                return failed(java, peer, size, "the peer JVM did not finish within " + budgetMs + " ms; output:\n" +
                    Files.readString(logFile, StandardCharsets.UTF_8));
            }
            final Properties props = new Properties();
            if (Files.size(outFile) > 0)
            {
                try (InputStream in = Files.newInputStream(outFile))
                {
                    props.load(in);
                }
            }
            final String output = Files.readString(logFile, StandardCharsets.UTF_8);
            if (!props.containsKey("status"))
            {
                return failed(java, peer, size, "the peer JVM exited with " + process.exitValue() +
                    " and wrote no result; output:\n" + output);
            }
            final boolean ok = "ok".equals(props.getProperty("status"));
            return new PeerResult(peer, size, props.getProperty("java.version"), props.getProperty("java.home"),
                props.getProperty("jvm.args"), ok,
                ok ? null : props.getProperty("failure", "") + (output.isBlank() ? "" : "\nJVM output:\n" + output),
                ok ? Double.parseDouble(props.getProperty("append.records.per.second")) : Double.NaN,
                props.containsKey("append.latency") ? PeerMain.decode(props.getProperty("append.latency")) : null,
                props.containsKey("tailer.latency") ? PeerMain.decode(props.getProperty("tailer.latency")) : null,
                props.containsKey("append.service") ? PeerMain.decode(props.getProperty("append.service")) : null);
        }
        finally
        {
            Files.deleteIfExists(outFile);
            Files.deleteIfExists(logFile);
        }
    }

    private static PeerResult failed(final Path java, final String peer, final int size, final String failure)
    {
        return new PeerResult(peer, size, "unknown", java.toString(), String.join(" ", JvmFlags.FORKED_JVM_ARGS),
            false, failure, Double.NaN, null, null, null);
    }
}
