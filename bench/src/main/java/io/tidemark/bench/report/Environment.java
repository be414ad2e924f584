package io.tidemark.bench.report;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Describes the machine a benchmark ran on, for {@code env.txt}: CPU, cores, memory, JDK, JVM flags, OS and the
 * file system the benchmark logs live on. Reads {@code /proc} where it exists (Linux) and falls back to what the
 * JVM knows; a fact that cannot be found is "unknown", never an error.
 */
public final class Environment
{
    private static final String UNKNOWN = "unknown";

    private Environment()
    {
    }

    /**
     * @return the CPU model, from {@code /proc/cpuinfo}.
     */
    public static String cpuModel()
    {
        final List<String> cpuinfo = readLines(Path.of("/proc/cpuinfo"));
        for (final String key : List.of("model name", "Hardware", "Processor", "cpu model"))
        {
            final String value = field(cpuinfo, key);
            if (null != value)
            {
                return value;
            }
        }
        return UNKNOWN + " (" + System.getProperty("os.arch") + ")";
    }

    /**
     * @return logical CPUs listed in {@code /proc/cpuinfo}, or -1.
     */
    public static int logicalCpus()
    {
        int count = 0;
        for (final String line : readLines(Path.of("/proc/cpuinfo")))
        {
            if (line.startsWith("processor"))
            {
                count++;
            }
        }
        return count == 0 ? -1 : count;
    }

    /**
     * @return total memory, from {@code /proc/meminfo} or the JVM's view of the OS.
     */
    public static String totalMemory()
    {
        final String memTotal = field(readLines(Path.of("/proc/meminfo")), "MemTotal");
        if (null != memTotal)
        {
            return kibToGib(memTotal) + " (MemTotal " + memTotal + ")";
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean)
        {
            final long bytes = ((com.sun.management.OperatingSystemMXBean)ManagementFactory
                .getOperatingSystemMXBean()).getTotalMemorySize();
            return String.format(Locale.ROOT, "%.1f GiB", bytes / (double)(1L << 30));
        }
        return UNKNOWN;
    }

    private static String kibToGib(final String memTotal)
    {
        try
        {
            final long kib = Long.parseLong(memTotal.replace("kB", "").trim());
            return String.format(Locale.ROOT, "%.1f GiB", kib / (double)(1L << 20));
        }
        catch (final NumberFormatException ex)
        {
            return UNKNOWN;
        }
    }

    /**
     * @return available memory now, from {@code /proc/meminfo}.
     */
    public static String availableMemory()
    {
        final String available = field(readLines(Path.of("/proc/meminfo")), "MemAvailable");
        return null == available ? UNKNOWN : kibToGib(available) + " (MemAvailable " + available + ")";
    }

    /**
     * @return the OS distribution's name, from {@code /etc/os-release}.
     */
    public static String osRelease()
    {
        for (final String line : readLines(Path.of("/etc/os-release")))
        {
            if (line.startsWith("PRETTY_NAME="))
            {
                return line.substring("PRETTY_NAME=".length()).replace("\"", "");
            }
        }
        return UNKNOWN;
    }

    /**
     * @return the load averages (1, 5, 15 min) from {@code /proc/loadavg}.
     */
    public static String loadAverage()
    {
        final List<String> lines = readLines(Path.of("/proc/loadavg"));
        if (lines.isEmpty())
        {
            final double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            return load < 0 ? UNKNOWN : String.format(Locale.ROOT, "%.2f", load);
        }
        final String[] parts = lines.get(0).trim().split("\\s+");
        return parts.length >= 3 ? parts[0] + " " + parts[1] + " " + parts[2] : lines.get(0).trim();
    }

    /**
     * @param path a directory.
     * @return its file system's type and name and the usable space on it.
     */
    public static String fileSystem(final Path path)
    {
        try
        {
            final FileStore store = Files.getFileStore(path);
            return String.format(Locale.ROOT, "%s (%s), %.1f GiB usable of %.1f GiB", store.type(), store.name(),
                store.getUsableSpace() / (double)(1L << 30), store.getTotalSpace() / (double)(1L << 30));
        }
        catch (final IOException | RuntimeException ex)
        {
            return UNKNOWN + " (" + ex.getMessage() + ")";
        }
    }

    /**
     * The facts, in the order they are written.
     *
     * @param run facts about the run itself (date, command, ...), listed first.
     * @param forkedJvmArgs JVM arguments of the benchmark JVMs, one line per distinct set.
     * @return the facts.
     */
    public static Map<String, String> describe(final Map<String, String> run, final List<String> forkedJvmArgs)
    {
        final Map<String, String> facts = new LinkedHashMap<>(run);
        facts.put("cpu.model", cpuModel());
        final int logical = logicalCpus();
        facts.put("cpu.logical", logical < 0 ? UNKNOWN : String.valueOf(logical));
        facts.put("cpu.available.to.jvm", String.valueOf(Runtime.getRuntime().availableProcessors()));
        facts.put("memory.total", totalMemory());
        facts.put("memory.available", availableMemory());
        facts.put("jdk.version", System.getProperty("java.runtime.version", System.getProperty("java.version")));
        facts.put("jdk.vendor", System.getProperty("java.vendor") + " (" + System.getProperty("java.vm.name") +
            " " + System.getProperty("java.vm.version") + ")");
        facts.put("jdk.home", System.getProperty("java.home"));
        final List<String> harnessFlags = ManagementFactory.getRuntimeMXBean().getInputArguments();
        facts.put("jvm.flags.harness", harnessFlags.isEmpty() ? "(none)" : String.join(" ", harnessFlags));
        facts.put("jvm.flags.benchmarks", forkedJvmArgs.isEmpty() ? UNKNOWN : String.join(" | ", forkedJvmArgs));
        facts.put("jvm.heap.max.harness", String.format(Locale.ROOT, "%.1f GiB",
            Runtime.getRuntime().maxMemory() / (double)(1L << 30)));
        facts.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " +
            System.getProperty("os.arch") + " (" + osRelease() + ")");
        final Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        facts.put("tmpdir", tmp + ": " + fileSystem(tmp) + " (the benchmark logs live here)");
        return facts;
    }

    /**
     * @param facts the facts.
     * @return {@code key: value} lines.
     */
    public static String format(final Map<String, String> facts)
    {
        final StringBuilder text = new StringBuilder();
        facts.forEach((k, v) -> text.append(k).append(": ").append(v).append('\n'));
        return text.toString();
    }

    private static String field(final List<String> lines, final String key)
    {
        for (final String line : lines)
        {
            final int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equals(key))
            {
                return line.substring(colon + 1).trim();
            }
        }
        return null;
    }

    private static List<String> readLines(final Path path)
    {
        try
        {
            return Files.readAllLines(path, StandardCharsets.UTF_8);
        }
        catch (final IOException | RuntimeException ex)
        {
            return new ArrayList<>();
        }
    }
}
