package io.tidemark.bench.peer;

import io.tidemark.bench.harness.ScenarioResult;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The peer runs of a report, grouped by (peer, record size, JVM): median append throughput, latency percentiles
 * (median over runs), histograms of all runs combined, and the ratios of Tidemark to Chronicle Queue and to the raw
 * copy on the main JVM.
 *
 * @param mainJavaHome the JVM the ratios are taken on (the harness's own).
 * @param results      every peer run.
 */
public record PeerComparison(String mainJavaHome, List<PeerResult> results)
{
    /**
     * The runs of one peer, size and JVM.
     *
     * @param peer     peer name.
     * @param size     record size.
     * @param javaHome the JVM's home.
     * @param runs     the runs.
     */
    public record Group(String peer, int size, String javaHome, List<PeerResult> runs)
    {
        /** @return whether every run ran. */
        public boolean ok()
        {
            return runs.stream().allMatch(PeerResult::ok);
        }

        /** @return the first failed run, or null. */
        public PeerResult firstFailure()
        {
            return runs.stream().filter((r) -> !r.ok()).findFirst().orElse(null);
        }

        /** @return the JVM version of the first run. */
        public String javaVersion()
        {
            return runs.get(0).javaVersion();
        }

        /** @return median append records/s over the runs that ran; NaN when none did. */
        public double medianRecordsPerSecond()
        {
            return ScenarioResult.median(runs.stream().filter(PeerResult::ok)
                .mapToDouble(PeerResult::appendRecordsPerSecond).toArray());
        }

        /** @return min and max append records/s over the runs that ran. */
        public double[] rangeRecordsPerSecond()
        {
            final double[] v = runs.stream().filter(PeerResult::ok).mapToDouble(PeerResult::appendRecordsPerSecond)
                .toArray();
            double min = Double.NaN;
            double max = Double.NaN;
            for (final double x : v)
            {
                min = Double.isNaN(min) ? x : Math.min(min, x);
                max = Double.isNaN(max) ? x : Math.max(max, x);
            }
            return new double[] {min, max};
        }

        /** @return the append latency of all runs combined (ns), or null. */
        public Histogram appendLatency()
        {
            return combine(runs.stream().map(PeerResult::appendLatency).toList());
        }

        /** @return the append service time of all runs combined (ns), or null. */
        public Histogram appendServiceTime()
        {
            return combine(runs.stream().map(PeerResult::appendServiceTime).toList());
        }

        /**
         * @param percentile e.g. 99.9.
         * @return the median over the runs of that percentile of the append service time, in microseconds.
         */
        public double medianServicePercentileMicros(final double percentile)
        {
            final List<Double> values = new ArrayList<>();
            for (final PeerResult run : runs)
            {
                final Histogram h = run.appendServiceTime();
                if (null != h && h.getTotalCount() > 0)
                {
                    values.add(h.getValueAtPercentile(percentile) / 1e3);
                }
            }
            return ScenarioResult.median(values.stream().mapToDouble(Double::doubleValue).toArray());
        }

        /** @return the write-to-tailer latency of all runs combined (ns), or null. */
        public Histogram tailerLatency()
        {
            return combine(runs.stream().map(PeerResult::tailerLatency).toList());
        }

        /**
         * @param tailer     tailer (true) or append (false) latency.
         * @param percentile e.g. 99.9.
         * @return the median over the runs of that percentile in microseconds; NaN when not measured.
         */
        public double medianPercentileMicros(final boolean tailer, final double percentile)
        {
            final List<Double> values = new ArrayList<>();
            for (final PeerResult run : runs)
            {
                final Histogram h = tailer ? run.tailerLatency() : run.appendLatency();
                if (null != h && h.getTotalCount() > 0)
                {
                    values.add(h.getValueAtPercentile(percentile) / 1e3);
                }
            }
            return ScenarioResult.median(values.stream().mapToDouble(Double::doubleValue).toArray());
        }

        /**
         * @param tailer tailer (true) or append (false) latency.
         * @return the largest latency of any run in microseconds; NaN when not measured.
         */
        public double maxMicros(final boolean tailer)
        {
            final Histogram h = tailer ? tailerLatency() : appendLatency();
            return null == h || h.getTotalCount() == 0 ? Double.NaN : h.getMaxValue() / 1e3;
        }

        private static Histogram combine(final List<Histogram> histograms)
        {
            Histogram combined = null;
            for (final Histogram h : histograms)
            {
                if (null != h)
                {
                    if (null == combined)
                    {
                        combined = new Histogram(3);
                    }
                    combined.add(h);
                }
            }
            return combined;
        }
    }

    /** @return the groups, in the order their first run appears. */
    public List<Group> groups()
    {
        final Map<String, Group> groups = new LinkedHashMap<>();
        for (final PeerResult r : results)
        {
            final String key = r.peer() + "|" + r.size() + "|" + r.javaHome();
            groups.computeIfAbsent(key, (k) -> new Group(r.peer(), r.size(), r.javaHome(), new ArrayList<>()))
                .runs().add(r);
        }
        return new ArrayList<>(groups.values());
    }

    /**
     * @param peer peer name.
     * @param size record size.
     * @return that group on the main JVM, or null.
     */
    public Group main(final String peer, final int size)
    {
        for (final Group g : groups())
        {
            if (g.peer().equals(peer) && g.size() == size && sameHome(g.javaHome(), mainJavaHome))
            {
                return g;
            }
        }
        return null;
    }

    /** @return the record sizes measured, in order. */
    public List<Integer> sizes()
    {
        return results.stream().map(PeerResult::size).distinct().toList();
    }

    /**
     * @param a a JVM home.
     * @param b another.
     * @return whether they are the same JVM (a JDK home and its {@code jre} count as the same).
     */
    static boolean sameHome(final String a, final String b)
    {
        if (Objects.equals(a, b))
        {
            return true;
        }
        if (null == a || null == b)
        {
            return false;
        }
        return strip(a).equals(strip(b));
    }

    private static String strip(final String home)
    {
        final String h = home.endsWith("/") ? home.substring(0, home.length() - 1) : home;
        return h.endsWith("/jre") ? h.substring(0, h.length() - 4) : h;
    }
}
