package io.tidemark.bench.harness;

import io.tidemark.bench.report.MachineState;
import org.HdrHistogram.Histogram;

import java.util.Map;

/**
 * What one run of one scenario measured.
 *
 * @param scenario          the scenario.
 * @param measuredNanos     length of the measurement window.
 * @param recordsPerSecond  acknowledged records per second in the window (acks=0: records appended to the
 *                          leaders' logs per second, from their log end offsets).
 * @param appendedPerSecond records appended to the leaders' logs per second in the window, whatever the acks.
 * @param mbPerSecond       {@code recordsPerSecond x messageSize / 10^6} (payload bytes).
 * @param latency           send-to-acknowledge latency in nanoseconds of the requests sent (open loop: due) in the
 *                          window; empty for acks=0.
 * @param queuedRecords     records queued to a leader during the whole run (warm-up included).
 * @param ackedRecords      records acknowledged during the whole run.
 * @param errors            produce outcomes other than NONE, by name.
 * @param unanswered        requests never answered (a killed leader's queue, or a bug).
 * @param verifiedRecords   acknowledged records found in the log at their acknowledged offsets.
 * @param recordsInLogs     records in the partitions' logs at the end.
 * @param verified          whether every acknowledged record was found (and, without failures, every queued record
 *                          appended exactly once).
 * @param problem           null, or what failed.
 * @param failover          the leader kill's outcome, or null when the run killed nothing.
 * @param cpusUsed          CPU time this JVM got during the window divided by its length (2.0 = both cores of a
 *                          2-core machine: the agent thread and the producer thread spinning undisturbed); NaN if
 *                          unknown. Well below the spinning threads' count means other processes took the CPUs.
 * @param loadAverage       the machine's 1-minute load average at the end of the window; NaN if unknown.
 * @param elections         leader elections during the run (leader epoch increments over all partitions, from the
 *                          start of the warm-up to the end of the drain): 0 unless a host's session expired or a
 *                          leader was killed.
 * @param machineBefore     the machine's state at the window's start (load, this JVM's CPU time, dirty and
 *                          writeback pages), or null when the run failed before it.
 * @param machineAfter      the same at the window's end, or null.
 */
public record RunResult(
    Scenario scenario,
    long measuredNanos,
    double recordsPerSecond,
    double appendedPerSecond,
    double mbPerSecond,
    Histogram latency,
    long queuedRecords,
    long ackedRecords,
    Map<String, Long> errors,
    long unanswered,
    long verifiedRecords,
    long recordsInLogs,
    boolean verified,
    String problem,
    Failover failover,
    double cpusUsed,
    double loadAverage,
    int elections,
    MachineState machineBefore,
    MachineState machineAfter)
{
    /**
     * @return "before→after" of the page cache's dirty data (MiB) around the window, or "-" when unknown.
     */
    public String dirtyMib()
    {
        if (null == machineBefore || null == machineAfter || machineBefore.dirtyKib() < 0)
        {
            return "-";
        }
        return MachineState.mib(machineBefore.dirtyKib() + Math.max(0, machineBefore.writebackKib())) + "→" +
            MachineState.mib(machineAfter.dirtyKib() + Math.max(0, machineAfter.writebackKib()));
    }

    /**
     * What happened around a leader kill.
     *
     * @param killedHost          the host killed (the leader of partition 0).
     * @param newLeader           partition 0's leader at the end.
     * @param resumeNanos         from the kill to the first successful acknowledgement after it; -1 if none came.
     * @param lastAckBeforeNanos  from the last acknowledgement before the kill to the kill.
     * @param ackedAfterKill      records acknowledged after the kill.
     * @param lostInFlight        requests queued to the killed leader that were never answered (outcome unknown to
     *                            the producer; not counted as acknowledged, so not verified).
     */
    public record Failover(
        int killedHost,
        int newLeader,
        long resumeNanos,
        long lastAckBeforeNanos,
        long ackedAfterKill,
        long lostInFlight)
    {
    }
}
