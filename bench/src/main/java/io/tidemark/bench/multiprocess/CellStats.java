package io.tidemark.bench.multiprocess;

import org.HdrHistogram.Histogram;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * Every run of every cell of a multiprocess-style run, and what the report takes from them: medians of records/s
 * and of server CPU per record over the runs, the runs' spread, and the runs' latency histograms added together.
 * Immutable.
 */
final class CellStats
{
    private final List<CellResult> cells;

    /** @param cells every cell of every run, in the order run. */
    CellStats(final List<CellResult> cells)
    {
        this.cells = List.copyOf(cells);
    }

    /** @return every cell, in the order run. */
    List<CellResult> cells()
    {
        return cells;
    }

    /** @return every run of one cell of one target. */
    List<CellResult> runs(final String target, final String kind, final int acks, final int partitions)
    {
        return cells.stream().filter((c) -> c.target().equals(target) && c.kind().equals(kind) &&
            c.acks() == acks && c.partitions() == partitions).toList();
    }

    /** @return whether the target has a cell. */
    boolean has(final String target)
    {
        return cells.stream().anyMatch((c) -> c.target().equals(target));
    }

    /** @return the median of the values that are numbers; NaN without one. */
    static double median(final double[] values)
    {
        final double[] v = Arrays.stream(values).filter((d) -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0)
        {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** @return the median records/s of the runs of a cell. */
    double rps(final String target, final String kind, final int acks, final int partitions)
    {
        return median(runs(target, kind, acks, partitions).stream().mapToDouble(CellResult::recordsPerSecond)
            .toArray());
    }

    /** @return the median server CPU per record of the runs of a cell, microseconds. */
    double cpuPerRecord(final String target, final String kind, final int acks, final int partitions)
    {
        return median(runs(target, kind, acks, partitions).stream().mapToDouble(CellResult::serverMicrosPerRecord)
            .toArray());
    }

    /** @return (max - min) / median of the runs' records/s; NaN with fewer than two runs. */
    double spread(final String target, final String kind, final int acks, final int partitions)
    {
        final double[] v = runs(target, kind, acks, partitions).stream().mapToDouble(CellResult::recordsPerSecond)
            .toArray();
        if (v.length < 2)
        {
            return Double.NaN;
        }
        return (Arrays.stream(v).max().orElse(0) - Arrays.stream(v).min().orElse(0)) / median(v);
    }

    /** @return the runs' latency histograms of a cell added together (nanoseconds); empty without any. */
    Histogram latency(final String target, final String kind, final int acks, final int partitions)
    {
        final Histogram combined = new Histogram(3);
        for (final CellResult c : runs(target, kind, acks, partitions))
        {
            if (null != c.latency())
            {
                combined.add(c.latency());
            }
        }
        return combined;
    }

    /**
     * @param value  what to take of each run.
     * @param format how to write a value ({@link String#format}).
     * @return {@code " (runs <min>-<max>)"} of the value over the runs of a cell; empty with fewer than two runs.
     */
    String range(final String target, final String kind, final int acks, final int partitions,
        final ToDoubleFunction<CellResult> value, final String format)
    {
        final double[] v = runs(target, kind, acks, partitions).stream().mapToDouble(value)
            .filter((d) -> !Double.isNaN(d)).toArray();
        if (v.length < 2)
        {
            return "";
        }
        return " (runs " + String.format(Locale.ROOT, format, Arrays.stream(v).min().orElse(0)) + "-" +
            String.format(Locale.ROOT, format, Arrays.stream(v).max().orElse(0)) + ")";
    }

    /** @return a percentile of a nanosecond histogram in milliseconds; NaN when empty. */
    static double ms(final Histogram h, final double percentile)
    {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
    }
}
