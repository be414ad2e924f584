package io.tidemark.bench.report;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordedThread;
import jdk.jfr.consumer.RecordingFile;

import java.io.IOException;
import java.nio.file.Path;
import java.text.ParseException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A Java Flight Recorder recording of this JVM, started and stopped in process (JFR's own API, settings
 * {@code profile}: no JVM flag), and its summary: where the sampled threads spent their time (execution samples by
 * top frames), GC pauses and safepoints. What the kernel does for a thread (a page fault, writeback throttling) shows
 * as samples in the Java frame that touched the memory.
 */
public final class JfrProfile implements AutoCloseable
{
    private final Recording recording;
    private final Path file;

    private JfrProfile(final Recording recording, final Path file)
    {
        this.recording = recording;
        this.file = file;
    }

    /**
     * @param file where the recording goes when stopped.
     * @return a started recording.
     */
    public static JfrProfile start(final Path file) throws IOException
    {
        try
        {
            final Recording recording = new Recording(Configuration.getConfiguration("profile"));
            recording.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
            recording.start();
            return new JfrProfile(recording, file);
        }
        catch (final ParseException ex)
        {
            throw new IOException("JFR's profile settings do not parse", ex);
        }
    }

    /** Stop and write the recording. */
    public void stop() throws IOException
    {
        recording.stop();
        recording.dump(file);
    }

    @Override
    public void close()
    {
        recording.close();
    }

    /**
     * Print the summary of a recording made elsewhere (e.g. by {@code jcmd <pid> JFR.start}).
     *
     * @param args the recording, then optionally a thread name prefix ({@code -} or absent: every thread).
     */
    public static void main(final String[] args) throws IOException
    {
        final String thread = args.length > 1 && !"-".equals(args[1]) ? args[1] : null;
        System.out.print(summarize(Path.of(args[0]), thread, 15, 5));
    }

    /**
     * Summarise a recording.
     *
     * @param file       the recording.
     * @param threadName only samples of threads whose name starts with this (null: all threads).
     * @param top        rows per table.
     * @param depth      frames per stack row.
     * @return markdown: samples by leaf method, by top {@code depth} frames, GC pauses.
     */
    public static String summarize(final Path file, final String threadName, final int top, final int depth)
        throws IOException
    {
        final Map<String, Integer> leaves = new HashMap<>();
        final Map<String, Integer> stacks = new HashMap<>();
        final Map<String, Integer> threads = new HashMap<>();
        int samples = 0;
        long gcPauseNs = 0;
        long maxGcPauseNs = 0;
        int gcs = 0;
        long safepointNs = 0;
        int safepoints = 0;
        try (RecordingFile in = new RecordingFile(file))
        {
            while (in.hasMoreEvents())
            {
                final RecordedEvent event = in.readEvent();
                final String type = event.getEventType().getName();
                if ("jdk.ExecutionSample".equals(type))
                {
                    final RecordedThread thread = event.getThread("sampledThread");
                    final String name = null == thread ? "?" : String.valueOf(thread.getJavaName());
                    threads.merge(name, 1, Integer::sum);
                    if (null != threadName && !name.startsWith(threadName))
                    {
                        continue;
                    }
                    final RecordedStackTrace stack = event.getStackTrace();
                    if (null == stack || stack.getFrames().isEmpty())
                    {
                        continue;
                    }
                    samples++;
                    final List<RecordedFrame> frames = stack.getFrames();
                    leaves.merge(frame(frames.get(0)), 1, Integer::sum);
                    stacks.merge(frames.subList(0, Math.min(depth, frames.size())).stream().map(JfrProfile::frame)
                        .collect(Collectors.joining(" < ")), 1, Integer::sum);
                }
                else if ("jdk.GarbageCollection".equals(type))
                {
                    final long pause = event.getDuration("sumOfPauses").toNanos();
                    gcPauseNs += pause;
                    maxGcPauseNs = Math.max(maxGcPauseNs, pause);
                    gcs++;
                }
                else if ("jdk.SafepointBegin".equals(type))
                {
                    safepointNs += event.getDuration().toNanos();
                    safepoints++;
                }
            }
        }
        final StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "%d execution samples of %s; samples by thread: %s. GC: %d, pauses %.1f ms " +
            "in all, longest %.2f ms; safepoints: %d, %.1f ms in all.%n%n", samples,
            null == threadName ? "every thread" : "thread " + threadName, topOf(threads, 6), gcs, gcPauseNs / 1e6,
            maxGcPauseNs / 1e6, safepoints, safepointNs / 1e6));
        md.append("| Samples | % | Leaf frame |\n|---:|---:|---|\n");
        appendRows(md, leaves, samples, top);
        md.append("\n| Samples | % | Top frames (leaf first) |\n|---:|---:|---|\n");
        appendRows(md, stacks, samples, top);
        return md.toString();
    }

    private static String topOf(final Map<String, Integer> counts, final int n)
    {
        return counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(n)
            .map((e) -> e.getKey() + " " + e.getValue()).collect(Collectors.joining(", "));
    }

    private static void appendRows(final StringBuilder md, final Map<String, Integer> counts, final int total,
        final int top)
    {
        counts.entrySet().stream().sorted((a, b) -> b.getValue() - a.getValue()).limit(top).forEach((e) ->
            md.append(String.format(Locale.ROOT, "| %d | %.1f | `%s` |%n", e.getValue(),
                100.0 * e.getValue() / Math.max(1, total), e.getKey())));
    }

    private static String frame(final RecordedFrame frame)
    {
        final String type = frame.getMethod().getType().getName();
        return type.substring(type.lastIndexOf('.') + 1) + "." + frame.getMethod().getName() + ":" +
            frame.getLineNumber();
    }
}
