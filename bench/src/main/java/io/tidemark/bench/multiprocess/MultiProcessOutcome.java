package io.tidemark.bench.multiprocess;

import java.util.ArrayList;
import java.util.List;

/**
 * Everything a multiprocess run produced, for the report.
 *
 * @param plan        what was asked.
 * @param results     per acks mode, in the plan's order (phases that did not run are absent).
 * @param failure     why the run stopped early, or null.
 * @param setup       the cluster as started, or null when ZooKeeper did not start.
 * @param stops       how each host's JVM ended, by host id (null entries for hosts never started).
 * @param logs        what each host's log says went wrong, by host id.
 * @param notes       things the run noticed (an ISR that did not fill up before a phase).
 * @param wallSeconds from the start of the command to the hosts' stop.
 */
record MultiProcessOutcome(
    MultiProcessPlan plan,
    List<AcksResult> results,
    String failure,
    ClusterSetup setup,
    List<HostProcess.Stop> stops,
    List<HostProcess.LogSummary> logs,
    List<String> notes,
    double wallSeconds)
{
    /**
     * The cluster as started.
     *
     * @param zooKeeperConnect the ZooKeeper server in the bench JVM.
     * @param endpoints        each host's Aeron UDP endpoint, by host id.
     * @param hostCommand      host 0's command line.
     * @param runDirectory     the run's directory (ZooKeeper data, host configurations, logs, replica logs).
     */
    record ClusterSetup(String zooKeeperConnect, List<String> endpoints, List<String> hostCommand, String runDirectory)
    {
    }

    /** @return whether every latency phase ran and its read-back found every acknowledged record. */
    boolean allVerified()
    {
        return null == failure && results.size() == plan.acks().size() &&
            results.stream().allMatch((r) -> r.latency().size() == plan.runs() &&
                r.latency().stream().allMatch((l) -> l.readBack().ok()));
    }

    /** @return what went wrong, in words; empty for a clean run (the command then exits 0). */
    List<String> problems()
    {
        final List<String> problems = new ArrayList<>();
        if (null != failure)
        {
            problems.add("the run stopped early: " + failure);
        }
        for (final AcksResult r : results)
        {
            if (!r.clean(plan.runs()))
            {
                problems.add("acks=" + r.name() + ": a phase failed, lost records, or measured nothing (see the " +
                    "table)");
            }
        }
        for (int id = 0; id < stops.size(); id++)
        {
            final HostProcess.Stop stop = stops.get(id);
            if (null != stop && (stop.forced() || stop.exitedEarlier()))
            {
                problems.add("host " + id + " " + stop.describe());
            }
        }
        return problems;
    }
}
