package io.tidemark.bench.multiprocess;

import io.tidemark.replication.Acks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A multiprocess or kafka-clients run's {@code summary.json}, as a tree: the facts, the settings, the goals, every
 * cell of every run with its latency percentiles and CPU, the idle windows, the profiles, the fault drills, how the
 * servers stopped, the problems and notes. The field names are what other tools read: keep them.
 */
final class MultiProcessJson
{
    private final Comparison comparison;
    private final MultiProcessPlan plan;
    private final List<CellResult> cells;
    private final Map<String, MultiProcessBench.Idle> idle;
    private final Map<String, String> descriptions;
    private final Map<String, List<String>> stops;
    private final Map<String, List<String>> profiles;
    private final List<FaultPhase.Outcome> faults;
    private final List<String> notes;
    private final double wallSeconds;

    MultiProcessJson(final Comparison comparison, final MultiProcessPlan plan, final List<CellResult> cells,
        final Map<String, MultiProcessBench.Idle> idle, final Map<String, String> descriptions,
        final Map<String, List<String>> stops, final Map<String, List<String>> profiles,
        final List<FaultPhase.Outcome> faults, final List<String> notes, final double wallSeconds)
    {
        this.comparison = comparison;
        this.plan = plan;
        this.cells = cells;
        this.idle = idle;
        this.descriptions = descriptions;
        this.stops = stops;
        this.profiles = profiles;
        this.faults = faults;
        this.notes = notes;
        this.wallSeconds = wallSeconds;
    }

    /**
     * @param facts    the run's facts: date, git, command, load averages.
     * @param goals    the goals with what was measured.
     * @param problems what went wrong; empty for a clean run.
     * @return the tree for {@link io.tidemark.bench.report.Json#write}.
     */
    Map<String, Object> tree(final Map<String, String> facts, final List<Comparison.Goal> goals,
        final List<String> problems)
    {
        final Map<String, Object> root = new LinkedHashMap<>();
        root.put("kind", comparison.kind());
        root.putAll(facts);
        root.put("wallSeconds", wallSeconds);
        root.put("targets", descriptions);
        final Map<String, Object> settings = new LinkedHashMap<>();
        settings.put("acks", plan.acks().stream().map(Acks::describe).toList());
        settings.put("partitions", plan.partitions());
        settings.put("recordSize", plan.recordSize());
        settings.put("batchSize", plan.batchSize());
        settings.put("lingerMs", plan.lingerMs());
        settings.put("latencyLingerMs", plan.latencyLingerMs());
        settings.put("bufferMemory", plan.bufferMemory());
        settings.put("rate", plan.rate());
        settings.put("minInsync", plan.minInsync());
        settings.put("runs", plan.runs());
        settings.put("windowMs", plan.throughputMs());
        settings.put("latencyWindowMs", plan.latencyMs());
        settings.put("roundTripMs", plan.roundTripMs());
        settings.put("idleMs", plan.idleMs());
        settings.put("hostProperties", plan.hostProperties());
        root.put("settings", settings);
        final List<Object> goalsJson = new ArrayList<>();
        for (final Comparison.Goal g : goals)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("goal", g.goal());
            m.put("measured", g.measured());
            m.put("value", Double.isNaN(g.value()) ? null : g.value());
            m.put("met", g.met());
            goalsJson.add(m);
        }
        root.put("goals", goalsJson);
        final List<Object> list = new ArrayList<>();
        for (final CellResult c : cells)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("target", c.target());
            m.put("kind", c.kind());
            m.put("acks", Acks.describe(c.acks()));
            m.put("partitions", c.partitions());
            m.put("run", c.run());
            m.put("recordsPerSecond", c.recordsPerSecond());
            m.put("windowRecords", c.windowRecords());
            if (null != c.latency() && c.latency().getTotalCount() > 0)
            {
                final Map<String, Object> l = new LinkedHashMap<>();
                l.put("count", c.latency().getTotalCount());
                l.put("p50Ms", CellStats.ms(c.latency(), 50));
                l.put("p90Ms", CellStats.ms(c.latency(), 90));
                l.put("p99Ms", CellStats.ms(c.latency(), 99));
                l.put("p999Ms", CellStats.ms(c.latency(), 99.9));
                l.put("maxMs", c.latency().getMaxValue() / 1e6);
                m.put("latency", l);
                m.put("hgrm", MultiProcessReport.hgrmName(c.target(), c.kind(), c.acks(), c.partitions()));
            }
            m.put("serverCpuMicrosPerRecord", nanToNull(c.serverMicrosPerRecord()));
            m.put("clientCpuMicrosPerRecord", nanToNull(c.clientMicrosPerRecord()));
            m.put("serverCpuNanosByProcess", c.cpu().byServer());
            m.put("failed", c.failed());
            m.put("errors", c.errors());
            m.put("failure", c.failure());
            m.put("minIsr", c.cluster().minIsr() == Integer.MAX_VALUE ? null : c.cluster().minIsr());
            m.put("leaderChanges", c.cluster().leaderChanges());
            m.put("readBack", null == c.readBack() ? null : c.readBack().describe());
            m.put("readBackOk", null == c.readBack() ? null : c.readBack().ok());
            m.put("clean", c.clean());
            list.add(m);
        }
        root.put("cells", list);
        final Map<String, Object> idleJson = new LinkedHashMap<>();
        idle.forEach((target, i) ->
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("percentOfOneCore", i.usage().serverPercentOfCore());
            final Map<String, Object> each = new LinkedHashMap<>();
            i.usage().byServer().keySet().forEach((name) -> each.put(name, i.usage().percentOfCore(name)));
            m.put("byProcess", each);
            m.put("threadCpuNanos", i.byThread());
            m.put("windowMs", i.usage().wallNanos() / 1_000_000);
            idleJson.put(target, m);
        });
        root.put("idle", idleJson);
        root.put("profiles", profiles);
        final List<Object> faultJson = new ArrayList<>();
        for (final FaultPhase.Outcome o : faults)
        {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("fault", o.fault());
            m.put("pauseMs", o.pauseMs());
            m.put("recoveryMs", o.recoveryMs());
            m.put("acknowledged", o.acked());
            m.put("failed", o.failed());
            m.put("controllerEpoch", o.epochs());
            m.put("note", o.note());
            faultJson.add(m);
        }
        root.put("faults", faultJson);
        root.put("stops", stops);
        root.put("problems", problems);
        root.put("notes", notes);
        return root;
    }

    private static Double nanToNull(final double v)
    {
        return Double.isNaN(v) ? null : v;
    }
}
