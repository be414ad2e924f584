package io.tidemark.bench.peer;

import io.tidemark.bench.report.MachineState;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordEncoder;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The markdown summary of a {@link WriterBench} run: what was measured first, then the goals' ratios, then the cells. */
final class WriterReport
{
    private static final double[] PERCENTILES = {50, 99, 99.9, 99.99};

    private WriterReport()
    {
    }

    /** @return bytes a one-record append of {@code size} value bytes writes to a Tidemark log (frame included). */
    static int tidemarkBytesPerRecord(final int size)
    {
        return RecordBatchDescriptor.frameLength(RecordBatchDescriptor.HEADER_LENGTH +
            RecordEncoder.encodedLength(-1, size, 0));
    }

    /** @return the machine's state around a cell's window, one line. */
    static String state(final WriterBench.Cell cell)
    {
        final Map<Object, Object> r = cell.result();
        return String.format(Locale.ROOT, "load %s→%s, JVM %s CPUs, dirty %s→%s MiB (peak %s), writeback %s→%s MiB",
            r.get("before.load1"), r.get("after.load1"), r.get("cpus.used"),
            MachineState.mib(parse(r.get("before.dirty.kib"))), MachineState.mib(parse(r.get("after.dirty.kib"))),
            MachineState.mib(parse(r.get("peak.dirty.kib"))), MachineState.mib(parse(r.get("before.writeback.kib"))),
            MachineState.mib(parse(r.get("after.writeback.kib"))));
    }

    private static long parse(final Object value)
    {
        return null == value ? -1 : Long.parseLong(value.toString());
    }

    static String markdown(final Map<String, String> env, final List<WriterBench.Cell> cells,
        final List<double[]> bandwidth, final Collection<String> fileSystems, final List<String> peers,
        final List<Long> rates, final List<Integer> sizes)
    {
        final int size = sizes.get(0);
        final List<WriterBench.Cell> main = cells.stream().filter((c) -> c.size() == size).toList();
        final StringBuilder md = new StringBuilder();
        md.append("# Single writer: append latency and the machine's state\n\n");
        md.append("What was measured: one writer thread appending ").append(size).append("-byte records (one record per append) to ")
            .append(String.join(", ", peers)).append(" on ").append(String.join(" and ", fileSystems))
            .append(", at fixed rates (latency from each append's due time: coordinated omission corrected) and ")
            .append("closed loop (each call timed), every cell in a JVM of its own. `tidemark` runs with the ")
            .append("store's defaults (`dirty.bytes.max` 0: writeback left to the kernel), `tidemark-dirty` with ")
            .append("`dirty.bytes.max` of 4 MiB. ")
            .append("Beside every figure: the one-minute load before and after the window, the CPUs the cell's JVM ")
            .append("used in it, and Dirty / Writeback of /proc/meminfo (the whole machine's) before and after, with ")
            .append("the peak of Dirty + Writeback sampled every 20 ms. A fixed-rate cell whose records/s is ")
            .append("below its rate fell behind (the machine did not give the writer the CPU or the disk it needed); ")
            .append("each record it had not appended by the window's end counts with the latency it had reached ")
            .append("then, a lower bound.\n\n");
        md.append("- Date: ").append(env.get("date")).append('\n');
        md.append("- Command: `").append(env.get("command")).append("`\n\n");
        md.append("Machine: ").append(env.get("cpu.model")).append(", ").append(env.get("cpu.available.to.jvm"))
            .append(" CPUs, ").append(env.get("memory.total")).append(", ").append(env.get("os")).append("; ")
            .append(env.get("vm.dirty")).append(". Load ").append(env.get("loadavg.start")).append(" at the start, ")
            .append(env.get("loadavg.end")).append(" at the end: other work shared the machine (see env.txt).\n\n");
        if (!bandwidth.isEmpty())
        {
            md.append("Disk sequential write bandwidth, same run (1 MiB writes then fsync, before and after the ")
                .append("cells): ");
            for (final double[] b : bandwidth)
            {
                md.append(String.format(Locale.ROOT, "%.0f MB/s (page cache alone %.0f MB/s); ", b[0], b[1]));
            }
            md.append("\n\n");
        }
        md.append("## Goals of issue 20, as ratios in this run\n\n");
        goals(md, main, bandwidth, rates, size);
        if (sizes.size() > 1)
        {
            framing(md, cells, fileSystems, rates, sizes);
        }
        md.append("\n## Cells (median over runs; spread of p99.99 as min-max)\n\n");
        md.append("| FS | Load | Peer | Records/s | p50 us | p99 us | p99.9 us | p99.99 us | max us | p99.99 spread |" +
            " Machine state (run 1) |\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (final String fs : fileSystems)
        {
            for (final long rate : rates)
            {
                for (final String peer : peers)
                {
                    final List<WriterBench.Cell> runs = select(main, fs, rate, peer);
                    if (runs.isEmpty())
                    {
                        continue;
                    }
                    md.append("| ").append(fs).append(" | ").append(rate == 0 ? "closed" : String.format(Locale.ROOT,
                        "%,d/s", rate)).append(" | ").append(peer).append(" | ");
                    if (runs.stream().noneMatch(WriterBench.Cell::ok))
                    {
                        md.append("failed: ").append(runs.get(0).result().getProperty("failure", "")
                            .lines().findFirst().orElse("").replace('|', '/')).append(" | | | | | | | |\n");
                        continue;
                    }
                    md.append(String.format(Locale.ROOT, "%,.0f", median(runs, -1))).append(" | ");
                    for (final double p : PERCENTILES)
                    {
                        md.append(String.format(Locale.ROOT, "%.2f", median(runs, p) / 1e3)).append(" | ");
                    }
                    md.append(String.format(Locale.ROOT, "%.1f", median(runs, 100) / 1e3)).append(" | ");
                    final double[] spread = spread(runs, 99.99);
                    md.append(String.format(Locale.ROOT, "%.1f-%.1f", spread[0] / 1e3, spread[1] / 1e3))
                        .append(" | ").append(state(runs.get(0))).append(" |\n");
                }
            }
        }
        md.append("\nPercentile distributions: `<fs>-<load>-<peer>-run<N>.hgrm`. JFR profiles of the writer thread ")
            .append("in the first run: `profiles/`.\n");
        return md.toString();
    }

    private static void framing(final StringBuilder md, final List<WriterBench.Cell> cells,
        final Collection<String> fileSystems, final List<Long> rates, final List<Integer> sizes)
    {
        md.append("\n## Framing study: what the bytes per record cost\n\n")
            .append("Tidemark appending smaller values stands for the same value with less framing: a frame of the ")
            .append("same length costs the writer the same. Bytes per record are Tidemark's frames (batch header ")
            .append(RecordBatchDescriptor.HEADER_LENGTH).append(" + record header + value, 8-aligned); ratios are ")
            .append("against the first size.\n\n| FS | Load | Value B | Bytes/record | Peer | Records/s | vs first | ")
            .append("MB/s | p99.99 us | max us |\n|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
        for (final String fs : fileSystems)
        {
            for (final long rate : rates)
            {
                for (final String peer : List.of(PeerMain.TIDEMARK, PeerMain.CHRONICLE))
                {
                    final double base = median(selectSize(cells, fs, rate, peer, sizes.get(0)), -1);
                    for (final int size : sizes)
                    {
                        final List<WriterBench.Cell> runs = selectSize(cells, fs, rate, peer, size);
                        if (!ok(runs))
                        {
                            continue;
                        }
                        final int bytes = PeerMain.CHRONICLE.equals(peer) ? size + 4 : tidemarkBytesPerRecord(size);
                        final double rps = median(runs, -1);
                        md.append(String.format(Locale.ROOT, "| %s | %s | %d | %d%s | %s | %,.0f | %.2f | %.0f | %.1f | " +
                            "%.1f |%n", fs, rate == 0 ? "closed" : String.format(Locale.ROOT, "%,d/s", rate), size,
                            bytes, PeerMain.CHRONICLE.equals(peer) ? " (4-byte header)" : "", peer, rps, rps / base,
                            rps * bytes / 1e6, median(runs, 99.99) / 1e3, median(runs, 100) / 1e3));
                    }
                }
            }
        }
    }

    static List<WriterBench.Cell> selectSize(final List<WriterBench.Cell> cells, final String fs, final long rate,
        final String peer, final int size)
    {
        return select(cells, fs, rate, peer).stream().filter((c) -> c.size() == size).toList();
    }

    private static void goals(final StringBuilder md, final List<WriterBench.Cell> cells,
        final List<double[]> bandwidth, final List<Long> rates, final int size)
    {
        final String disk = cells.stream().map(WriterBench.Cell::fs).filter((f) -> !"tmpfs".equals(f)).findFirst()
            .orElse(null);
        if (null == disk)
        {
            md.append("No disk cells.\n");
            return;
        }
        for (final long rate : rates)
        {
            final List<WriterBench.Cell> t = select(cells, disk, rate, PeerMain.TIDEMARK);
            final List<WriterBench.Cell> d = select(cells, disk, rate, PeerMain.TIDEMARK_DIRTY_BOUND);
            final List<WriterBench.Cell> c = select(cells, disk, rate, PeerMain.CHRONICLE);
            final String load = rate == 0 ? "closed loop" : String.format(Locale.ROOT, "%,d records/s", rate);
            if (ok(t) && ok(c))
            {
                md.append(String.format(Locale.ROOT, "- %s, %s: Tidemark p99.99 / Chronicle Queue p99.99 = %.2f " +
                    "(%.1f / %.1f us); max %.1f us (Chronicle %.1f us)%s.%n", disk, load,
                    median(t, 99.99) / median(c, 99.99), median(t, 99.99) / 1e3, median(c, 99.99) / 1e3,
                    median(t, 100) / 1e3, median(c, 100) / 1e3,
                    rate == 100_000 ? "; goal: ratio <= 0.2 and max < 1,000 us" : ""));
            }
            if (ok(t) && ok(d))
            {
                md.append(String.format(Locale.ROOT, "- %s, %s: with / without dirty.bytes.max: p99.9 %.2f, " +
                    "p99.99 %.2f, max %.2f, records/s %.2f.%n", disk, load, median(d, 99.9) / median(t, 99.9),
                    median(d, 99.99) / median(t, 99.99), median(d, 100) / median(t, 100),
                    median(d, -1) / median(t, -1)));
            }
            if (rate == 0 && ok(t) && ok(c))
            {
                final double tidemarkMb = median(t, -1) * tidemarkBytesPerRecord(size) / 1e6;
                md.append(String.format(Locale.ROOT, "- %s, closed loop: Tidemark / Chronicle Queue records/s = " +
                    "%.2f (goal >= 1.5, or within 10%% of the disk's bandwidth); Tidemark writes %d bytes a record, " +
                    "%.0f MB/s", disk, median(t, -1) / median(c, -1), tidemarkBytesPerRecord(size), tidemarkMb));
                if (!bandwidth.isEmpty())
                {
                    final double disks = bandwidth.stream().mapToDouble((b) -> b[0]).average().orElse(Double.NaN);
                    md.append(String.format(Locale.ROOT, " = %.0f%% of the disk's %.0f MB/s", 100 * tidemarkMb / disks,
                        disks));
                }
                md.append(".\n");
            }
            final List<WriterBench.Cell> tmp = select(cells, "tmpfs", rate, PeerMain.TIDEMARK);
            if (ok(t) && ok(tmp))
            {
                md.append(String.format(Locale.ROOT, "- Tidemark, %s: %s / tmpfs p99.9 = %.2f, p99.99 = %.2f.%n", load,
                    disk, median(t, 99.9) / median(tmp, 99.9), median(t, 99.99) / median(tmp, 99.99)));
            }
        }
    }

    private static boolean ok(final List<WriterBench.Cell> runs)
    {
        return runs.stream().anyMatch(WriterBench.Cell::ok);
    }

    static List<WriterBench.Cell> select(final List<WriterBench.Cell> cells, final String fs, final long rate,
        final String peer)
    {
        final List<WriterBench.Cell> out = new ArrayList<>();
        for (final WriterBench.Cell cell : cells)
        {
            if (cell.fs().equals(fs) && cell.rate() == rate && cell.peer().equals(peer))
            {
                out.add(cell);
            }
        }
        return out;
    }

    /** @param percentile a percentile, 100 for the max, -1 for records/s. @return the median over the ok runs. */
    static double median(final List<WriterBench.Cell> runs, final double percentile)
    {
        final double[] values = values(runs, percentile);
        if (values.length == 0)
        {
            return Double.NaN;
        }
        java.util.Arrays.sort(values);
        return values.length % 2 == 1 ? values[values.length / 2] :
            (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
    }

    static double[] spread(final List<WriterBench.Cell> runs, final double percentile)
    {
        final double[] values = values(runs, percentile);
        java.util.Arrays.sort(values);
        return values.length == 0 ? new double[]{Double.NaN, Double.NaN} :
            new double[]{values[0], values[values.length - 1]};
    }

    private static double[] values(final List<WriterBench.Cell> runs, final double percentile)
    {
        return runs.stream().filter(WriterBench.Cell::ok).mapToDouble((c) ->
        {
            if (percentile < 0)
            {
                return c.number("records.per.second");
            }
            final Histogram h = c.latency();
            return percentile >= 100 ? h.getMaxValue() : h.getValueAtPercentile(percentile);
        }).toArray();
    }
}
