package io.tidemark.bench.harness;

import org.junit.jupiter.api.Test;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ProgressTest
{
    private static final long SECOND = 1_000_000_000L;

    @Test
    void theLineFitsTheTerminal()
    {
        final AtomicLong clock = new AtomicLong();
        for (final int columns : new int[] {200, 120, 80, 60, 40, 20, 8})
        {
            try (Progress progress = new Progress(new PrintWriter(new StringWriter()), true, 30, 97, clock::get,
                () -> columns))
            {
                progress.startStep("closed-loop P=1 RF=3 acks=all min.insync=1 100B flush=none batch=64 " +
                    "in-flight=16 producers=1 [run 1/1]", 3);
                progress.phase("measure");
                final String line = progress.line();
                assertTrue(line.length() < columns, columns + " columns: " + line.length() + " '" + line + "'");
                if (columns >= 60)
                {
                    assertTrue(line.startsWith("[") && line.contains("  1/30  1m37s left  closed-loop"), line);
                }
            }
        }
    }

    /** The width is asked at each step: a resized terminal gets lines of its new width. */
    @Test
    void aResizedTerminalIsFollowedAtTheNextStep()
    {
        final AtomicLong clock = new AtomicLong();
        final int[] columns = {120};
        try (Progress progress = new Progress(new PrintWriter(new StringWriter()), true, 2, 10, clock::get,
            () -> columns[0]))
        {
            progress.startStep("a".repeat(200), 5);
            assertEquals(119, progress.line().length());
            columns[0] = 50;
            progress.endStep();
            progress.startStep("b".repeat(200), 5);
            assertEquals(49, progress.line().length());
        }
    }

    /**
     * The estimate counts down within a step, holds while a step overruns (never rises with the clock), and is
     * corrected by what the finished steps really took when a step ends.
     */
    @Test
    void theEstimateCountsDownHoldsWhileAStepOverrunsAndLearnsFromFinishedSteps()
    {
        final AtomicLong clock = new AtomicLong();
        try (Progress progress = new Progress(new PrintWriter(new StringWriter()), false, 4, 40, clock::get,
            () -> 80))
        {
            progress.startStep("one", 10);
            assertEquals(40, progress.secondsLeft(), 1e-6);
            clock.set(5 * SECOND);
            assertEquals(35, progress.secondsLeft(), 1e-6, "counts down with the clock");
            double previous = progress.secondsLeft();
            for (int t = 6; t <= 15; t++)
            {
                clock.set(t * SECOND);
                final double left = progress.secondsLeft();
                assertTrue(left <= previous, "never rises within a step: " + left + " after " + previous);
                previous = left;
            }
            assertEquals(30, progress.secondsLeft(), 1e-6, "holds at the steps after this one while it overruns");
            progress.endStep(); // took 15 s for 10 planned: the ratio is now 1.5
            progress.startStep("two", 10);
            assertEquals(45, progress.secondsLeft(), 1e-6, "3 steps of 10 s planned, at 1.5x");
            clock.set(30 * SECOND);
            progress.endStep(); // took 15 s again: steady
            progress.startStep("three", 10);
            assertEquals(30, progress.secondsLeft(), 1e-6);
            clock.set(40 * SECOND);
            assertEquals(20, progress.secondsLeft(), 1e-6);
            clock.set(45 * SECOND);
            progress.endStep();
            progress.startStep("four", 10);
            assertEquals(15, progress.secondsLeft(), 1e-6);
            clock.set(60 * SECOND);
            progress.endStep();
            assertEquals(0, progress.secondsLeft(), 1e-6);
            assertTrue(progress.line().contains("100%"), progress.line());
        }
    }

}
