package io.tidemark.cli;

import io.tidemark.store.file.CountersFile;
import io.tidemark.store.format.CountersDescriptor;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/** {@code tidemark stat}: the live counters of a running Tidemark process, read from its counters files. */
@Command(
    name = "stat",
    mixinStandardHelpOptions = true,
    description = {
        "Read the counters of a running Tidemark process from outside it, like AeronStat: per log or replicated " +
            "partition, the log end offset (LEO), high watermark (HW), flushed offset (recovery point), log " +
            "start offset, segment count, leader, epoch, ISR size and each follower's lag; for a host process, the " +
            "messages it dropped at its network edge, by stream and reason. Refreshes like top " +
            "(every --interval) when the output is a terminal; prints once otherwise, unless --iterations says.",
        "PATH: a log directory (its counters.dat), a cluster root (host-*/counters.dat), a host directory, or a " +
            "counters file. The files are mapped read-only; the process is never disturbed.",
        "Exit code: 0 when a running process writes the counters, 5 when no process is there (the file's pid is " +
            "not running: its last values are shown) or no counters file is found, 3 when PATH is missing or " +
            "not a counters file."},
    sortOptions = false)
final class StatCommand implements Callable<Integer>
{
    private static final int LOG_END_OFFSET = 1001;
    private static final int RECOVERY_POINT = 1002;
    private static final int LOG_START_OFFSET = 1003;
    private static final int SEGMENT_COUNT = 1004;
    private static final int LEADER = 2001;
    private static final int LEADER_EPOCH = 2002;
    private static final int HIGH_WATERMARK = 2003;
    private static final int ISR_SIZE = 2004;
    private static final int REPLICA_LOG_END = 2005;
    private static final int FOLLOWER_LAG = 2006;
    private static final int DROPPED_MESSAGES = 3001;
    private static final Pattern DROPPED_LABEL = Pattern.compile("^dropped-messages: (\\S+) stream=(\\S+) reason=(\\S+)$");
    private static final Pattern REPLICA_LABEL = Pattern.compile("^[a-z-]+: (\\S+) host=(\\d+)(?: replica=(\\d+))?$");
    private static final Pattern HOST_DIR = Pattern.compile("host-(\\d+)");
    private static final long PLAUSIBLE_WALL_CLOCK_MS = 946_684_800_000L; // 2000-01-01

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", paramLabel = "PATH", description = "Log directory, cluster root, host directory or " +
        "counters file.")
    Path path;

    @Option(names = "--interval", paramLabel = "MS", defaultValue = "1000",
        description = "Refresh period (default: ${DEFAULT-VALUE}).")
    long intervalMs;

    @Option(names = "--iterations", paramLabel = "N",
        description = "Print N times, then exit (0: until Ctrl-C). Default: until Ctrl-C on a terminal, once " +
            "otherwise.")
    Integer iterations;

    @Override
    public Integer call() throws InterruptedException
    {
        if (intervalMs < 1 || (null != iterations && iterations < 0))
        {
            throw new ParameterException(spec.commandLine(), "--interval must be >= 1 and --iterations >= 0");
        }
        if (!Files.exists(path))
        {
            throw new CliException(ExitCodes.IO, "no such file or directory: " + path);
        }
        final boolean terminal = null != System.console();
        final int times = null != iterations ? iterations : terminal ? 0 : 1;
        final PrintWriter out = spec.commandLine().getOut();
        int exitCode = ExitCodes.OK;
        for (int i = 0; times == 0 || i < times; i++)
        {
            if (i > 0)
            {
                Thread.sleep(intervalMs);
            }
            final StringBuilder screen = new StringBuilder();
            exitCode = render(screen);
            if (terminal)
            {
                out.print("\033[H\033[2J"); // clear the screen, like top
            }
            else if (i > 0)
            {
                out.println();
            }
            out.print(screen);
            out.flush();
        }
        return exitCode;
    }

    private List<Path> counterFiles()
    {
        if (Files.isRegularFile(path))
        {
            return List.of(path);
        }
        final Path own = path.resolve("counters.dat");
        if (Files.isRegularFile(own))
        {
            return List.of(own);
        }
        final List<Path> found = new ArrayList<>();
        try (Stream<Path> children = Files.list(path))
        {
            children.sorted().forEach((child) ->
            {
                final Path file = child.resolve("counters.dat");
                if (Files.isRegularFile(file))
                {
                    found.add(file);
                }
            });
        }
        catch (final IOException ex)
        {
            throw new CliException(ExitCodes.IO, "cannot list " + path + ": " + ex.getMessage(), ex);
        }
        return found;
    }

    /** One row: a log (standalone) or a replica of a partition on a host. */
    private static final class Row
    {
        final String name;
        final String host;
        long logEnd = Long.MIN_VALUE;
        long highWatermark = Long.MIN_VALUE;
        long flushed = Long.MIN_VALUE;
        long logStart = Long.MIN_VALUE;
        long segments = Long.MIN_VALUE;
        long leader = Long.MIN_VALUE;
        long epoch = Long.MIN_VALUE;
        long isr = Long.MIN_VALUE;
        final Map<Integer, Long> lags = new TreeMap<>();

        Row(final String name, final String host)
        {
            this.name = name;
            this.host = host;
        }

        String role()
        {
            if (leader == Long.MIN_VALUE)
            {
                return "-";
            }
            if (leader < 0)
            {
                return "no-leader";
            }
            return Long.toString(leader).equals(host) ? "leader" : "follower";
        }
    }

    private int render(final StringBuilder screen)
    {
        final List<Path> files = counterFiles();
        screen.append("tidemark stat ").append(path).append("  ").append(Instant.now()).append('\n');
        if (files.isEmpty())
        {
            screen.append("no counters file (counters.dat) in ").append(path)
                .append(" or its subdirectories: no Tidemark process has written counters here\n");
            throw new CliException(ExitCodes.NO_PROCESS, "no counters file (counters.dat) in " + path +
                " or its subdirectories: no Tidemark process has written counters here");
        }
        int running = 0;
        for (final Path file : files)
        {
            running += renderFile(file, screen) ? 1 : 0;
        }
        if (running == 0)
        {
            screen.append("no process is there: no running process writes ").append(files.size() == 1 ?
                "this counters file" : "these counters files").append(" (the values are the last ones written)\n");
            return ExitCodes.NO_PROCESS;
        }
        return ExitCodes.OK;
    }

    /** @return whether the writer of the file is running. */
    private boolean renderFile(final Path file, final StringBuilder screen)
    {
        final long startTimeMs = startTime(file);
        final Map<String, Row> rows = new TreeMap<>();
        final Map<String, Long> dropped = new TreeMap<>();
        final long pid;
        try (CountersFile counters = CountersFile.openReadOnly(file))
        {
            pid = counters.pid();
            counters.reader().forEach((counterId, typeId, keyBuffer, label) ->
            {
                final long value = counters.reader().getCounterValue(counterId);
                if (typeId == DROPPED_MESSAGES)
                {
                    final Matcher m = DROPPED_LABEL.matcher(label);
                    if (m.matches())
                    {
                        dropped.merge(m.group(1) + " " + m.group(2) + " " + m.group(3), value, Long::sum);
                    }
                    return;
                }
                add(rows, typeId, label, value);
            });
        }
        catch (final IOException ex)
        {
            throw new CliException(ExitCodes.IO, "cannot read " + file + ": " + ex.getMessage(), ex);
        }
        catch (final IllegalStateException ex)
        {
            throw new CliException(ExitCodes.IO, ex.getMessage(), ex);
        }
        final boolean alive = alive(pid, startTimeMs);
        screen.append('\n').append(file).append(": pid ").append(pid).append(alive ? " running" :
            " NOT RUNNING (no process is there)").append(", started ")
            .append(startTimeMs > 0 ? Formats.timestamp(startTimeMs) : "?").append('\n');
        renderDropped(dropped, screen);
        if (rows.isEmpty())
        {
            screen.append("  (no counters allocated)\n");
            return alive;
        }
        final String format = "  %-40s %4s %-9s %5s %12s %12s %12s %12s %4s %4s  %s%n";
        screen.append(String.format(format, "LOG / PARTITION", "HOST", "ROLE", "EPOCH", "LEO", "HW", "FLUSHED",
            "LOG-START", "SEGS", "ISR", "FOLLOWER-LAG"));
        for (final Row row : rows.values())
        {
            final StringBuilder lags = new StringBuilder();
            if ("leader".equals(row.role()))
            {
                for (final Map.Entry<Integer, Long> lag : row.lags.entrySet())
                {
                    if (!Integer.toString(lag.getKey()).equals(row.host))
                    {
                        lags.append(lags.length() == 0 ? "" : " ").append("host ").append(lag.getKey()).append('=')
                            .append(lag.getValue());
                    }
                }
            }
            screen.append(String.format(format, row.name, row.host, row.role(), value(row.epoch), value(row.logEnd),
                value(row.highWatermark), value(row.flushed), value(row.logStart), value(row.segments),
                value(row.isr), lags.length() == 0 ? "-" : lags.toString()));
        }
        return alive;
    }

    /**
     * The messages a host dropped at its network edge: the total, then each stream and reason that dropped any
     * (failed authentication, another cluster, replays, identities that were not the sender's, client limits).
     */
    private static void renderDropped(final Map<String, Long> dropped, final StringBuilder screen)
    {
        if (dropped.isEmpty())
        {
            return;
        }
        final long total = dropped.values().stream().mapToLong(Long::longValue).sum();
        screen.append("  DROPPED MESSAGES: ").append(total).append(total == 0 ? " (none)" : "").append('\n');
        for (final Map.Entry<String, Long> entry : dropped.entrySet())
        {
            if (entry.getValue() != 0)
            {
                final String[] parts = entry.getKey().split(" ");
                screen.append(String.format("    %-8s stream=%-8s reason=%-16s %d%n", parts[0], parts[1], parts[2],
                    entry.getValue()));
            }
        }
    }

    private static String value(final long v)
    {
        return v == Long.MIN_VALUE ? "-" : Long.toString(v);
    }

    private static void add(final Map<String, Row> rows, final int typeId, final String label, final long value)
    {
        final int colon = label.indexOf(": ");
        if (colon < 0)
        {
            return;
        }
        final String subject = label.substring(colon + 2);
        if (typeId >= LOG_END_OFFSET && typeId <= SEGMENT_COUNT)
        {
            final Path logPath = Path.of(subject);
            final Path parent = logPath.getParent();
            final Matcher host = null == parent || null == parent.getFileName() ? null :
                HOST_DIR.matcher(parent.getFileName().toString());
            final Row row = null != host && host.matches() ?
                rows.computeIfAbsent(logPath.getFileName() + " host=" + host.group(1),
                    (k) -> new Row(logPath.getFileName().toString(), host.group(1))) :
                rows.computeIfAbsent(subject, (k) -> new Row(subject, "-"));
            switch (typeId)
            {
                case LOG_END_OFFSET: row.logEnd = value; break;
                case RECOVERY_POINT: row.flushed = value; break;
                case LOG_START_OFFSET: row.logStart = value; break;
                default: row.segments = value; break;
            }
            return;
        }
        final Matcher m = REPLICA_LABEL.matcher(label);
        if (typeId < LEADER || typeId > FOLLOWER_LAG || !m.matches())
        {
            return;
        }
        final Row row = rows.computeIfAbsent(m.group(1) + " host=" + m.group(2), (k) -> new Row(m.group(1),
            m.group(2)));
        switch (typeId)
        {
            case LEADER: row.leader = value; break;
            case LEADER_EPOCH: row.epoch = value; break;
            case HIGH_WATERMARK: row.highWatermark = value; break;
            case ISR_SIZE: row.isr = value; break;
            case FOLLOWER_LAG:
                if (null != m.group(3))
                {
                    row.lags.put(Integer.parseInt(m.group(3)), value);
                }
                break;
            default: break; // REPLICA_LOG_END: the lag says it relative to the leader
        }
    }

    /** @return the start time the writer recorded, or -1. */
    private static long startTime(final Path file)
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final ByteBuffer header = ByteBuffer.allocate(CountersDescriptor.HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            channel.read(header, 0);
            return header.getLong(CountersDescriptor.START_TIME_OFFSET);
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }

    /** @return whether the process is running and is the one that wrote the file (not a reused pid). */
    static boolean alive(final long pid, final long startTimeMs)
    {
        final ProcessHandle process = ProcessHandle.of(pid).orElse(null);
        if (null == process || !process.isAlive())
        {
            return false;
        }
        if (startTimeMs > PLAUSIBLE_WALL_CLOCK_MS)
        {
            final Instant started = process.info().startInstant().orElse(null);
            // A process that started after the file was written is another one that got the same pid.
            return null == started || started.toEpochMilli() <= startTimeMs + 2_000;
        }
        return true;
    }
}
