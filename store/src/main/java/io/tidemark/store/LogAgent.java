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
    /**
     * Most bytes of a sealed segment written back in one duty cycle before the roll's flush: about 6 ms of a
     * 650 MB/s disk, a small part of the distance the agent keeps ahead of the writer ({@code pretouch.bytes} and
     * more, {@link SegmentPrefaulter#leadDistance}).
     */
    static final int ROLL_WRITEBACK_STEP = 4 * 1024 * 1024;
    /**
     * Longest wait for a step of the roll's writeback while the preparation ahead of the writer keeps the agent busy:
     * at least {@link #ROLL_WRITEBACK_STEP} per this time (80 MB/s), so that the roll's flush always ends.
     */
    static final long ROLL_WRITEBACK_MAX_DELAY_NS = 50_000_000;

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
    private long lastRollWritebackNs = System.nanoTime();

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
        final int prepared = tail.prepareAhead(ctx.pretouchBytes(), nowMs);
        int work = prepared;
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
        boolean rollFlushDue = false;
        if (!flushDue && flusher.rollFlushPending())
        {
            // the preparation ahead of the writer goes first: a step only when it is done, or when one is overdue
            final long nowNs = System.nanoTime();
            if (prepared == 0 || nowNs - lastRollWritebackNs >= ROLL_WRITEBACK_MAX_DELAY_NS)
            {
                lastRollWritebackNs = nowNs;
                final int written = writeBackRolled(segments.snapshot());
                work += written > 0 ? 1 : 0;
                rollFlushDue = written == 0;
            }
        }
        if ((flushDue || rollFlushDue) && flusher.lock().tryLock())
        {
            try
            {
                flusher.takeRollFlushRequest();
                if (flushDue)
                {
                    flusher.forceAndCheckpoint(segments.snapshot(), writer.logEndOffset(), segments.logStartOffset(),
                        false, false);
                }
                else
                {
                    flusher.forceRolledAndCheckpoint(segments.snapshot(), segments.logStartOffset());
                }
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

    /**
     * Before the roll's flush: one {@link #ROLL_WRITEBACK_STEP} of writeback of a sealed segment the flush has not
     * covered, so that the flush finds its pages clean. A synchronous flush of a whole segment would hold the agent
     * for as long as the disk takes to write it (a second and more for 1 GiB), while the writer, no longer prepared
     * for, reserves blocks and takes page faults on its own path; a step at a time, pre-faulting goes on between two
     * steps.
     *
     * @return bytes written back; 0 when every sealed segment is written back and the flush may run.
     */
    private int writeBackRolled(final Segment[] snapshot)
    {
        try
        {
            for (int i = snapshot.length - 2; i >= 0 && snapshot[i].needsFlush(); i--)
            {
                final int written = snapshot[i].writeBackSealedStep(sync, ROLL_WRITEBACK_STEP);
                if (written > 0)
                {
                    return written;
                }
            }
            return 0;
        }
        catch (final UncheckedIOException ex)
        {
            // its error may be the one the roll's fsync would have reported
            throw flusher.goOffline("writeback failed", ex);
        }
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
