package io.tidemark.bench.multiprocess;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time of processes and their threads, from Linux's {@code /proc/<pid>/stat} and
 * {@code /proc/<pid>/task/<tid>/stat} ({@code utime + stime}, in clock ticks of {@value #TICKS_PER_SECOND} Hz,
 * converted to nanoseconds). A thread's name is its {@code comm}: what the JVM set as its native name, cut at 15
 * characters. Elsewhere than Linux every reading is zero and {@link #available()} says so.
 * <p>
 * Stateless; thread-safe.
 */
final class ProcCpu
{
    /** {@code USER_HZ}: every Linux this runs on reports CPU time in hundredths of a second. */
    static final long TICKS_PER_SECOND = 100;
    private static final long NANOS_PER_TICK = 1_000_000_000L / TICKS_PER_SECOND;

    private ProcCpu()
    {
    }

    /** @return whether {@code /proc} can be read here. */
    static boolean available()
    {
        return Files.isReadable(Path.of("/proc/self/stat"));
    }

    /**
     * @param pid a process id.
     * @return its CPU time so far (user and system), in nanoseconds; 0 when it cannot be read (the process is gone).
     */
    static long processNanos(final long pid)
    {
        return statNanos(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /**
     * @param pid a process id.
     * @return CPU time so far of each of its threads, by {@code "name (tid)"}; empty when it cannot be read.
     */
    static Map<String, Long> threadNanos(final long pid)
    {
        final Map<String, Long> threads = new LinkedHashMap<>();
        final Path tasks = Path.of("/proc", Long.toString(pid), "task");
        try (Stream<Path> list = Files.list(tasks))
        {
            for (final Path task : list.toList())
            {
                final String stat = read(task.resolve("stat"));
                if (null != stat)
                {
                    threads.put(comm(stat) + " (" + task.getFileName() + ")", nanos(stat));
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // the process is gone
        }
        return threads;
    }

    /**
     * CPU used by each thread between two readings of {@link #threadNanos}: threads born in between count from 0,
     * threads gone by the end count what they had at the start (nothing).
     *
     * @return nanoseconds by thread, largest first.
     */
    static Map<String, Long> delta(final Map<String, Long> before, final Map<String, Long> after)
    {
        final List<Map.Entry<String, Long>> entries = new ArrayList<>();
        for (final Map.Entry<String, Long> e : after.entrySet())
        {
            entries.add(Map.entry(e.getKey(), Math.max(0, e.getValue() - before.getOrDefault(e.getKey(), 0L))));
        }
        entries.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        final Map<String, Long> delta = new LinkedHashMap<>();
        for (final Map.Entry<String, Long> e : entries)
        {
            delta.put(e.getKey(), e.getValue());
        }
        return delta;
    }

    /**
     * Group per-thread CPU by thread name with the id and a trailing number dropped ({@code "GC Thread#1 (123)"} and
     * {@code "GC Thread#0 (122)"} are both {@code "GC Thread#"}), so that runs can be compared.
     *
     * @return nanoseconds by thread kind, largest first.
     */
    static Map<String, Long> byKind(final Map<String, Long> threads)
    {
        final Map<String, Long> kinds = new LinkedHashMap<>();
        for (final Map.Entry<String, Long> e : threads.entrySet())
        {
            final String name = e.getKey().replaceAll(" \\(\\d+\\)$", "").replaceAll("[-#]?\\d+$", "");
            kinds.merge(name, e.getValue(), Long::sum);
        }
        final List<Map.Entry<String, Long>> entries = new ArrayList<>(kinds.entrySet());
        entries.sort((a, b) -> Long.compare(b.getValue(), a.getValue()));
        final Map<String, Long> sorted = new LinkedHashMap<>();
        entries.forEach((e) -> sorted.put(e.getKey(), e.getValue()));
        return sorted;
    }

    private static long statNanos(final Path stat)
    {
        final String text = read(stat);
        return null == text ? 0 : nanos(text);
    }

    private static String read(final Path file)
    {
        try
        {
            return Files.readString(file, StandardCharsets.US_ASCII);
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    /** @return the {@code comm} field: between the first '(' and the last ')'. */
    private static String comm(final String stat)
    {
        final int open = stat.indexOf('(');
        final int close = stat.lastIndexOf(')');
        return open < 0 || close < open ? "?" : stat.substring(open + 1, close);
    }

    /** @return utime + stime in nanoseconds: fields 14 and 15, counted after the {@code comm} field. */
    private static long nanos(final String stat)
    {
        final int close = stat.lastIndexOf(')');
        if (close < 0)
        {
            return 0;
        }
        final String[] fields = stat.substring(close + 2).trim().split(" ");
        // fields[0] is field 3 (state); utime is field 14, stime field 15
        if (fields.length < 13)
        {
            return 0;
        }
        try
        {
            return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) * NANOS_PER_TICK;
        }
        catch (final NumberFormatException ex)
        {
            return 0;
        }
    }
}
