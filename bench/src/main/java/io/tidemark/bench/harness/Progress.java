package io.tidemark.bench.harness;

import java.io.PrintWriter;
import java.util.Locale;

/**
 * A progress bar for long runs: {@code [#########.........]  45%  step 9/22  2m10s left  <step>: <phase>}, redrawn in
 * place about four times a second on a terminal; one line per step and phase change otherwise (a log file, CI).
 * The estimate is from the planned seconds of the steps (warm-up and measurement), corrected by how long the
 * finished steps really took.
 */
public final class Progress implements AutoCloseable
{
    private static final int WIDTH = 30;

    private final PrintWriter out;
    private final boolean redraw;
    private final double plannedSeconds;
    private final int steps;
    private final long startNanos = System.nanoTime();
    private final Thread ticker;
    private volatile boolean closed;
    private double doneSeconds;
    private double stepPlanned;
    private long stepStartNanos;
    private int step;
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
        this.out = out;
        this.redraw = redraw;
        this.steps = steps;
        this.plannedSeconds = Math.max(plannedSeconds, 1e-3);
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
        stepStartNanos = System.nanoTime();
        if (!redraw)
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

    /** The current step finished. */
    public synchronized void endStep()
    {
        doneSeconds += stepPlanned;
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

    /** @return the bar as a line of text. */
    synchronized String line()
    {
        final double inStep = Math.min(stepPlanned, (System.nanoTime() - stepStartNanos) / 1e9);
        final double fraction = Math.min(1.0, (doneSeconds + Math.max(0, inStep)) / plannedSeconds);
        final int filled = (int)Math.round(fraction * WIDTH);
        final double elapsed = (System.nanoTime() - startNanos) / 1e9;
        final double left = fraction > 0.02 ? elapsed / fraction - elapsed : plannedSeconds - elapsed;
        return String.format(Locale.ROOT, "[%s%s] %3d%%  step %d/%d  %s left  %s%s",
            "#".repeat(filled), ".".repeat(WIDTH - filled), Math.round(fraction * 100), step, steps,
            duration(Math.max(0, left)), label, phase.isEmpty() ? "" : ": " + phase);
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
