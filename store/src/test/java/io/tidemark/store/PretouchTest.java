package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The agent pre-faults pages ahead of the writer: once it has run, appends into the prepared window take no page
 * faults on the writer's thread. Counted with the kernel's per-thread minor-fault counter, not timed.
 */
class PretouchTest
{
    private static final int WINDOW = 2 * 1024 * 1024;

    @TempDir
    Path dir;

    static long writerMinorFaults() throws IOException
    {
        final String stat = Files.readString(Path.of("/proc/thread-self/stat"));
        final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]); // field 10 of stat(5): minflt
    }

    private long faultsAppending(final Path logDir, final int pretouchBytes) throws IOException
    {
        final CachedEpochClock clock = new CachedEpochClock();
        try (Log log = Log.open(new LogContext().logDir(logDir).segmentBytes(64L * 1024 * 1024)
            .pretouchBytes(pretouchBytes).epochClock(clock).agentMode(LogContext.AgentMode.INVOKER)))
        {
            final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
            for (int i = 0; i < 200; i++)
            {
                log.append(value, 0, value.capacity()); // warm the code path
            }
            while (log.invokeAgent() > 0)
            {
                // let the agent reserve and pre-fault its whole window
            }
            final int records = (WINDOW - 512 * 1024) / 1100;
            final long before = writerMinorFaults();
            for (int i = 0; i < records; i++)
            {
                log.append(value, 0, value.capacity());
            }
            return writerMinorFaults() - before;
        }
    }

    @Test
    void appendsIntoThePretouchedWindowDoNotFault() throws IOException
    {
        Assumptions.assumeTrue(Files.exists(Path.of("/proc/thread-self/stat")), "needs Linux /proc");
        final long cold = faultsAppending(dir.resolve("cold"), 0);
        final long warm = faultsAppending(dir.resolve("warm"), WINDOW);
        System.out.println("pretouch: writer minor faults appending ~1.5 MiB: without=" + cold + " with=" + warm);
        // Without pretouch the writer faults on fresh pages (how often depends on the kernel's fault-around);
        // with it, the agent has taken those faults already.
        assertTrue(cold > 10, "without pretouch the writer should fault on fresh pages: " + cold);
        assertTrue(warm <= Math.max(2, cold / 4),
            "with pretouch the writer should (almost) not fault: " + warm + " (without: " + cold + ")");
    }
}
