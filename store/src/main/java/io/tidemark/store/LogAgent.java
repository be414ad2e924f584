package io.tidemark.store;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;

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
 */
final class LogAgent implements Agent
{
    /** Consecutive failed duty cycles that take the log offline: a failure that repeats is not transient. */
    static final int FAILED_CYCLES_BEFORE_OFFLINE = 5;
    /** Least time between two reports of agent errors. */
    static final long REPORT_INTERVAL_MS = 1000;

    private final Log log;
    private final String roleName;
    private final ErrorHandler errorHandler;
    private final ErrorRateLimiter reports = new ErrorRateLimiter(TimeUnit.MILLISECONDS.toNanos(REPORT_INTERVAL_MS));
    private final System.Logger logger = System.getLogger(Log.class.getName());
    private final ReentrantLock dutyLock = new ReentrantLock();
    private int failedCycles;
    private boolean closed;

    LogAgent(final Log log, final String roleName, final ErrorHandler errorHandler)
    {
        this.log = log;
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
            final int work = log.doAgentWork();
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
            if (!log.isOffline())
            {
                errorHandler.onError(log.agentFailed(failedCycles, failure));
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
