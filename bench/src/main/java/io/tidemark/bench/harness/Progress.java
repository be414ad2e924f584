package io.tidemark.bench.harness;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * A progress line for long runs: {@code [#####.....]  45%  9/22  2m10s left  <step>: <phase>}, redrawn in place
 * about four times a second on a terminal and cut to the terminal's width (so it never wraps); one line per step
 * otherwise (a log file, CI).
 * <p>
 * <b>Estimate.</b> Each step has a planned duration (its warm-up and measurement); a step really takes longer (a
 * cluster to start, records to read back and check). The time left is the planned time of the steps still to run
 * times the ratio of real to planned time of the steps done so far, minus the time already spent in the current
 * step, and never less than the estimate of the steps after it. So within a step it counts down with the clock,
 * it never rises while a step overruns (it holds), and it moves only when a step ends and the ratio is corrected by
 * what that step really took; the ratio of all finished steps steadies as the run goes on.
 */
public final class Progress implements AutoCloseable
{
    private static final int MIN_BAR = 10;
    private static final int MAX_BAR = 30;
    private static final int DEFAULT_COLUMNS = 80;

    private final PrintWriter out;
    private final boolean redraw;
    private final int steps;
    private final double plannedTotal;
    private final LongSupplier nanoClock;
    private final IntSupplier columns;
    private final long startNanos;
    private final Thread ticker;
    private volatile boolean closed;
    private double plannedDone;
    private double actualDone;
    private double stepPlanned;
    private long stepStartNanos;
    private int step;
    private int width;
    private String label = "";
    private String phase = "";
    private int lastLength;

    /**
     * @param out            where to draw.
     * @param redraw         redraw in place (a terminal) or print lines.
     * @param steps          number of steps.
     * @param plannedSeconds planned duration of all steps.
     */
    public Progress(final PrintWriter out, final boolean redraw, final int steps, final double plannedSeconds)
    {
        this(out, redraw, steps, plannedSeconds, System::nanoTime, Progress::terminalColumns);
    }

    /**
     * @param out            where to draw.
     * @param redraw         redraw in place (a terminal) or print lines.
     * @param steps          number of steps.
     * @param plannedSeconds planned duration of all steps.
     * @param nanoClock      the clock.
     * @param columns        the terminal's width in characters (asked at the start and at each step).
     */
    Progress(final PrintWriter out, final boolean redraw, final int steps, final double plannedSeconds,
        final LongSupplier nanoClock, final IntSupplier columns)
    {
        this.out = out;
        this.redraw = redraw;
        this.steps = steps;
        this.plannedTotal = Math.max(plannedSeconds, 1e-3);
        this.nanoClock = nanoClock;
        this.columns = columns;
        this.startNanos = nanoClock.getAsLong();
        this.stepStartNanos = startNanos;
        this.width = redraw ? columns.getAsInt() : Integer.MAX_VALUE;
        if (redraw)
        {
            ticker = new Thread(this::tick, "bench-progress");
            ticker.setDaemon(true);
            ticker.start();
        }
        else
        {
            ticker = null;
        }
    }

    /** @return whether stdout looks like a terminal. */
    public static boolean isTerminal()
    {
        return null != System.console();
    }

    /**
     * Start a step.
     *
     * @param text           what the step is.
     * @param plannedSeconds its planned duration.
     */
    public synchronized void startStep(final String text, final double plannedSeconds)
    {
        step++;
        label = text;
        phase = "";
        stepPlanned = plannedSeconds;
        if (redraw)
        {
            width = columns.getAsInt(); // the terminal may have been resized
        }
        else
        {
            out.println(line());
            out.flush();
        }
    }

    /**
     * The current step's phase changed.
     *
     * @param text e.g. "measure".
     */
    public synchronized void phase(final String text)
    {
        phase = text;
    }

    /** The current step finished: what it really took corrects the estimate of the steps after it. */
    public synchronized void endStep()
    {
        final long now = nanoClock.getAsLong();
        plannedDone += stepPlanned;
        actualDone += (now - stepStartNanos) / 1e9; // from the end of the previous step: set-up counts too
        stepStartNanos = now;
        stepPlanned = 0;
    }

    /**
     * Print a message above the bar.
     *
     * @param text the message.
     */
    public synchronized void message(final String text)
    {
        if (redraw)
        {
            out.print('\r' + " ".repeat(lastLength) + '\r');
        }
        out.println(text);
        if (redraw)
        {
            draw();
        }
        out.flush();
    }

    private void tick()
    {
        while (!closed)
        {
            synchronized (this)
            {
                if (!closed)
                {
                    draw();
                }
            }
            try
            {
                Thread.sleep(250);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
        }
    }

    private void draw()
    {
        final String text = line();
        out.print('\r' + text + (text.length() < lastLength ? " ".repeat(lastLength - text.length()) : ""));
        out.flush();
        lastLength = text.length();
    }

    /** @return seconds left, by the rule in the class comment. */
    synchronized double secondsLeft()
    {
        final double ratio = plannedDone > 0 ? Math.max(1.0, actualDone / plannedDone) : 1.0;
        final double inStep = (nanoClock.getAsLong() - stepStartNanos) / 1e9;
        final double afterThisStep = ratio * Math.max(0, plannedTotal - plannedDone - stepPlanned);
        return Math.max(afterThisStep, ratio * Math.max(0, plannedTotal - plannedDone) - inStep);
    }

    /** @return the line, at most one character narrower than the terminal (a full line would wrap). */
    synchronized String line()
    {
        final double elapsed = (nanoClock.getAsLong() - startNanos) / 1e9;
        final double left = secondsLeft();
        final double fraction = elapsed + left <= 0 ? 0 : Math.min(1.0, elapsed / (elapsed + left));
        final String numbers = String.format(Locale.ROOT, " %3d%%  %d/%d  %s left", Math.round(fraction * 100), step,
            steps, duration(left));
        final String what = label + (phase.isEmpty() ? "" : ": " + phase);
        final int room = width == Integer.MAX_VALUE ? Integer.MAX_VALUE : width - 1;
        // The bar shrinks first, then the step's text is cut, and on a very narrow terminal the numbers alone.
        final int barWidth = Math.max(MIN_BAR, Math.min(MAX_BAR, room - numbers.length() - 2 - 2 - 20));
        final int filled = (int)Math.round(fraction * barWidth);
        final String bar = "[" + "#".repeat(filled) + ".".repeat(barWidth - filled) + "]";
        String text = bar + numbers + (what.isEmpty() ? "" : "  " + what);
        if (text.length() > room)
        {
            text = (bar + numbers).length() + 2 < room ? text.substring(0, room - 1) + "~" :
                numbers.trim().length() <= room ? numbers.trim() : "";
        }
        return text;
    }

    /**
     * @param seconds a duration.
     * @return e.g. "2m10s", "45s".
     */
    static String duration(final double seconds)
    {
        final long s = Math.round(seconds);
        return s >= 60 ? (s / 60) + "m" + String.format(Locale.ROOT, "%02d", s % 60) + "s" : s + "s";
    }

    /**
     * @return the terminal's width: {@code $COLUMNS} when the shell exported it, else what {@code stty size} says
     *         of the controlling terminal, else 80.
     */
    static int terminalColumns()
    {
        final String env = System.getenv("COLUMNS");
        if (null != env && env.matches("[0-9]{1,4}") && Integer.parseInt(env) > 0)
        {
            return Integer.parseInt(env);
        }
        try
        {
            final Process stty = new ProcessBuilder("stty", "size")
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/tty")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
            final String answer = new String(stty.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
            if (stty.waitFor(2, TimeUnit.SECONDS) && stty.exitValue() == 0 && answer.matches("[0-9]+ [0-9]+"))
            {
                final int cols = Integer.parseInt(answer.substring(answer.indexOf(' ') + 1));
                return cols > 0 ? cols : DEFAULT_COLUMNS;
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            // no terminal to ask
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        return DEFAULT_COLUMNS;
    }

    @Override
    public void close()
    {
        closed = true;
        if (null != ticker)
        {
            ticker.interrupt();
            try
            {
                ticker.join(1_000);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            synchronized (this)
            {
                out.print('\r' + " ".repeat(lastLength) + '\r');
                out.flush();
            }
        }
    }
}
