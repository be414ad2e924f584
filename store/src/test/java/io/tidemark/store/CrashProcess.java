package io.tidemark.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A {@link CrashChild} JVM: started with the test's own java binary and class path and the one JVM flag Tidemark
 * needs, its stdout reports parsed as they arrive, killed with SIGKILL ({@link Process#destroyForcibly()}).
 * <p>
 * Reports are lines; only complete lines count (a line cut by the kill is ignored). {@code A <n>}: every offset
 * below n was appended (the append returned). {@code F <n>}: every offset below n is flushed (the log's recovery
 * point reached n). {@code OPEN <end> <recoveryPoint>}: the log is open. Any other line is kept for the caller.
 */
final class CrashProcess implements AutoCloseable
{
    static final String JVM_FLAG_EXPORTS = "--add-exports";
    static final String JVM_FLAG_VALUE = "java.base/jdk.internal.misc=ALL-UNNAMED";
    /** Liveness guard for waits on a child: a child that needs longer is hung (never an assertion on speed). */
    static final long PATIENCE_MS = 120_000;

    private final Process process;
    private final Path stderr;
    private final Thread reader;
    private final List<String> lines = new ArrayList<>();
    private final List<Long> flushes = new ArrayList<>();
    private long appended = -1;
    private long flushed = -1;
    private long openEnd = -1;
    private long openRecoveryPoint = -1;
    private long openedAtNs;
    private boolean eof;

    private CrashProcess(final Process process, final Path stderr)
    {
        this.process = process;
        this.stderr = stderr;
        this.reader = new Thread(this::readReports, "crash-child-reader-" + process.pid());
        this.reader.setDaemon(true);
        this.reader.start();
    }

    static String javaBinary()
    {
        return ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    }

    /** Start {@code CrashChild} with the given arguments; its stderr goes to {@code stderr}. */
    static CrashProcess start(final Path stderr, final String... args) throws IOException
    {
        return start(CrashChild.class, stderr, args);
    }

    /** Start the {@code main} of another child class of the test class path; its stderr goes to {@code stderr}. */
    static CrashProcess start(final Class<?> main, final Path stderr, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.add(JVM_FLAG_EXPORTS);
        command.add(JVM_FLAG_VALUE);
        // A child that dies of a signal writes its crash report beside its stderr, never into the working directory.
        command.add("-XX:ErrorFile=" + stderr.toAbsolutePath().resolveSibling("hs_err_pid%p.log"));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        Files.createDirectories(stderr.toAbsolutePath().getParent());
        final Process process = new ProcessBuilder(command)
            .redirectError(ProcessBuilder.Redirect.to(stderr.toFile()))
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
        return new CrashProcess(process, stderr);
    }

    private void readReports()
    {
        final byte[] chunk = new byte[64 * 1024];
        final StringBuilder line = new StringBuilder();
        try (InputStream in = process.getInputStream())
        {
            int n;
            while ((n = in.read(chunk)) > 0)
            {
                for (int i = 0; i < n; i++)
                {
                    final char c = (char)(chunk[i] & 0xff);
                    if (c == '\n')
                    {
                        onLine(line.toString());
                        line.setLength(0);
                    }
                    else
                    {
                        line.append(c);
                    }
                }
            }
        }
        catch (final IOException ignore)
        {
            // the child is gone
        }
        finally
        {
            synchronized (this)
            {
                eof = true;
                notifyAll();
            }
        }
    }

    private synchronized void onLine(final String line)
    {
        if (line.startsWith("A "))
        {
            appended = Math.max(appended, Long.parseLong(line.substring(2)));
        }
        else if (line.startsWith("F "))
        {
            final long value = Long.parseLong(line.substring(2));
            flushes.add(value);
            flushed = Math.max(flushed, value);
        }
        else if (line.startsWith("OPEN "))
        {
            final String[] parts = line.split(" ");
            openEnd = Long.parseLong(parts[1]);
            openRecoveryPoint = Long.parseLong(parts[2]);
            flushes.add(openRecoveryPoint);
            flushed = Math.max(flushed, openRecoveryPoint);
            appended = Math.max(appended, openEnd);
            openedAtNs = System.nanoTime();
            lines.add(line);
        }
        else
        {
            lines.add(line);
        }
        notifyAll();
    }

    long pid()
    {
        return process.pid();
    }

    /** @return the highest end offset the child reported appended, or -1. */
    synchronized long appended()
    {
        return appended;
    }

    /** @return the highest recovery point the child reported, or -1. */
    synchronized long flushed()
    {
        return flushed;
    }

    /** @return every recovery point the child reported, in order. */
    synchronized List<Long> flushes()
    {
        return List.copyOf(flushes);
    }

    /** @return the log end offset right after the child opened the log, or -1 if it never reported it. */
    synchronized long openEnd()
    {
        return openEnd;
    }

    synchronized List<String> lines()
    {
        return List.copyOf(lines);
    }

    /**
     * Wait until the child reports a line matching {@code match}, or its output ends.
     *
     * @return the line, or null when the output ended first.
     */
    synchronized String awaitLine(final Predicate<String> match) throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PATIENCE_MS);
        int seen = 0;
        while (true)
        {
            for (; seen < lines.size(); seen++)
            {
                if (match.test(lines.get(seen)))
                {
                    return lines.get(seen);
                }
            }
            if (eof)
            {
                return null;
            }
            final long left = deadline - System.nanoTime();
            if (left <= 0)
            {
                throw new IllegalStateException("child " + pid() + " reported nothing matching for " + PATIENCE_MS +
                    " ms; stderr: " + stderrText());
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    /**
     * Wait until the child has reported appends up to {@code target}, or {@code maxMillisAfterOpen} passed since it
     * opened the log, or its output ended.
     *
     * @return false when the output ended (the child died or exited).
     */
    synchronized boolean awaitAppended(final long target, final long maxMillisAfterOpen) throws InterruptedException
    {
        final long patience = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PATIENCE_MS);
        while (true)
        {
            if (eof)
            {
                return false;
            }
            if (appended >= target)
            {
                return true;
            }
            final long now = System.nanoTime();
            if (openEnd >= 0 && now - openedAtNs >= TimeUnit.MILLISECONDS.toNanos(maxMillisAfterOpen))
            {
                return true;
            }
            if (now >= patience)
            {
                throw new IllegalStateException("child " + pid() + " made no progress for " + PATIENCE_MS +
                    " ms; stderr: " + stderrText());
            }
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(patience - now, TimeUnit.MILLISECONDS.toNanos(5)));
        }
    }

    /** SIGKILL the child and wait until it is gone and its output is drained. */
    void kill() throws InterruptedException
    {
        process.destroyForcibly();
        process.waitFor();
        reader.join();
    }

    /**
     * Wait for the child to exit by itself.
     *
     * @return its exit code.
     */
    int awaitExit() throws InterruptedException
    {
        if (!process.waitFor(PATIENCE_MS, TimeUnit.MILLISECONDS))
        {
            process.destroyForcibly();
            process.waitFor();
            reader.join();
            throw new IllegalStateException("child " + pid() + " did not exit within " + PATIENCE_MS + " ms; stderr: " +
                stderrText());
        }
        reader.join();
        return process.exitValue();
    }

    String stderrText()
    {
        try
        {
            final String text = Files.readString(stderr, StandardCharsets.UTF_8);
            return text.length() > 4000 ? text.substring(0, 4000) + "..." : text;
        }
        catch (final IOException ex)
        {
            return "(no stderr: " + ex + ")";
        }
    }

    /** Kill the child if it is still alive (for finally blocks). */
    @Override
    public void close()
    {
        if (process.isAlive())
        {
            process.destroyForcibly();
            try
            {
                process.waitFor();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
