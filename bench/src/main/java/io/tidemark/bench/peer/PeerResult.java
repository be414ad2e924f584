package io.tidemark.bench.peer;

import org.HdrHistogram.Histogram;

/**
 * One peer JVM's measures.
 *
 * @param peer                   {@link PeerMain#TIDEMARK}, {@link PeerMain#CHRONICLE} or {@link PeerMain#RAW_COPY}.
 * @param size                   record size in bytes.
 * @param javaVersion            the peer JVM's version.
 * @param javaHome               the peer JVM's home.
 * @param jvmArgs                the peer JVM's arguments.
 * @param ok                     whether it ran.
 * @param failure                null, or what failed (stack trace, or the JVM's output).
 * @param appendRecordsPerSecond single-writer append throughput.
 * @param appendLatency          append latency (ns) at the fixed rate, or null.
 * @param tailerLatency          write-to-tailer latency (ns) at the fixed rate, or null.
 * @param appendServiceTime      the duration of each append call alone (ns), without the wait for its turn, or
 *                               null.
 */
public record PeerResult(
    String peer,
    int size,
    String javaVersion,
    String javaHome,
    String jvmArgs,
    boolean ok,
    String failure,
    double appendRecordsPerSecond,
    Histogram appendLatency,
    Histogram tailerLatency,
    Histogram appendServiceTime)
{
    /**
     * @return the failure's first line and its root cause line ("Caused by: ..."), for tables.
     */
    public String failureSummary()
    {
        if (null == failure)
        {
            return "";
        }
        final String[] lines = failure.split("\\R");
        String root = null;
        for (final String line : lines)
        {
            if (line.startsWith("Caused by: "))
            {
                root = line;
            }
        }
        final String first = lines[0].trim();
        if (null == root)
        {
            return first;
        }
        final String cause = root.substring("Caused by: ".length()).trim();
        return first.contains(cause) ? first : first + " / " + root.trim();
    }
}
