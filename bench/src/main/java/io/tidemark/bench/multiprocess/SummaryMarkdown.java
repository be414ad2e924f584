package io.tidemark.bench.multiprocess;

import io.tidemark.bench.JvmFlags;
import io.tidemark.replication.Acks;
import org.HdrHistogram.Histogram;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The text of a multiprocess run's {@code summary.md}: the header the results index reads ({@code - Date:},
 * {@code - Command:}), the table of acks modes, the Kafka reference with the ratios, the setup, the hosts (how each
 * stopped, what its log says went wrong) and the method.
 */
final class SummaryMarkdown
{
    private final MultiProcessOutcome outcome;
    private final MultiProcessPlan plan;
    private final Map<String, String> facts;
    private final String machine;
    private final List<String> chartFiles;
    private final List<String> chartProblems;
    private final StringBuilder md = new StringBuilder();

    SummaryMarkdown(final MultiProcessOutcome outcome, final Map<String, String> facts, final String machine,
        final List<String> chartFiles, final List<String> chartProblems)
    {
        this.outcome = outcome;
        this.plan = outcome.plan();
        this.facts = facts;
        this.machine = machine;
        this.chartFiles = chartFiles;
        this.chartProblems = chartProblems;
    }

    /** @return the Markdown. */
    String render()
    {
        header();
        results();
        kafka();
        runs();
        setup();
        hosts();
        method();
        return md.toString();
    }

    private void header()
    {
        md.append("# Tidemark multi-process benchmark: three host JVMs on loopback, RF=3, acks sweep\n\n");
        md.append("- Date: ").append(facts.get("date")).append('\n');
        md.append("- Commit: ").append(facts.get("git")).append('\n');
        md.append("- Command: `").append(facts.get("command")).append("`\n");
        md.append("- Machine: ").append(machine).append('\n');
        md.append(String.format(Locale.ROOT, "- Took: %.0f s, from the command's start to the hosts' stop%n",
            outcome.wallSeconds()));
        md.append("- Load average (1, 5, 15 min): ").append(facts.get("loadavg.start")).append(" at the start, ")
            .append(facts.get("loadavg.end")).append(" at the end\n");
        md.append("- Outcome: ").append(outcome.problems().isEmpty() ? "clean: every phase ran, no send failed, " +
            "every acknowledged record of the latency phases was read back" : "**problems**, listed below")
            .append("\n\n");
        if (!outcome.problems().isEmpty())
        {
            md.append("**Problems:**\n\n");
            outcome.problems().forEach((p) -> md.append("- ").append(cell(p)).append('\n'));
            md.append('\n');
        }
        if (!outcome.notes().isEmpty())
        {
            md.append("**Notes:**\n\n");
            outcome.notes().forEach((n) -> md.append("- ").append(cell(n)).append('\n'));
            md.append('\n');
        }
    }

    private void results()
    {
        md.append("## Results\n\n");
        md.append(String.format(Locale.ROOT, "Saturated: records/s completed inside a %s window (median of %d " +
            "run(s)). Latency: open loop at %,d records/s, from each record's due time to its acknowledgement " +
            "(coordinated omission corrected), all runs' %s windows together, in milliseconds.%n%n",
            seconds(plan.throughputMs()), plan.runs(), plan.rate(), seconds(plan.latencyMs())));
        md.append("| acks | saturated records/s | MB/s | spread | p50 ms | p90 ms | p99 ms | p99.9 ms | max ms | ")
            .append("pacing lag ms | failed sends | min ISR | leader changes | read back | .hgrm |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        for (final AcksResult r : outcome.results())
        {
            final Histogram h = r.combinedLatency();
            md.append("| ").append(r.name()).append(r.acks() == Acks.NONE ? " (sent)" : "")
                .append(String.format(Locale.ROOT, " | %,.0f | %.1f | %s", r.medianRecordsPerSecond(),
                    r.medianRecordsPerSecond() * plan.recordSize() / 1e6, percent(r.spread())));
            for (final double p : new double[]{50, 90, 99, 99.9, 100})
            {
                md.append(" | ").append(MultiProcessReport.millis(h, p));
            }
            md.append(" | ").append(r.latency().isEmpty() ? "-" :
                String.format(Locale.ROOT, "%.2f", r.maxSendLagNs() / 1e6));
            md.append(" | ").append(r.failedSends()).append(" | ").append(r.minIsr()).append(" | ")
                .append(r.leaderChanges()).append(" | ").append(readBack(r)).append(" | ")
                .append(r.latency().isEmpty() ? "-" : "`" + MultiProcessReport.hgrmName(r, plan.rate()) + "`")
                .append(" |\n");
        }
        md.append('\n');
        for (final String chart : chartFiles)
        {
            md.append("![").append(chart).append("](").append(chart).append(")\n\n");
        }
        chartProblems.forEach((p) -> md.append("- chart not drawn: ").append(cell(p)).append('\n'));
    }

    private String readBack(final AcksResult r)
    {
        if (r.acks() == Acks.NONE)
        {
            return "n/a (acks=0)";
        }
        if (r.latency().isEmpty())
        {
            return "not run";
        }
        final boolean ok = r.latency().stream().allMatch((l) -> l.readBack().ok());
        final long found = r.latency().stream().mapToLong((l) -> l.readBack().found()).sum();
        final long acked = r.latency().stream().mapToLong((l) -> l.readBack().acknowledged()).sum();
        return String.format(Locale.ROOT, "%s %,d of %,d", ok ? "yes," : "**NO**,", found, acked);
    }

    private void kafka()
    {
        md.append("## Beside Kafka: the issue's figures, not measured here\n\n");
        md.append(String.format(Locale.ROOT, "> **Reference, not a measurement.** The issue states that a real " +
            "3-broker Kafka on this same machine does about **%,.0f records/s saturated at acks=all**, and **p99 " +
            "about %.0f ms at %,d records/s**. These are the issue's figures: this bench did not run Kafka, and the " +
            "Kafka version, producer settings, partitions and record size behind them are not recorded here. The " +
            "ratios below divide what this run measured by them.%n%n", KafkaReference.SATURATED_RECORDS_PER_SECOND,
            KafkaReference.P99_MILLIS, KafkaReference.P99_RATE));
        md.append("| acks=all | Tidemark, 3 host JVMs (measured here) | Kafka, 3 brokers (issue's figure) | ratio |\n");
        md.append("|---|---:|---:|---|\n");
        final AcksResult all = find(Acks.ALL);
        if (null == all)
        {
            md.append("| (acks=all was not run) | - | - | - |\n\n");
            return;
        }
        final Histogram h = all.combinedLatency();
        final double p99 = h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e6;
        md.append(String.format(Locale.ROOT, "| saturated records/s | %,.0f | ~%,.0f | %s Kafka's |%n",
            all.medianRecordsPerSecond(), KafkaReference.SATURATED_RECORDS_PER_SECOND,
            KafkaReference.throughputRatio(all.medianRecordsPerSecond())));
        md.append(String.format(Locale.ROOT, "| p99 at %,d records/s | %s ms | ~%.0f ms | %s Kafka's (below 1: " +
            "lower) |%n%n", plan.rate(), MultiProcessReport.millis(h, 99), KafkaReference.P99_MILLIS,
            KafkaReference.latencyRatio(p99, plan.rate())));
        md.append("The other acks modes against the same acks=all figures, for scale only (Kafka's figures are for " +
            "acks=all): ");
        boolean first = true;
        for (final AcksResult r : outcome.results())
        {
            if (r.acks() == Acks.ALL)
            {
                continue;
            }
            final Histogram rh = r.combinedLatency();
            md.append(first ? "" : "; ").append("acks=").append(r.name()).append(' ')
                .append(KafkaReference.throughputRatio(r.medianRecordsPerSecond())).append(" the records/s, ")
                .append(KafkaReference.latencyRatio(rh.getTotalCount() == 0 ? Double.NaN :
                    rh.getValueAtPercentile(99) / 1e6, plan.rate())).append(" the p99");
            first = false;
        }
        md.append(".\n\n");
    }

    private AcksResult find(final int acks)
    {
        return outcome.results().stream().filter((r) -> r.acks() == acks).findFirst().orElse(null);
    }

    private void runs()
    {
        if (plan.runs() < 2)
        {
            return;
        }
        md.append("## Each run\n\n| acks | run | saturated records/s | p50 ms | p99 ms | p99.9 ms | max ms |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|\n");
        for (final AcksResult r : outcome.results())
        {
            for (int i = 0; i < Math.max(r.throughput().size(), r.latency().size()); i++)
            {
                final String records = i < r.throughput().size() ?
                    String.format(Locale.ROOT, "%,.0f", r.throughput().get(i).recordsPerSecond()) : "-";
                final Histogram h = i < r.latency().size() ? r.latency().get(i).latency() : new Histogram(3);
                md.append("| ").append(r.name()).append(" | ").append(i + 1).append(" | ").append(records);
                for (final double p : new double[]{50, 99, 99.9, 100})
                {
                    md.append(" | ").append(MultiProcessReport.millis(h, p));
                }
                md.append(" |\n");
            }
        }
        md.append('\n');
    }

    private void setup()
    {
        md.append("## Setup\n\n");
        md.append("- **Hosts:** three JVMs, each `java ").append(String.join(" ", JvmFlags.FORKED_JVM_ARGS))
            .append(" -cp <the bench jar> ").append(HostProcess.MAIN_CLASS).append(" --config host-N.properties` ")
            .append("(no other JVM flag: default heap and GC), on Aeron UDP endpoints on 127.0.0.1")
            .append(null == outcome.setup() ? "" : " (" + String.join(", ", outcome.setup().endpoints()) + ")")
            .append("; each runs its embedded media driver (one shared, backing-off thread).\n");
        md.append("- **ZooKeeper:** one server inside the bench JVM (curator-test `TestingServer`): partition state, ")
            .append("host liveness, the controller election. Nothing to install.\n");
        md.append(String.format(Locale.ROOT, "- **Topic:** %d partition(s), RF=%d, `min.insync.replicas=%d`%s; " +
            "the replica logs in %s.%n", plan.partitions(), LoopbackCluster.HOSTS, plan.minInsync(),
            plan.hostProperties().isEmpty() ? ", other replication settings at their defaults" :
            ", and " + plan.hostProperties(), cell(String.valueOf(plan.workDir()))));
        md.append(String.format(Locale.ROOT, "- **Producer:** in the bench JVM, `io.tidemark.client.Producer` over " +
            "`TidemarkClient` (Aeron UDP to the leader), %d B values with a null key, `batch.size=%d`, " +
            "`buffer.memory=%d`, `max.in.flight.requests.per.partition=5`, idempotence at its default (on for " +
            "acks=all only); `linger.ms=%d` for the saturated phases, `linger.ms=%d` for the latency phases.%n",
            plan.recordSize(), plan.batchSize(), plan.bufferMemory(), plan.lingerMs(), plan.latencyLingerMs()));
        md.append(String.format(Locale.ROOT, "- **Timing:** %s unreported JIT warm-up (acks=1, saturated), then " +
            "per acks mode and run: %s warm-up + %s saturated, %s warm-up + %s at %,d records/s; rounds " +
            "interleaved; before each phase the run waits up to %s for the ISR to be full again.%n%n",
            seconds(plan.jitWarmupMs()), seconds(plan.warmupMs()), seconds(plan.throughputMs()),
            seconds(plan.warmupMs()), seconds(plan.latencyMs()), plan.rate(), seconds(plan.settleTimeoutMs())));
    }

    private void hosts()
    {
        md.append("## Hosts\n\nEach host's output is in `hosts/host-N.log`.\n\n");
        md.append("| host | endpoint | how it stopped | SEVERE lines | WARNING lines | first of them |\n");
        md.append("|---:|---|---|---:|---:|---|\n");
        for (int id = 0; id < LoopbackCluster.HOSTS; id++)
        {
            final HostProcess.Stop stop = id < outcome.stops().size() ? outcome.stops().get(id) : null;
            final HostProcess.LogSummary log = id < outcome.logs().size() ? outcome.logs().get(id) : null;
            md.append("| ").append(id).append(" | ")
                .append(null == outcome.setup() ? "-" : outcome.setup().endpoints().get(id)).append(" | ")
                .append(null == stop ? "not started" : cell(stop.describe())).append(" | ")
                .append(null == log ? "-" : String.valueOf(log.severe())).append(" | ")
                .append(null == log ? "-" : String.valueOf(log.warnings())).append(" | ")
                .append(null == log || log.first().isEmpty() ? "-" : cell(String.join(" // ", log.first())))
                .append(" |\n");
        }
        md.append("\nExit code 143 is the JVM's after SIGTERM once HostMain's shutdown hook has closed the host.\n\n");
    }

    private void method()
    {
        md.append("## Method\n\n");
        md.append("- **Saturated:** ").append(plan.producerThreads()).append(" thread(s) call `Producer.sendAsync` ")
            .append("in a loop (a send waits while `buffer.memory` is full); the measure is the records whose ")
            .append("callback reported success inside the window, per second. For acks=0 the leader never answers: ")
            .append("the callback runs when the batch has been handed to the leader, so acks=0 counts records sent.\n");
        md.append("- **Latency:** one pacing thread sends record i at start + i/rate (parking, not spinning, between ")
            .append("records: the 2 CPUs belong to the hosts; its lateness is inside the measure), and the latency ")
            .append("of each record is from its due time to its callback, so a stall is charged to every record ")
            .append("behind it. HdrHistogram, 3 significant digits; `.hgrm` files in microseconds. For acks=0 it is ")
            .append("the time to hand the record to the leader.\n");
        md.append("- **Pacing lag:** the most the pacing thread sent a record after its due time (a machine too ")
            .append("busy to run it on time); that delay is inside the latency, as it would be for a real ")
            .append("application's thread.\n");
        md.append("- **Read back:** after each latency phase, every record acknowledged with an offset is read from ")
            .append("its partition's leader (`RemoteReader`: committed records, CRC checked) and must be at that ")
            .append("offset with the bytes sent. The saturated phases' records are not read back.\n");
        md.append("- **Min ISR, leader changes:** the partition states in ZooKeeper, sampled every 100 ms during ")
            .append("each phase. A follower that falls behind by more than `replica.lag.time.max.ms` leaves the ISR; ")
            .append("acks=all then waits only for the ISR that is left (at least `min.insync.replicas`).\n");
        md.append("- All four JVMs share the machine's CPUs; the numbers are this machine's, not a cluster's.\n");
    }

    private static String seconds(final long ms)
    {
        return ms % 1_000 == 0 ? ms / 1_000 + " s" : String.format(Locale.ROOT, "%.1f s", ms / 1e3);
    }

    private static String percent(final double fraction)
    {
        return Double.isNaN(fraction) ? "-" : String.format(Locale.ROOT, "%.0f%%", fraction * 100);
    }

    /** @return text safe in a Markdown table cell and on one line. */
    static String cell(final String text)
    {
        return null == text ? "" : text.replace("|", "\\|").replace("\r", " ").replace("\n", " / ");
    }
}
