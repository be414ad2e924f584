package io.tidemark.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The machine's state at one instant, to print beside a latency figure: the load average, this JVM's CPU time, and
 * the page cache's dirty and writeback pages ({@code /proc/meminfo}). Two states taken around a measured window give
 * the CPU the JVM got in it ({@link #cpusUsedSince}) and the dirty data before and after. Fields the platform does
 * not have are -1.
 *
 * @param nanoTime     {@link System#nanoTime()} when taken.
 * @param load1        the one-minute load average.
 * @param processCpuNs this JVM's CPU time (all threads), ns.
 * @param dirtyKib     {@code Dirty:} of /proc/meminfo, KiB.
 * @param writebackKib {@code Writeback:} of /proc/meminfo, KiB.
 */
public record MachineState(long nanoTime, double load1, long processCpuNs, long dirtyKib, long writebackKib)
{
    private static final Path LOADAVG = Path.of("/proc/loadavg");
    private static final Path MEMINFO = Path.of("/proc/meminfo");

    /** @return the state now. */
    public static MachineState now()
    {
        final long[] memory = dirtyAndWriteback();
        return new MachineState(System.nanoTime(), currentLoad1(), currentProcessCpuNs(), memory[0], memory[1]);
    }

    /** @return this JVM's CPU time in ns, or -1. */
    public static long currentProcessCpuNs()
    {
        final java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean bean)
        {
            return bean.getProcessCpuTime();
        }
        return -1;
    }

    /** @return the one-minute load average, or -1. */
    public static double currentLoad1()
    {
        try
        {
            final String text = Files.readString(LOADAVG, StandardCharsets.US_ASCII).trim();
            return Double.parseDouble(text.substring(0, text.indexOf(' ')));
        }
        catch (final IOException | RuntimeException ex)
        {
            return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        }
    }

    /** @return {Dirty, Writeback} of /proc/meminfo in KiB, -1 each when unknown. */
    public static long[] dirtyAndWriteback()
    {
        final long[] out = {-1, -1};
        try
        {
            for (final String line : Files.readAllLines(MEMINFO, StandardCharsets.US_ASCII))
            {
                if (line.startsWith("Dirty:"))
                {
                    out[0] = kib(line);
                }
                else if (line.startsWith("Writeback:"))
                {
                    out[1] = kib(line);
                    break;
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // not Linux: unknown
        }
        return out;
    }

    static long kib(final String meminfoLine)
    {
        final String[] parts = meminfoLine.trim().split("\\s+");
        return Long.parseLong(parts[1]);
    }

    /**
     * @param before the state at the window's start.
     * @return the CPUs this JVM used on average between {@code before} and this state (1.0 = one core busy all the
     *         time), or NaN when unknown.
     */
    public double cpusUsedSince(final MachineState before)
    {
        final long wall = nanoTime - before.nanoTime;
        if (processCpuNs < 0 || before.processCpuNs < 0 || wall <= 0)
        {
            return Double.NaN;
        }
        return (double)(processCpuNs - before.processCpuNs) / wall;
    }

    /**
     * @param before the state at the window's start.
     * @param peakDirtyKib the highest {@code Dirty + Writeback} seen in the window (KiB), or -1.
     * @return one line for a report: load before/after, CPUs used by the JVM, dirty and writeback before/after.
     */
    public String describeSince(final MachineState before, final long peakDirtyKib)
    {
        return String.format(Locale.ROOT, "load %.1f/%.1f, JVM %.2f CPUs, dirty %s/%s MiB (peak %s), writeback %s/%s MiB",
            before.load1, load1, cpusUsedSince(before), mib(before.dirtyKib), mib(dirtyKib), mib(peakDirtyKib),
            mib(before.writebackKib), mib(writebackKib));
    }

    /** @return KiB as MiB with one decimal, or "?" when unknown. */
    public static String mib(final long kib)
    {
        return kib < 0 ? "?" : String.format(Locale.ROOT, "%.1f", kib / 1024.0);
    }

    /**
     * Samples {@code Dirty + Writeback} on a daemon thread that sleeps between samples, and keeps the peak.
     */
    public static final class DirtySampler implements AutoCloseable
    {
        private final Thread thread;
        private volatile boolean running = true;
        private volatile long peakKib = -1;

        /** @param intervalMs time between samples. */
        public DirtySampler(final long intervalMs)
        {
            thread = new Thread(() ->
            {
                while (running)
                {
                    final long[] memory = dirtyAndWriteback();
                    if (memory[0] >= 0)
                    {
                        peakKib = Math.max(peakKib, memory[0] + Math.max(0, memory[1]));
                    }
                    try
                    {
                        Thread.sleep(intervalMs);
                    }
                    catch (final InterruptedException ex)
                    {
                        return;
                    }
                }
            }, "dirty-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        /** @return the peak of Dirty + Writeback seen so far, KiB, or -1. */
        public long peakKib()
        {
            return peakKib;
        }

        @Override
        public void close()
        {
            running = false;
            thread.interrupt();
        }
    }
}
