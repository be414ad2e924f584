package io.tidemark.bench.report;

import io.tidemark.bench.harness.RunResult;
import io.tidemark.bench.harness.Scenario;
import io.tidemark.bench.harness.ScenarioResult;
import io.tidemark.bench.peer.PeerComparison;
import io.tidemark.bench.peer.PeerMain;
import io.tidemark.bench.peer.PeerResult;
import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A harness run's {@value PerfRun#SUMMARY_JSON}, as a tree for {@link Json#write}: the run's facts and settings,
 * every scenario with its parameters, medians, spreads, latency percentiles and runs, the peer comparison, the
 * failover runs, the targets with their status, and the charts. The field names are what other tools read
 * ({@link ResultsIndex}, the CI scripts): keep them.
 */
final class HarnessJson
{
    private final HarnessData data;

    /** @param data the measures. */
    HarnessJson(final HarnessData data)
    {
        this.data = data;
    }

    Map<String, Object> tree(final Map<String, String> facts, final List<Targets.Target> targets,
        final List<String> chartFiles, final List<String> chartProblems)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", data.kind());
        root.put("run", new LinkedHashMap<>(facts));
        root.put("settings", new LinkedHashMap<>(data.settings()));
        root.put("allVerified", data.allVerified());
        final List<Object> scenarios = new ArrayList<>();
        for (final ScenarioResult r : data.scenarios())
        {
            scenarios.add(scenarioJson(r));
        }
        root.put("scenarios", scenarios);
        root.put("peerComparison", peerJson());
        final List<Object> failover = new ArrayList<>();
        for (int i = 0; i < data.failover().size(); i++)
        {
            failover.add(failoverJson(data.failover().get(i), i + 1));
        }
        root.put("failover", failover);
        final List<Object> targetList = new ArrayList<>();
        for (final Targets.Target t : targets)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", t.name());
            m.put("target", t.target());
            m.put("measured", t.measured());
            m.put("status", t.status().name());
            m.put("note", t.note());
            targetList.add(m);
        }
        root.put("targets", targetList);
        root.put("charts", new ArrayList<Object>(chartFiles));
        if (!chartProblems.isEmpty())
        {
            root.put("chartProblems", new ArrayList<Object>(chartProblems));
        }
        return root;
    }

    private static Map<String, Object> scenarioJson(final ScenarioResult r)
    {
        final Scenario s = r.scenario();
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", s.id());
        m.put("sweeps", new ArrayList<Object>(r.sweeps()));
        final Map<String, Object> p = new LinkedHashMap<>();
        p.put("load", s.load() == Scenario.Load.CLOSED ? "closed-loop" : "open-loop");
        p.put("rate", s.load() == Scenario.Load.OPEN ? s.rate() : null);
        p.put("partitions", s.partitions());
        p.put("acks", s.acksName());
        p.put("replicas", s.replicas());
        p.put("minInsyncReplicas", s.minInsync());
        p.put("messageSize", s.messageSize());
        p.put("producerThreads", s.producerThreads());
        p.put("flush", s.flushName());
        p.put("batchRecords", s.batchRecords());
        p.put("maxInFlight", s.load() == Scenario.Load.CLOSED ? s.maxInFlight() : null);
        p.put("threading", s.threading().name());
        p.put("idle", s.busySpin() ? "busy-spin" : "backoff");
        m.put("parameters", p);
        m.put("recordsPerSec", r.medianRecordsPerSecond());
        m.put("recordsPerSecMin", r.minRecordsPerSecond());
        m.put("recordsPerSecMax", r.maxRecordsPerSecond());
        m.put("spreadPercent", r.spreadPercent());
        m.put("mbPerSec", r.medianMbPerSecond());
        m.put("appendedPerSec", r.medianAppendedPerSecond());
        m.put("cpusUsed", r.medianCpusUsed());
        m.put("loadAverage1m", r.medianLoadAverage());
        m.put("leaderElections", r.elections());
        m.put("latencyUs", latencyJson(r));
        m.put("hgrm", r.hasLatency() ? HarnessReport.hgrmName(s) : null);
        m.put("verified", r.verified());
        m.put("verifiedRecords", r.verifiedRecords());
        m.put("problem", r.problem());
        final List<Object> runs = new ArrayList<>();
        for (final RunResult run : r.runs())
        {
            final Map<String, Object> one = new LinkedHashMap<>();
            one.put("recordsPerSec", run.recordsPerSecond());
            one.put("mbPerSec", run.mbPerSecond());
            one.put("appendedPerSec", run.appendedPerSecond());
            one.put("latencyUs", histogramJson(run.latency()));
            one.put("queuedRecords", run.queuedRecords());
            one.put("ackedRecords", run.ackedRecords());
            one.put("verifiedRecords", run.verifiedRecords());
            one.put("recordsInLogs", run.recordsInLogs());
            one.put("errors", new LinkedHashMap<String, Object>(run.errors()));
            one.put("cpusUsed", run.cpusUsed());
            one.put("loadAverage1m", run.loadAverage());
            if (null != run.machineBefore() && null != run.machineAfter())
            {
                one.put("loadAverage1mBefore", run.machineBefore().load1());
                one.put("dirtyKibBefore", run.machineBefore().dirtyKib());
                one.put("dirtyKibAfter", run.machineAfter().dirtyKib());
                one.put("writebackKibBefore", run.machineBefore().writebackKib());
                one.put("writebackKibAfter", run.machineAfter().writebackKib());
            }
            one.put("leaderElections", run.elections());
            one.put("verified", run.verified());
            one.put("problem", run.problem());
            runs.add(one);
        }
        m.put("runs", runs);
        return m;
    }

    private static Map<String, Object> latencyJson(final ScenarioResult r)
    {
        if (!r.hasLatency())
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, r.medianPercentileMicros(p)));
        m.put("max", r.maxMicros());
        m.put("count", r.combinedLatency().getTotalCount());
        return m;
    }

    private static Map<String, Object> histogramJson(final Histogram h)
    {
        if (null == h || h.getTotalCount() == 0)
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, h.getValueAtPercentile(p) / 1e3));
        m.put("max", h.getMaxValue() / 1e3);
        m.put("count", h.getTotalCount());
        return m;
    }

    private Map<String, Object> peerJson()
    {
        final PeerComparison peer = data.peer();
        if (null == peer)
        {
            return null;
        }
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("mainJavaHome", peer.mainJavaHome());
        final List<Object> groups = new ArrayList<>();
        for (final PeerComparison.Group g : peer.groups())
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("peer", g.peer());
            m.put("messageSize", g.size());
            m.put("javaVersion", g.javaVersion());
            m.put("javaHome", g.javaHome());
            m.put("jvmArgs", g.runs().get(0).jvmArgs());
            m.put("runs", g.runs().size());
            m.put("ok", g.ok());
            if (g.ok())
            {
                m.put("appendRecordsPerSec", g.medianRecordsPerSecond());
                m.put("appendRecordsPerSecMin", g.rangeRecordsPerSecond()[0]);
                m.put("appendRecordsPerSecMax", g.rangeRecordsPerSecond()[1]);
                m.put("appendMbPerSec", g.medianRecordsPerSecond() * g.size() / 1e6);
                m.put("appendLatencyUs", peerLatencyJson(g, false));
                m.put("tailerLatencyUs", peerLatencyJson(g, true));
                if (null != g.appendServiceTime())
                {
                    final Map<String, Object> service = new LinkedHashMap<>();
                    ScenarioResult.PERCENTILES.forEach((name, p) -> service.put(name,
                        g.medianServicePercentileMicros(p)));
                    service.put("max", g.appendServiceTime().getMaxValue() / 1e3);
                    m.put("appendServiceTimeUs", service);
                }
            }
            else
            {
                final PeerResult failure = g.firstFailure();
                m.put("failure", failure.failureSummary());
                m.put("failureDetail", failure.failure());
            }
            groups.add(m);
        }
        root.put("groups", groups);
        final List<Object> ratios = new ArrayList<>();
        for (final int size : peer.sizes())
        {
            ratios.add(ratioJson(peer, size));
        }
        root.put("ratios", ratios);
        return root;
    }

    private static Map<String, Object> peerLatencyJson(final PeerComparison.Group g, final boolean tailer)
    {
        if ((tailer ? g.tailerLatency() : g.appendLatency()) == null)
        {
            return null;
        }
        final Map<String, Object> m = new LinkedHashMap<>();
        ScenarioResult.PERCENTILES.forEach((name, p) -> m.put(name, g.medianPercentileMicros(tailer, p)));
        m.put("max", g.maxMicros(tailer));
        return m;
    }

    private static Map<String, Object> ratioJson(final PeerComparison peer, final int size)
    {
        final PeerComparison.Group ours = peer.main(PeerMain.TIDEMARK, size);
        final PeerComparison.Group chronicle = peer.main(PeerMain.CHRONICLE, size);
        final PeerComparison.Group raw = peer.main(PeerMain.RAW_COPY, size);
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("messageSize", size);
        final boolean oursOk = null != ours && ours.ok();
        final boolean chronicleOk = null != chronicle && chronicle.ok();
        if (oursOk && chronicleOk)
        {
            m.put("chronicleMeasurable", true);
            m.put("appendThroughputTidemarkOverChronicle",
                ours.medianRecordsPerSecond() / chronicle.medianRecordsPerSecond());
            for (final Map.Entry<String, Double> e : ScenarioResult.PERCENTILES.entrySet())
            {
                m.put("appendLatency" + e.getKey() + "TidemarkOverChronicle",
                    ours.medianPercentileMicros(false, e.getValue()) /
                    chronicle.medianPercentileMicros(false, e.getValue()));
                m.put("tailerLatency" + e.getKey() + "TidemarkOverChronicle",
                    ours.medianPercentileMicros(true, e.getValue()) /
                    chronicle.medianPercentileMicros(true, e.getValue()));
            }
        }
        else
        {
            m.put("chronicleMeasurable", false);
            m.put("why", null == chronicle ? "not run" : null == chronicle.firstFailure() ? "failed" :
                "Chronicle Queue did not run with JVM arguments " + chronicle.firstFailure().jvmArgs() + ": " +
                chronicle.firstFailure().failureSummary());
        }
        if (oursOk && null != raw && raw.ok())
        {
            m.put("appendThroughputTidemarkOverRawCopy", ours.medianRecordsPerSecond() / raw.medianRecordsPerSecond());
        }
        return m;
    }

    private static Map<String, Object> failoverJson(final RunResult r, final int index)
    {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("run", index);
        m.put("scenario", r.scenario().id());
        if (null != r.failover())
        {
            m.put("killedHost", r.failover().killedHost());
            m.put("newLeader", r.failover().newLeader());
            m.put("acksResumedAfterMs", r.failover().resumeNanos() < 0 ? null : r.failover().resumeNanos() / 1e6);
            m.put("lastAckBeforeKillMs", r.failover().lastAckBeforeNanos() / 1e6);
            m.put("ackedRecordsAfterKill", r.failover().ackedAfterKill());
            m.put("requestsLostInFlight", r.failover().lostInFlight());
        }
        m.put("latencyUs", histogramJson(r.latency()));
        m.put("hgrm", null == r.latency() || r.latency().getTotalCount() == 0 ? null :
            HarnessReport.failoverHgrmName(index));
        m.put("errors", new LinkedHashMap<String, Object>(r.errors()));
        m.put("leaderElections", r.elections());
        m.put("verifiedRecords", r.verifiedRecords());
        m.put("verified", r.verified());
        m.put("problem", r.problem());
        return m;
    }
}
