package io.tidemark.cli;

import io.tidemark.store.Log;
import io.tidemark.store.LogContext;

import java.nio.file.Path;

/**
 * A separate Tidemark process for {@link StatTest}: opens a log (its counters go to the log's counters.dat),
 * appends a record every few milliseconds with a 50 ms flush interval, and says READY. Runs until killed.
 */
public final class StatChild
{
    private StatChild()
    {
    }

    /**
     * @param args the log directory.
     * @throws InterruptedException never in practice.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final Log log = Log.open(new LogContext().logDir(Path.of(args[0])).segmentBytes(64 * 1024)
            .maxMessageBytes(4096).flushIntervalMs(50));
        TestLogs.append(log, 0, 20);
        System.out.println("READY");
        System.out.flush();
        for (int i = 20; ; i++)
        {
            TestLogs.append(log, i, 1);
            Thread.sleep(3);
        }
    }
}
