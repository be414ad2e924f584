package io.tidemark.bench.report;

import io.tidemark.bench.harness.Matrix;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A harness run's charts ({@link Charts}): records/s by acks, replication factor, min.insync and partitions, latency
 * percentiles by rate, the peers' latency; the files drawn and any problem drawing them, for the report.
 * Not thread-safe.
 */
final class HarnessCharts
{
    private final HarnessData data;
    private final List<String> chartFiles = new ArrayList<>();
    private final List<String> chartProblems = new ArrayList<>();

    /** @param data the measures. */
    HarnessCharts(final HarnessData data)
    {
        this.data = data;
    }

    /** @return the charts drawn, relative to the report directory. */
    List<String> files()
    {
        return chartFiles;
    }

    /** @return why charts could not be drawn; empty when all were. */
    List<String> problems()
    {
        return chartProblems;
    }

    /** Draw every chart into {@code <directory>/charts}; a failure is a problem ({@link #problems()}), not an error. */
    void write(final Path directory)
    {
        final Path dir = directory.resolve(HarnessReport.CHARTS_DIR);
        try
        {
            Files.createDirectories(dir);
            bySweep(dir, Matrix.ACKS, "tps-by-acks.png", "Records/s by acks (RF=3, closed loop)", "acks",
                (s) -> "acks=" + s.acksName());
            bySweep(dir, Matrix.REPLICAS, "tps-by-replicas.png", "Records/s by replication factor (acks=all)",
                "replicas", (s) -> "RF=" + s.replicas());
            bySweep(dir, Matrix.MIN_INSYNC, "tps-by-min-insync.png",
                "Records/s by min.insync.replicas (acks=all, RF=3)", "min.insync.replicas",
                (s) -> "min.insync=" + s.minInsync());
            bySweep(dir, Matrix.FLUSH, "tps-by-flush.png", "Records/s by flush policy (RF=1, acks=1)",
                "flush.interval.messages", Scenario::flushName);
            bySweep(dir, Matrix.BATCH, "tps-by-batch.png", "Records/s by records per request (acks=all, RF=3)",
                "records per produce request", (s) -> Integer.toString(s.batchRecords()));
            final Map<String, Double> partitions = sweepValues(Matrix.PARTITIONS, (s) -> Integer.toString(
                s.partitions()));
            if (!partitions.isEmpty())
            {
                Charts.lines(dir.resolve("tps-by-partitions.png"), "Records/s by partitions (acks=all, RF=3)",
                    "partitions", "records/s (median)", Map.of("records/s", partitions));
                chartFiles.add(HarnessReport.CHARTS_DIR + "/tps-by-partitions.png");
            }
            final List<Long> rates = data.scenarios().stream().filter((r) -> r.sweeps().contains(Matrix.LATENCY))
                .map((r) -> r.scenario().load() == Scenario.Load.OPEN ? r.scenario().rate() : 0L).distinct()
                .toList();
            for (final long rate : rates)
            {
                final Map<String, Histogram> curves = new LinkedHashMap<>();
                for (final ScenarioResult r : data.inSweep(Matrix.LATENCY))
                {
                    final boolean open = r.scenario().load() == Scenario.Load.OPEN;
                    if (open ? r.scenario().rate() == rate : rate == 0)
                    {
                        curves.put("acks=" + r.scenario().acksName(), r.combinedLatency());
                    }
                }
                final String file = "latency-by-acks-" + (rate == 0 ? "one-at-a-time" : Scenario.rateName(rate)) +
                    ".png";
                Charts.percentiles(dir.resolve(file), rate == 0 ?
                    "Append-to-ack latency by acks, RF=3, one request at a time" :
                    "Append-to-ack latency by acks, RF=3, open loop " + Scenario.rateName(rate) + " records/s",
                    curves);
                chartFiles.add(HarnessReport.CHARTS_DIR + "/" + file);
            }
            if (null != data.peer())
            {
                for (final int size : data.peer().sizes())
                {
                    final Map<String, Histogram> curves = new LinkedHashMap<>();
                    for (final String peer : List.of(PeerMain.TIDEMARK, PeerMain.CHRONICLE, PeerMain.RAW_COPY))
                    {
                        final PeerComparison.Group g = data.peer().main(peer, size);
                        if (null != g && g.ok())
                        {
                            curves.put(peer + " append", g.appendLatency());
                            if (null != g.tailerLatency())
                            {
                                curves.put(peer + " write-to-tailer", g.tailerLatency());
                            }
                        }
                    }
                    final String file = "peer-latency-" + size + "B.png";
                    Charts.percentiles(dir.resolve(file), "Single-writer latency, " + size + " B records",
                        curves);
                    chartFiles.add(HarnessReport.CHARTS_DIR + "/" + file);
                }
            }
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            chartProblems.add("charts could not be drawn: " + ex);
        }
    }

    private void bySweep(final Path dir, final String sweep, final String file, final String title,
        final String category, final Function<Scenario, String> label) throws IOException
    {
        final Map<String, Double> values = sweepValues(sweep, label);
        if (!values.isEmpty())
        {
            Charts.bars(dir.resolve(file), title, category, "records/s (median)", values);
            chartFiles.add(HarnessReport.CHARTS_DIR + "/" + file);
        }
    }

    private Map<String, Double> sweepValues(final String sweep, final Function<Scenario, String> label)
    {
        final Map<String, Double> values = new LinkedHashMap<>();
        for (final ScenarioResult r : data.inSweep(sweep))
        {
            values.put(label.apply(r.scenario()), r.medianRecordsPerSecond());
        }
        return values;
    }
}
