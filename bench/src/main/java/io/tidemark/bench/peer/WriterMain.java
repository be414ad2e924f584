package io.tidemark.bench.peer;

import io.tidemark.bench.report.JfrProfile;
import io.tidemark.bench.report.MachineState;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * The forked JVM of one cell of {@code tidemark-bench writer}: one single-writer {@link Peer} on one file system at
 * one load, the writer's append latency with the machine's state around it. Started like {@link PeerMain} (the one
 * JVM flag; the Chronicle Queue peer with its vendor's flags).
 * <pre>
 *   WriterMain &lt;peer&gt; &lt;size&gt; &lt;rate, 0 = closed loop&gt; &lt;warmupMs&gt; &lt;measureMs&gt; &lt;workDir&gt;
 *              &lt;jfrFile or -&gt; &lt;outFile&gt;
 * </pre>
 * Warm-up: flat out for {@code warmupMs} (JIT; on disk it also fills the page cache as a long-running writer
 * would), then at the rate for {@code warmupMs}. Measured window: at a fixed rate one append is due every
 * {@code 1/rate} s and each is timed from its due time (coordinated omission corrected); closed loop appends flat out
 * and times each call. Around the window: load average, this JVM's CPU time, Dirty and Writeback of /proc/meminfo,
 * and the peak of Dirty + Writeback sampled every 20 ms; optionally a JFR recording of the window.
 */
public final class WriterMain
{
    private WriterMain()
    {
    }

    /**
     * @param args see the class comment.
     */
    public static void main(final String[] args) throws IOException
    {
        if (args.length != 8)
        {
            System.err.println("usage: WriterMain <peer> <size> <rate> <warmupMs> <measureMs> <workDir> <jfr|-> <out>");
            System.exit(2);
        }
        final Properties result = measure(args[0], Integer.parseInt(args[1]), Long.parseLong(args[2]),
            Long.parseLong(args[3]), Long.parseLong(args[4]), Path.of(args[5]),
            "-".equals(args[6]) ? null : Path.of(args[6]));
        try (OutputStream out = Files.newOutputStream(Path.of(args[7])))
        {
            result.store(out, "tidemark-bench writer cell");
        }
        System.exit("ok".equals(result.getProperty("status")) ? 0 : 3);
    }

    static Properties measure(final String name, final int size, final long rate, final long warmupMs,
        final long measureMs, final Path workDir, final Path jfrFile)
    {
        final Properties out = new Properties();
        out.setProperty("peer", name);
        out.setProperty("java.version", System.getProperty("java.runtime.version", System.getProperty("java.version")));
        Path dir = null;
        Peer peer = null;
        try
        {
            Files.createDirectories(workDir);
            dir = Files.createTempDirectory(workDir, "tidemark-writer-" + name + "-");
            peer = PeerMain.create(name);
            peer.open(dir, size);
            PeerMain.appendFlatOut(peer, warmupMs * 1_000_000L);
            if (rate > 0)
            {
                appendAtRate(peer, rate, warmupMs * 1_000_000L, null);
            }

            final Histogram latency = new Histogram(3);
            final JfrProfile profile = null == jfrFile ? null : JfrProfile.start(jfrFile);
            final MachineState before = MachineState.now();
            final long count;
            try (MachineState.DirtySampler sampler = new MachineState.DirtySampler(20))
            {
                final long start = System.nanoTime();
                if (rate > 0)
                {
                    count = appendAtRate(peer, rate, measureMs * 1_000_000L, latency);
                    out.setProperty("records.due", Long.toString(measureMs * rate / 1000));
                }
                else
                {
                    count = appendTimed(peer, measureMs * 1_000_000L, latency);
                }
                final double seconds = (System.nanoTime() - start) / 1e9;
                final MachineState after = MachineState.now();
                out.setProperty("records.per.second", String.format(Locale.ROOT, "%.1f", count / seconds));
                out.setProperty("peak.dirty.kib", Long.toString(sampler.peakKib()));
                put(out, "before", before);
                put(out, "after", after);
                out.setProperty("cpus.used", String.format(Locale.ROOT, "%.3f", after.cpusUsedSince(before)));
            }
            if (null != profile)
            {
                profile.stop();
                profile.close();
                out.setProperty("jfr.summary", JfrProfile.summarize(jfrFile, "main", 12, 4));
            }
            out.setProperty("latency", PeerMain.encode(latency));
            out.setProperty("status", "ok");
        }
        catch (final Throwable t)
        {
            PeerMain.failed(out, t);
        }
        finally
        {
            PeerMain.closeRecording(out, peer);
            if (null != dir)
            {
                io.tidemark.bench.harness.TempDirs.deleteRecursively(dir);
            }
        }
        return out;
    }

    private static void put(final Properties out, final String prefix, final MachineState state)
    {
        out.setProperty(prefix + ".load1", Double.toString(state.load1()));
        out.setProperty(prefix + ".dirty.kib", Long.toString(state.dirtyKib()));
        out.setProperty(prefix + ".writeback.kib", Long.toString(state.writebackKib()));
    }

    /**
     * One append due every {@code 1/rate} s for {@code nanos}, each timed from its due time into {@code histogram}
     * (when not null). The window ends on time even when the writer falls behind (a machine too loaded for the rate):
     * each record due in the window but not appended by its end is recorded with the latency it had reached then, a
     * lower bound, so that falling behind shows in the percentiles rather than being left out.
     *
     * @return records appended.
     */
    static long appendAtRate(final Peer peer, final long rate, final long nanos, final Histogram histogram)
    {
        final long start = System.nanoTime();
        final long deadline = start + nanos;
        long i = 0;
        while (true)
        {
            final long due = start + i * 1_000_000_000L / rate;
            if (due >= deadline)
            {
                break;
            }
            long now = System.nanoTime();
            while (now < due)
            {
                Thread.onSpinWait();
                now = System.nanoTime();
            }
            if (now >= deadline)
            {
                break;
            }
            peer.append(due);
            i++;
            if (null != histogram)
            {
                histogram.recordValue(Math.max(0, System.nanoTime() - due));
            }
        }
        final long end = System.nanoTime();
        if (null != histogram)
        {
            for (long j = i; ; j++)
            {
                final long due = start + j * 1_000_000_000L / rate;
                if (due >= deadline)
                {
                    break;
                }
                histogram.recordValue(Math.max(0, end - due));
            }
        }
        return i;
    }

    /** @return records appended flat out for about {@code nanos}, each call timed into {@code histogram}. */
    static long appendTimed(final Peer peer, final long nanos, final Histogram histogram)
    {
        final long end = System.nanoTime() + nanos;
        long count = 0;
        long now = System.nanoTime();
        while (now < end)
        {
            peer.append(count++);
            final long after = System.nanoTime();
            histogram.recordValue(after - now);
            now = after;
        }
        return count;
    }
}
