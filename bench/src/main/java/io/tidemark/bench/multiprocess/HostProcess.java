package io.tidemark.bench.multiprocess;

import io.tidemark.bench.JvmFlags;
import io.tidemark.bench.ServerStop;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One replica host in a JVM of its own:
 * {@code java --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -cp CLASSPATH io.tidemark.host.HostMain
 * --config FILE}, with its standard output and error in a log file. No other JVM flag: the host runs as its users
 * run it. {@link #stop} sends SIGTERM (HostMain's shutdown hook closes the host cleanly: leadership moves away, the
 * logs close, the ZooKeeper session ends) and kills the process if it has not exited in time.
 * <p>
 * Thread-safe: the run's thread and the JVM's shutdown hook may both stop it.
 */
final class HostProcess
{
    /** The host's entry point, in module {@code host}. */
    static final String MAIN_CLASS = "io.tidemark.host.HostMain";

    private static final int MAX_PROBLEMS = 5;
    private static final int MAX_LINE = 300;

    private final int hostId;
    private final Process process;
    private final Path log;
    private final List<String> command;
    private boolean stopRequested;
    private boolean exitedBeforeStop;
    private long stopRequestedNanos;
    private Stop stop;

    /**
     * How a host's process ended.
     *
     * @param exitCode       its exit code (143: ended by SIGTERM after HostMain's clean shutdown), or -1 if it could
     *                       not be killed.
     * @param exitedEarlier  it had already exited when the stop began (a crash or a start-up failure).
     * @param forced         it did not exit within the stop timeout after SIGTERM and was killed (SIGKILL).
     * @param millis         from SIGTERM to exit.
     */
    record Stop(int exitCode, boolean exitedEarlier, boolean forced, long millis)
    {
        /** @return how it ended, in words. */
        String describe()
        {
            if (exitedEarlier)
            {
                return "had exited before the stop, exit code " + exitCode;
            }
            return forced ? "killed (SIGKILL) after no exit within the stop timeout, exit code " + exitCode :
                "exited " + millis + " ms after SIGTERM, exit code " + exitCode;
        }
    }

    /**
     * What a host's log says went wrong: java.util.logging's {@code SEVERE:} and {@code WARNING:} lines, and uncaught
     * exceptions.
     *
     * @param severe   {@code SEVERE:} lines and uncaught exceptions.
     * @param warnings {@code WARNING:} lines.
     * @param first    the first few of them, each with the exception line after it, if any.
     */
    record LogSummary(int severe, int warnings, List<String> first)
    {
    }

    private HostProcess(final int hostId, final Process process, final Path log, final List<String> command)
    {
        this.hostId = hostId;
        this.process = process;
        this.log = log;
        this.command = command;
    }

    /**
     * Start a host's JVM.
     *
     * @param hostId    the host's id, for messages.
     * @param classpath the JVM's class path (must hold module {@code host} and its dependencies).
     * @param config    the host's configuration file.
     * @param log       where its output goes.
     * @return the running process.
     */
    static HostProcess launch(final int hostId, final String classpath, final Path config, final Path log)
        throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(JvmFlags.FORKED_JVM_ARGS);
        command.add("-cp");
        command.add(classpath);
        command.add(MAIN_CLASS);
        command.add("--config");
        command.add(config.toString());
        final Process process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
        return new HostProcess(hostId, process, log, List.copyOf(command));
    }

    /** @return the host's id. */
    int hostId()
    {
        return hostId;
    }

    /** @return the process id. */
    long pid()
    {
        return process.pid();
    }

    /** @return whether the process is running. */
    boolean isAlive()
    {
        return process.isAlive();
    }

    /** @return the log file. */
    Path log()
    {
        return log;
    }

    /** @return the command line it was started with. */
    List<String> command()
    {
        return command;
    }

    /**
     * SIGKILL, and wait for the process to be gone (a fault drill).
     *
     * @return whether it is gone.
     */
    boolean kill() throws InterruptedException
    {
        process.destroyForcibly();
        return process.waitFor(ServerStop.KILL_WAIT_MS, TimeUnit.MILLISECONDS);
    }

    /** Send SIGTERM, without waiting. */
    void requestStop()
    {
        synchronized (this)
        {
            if (!stopRequested)
            {
                stopRequested = true;
                stopRequestedNanos = System.nanoTime();
                exitedBeforeStop = !process.isAlive();
            }
        }
        if (process.isAlive())
        {
            process.destroy();
        }
    }

    /**
     * Stop the process: SIGTERM, then SIGKILL when it has not exited within {@code timeoutMs}. Idempotent: a second
     * call returns the first one's outcome.
     *
     * @param timeoutMs how long to wait after SIGTERM.
     * @return how it ended.
     */
    synchronized Stop stop(final long timeoutMs)
    {
        if (null != stop)
        {
            return stop;
        }
        requestStop();
        final boolean exitedEarlier = exitedBeforeStop;
        final boolean forced = ServerStop.awaitOrKill(process, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
        final long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopRequestedNanos);
        stop = new Stop(process.isAlive() ? -1 : process.exitValue(), exitedEarlier, forced, millis);
        closeQuietly(process.getOutputStream());
        return stop;
    }

    /**
     * @param lines how many.
     * @return the last lines of the log, for an error message.
     */
    String tail(final int lines)
    {
        final List<String> all = readLog();
        return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    }

    /** @return what the log says went wrong. */
    LogSummary scanLog()
    {
        final List<String> lines = readLog();
        int severe = 0;
        int warnings = 0;
        final List<String> first = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++)
        {
            final String line = lines.get(i);
            final boolean isSevere = line.startsWith("SEVERE:") || line.startsWith("Exception in thread");
            final boolean isWarning = line.startsWith("WARNING:");
            if (!isSevere && !isWarning)
            {
                continue;
            }
            severe += isSevere ? 1 : 0;
            warnings += isWarning ? 1 : 0;
            if (first.size() < MAX_PROBLEMS)
            {
                final String next = i + 1 < lines.size() ? lines.get(i + 1) : "";
                final boolean exceptionNext = next.matches("^[a-z][\\w.$]*(Exception|Error)\\b.*");
                first.add(shorten(line + (exceptionNext ? " / " + next : "")));
            }
        }
        return new LogSummary(severe, warnings, List.copyOf(first));
    }

    private List<String> readLog()
    {
        try (InputStream in = Files.newInputStream(log))
        {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        }
        catch (final IOException ex)
        {
            return List.of("(cannot read " + log + ": " + ex.getMessage() + ")");
        }
    }

    private static String shorten(final String line)
    {
        return line.length() <= MAX_LINE ? line : line.substring(0, MAX_LINE) + " ...";
    }

    private static void closeQuietly(final OutputStream out)
    {
        try
        {
            out.close();
        }
        catch (final IOException ignore)
        {
            // the process is gone
        }
    }

    @Override
    public String toString()
    {
        return "host " + hostId + " (pid " + process.pid() + ")";
    }
}
