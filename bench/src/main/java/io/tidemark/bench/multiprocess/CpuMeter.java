package io.tidemark.bench.multiprocess;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * CPU time of a target's server processes, and of this JVM (the client), over one window ({@link ProcCpu}).
 * Not thread-safe.
 */
final class CpuMeter
{
    /** The name this JVM's CPU goes by. */
    static final String CLIENT = "client";

    private final List<LoadTarget.Server> servers;
    private final long[] start;
    private long clientStart;
    private long startNanos;

    /**
     * What a window cost.
     *
     * @param byServer   CPU nanoseconds of each server process, by name.
     * @param server     their sum.
     * @param client     CPU nanoseconds of the bench's JVM (the producer, and the bench itself).
     * @param wallNanos  the window's length.
     */
    record Usage(Map<String, Long> byServer, long server, long client, long wallNanos)
    {
        /** @return nothing measured. */
        static Usage none()
        {
            return new Usage(Map.of(), 0, 0, 0);
        }

        /** @return the servers' CPU as a share of one core, in percent. */
        double serverPercentOfCore()
        {
            return wallNanos <= 0 ? Double.NaN : 100.0 * server / wallNanos;
        }

        /** @return a server's CPU as a share of one core, in percent. */
        double percentOfCore(final String name)
        {
            return wallNanos <= 0 ? Double.NaN : 100.0 * byServer.getOrDefault(name, 0L) / wallNanos;
        }
    }

    CpuMeter(final List<LoadTarget.Server> servers)
    {
        this.servers = List.copyOf(servers);
        this.start = new long[servers.size()];
    }

    /** Start the window. */
    void begin()
    {
        startNanos = System.nanoTime();
        for (int i = 0; i < start.length; i++)
        {
            start[i] = ProcCpu.processNanos(servers.get(i).pid());
        }
        clientStart = ProcCpu.processNanos(ProcessHandle.current().pid());
    }

    /** @return what the window since {@link #begin()} cost. */
    Usage end()
    {
        final long wall = System.nanoTime() - startNanos;
        final Map<String, Long> byServer = new LinkedHashMap<>();
        long total = 0;
        for (int i = 0; i < start.length; i++)
        {
            final long used = Math.max(0, ProcCpu.processNanos(servers.get(i).pid()) - start[i]);
            byServer.put(servers.get(i).name(), used);
            total += used;
        }
        final long client = Math.max(0, ProcCpu.processNanos(ProcessHandle.current().pid()) - clientStart);
        return new Usage(byServer, total, client, wall);
    }
}
