import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.concurrent.UnsafeBuffer;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

/** Closed-loop single writer, a fixed number of 100-byte appends, with a given segment size. */
public class RollProbe
{
    public static void main(final String[] args) throws Exception
    {
        final long segmentBytes = Long.parseLong(args[0]);
        final long records = Long.parseLong(args[1]);
        final Path dir = Files.createTempDirectory(Path.of(args[2]), "rollprobe-");
        final UnsafeBuffer value = new UnsafeBuffer(ByteBuffer.allocateDirect(100));
        final var threads = ManagementFactory.getThreadMXBean();
        try (Log log = Log.open(new LogContext().logDir(dir.resolve("log")).segmentBytes(segmentBytes)
            .retentionBytes(2L << 30).retentionCheckIntervalMs(1_000)))
        {
            for (int i = 0; i < 2_000_000; i++) // JIT warm-up
            {
                log.append(value, 0, 100);
            }
            System.out.println("tid " + Path.of("/proc/thread-self").toRealPath().getFileName());
            Thread.sleep(1500); // perf attaches
            final long cpu0 = threads.getCurrentThreadCpuTime();
            final long t0 = System.nanoTime();
            for (long i = 0; i < records; i++)
            {
                value.putLong(0, i);
                log.append(value, 0, 100);
            }
            final long ns = System.nanoTime() - t0;
            final long cpu = threads.getCurrentThreadCpuTime() - cpu0;
            System.out.printf("records %d in %.2f s: %.0f records/s; writer CPU %.1f ns/record; segments %d; recoveryPoint %d%n",
                records, ns / 1e9, records * 1e9 / ns, (double)cpu / records, log.segmentCount(), log.recoveryPoint());
            System.out.flush();
            Thread.sleep(300);
        }
        finally
        {
            try (var walk = Files.walk(dir))
            {
                walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
