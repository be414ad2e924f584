package io.tidemark.bench.multiprocess;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Where a target's server processes spend their time during one phase: each process's CPU by thread, from
 * {@code /proc} over the measured window ({@link ProcCpu}: exact, every thread, native ones such as GC and the JIT
 * compilers included), and a JDK Flight Recorder recording of each process over the whole phase (started and stopped
 * with {@code jcmd <pid> JFR.start/JFR.stop}, settings {@code profile}; no JVM flag), summarised: execution samples
 * by thread and by method (top of stack), allocation by thread, GC pauses. The summary is a markdown file; the
 * recordings themselves are left in the run's directory (deleted with it unless kept).
 * <p>
 * Not thread-safe: one phase at a time.
 */
final class Profiler implements ThroughputPhase.Window
{
    private static final String RECORDING = "tidemark-bench";
    private static final int TOP_THREADS = 12;
    private static final int TOP_METHODS = 6;

    private final List<LoadTarget.Server> servers;
    private final Path recordings;
    private final String label;
    private final List<Map<String, Long>> threadsAtBegin = new ArrayList<>();
    private final List<Map<String, Long>> threadCpu = new ArrayList<>();
    private long beginNanos;
    private long windowNanos;
    private final List<String> problems = new ArrayList<>();

    /**
     * @param servers    the processes to profile.
     * @param recordings where the recordings go.
     * @param label      the phase, in file names: {@code <target>-<phase>}.
     */
    Profiler(final List<LoadTarget.Server> servers, final Path recordings, final String label)
    {
        this.servers = List.copyOf(servers);
        this.recordings = recordings;
        this.label = label;
    }

    /** Start a recording in every server process (before the phase). */
    void startRecordings() throws IOException
    {
        Files.createDirectories(recordings);
        final List<Process> started = new ArrayList<>();
        for (final LoadTarget.Server server : servers)
        {
            started.add(jcmd(server.pid(), "JFR.start", "name=" + RECORDING, "settings=profile",
                "filename=" + recording(server)));
        }
        await(started, "JFR.start");
    }

    /** Stop the recordings, which writes them (after the phase). */
    void stopRecordings()
    {
        final List<Process> stopped = new ArrayList<>();
        for (final LoadTarget.Server server : servers)
        {
            try
            {
                stopped.add(jcmd(server.pid(), "JFR.stop", "name=" + RECORDING));
            }
            catch (final IOException ex)
            {
                problems.add("JFR.stop " + server.name() + ": " + ex.getMessage());
            }
        }
        await(stopped, "JFR.stop");
    }

    private static Process jcmd(final long pid, final String... command) throws IOException
    {
        final List<String> line = new ArrayList<>();
        line.add(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString());
        line.add(Long.toString(pid));
        line.addAll(List.of(command));
        return new ProcessBuilder(line).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    }

    private void await(final List<Process> processes, final String what)
    {
        for (final Process process : processes)
        {
            try
            {
                if (!process.waitFor(60, TimeUnit.SECONDS))
                {
                    process.destroyForcibly();
                    problems.add(what + " did not finish within 60 s");
                }
                else if (process.exitValue() != 0)
                {
                    problems.add(what + " exited with " + process.exitValue());
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                problems.add(what + " interrupted");
            }
        }
    }

    private Path recording(final LoadTarget.Server server)
    {
        return recordings.resolve(label + "-" + server.name() + ".jfr").toAbsolutePath();
    }

    @Override
    public void begin()
    {
        beginNanos = System.nanoTime();
        threadsAtBegin.clear();
        for (final LoadTarget.Server server : servers)
        {
            threadsAtBegin.add(ProcCpu.threadNanos(server.pid()));
        }
    }

    @Override
    public void end()
    {
        windowNanos = System.nanoTime() - beginNanos;
        threadCpu.clear();
        for (int i = 0; i < servers.size(); i++)
        {
            threadCpu.add(ProcCpu.delta(threadsAtBegin.get(i), ProcCpu.threadNanos(servers.get(i).pid())));
        }
    }

    /**
     * @param title what the phase was, in words.
     * @return the summary, markdown.
     */
    String summary(final String title)
    {
        final StringBuilder md = new StringBuilder();
        md.append("## ").append(title).append("\n\n");
        for (final String problem : problems)
        {
            md.append("- profiler problem: ").append(problem).append('\n');
        }
        final double seconds = windowNanos / 1e9;
        for (int i = 0; i < servers.size(); i++)
        {
            final LoadTarget.Server server = servers.get(i);
            final Map<String, Long> threads = i < threadCpu.size() ? threadCpu.get(i) : Map.of();
            final long total = threads.values().stream().mapToLong(Long::longValue).sum();
            md.append(String.format(Locale.ROOT, "### %s (pid %d): %.1f%% of one core over the %.1f s window%n%n",
                server.name(), server.pid(), seconds > 0 ? 100.0 * total / windowNanos : Double.NaN, seconds));
            md.append("CPU by thread (from /proc; threads of one kind summed):\n\n| thread | % of one core |\n" +
                "|---|---:|\n");
            int shown = 0;
            for (final Map.Entry<String, Long> e : ProcCpu.byKind(threads).entrySet())
            {
                if (shown++ == TOP_THREADS || e.getValue() == 0)
                {
                    break;
                }
                md.append(String.format(Locale.ROOT, "| %s | %.2f |%n", e.getKey(), 100.0 * e.getValue() / windowNanos));
            }
            md.append('\n');
            md.append(jfrSummary(recording(server)));
        }
        return md.toString();
    }

    private static String jfrSummary(final Path file)
    {
        if (!Files.exists(file))
        {
            return "(no JFR recording: " + file.getFileName() + ")\n\n";
        }
        final Map<String, Integer> samplesByThread = new TreeMap<>();
        final Map<String, Map<String, Integer>> methodsByThread = new TreeMap<>();
        final Map<String, Long> allocationByThread = new TreeMap<>();
        long gcPauseNanos = 0;
        int gcs = 0;
        int samples = 0;
        try (RecordingFile recording = new RecordingFile(file))
        {
            while (recording.hasMoreEvents())
            {
                final RecordedEvent event = recording.readEvent();
                final String type = event.getEventType().getName();
                if ("jdk.ExecutionSample".equals(type))
                {
                    final String thread = threadName(event.getThread("sampledThread"));
                    samples++;
                    samplesByThread.merge(thread, 1, Integer::sum);
                    final RecordedStackTrace stack = event.getStackTrace();
                    final String top = null == stack || stack.getFrames().isEmpty() ? "?" :
                        frame(stack.getFrames().get(0));
                    methodsByThread.computeIfAbsent(thread, (t) -> new TreeMap<>()).merge(top, 1, Integer::sum);
                }
                else if ("jdk.ObjectAllocationSample".equals(type))
                {
                    allocationByThread.merge(threadName(event.getThread("eventThread")), event.getLong("weight"),
                        Long::sum);
                }
                else if ("jdk.GarbageCollection".equals(type))
                {
                    gcs++;
                    gcPauseNanos += event.getLong("sumOfPauses");
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            return "(cannot read " + file.getFileName() + ": " + ex + ")\n\n";
        }
        final StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "JFR over the whole phase: %d execution samples (Java code running), " +
            "%d GCs with %.1f ms of pauses, %.1f MB allocated (sampled estimate).%n%n", samples, gcs,
            gcPauseNanos / 1e6, allocationByThread.values().stream().mapToLong(Long::longValue).sum() / 1e6));
        if (samples > 0)
        {
            md.append("| thread | samples | share | MB allocated | hottest methods (top of stack: samples) |\n" +
                "|---|---:|---:|---:|---|\n");
            final List<Map.Entry<String, Integer>> threads = new ArrayList<>(samplesByThread.entrySet());
            threads.sort((a, b) -> Integer.compare(b.getValue(), a.getValue()));
            for (int i = 0; i < Math.min(TOP_THREADS, threads.size()); i++)
            {
                final String thread = threads.get(i).getKey();
                final int n = threads.get(i).getValue();
                md.append(String.format(Locale.ROOT, "| %s | %d | %.0f%% | %.1f | %s |%n", thread, n,
                    100.0 * n / samples, allocationByThread.getOrDefault(thread, 0L) / 1e6,
                    top(methodsByThread.get(thread))));
            }
            md.append('\n');
        }
        return md.toString();
    }

    private static String threadName(final RecordedThread thread)
    {
        if (null == thread)
        {
            return "?";
        }
        final String name = null != thread.getJavaName() ? thread.getJavaName() : thread.getOSName();
        return null == name ? "?" : name.replace('|', '/');
    }

    private static String frame(final RecordedFrame frame)
    {
        final String type = frame.getMethod().getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + frame.getMethod().getName();
    }

    private static String top(final Map<String, Integer> methods)
    {
        if (null == methods)
        {
            return "";
        }
        final List<Map.Entry<String, Integer>> list = new ArrayList<>(methods.entrySet());
        list.sort((a, b) -> Integer.compare(b.getValue(), a.getValue()));
        final List<String> parts = new ArrayList<>();
        for (int i = 0; i < Math.min(TOP_METHODS, list.size()); i++)
        {
            parts.add("`" + list.get(i).getKey().replace('|', '/') + "`: " + list.get(i).getValue());
        }
        return String.join(", ", parts);
    }

    /**
     * @return each server's CPU by kind of thread over the window, nanoseconds, for the JSON summary.
     */
    Map<String, Map<String, Long>> threadCpuByServer()
    {
        final Map<String, Map<String, Long>> all = new LinkedHashMap<>();
        for (int i = 0; i < servers.size() && i < threadCpu.size(); i++)
        {
            all.put(servers.get(i).name(), ProcCpu.byKind(threadCpu.get(i)));
        }
        return all;
    }

    /** Write a summary file. */
    static void write(final Path file, final String text) throws IOException
    {
        Files.createDirectories(file.getParent());
        Files.writeString(file, text, StandardCharsets.UTF_8);
    }
}
