package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;

import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The log's background duty cycle: reserves and pre-faults pages ahead of the writer, prepares the next segment
 * before the roll, flushes on {@code flush.interval.ms} and after a roll, applies retention, and unmaps segments
 * that left the log once no reader is inside them.
 * <p>
 * Errors never escape the thread, and never make it spin: a duty cycle that throws ends there (the idle strategy
 * still applies), its error goes to the error handler at most once per {@link #REPORT_INTERVAL_MS} (the next report
 * counts the ones left out), and after {@link #FAILED_CYCLES_BEFORE_OFFLINE} failed cycles in a row the log goes
 * offline (fail-stop: appends get LOG_OFFLINE, the agent stops working) instead of failing the same way forever.
 * The application chooses the thread ({@link LogContext.AgentMode}). {@link #doWork()} is safe to call from any one
 * thread at a time; after {@link #close()} it does nothing.
 * <p>
 * It works on the log's parts (the segment set, the flusher, retention, the writer's log end offset), never on the
 * {@link Log} itself; {@code dutyLock} guards its own state (the failure count and the closed flag) and keeps two
 * threads from running a duty cycle at once.
 */
final class LogAgent implements Agent
{
    /** Consecutive failed duty cycles that take the log offline: a failure that repeats is not transient. */
    static final int FAILED_CYCLES_BEFORE_OFFLINE = 5;
    /** Least time between two reports of agent errors. */
    static final long REPORT_INTERVAL_MS = 1000;

    private final LogContext ctx;
    private final EpochClock clock;
    private final FileSync sync;
    private final LogSegments segments;
    private final LogFlusher flusher;
    private final LogRetention retention;
    private final LogWriter writer;
    private final String roleName;
    private final ErrorHandler errorHandler;
    private final ErrorRateLimiter reports = new ErrorRateLimiter(TimeUnit.MILLISECONDS.toNanos(REPORT_INTERVAL_MS));
    private final System.Logger logger = System.getLogger(Log.class.getName());
    private final ReentrantLock dutyLock = new ReentrantLock();
    private int failedCycles;
    private boolean closed;

    LogAgent(
        final LogContext ctx,
        final LogSegments segments,
        final LogFlusher flusher,
        final LogRetention retention,
        final LogWriter writer,
        final String roleName,
        final ErrorHandler errorHandler)
    {
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.sync = ctx.fileSync();
        this.segments = segments;
        this.flusher = flusher;
        this.retention = retention;
        this.writer = writer;
        this.roleName = roleName;
        this.errorHandler = errorHandler;
    }

    @Override
    public int doWork()
    {
        if (!dutyLock.tryLock())
        {
            return 0;
        }
        try
        {
            if (closed)
            {
                return 0;
            }
            final int work = dutyCycle();
            failedCycles = 0;
            return work;
        }
        catch (final Throwable t)
        {
            onFailedCycle(t);
            return 0;
        }
        finally
        {
            dutyLock.unlock();
        }
    }

    private void onFailedCycle(final Throwable failure)
    {
        failedCycles++;
        if (failedCycles >= FAILED_CYCLES_BEFORE_OFFLINE)
        {
            if (!flusher.isOffline())
            {
                errorHandler.onError(flusher.takeOffline("the log agent failed " + failedCycles + " duty cycles in " +
                    "a row (" + failure + "): log " + ctx.logDir() + " is now offline; the next open recovers it",
                    failure));
            }
            return;
        }
        final long leftOut = reports.onOccurrence(System.nanoTime());
        if (leftOut >= 0)
        {
            if (leftOut > 0)
            {
                logger.log(System.Logger.Level.WARNING, roleName + ": " + leftOut + " agent error(s) in the last " +
                    REPORT_INTERVAL_MS + " ms were not reported");
            }
            errorHandler.onError(failure);
        }
    }

    /**
     * Reserve and pre-fault pages ahead of the writer (and write back what it wrote under {@code dirty.bytes.max}),
     * prepare the next segment, flush when due or after a roll, apply retention when due, and unmap retired
     * segments no reader is inside.
     *
     * @return the work done (0 when there was none).
     */
    private int dutyCycle()
    {
        if (writer.isClosed() || flusher.isOffline())
        {
            return 0;
        }
        final long nowMs = clock.time();
        final Segment tail = segments.last();
        int work = tail.prepareAhead(ctx.pretouchBytes(), nowMs);
        try
        {
            work += tail.writeBack(sync, ctx.dirtyBytesMax());
        }
        catch (final UncheckedIOException ex)
        {
            // its error may be the one a later fsync would have reported
            throw flusher.goOffline("writeback failed", ex);
        }
        work += segments.prepareSpare(tail, nowMs);
        final long logEnd = writer.logEndOffset();
        final boolean flushDue = ctx.flushIntervalMs() != Long.MAX_VALUE &&
            nowMs - flusher.lastFlushTimeMs() >= ctx.flushIntervalMs() && flusher.recoveryPoint() < logEnd;
        if ((flushDue || flusher.rollFlushPending()) && flusher.lock().tryLock())
        {
            try
            {
                flusher.takeRollFlushRequest();
                flusher.forceAndCheckpoint(segments.snapshot(), writer.logEndOffset(), segments.logStartOffset(),
                    false, false);
                work++;
            }
            finally
            {
                flusher.lock().unlock();
            }
        }
        if (retention.due(nowMs))
        {
            writer.checkOnline();
            work += retention.apply();
        }
        return work + segments.tryReclaimRetired();
    }

    /** Stop for good, waiting for a duty cycle in progress on another thread to end. */
    @Override
    public void onClose()
    {
        dutyLock.lock();
        try
        {
            closed = true;
        }
        finally
        {
            dutyLock.unlock();
        }
    }

    void close()
    {
        onClose();
    }

    @Override
    public String roleName()
    {
        return roleName;
    }
}
