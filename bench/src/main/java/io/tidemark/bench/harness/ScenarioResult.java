package io.tidemark.bench.harness;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A scenario's runs together: the median and spread (min, max) of records/s, the latency histogram of all runs
 * combined (the {@code .hgrm} file) and, per percentile, the median over the runs.
 *
 * @param scenario the scenario.
 * @param sweeps   the sweeps it belongs to (a scenario shared by several sweeps runs once).
 * @param runs     its runs, in order.
 */
public record ScenarioResult(Scenario scenario, List<String> sweeps, List<RunResult> runs)
{
    /** Percentiles reported, with their JSON/markdown names. */
    public static final Map<String, Double> PERCENTILES = percentiles();

    private static Map<String, Double> percentiles()
    {
        final Map<String, Double> p = new LinkedHashMap<>();
        p.put("p50", 50.0);
        p.put("p90", 90.0);
        p.put("p99", 99.0);
        p.put("p99.9", 99.9);
        p.put("p99.99", 99.99);
        return p;
    }

    /** @return median over the runs of records/s. */
    public double medianRecordsPerSecond()
    {
        return median(runs.stream().mapToDouble(RunResult::recordsPerSecond).toArray());
    }

    /** @return the lowest records/s of a run. */
    public double minRecordsPerSecond()
    {
        return runs.stream().mapToDouble(RunResult::recordsPerSecond).min().orElse(Double.NaN);
    }

    /** @return the highest records/s of a run. */
    public double maxRecordsPerSecond()
    {
        return runs.stream().mapToDouble(RunResult::recordsPerSecond).max().orElse(Double.NaN);
    }

    /** Fewest runs whose spread is reported: the spread of one or two runs says nothing about the noise. */
    public static final int MIN_RUNS_FOR_SPREAD = 3;

    /** @return (max - min) / median of records/s, in percent; NaN with fewer than {@link #MIN_RUNS_FOR_SPREAD} runs. */
    public double spreadPercent()
    {
        final double median = medianRecordsPerSecond();
        return runs.size() >= MIN_RUNS_FOR_SPREAD && median > 0 ?
            100.0 * (maxRecordsPerSecond() - minRecordsPerSecond()) / median : Double.NaN;
    }

    /** @return median over the runs of MB/s. */
    public double medianMbPerSecond()
    {
        return medianRecordsPerSecond() * scenario.messageSize() / 1e6;
    }

    /** @return median over the runs of records appended per second. */
    public double medianAppendedPerSecond()
    {
        return median(runs.stream().mapToDouble(RunResult::appendedPerSecond).toArray());
    }

    /** @return every run's latency histogram added up (nanoseconds). */
    public Histogram combinedLatency()
    {
        final Histogram combined = new Histogram(3);
        for (final RunResult run : runs)
        {
            if (null != run.latency())
            {
                combined.add(run.latency());
            }
        }
        return combined;
    }

    /** @return whether any latency was recorded. */
    public boolean hasLatency()
    {
        return combinedLatency().getTotalCount() > 0;
    }

    /**
     * @param percentile e.g. 99.9.
     * @return the median over the runs of that percentile, in microseconds; NaN without latency.
     */
    public double medianPercentileMicros(final double percentile)
    {
        final List<Double> values = new ArrayList<>();
        for (final RunResult run : runs)
        {
            if (null != run.latency() && run.latency().getTotalCount() > 0)
            {
                values.add(run.latency().getValueAtPercentile(percentile) / 1e3);
            }
        }
        return median(values.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** @return the largest latency of any run, in microseconds; NaN without latency. */
    public double maxMicros()
    {
        final Histogram combined = combinedLatency();
        return combined.getTotalCount() == 0 ? Double.NaN : combined.getMaxValue() / 1e3;
    }

    /**
     * @param percentile e.g. 99.9.
     * @return that percentile of all runs combined, in microseconds; NaN without latency.
     */
    public double combinedPercentileMicros(final double percentile)
    {
        final Histogram combined = combinedLatency();
        return combined.getTotalCount() == 0 ? Double.NaN : combined.getValueAtPercentile(percentile) / 1e3;
    }

    /** @return median over the runs of the CPUs this JVM got during the window. */
    public double medianCpusUsed()
    {
        return median(runs.stream().mapToDouble(RunResult::cpusUsed).filter((v) -> !Double.isNaN(v)).toArray());
    }

    /** @return median over the runs of the 1-minute load average at the window's end. */
    public double medianLoadAverage()
    {
        return median(runs.stream().mapToDouble(RunResult::loadAverage).filter((v) -> !Double.isNaN(v)).toArray());
    }

    /** @return each run's dirty pages before→after its window (MiB), in order. */
    public String dirtyMib()
    {
        return String.join(", ", runs.stream().map(RunResult::dirtyMib).toList());
    }

    /** @return leader elections over all runs (0 unless a host session expired). */
    public int elections()
    {
        return runs.stream().mapToInt(RunResult::elections).sum();
    }

    /** @return whether every run verified. */
    public boolean verified()
    {
        return runs.stream().allMatch(RunResult::verified);
    }

    /** @return the first run's problem, or null. */
    public String problem()
    {
        return runs.stream().map(RunResult::problem).filter((p) -> null != p).findFirst().orElse(null);
    }

    /** @return acknowledged records verified over all runs. */
    public long verifiedRecords()
    {
        return runs.stream().mapToLong(RunResult::verifiedRecords).sum();
    }

    /**
     * @param values numbers.
     * @return their median (mean of the middle two for an even count); NaN when empty.
     */
    public static double median(final double[] values)
    {
        if (values.length == 0)
        {
            return Double.NaN;
        }
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
