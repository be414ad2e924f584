package io.tidemark.bench.report;

import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.bench.peer.PeerResult;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import static io.tidemark.bench.report.HarnessReport.cell;
import static io.tidemark.bench.report.HarnessReport.micros;
import static io.tidemark.bench.report.HarnessReport.ratio;

/**
 * The sections of a harness run's {@value PerfRun#SUMMARY_FILE} about other processes than the matrix's: the
 * single-writer peers (Tidemark's store beside Chronicle Queue and a raw copy, each in forked JVMs) and the leader
 * kills (failover). Not thread-safe.
 */
final class HarnessSections
{
    private final HarnessData data;

    /** @param data the measures. */
    HarnessSections(final HarnessData data)
    {
        this.data = data;
    }

    /** The single-writer peers' section: Tidemark beside Chronicle Queue and the raw copy. */
    void peerSection(final StringBuilder md)
    {
        final PeerComparison peer = data.peer();
        if (null == peer)
        {
            return;
        }
        md.append("## Single writer: Tidemark vs Chronicle Queue vs raw copy\n\n");
        md.append("| Peer | JVM | size | append records/s | MB/s | append latency p50 / p99 / p99.9 / p99.99 / max us ")
            .append("| append call alone (service time) p50 / p99 / p99.9 / p99.99 / max us ")
            .append("| write-to-tailer p50 / p99 / p99.9 / p99.99 / max us | status |\n");
        md.append("|---|---|---:|---:|---:|---|---|---|---|\n");
        for (final PeerComparison.Group g : peer.groups())
        {
            md.append("| ").append(g.peer()).append(" | ").append(cell(g.javaVersion())).append(" | ")
                .append(g.size()).append(" B | ");
            if (g.ok())
            {
                md.append(Targets.count(g.medianRecordsPerSecond())).append(" | ")
                    .append(String.format(Locale.ROOT, "%.0f", g.medianRecordsPerSecond() * g.size() / 1e6))
                    .append(" | ").append(peerPercentiles(g, false)).append(" | ")
                    .append(null == g.appendServiceTime() ? "n/a" : servicePercentiles(g)).append(" | ")
                    .append(null == g.tailerLatency() ? "n/a" : peerPercentiles(g, true)).append(" | ran (")
                    .append(g.runs().size()).append(" JVM").append(g.runs().size() == 1 ? "" : "s").append(") |\n");
            }
            else
            {
                md.append("- | - | - | - | - | **did not run**: ").append(cell(g.firstFailure().failureSummary()))
                    .append(" |\n");
            }
        }
        md.append('\n');
        md.append("Ratios (Tidemark / peer, same run, same JVM):\n\n");
        md.append("| size | append throughput vs Chronicle | append p99.9 vs Chronicle | append p99.99 vs Chronicle | ")
            .append("tailer p99 vs Chronicle | append throughput vs raw copy |\n|---:|---|---|---|---|---|\n");
        for (final int size : peer.sizes())
        {
            final PeerComparison.Group ours = peer.main(PeerMain.TIDEMARK, size);
            final PeerComparison.Group chronicle = peer.main(PeerMain.CHRONICLE, size);
            final PeerComparison.Group raw = peer.main(PeerMain.RAW_COPY, size);
            final boolean oursOk = null != ours && ours.ok();
            final boolean both = oursOk && null != chronicle && chronicle.ok();
            md.append("| ").append(size).append(" B | ")
                .append(both ? ratio(ours.medianRecordsPerSecond() / chronicle.medianRecordsPerSecond()) :
                    "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(false, 99.9) /
                    chronicle.medianPercentileMicros(false, 99.9)) : "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(false, 99.99) /
                    chronicle.medianPercentileMicros(false, 99.99)) : "not measurable")
                .append(" | ").append(both ? ratio(ours.medianPercentileMicros(true, 99) /
                    chronicle.medianPercentileMicros(true, 99)) : "not measurable")
                .append(" | ").append(oursOk && null != raw && raw.ok() ?
                    ratio(ours.medianRecordsPerSecond() / raw.medianRecordsPerSecond()) : "n/a")
                .append(" |\n");
        }
        md.append('\n');
        final List<PeerResult> failures = peer.results().stream().filter((r) -> !r.ok()).toList();
        if (!failures.isEmpty())
        {
            md.append("### Peers that did not run\n\n");
            md.append("What failed, with the JVM arguments it had (Tidemark's JVMs get exactly `--add-exports ")
                .append("java.base/jdk.internal.misc=ALL-UNNAMED`; Chronicle Queue's JVM also gets the flags ")
                .append("Chronicle documents for Java 17 unless `--chronicle-strict` was given):\n\n");
            final List<String> seen = new ArrayList<>();
            for (final PeerResult f : failures)
            {
                final String key = f.peer() + f.javaHome();
                if (seen.contains(key))
                {
                    continue;
                }
                seen.add(key);
                md.append("- ").append(f.peer()).append(" on Java ").append(f.javaVersion()).append(" (")
                    .append(f.javaHome()).append("), JVM arguments `").append(f.jvmArgs()).append("`:\n\n```\n")
                    .append(firstLines(f.failure(), 14)).append("\n```\n\n");
            }
        }
    }

    private static String servicePercentiles(final PeerComparison.Group g)
    {
        final StringBuilder text = new StringBuilder();
        for (final double p : ScenarioResult.PERCENTILES.values())
        {
            if (p != 90.0)
            {
                text.append(micros(g.medianServicePercentileMicros(p))).append(" / ");
            }
        }
        return text.append(micros(g.appendServiceTime().getMaxValue() / 1e3)).toString();
    }

    private static String peerPercentiles(final PeerComparison.Group g, final boolean tailer)
    {
        final StringBuilder text = new StringBuilder();
        for (final double p : ScenarioResult.PERCENTILES.values())
        {
            if (p == 90.0)
            {
                continue;
            }
            text.append(micros(g.medianPercentileMicros(tailer, p))).append(" / ");
        }
        return text.append(micros(g.maxMicros(tailer))).toString();
    }

    /** The leader kills' section: the pause and what every acknowledged record did. */
    void failoverSection(final StringBuilder md)
    {
        if (data.failover().isEmpty())
        {
            return;
        }
        final Scenario s = data.failover().get(0).scenario();
        md.append("## Leader failover\n\n");
        md.append(s.describe()).append(", default replication settings (host.session.timeout.ms=600, heartbeat ")
            .append("100 ms). During the run the host leading partition 0 is killed (`ReplicationCluster.killHost`: ")
            .append("its threads stop at once, its files stay as after a kill -9); the producer retries on ")
            .append("LEADER_NOT_AVAILABLE and keeps its schedule, so the outage shows in the latency.\n\n");
        md.append("| run | killed host | new leader | acks resumed after | last ack before the kill | acked after ")
            .append("the kill | requests lost in flight | p99 / max latency | verified |\n")
            .append("|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (int i = 0; i < data.failover().size(); i++)
        {
            final RunResult r = data.failover().get(i);
            final RunResult.Failover f = r.failover();
            md.append("| ").append(i + 1).append(" | ")
                .append(null == f ? "-" : f.killedHost()).append(" | ")
                .append(null == f ? "-" : f.newLeader()).append(" | ")
                .append(null == f || f.resumeNanos() < 0 ? "never" :
                    String.format(Locale.ROOT, "%.1f ms", f.resumeNanos() / 1e6)).append(" | ")
                .append(null == f ? "-" : String.format(Locale.ROOT, "%.2f ms before", f.lastAckBeforeNanos() / 1e6))
                .append(" | ").append(null == f ? "-" : Targets.count((double)f.ackedAfterKill())).append(" | ")
                .append(null == f ? "-" : f.lostInFlight()).append(" | ")
                .append(null == r.latency() || r.latency().getTotalCount() == 0 ? "n/a" :
                    micros(r.latency().getValueAtPercentile(99) / 1e3) + " / " +
                    micros(r.latency().getMaxValue() / 1e3) + " us")
                .append(" | ").append(r.verified() ? "yes (" + Targets.count((double)r.verifiedRecords()) + ")" :
                    "**FAILED**: " + cell(r.problem()))
                .append(" |\n");
        }
        md.append('\n');
    }

    private static String firstLines(final String text, final int n)
    {
        final String[] lines = text.split("\\R");
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(n, lines.length); i++)
        {
            out.append(i == 0 ? "" : "\n").append(lines[i]);
        }
        if (lines.length > n)
        {
            for (int i = n; i < lines.length; i++)
            {
                if (lines[i].startsWith("Caused by: "))
                {
                    out.append("\n...\n").append(lines[i]);
                }
            }
        }
        return out.toString();
    }
}
