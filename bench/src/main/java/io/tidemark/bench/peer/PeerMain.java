package io.tidemark.bench.peer;

import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The forked peer JVM: measures one {@link Peer} and writes what it measured to a properties file that
 * {@link PeerRunner} reads back. Started with the one JVM flag Tidemark allows ({@code --add-exports
 * java.base/jdk.internal.misc=ALL-UNNAMED}) and nothing else.
 * <pre>
 *   PeerMain &lt;tidemark|chronicle|rawcopy&gt; &lt;size&gt; &lt;warmupMs&gt; &lt;throughputMs&gt; &lt;latencyMs&gt;
 *            &lt;rate&gt; &lt;workDir&gt; &lt;outFile&gt;
 * </pre>
 * Phases: warm-up (appends flat out, then at the rate); throughput (appends flat out for {@code throughputMs},
 * records/s); append latency (one append due every {@code 1/rate} s for {@code latencyMs}, each timed from its due
 * time, coordinated omission corrected, and the call's own duration, its service time); write-to-tailer latency (the same schedule, each record stamped with its
 * due time, a busy-polling tailer thread records {@code now - stamp} when it reads it).
 */
public final class PeerMain
{
    /** Peer names. */
    public static final String TIDEMARK = "tidemark";
    /** Peer names. */
    public static final String CHRONICLE = "chronicle";
    /** Peer names. */
    public static final String RAW_COPY = "rawcopy";
    /** Peer names: Tidemark with {@code dirty.bytes.max} of 4 MiB (the agent writes back every 2 MiB written). */
    public static final String TIDEMARK_DIRTY_BOUND = "tidemark-dirty";
    /** {@code dirty.bytes.max} of the {@link #TIDEMARK_DIRTY_BOUND} peer. */
    public static final long DIRTY_BOUND_BYTES = 4L * 1024 * 1024;

    private PeerMain()
    {
    }

    /**
     * @param args see the class comment.
     */
    public static void main(final String[] args) throws IOException
    {
        if (args.length != 8)
        {
            System.err.println("usage: PeerMain <peer> <size> <warmupMs> <throughputMs> <latencyMs> <rate> " +
                "<workDir> <outFile>");
            System.exit(2);
        }
        final Properties result = measure(args[0], Integer.parseInt(args[1]), Long.parseLong(args[2]),
            Long.parseLong(args[3]), Long.parseLong(args[4]), Long.parseLong(args[5]), Path.of(args[6]));
        try (OutputStream out = Files.newOutputStream(Path.of(args[7])))
        {
            result.store(out, "tidemark-bench peer result");
        }
        System.exit("ok".equals(result.getProperty("status")) ? 0 : 3);
    }

    /**
     * Measure a peer in this JVM.
     *
     * @return the result as properties: status (ok/failed), failure (stack trace), java.version, jvm.args,
     *         append.records.per.second, append.latency and tailer.latency (compressed histograms in ns, base64).
     */
    static Properties measure(final String name, final int size, final long warmupMs, final long throughputMs,
        final long latencyMs, final long rate, final Path workDir)
    {
        final Properties out = new Properties();
        out.setProperty("peer", name);
        out.setProperty("size", Integer.toString(size));
        out.setProperty("java.version", System.getProperty("java.runtime.version", System.getProperty("java.version")));
        out.setProperty("java.home", System.getProperty("java.home"));
        out.setProperty("jvm.args", String.join(" ", ManagementFactory.getRuntimeMXBean().getInputArguments()));
        Path dir = null;
        Peer peer = null;
        try
        {
            Files.createDirectories(workDir);
            dir = Files.createTempDirectory(workDir, "tidemark-peer-" + name + "-");
            peer = create(name);
            peer.open(dir, size);

            appendFlatOut(peer, warmupMs * 1_000_000L);
            appendAtRate(peer, rate, warmupMs * 500_000L, null, null);

            final long start = System.nanoTime();
            final long count = appendFlatOut(peer, throughputMs * 1_000_000L);
            final double seconds = (System.nanoTime() - start) / 1e9;
            out.setProperty("append.records.per.second", format(count / seconds));

            final Histogram append = new Histogram(3);
            final Histogram service = new Histogram(3);
            appendAtRate(peer, rate, latencyMs * 1_000_000L, append, service);
            out.setProperty("append.latency", encode(append));
            out.setProperty("append.service", encode(service));

            final Histogram tailer = tailerLatency(peer, rate, latencyMs * 1_000_000L);
            if (null != tailer)
            {
                out.setProperty("tailer.latency", encode(tailer));
            }
            out.setProperty("status", "ok");
        }
        catch (final Throwable t)
        {
            failed(out, t);
        }
        finally
        {
            closeRecording(out, peer);
            deleteQuietly(dir);
        }
        return out;
    }

    static Peer create(final String name)
    {
        switch (name)
        {
            case TIDEMARK: return new TidemarkPeer();
            case CHRONICLE: return new ChronicleQueuePeer();
            case RAW_COPY: return new RawCopyPeer();
            case TIDEMARK_DIRTY_BOUND: return new TidemarkPeer(DIRTY_BOUND_BYTES);
            default: throw new IllegalArgumentException("unknown peer: " + name);
        }
    }

    /** @return records appended, flat out, for about {@code nanos}. */
    static long appendFlatOut(final Peer peer, final long nanos)
    {
        final long end = System.nanoTime() + nanos;
        long count = 0;
        do
        {
            for (int i = 0; i < 256; i++)
            {
                peer.append(count++);
            }
        }
        while (System.nanoTime() < end);
        return count;
    }

    /**
     * Append one record due every {@code 1/rate} s for {@code nanos}; each append's latency, from its due time, goes
     * to {@code histogram}, and the time of the call alone to {@code service} (each when not null).
     */
    static void appendAtRate(final Peer peer, final long rate, final long nanos, final Histogram histogram,
        final Histogram service)
    {
        final long start = System.nanoTime();
        final long total = nanos * rate / 1_000_000_000L;
        for (long i = 0; i < total; i++)
        {
            final long due = start + i * 1_000_000_000L / rate;
            while (System.nanoTime() < due)
            {
                Thread.onSpinWait();
            }
            final long callStart = System.nanoTime();
            peer.append(due);
            if (null != histogram)
            {
                final long end = System.nanoTime();
                histogram.recordValue(Math.max(0, end - due));
                service.recordValue(end - callStart);
            }
        }
    }

    /**
     * Append at the rate, each record stamped with its due time, while a tailer thread records how long after its
     * due time it read each record.
     *
     * @return the histogram (ns), or null when the peer has no tailer.
     */
    static Histogram tailerLatency(final Peer peer, final long rate, final long nanos) throws InterruptedException
    {
        final Peer.Tailer tailer = peer.openTailer();
        if (null == tailer)
        {
            return null;
        }
        final Histogram histogram = new Histogram(3);
        final AtomicLong read = new AtomicLong();
        final AtomicLong stopAfter = new AtomicLong(Long.MAX_VALUE);
        final Thread reader = new Thread(() ->
        {
            long n = 0;
            final java.util.function.LongConsumer onStamp =
                (stamp) -> histogram.recordValue(Math.max(0, System.nanoTime() - stamp));
            while (n < stopAfter.get())
            {
                final int polled = tailer.poll(onStamp);
                if (polled > 0)
                {
                    n += polled;
                    read.lazySet(n);
                }
                else
                {
                    Thread.onSpinWait();
                }
            }
            read.set(n);
        }, "peer-tailer");
        reader.setDaemon(true);
        reader.start();
        final long total = nanos * rate / 1_000_000_000L;
        appendAtRate(peer, rate, nanos, null, null);
        stopAfter.set(total);
        reader.join(30_000);
        tailer.close();
        if (read.get() < total)
        {
            throw new IllegalStateException("the tailer read " + read.get() + " of " + total + " records");
        }
        return histogram;
    }

    /** Record a failed run in its result: {@code status=failed} and the stack trace. */
    static void failed(final Properties out, final Throwable t)
    {
        final StringWriter text = new StringWriter();
        t.printStackTrace(new PrintWriter(text));
        out.setProperty("status", "failed");
        out.setProperty("failure", text.toString());
    }

    /** Close a peer, if one was created, recording a failure to close as {@code close.failure}. */
    static void closeRecording(final Properties out, final Peer peer)
    {
        if (null != peer)
        {
            try
            {
                peer.close();
            }
            catch (final Throwable t)
            {
                out.setProperty("close.failure", String.valueOf(t));
            }
        }
    }

    /**
     * @param histogram a histogram.
     * @return it, compressed and base64-encoded.
     */
    public static String encode(final Histogram histogram)
    {
        final ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
        final int length = histogram.encodeIntoCompressedByteBuffer(buffer);
        final byte[] bytes = new byte[length];
        buffer.flip();
        buffer.get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    /**
     * @param text what {@link #encode} returned.
     * @return the histogram.
     */
    public static Histogram decode(final String text)
    {
        try
        {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(text)), 0);
        }
        catch (final java.util.zip.DataFormatException ex)
        {
            throw new IllegalArgumentException("not an encoded histogram", ex);
        }
    }

    private static String format(final double v)
    {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    private static void deleteQuietly(final Path dir)
    {
        if (null != dir)
        {
            try
            {
                io.tidemark.bench.harness.TempDirs.deleteRecursively(dir);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("tidemark-bench peer: could not delete " + dir + ": " + ex);
            }
        }
    }
}
