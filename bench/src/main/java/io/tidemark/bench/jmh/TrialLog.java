package io.tidemark.bench.jmh;

import io.tidemark.store.Log;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

import java.nio.file.Path;

/**
 * The log an append benchmark writes to, one per trial in its own temporary directory: the subclass, a JMH
 * {@code @State}, opens it in its trial setup; it is emptied before every iteration (with no thread appending), so
 * that a run's disk use is bounded by one iteration's writes, and closed and deleted after the trial. JMH runs these
 * inherited helper methods as the subclass's own.
 */
public abstract class TrialLog
{
    Path dir;
    Log log;

    /** Start every iteration from an empty log. */
    @Setup(Level.Iteration)
    public void emptyLog()
    {
        log.truncateFullyAndStartAt(log.logEndOffset());
    }

    /** Close the log and delete its directory. */
    @TearDown(Level.Trial)
    public void closeLog()
    {
        BenchLogs.closeAndDelete(dir, log);
    }
}
