package io.tidemark.replication;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.ConcurrentCountersManager;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The replica-log phase of a restarted host, alone: "write DIR" fills four replica logs as the bench's fault phase
 * leaves them (one of 1.7 M records of 100 B, three of 20 k) and halts them as a SIGKILL would; "open DIR" opens
 * them in a fresh JVM through the real HostLogs.openAll, as ReplicaHost.start does, and prints the wall time.
 */
public class LogPhase
{
    public static void main(String[] args) throws Exception
    {
        final Path dir = Path.of(args[1]);
        if (args[0].equals("write"))
        {
            final byte[] value = new byte[100];
            final String[] names = {"bench-p1-0", "faults-0", "faults-1", "faults-2"};
            final int[] counts = {1_700_000, 20_000, 20_000, 20_000};
            for (int i = 0; i < names.length; i++)
            {
                final Log log = Log.open(new LogContext().logDir(dir.resolve(names[i]))
                    .agentMode(LogContext.AgentMode.EXTERNAL));
                for (int r = 0; r < counts[i]; r++)
                {
                    log.append(value);
                }
                log.halt();
            }
            return;
        }
        final ReplicationContext ctx = new ReplicationContext();
        final ConcurrentCountersManager counters = new ConcurrentCountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(1 << 20)), new UnsafeBuffer(ByteBuffer.allocateDirect(1 << 18)));
        final long t0 = System.nanoTime();
        final HostLogs logs = new HostLogs(0, dir, ctx, counters, Throwable::printStackTrace);
        logs.openAll();
        final long t1 = System.nanoTime();
        System.out.println("replica logs opened in " + (t1 - t0) / 1_000_000 + " ms");
        logs.halt();
    }
}
