package io.tidemark.store;

import org.agrona.concurrent.Agent;

import java.util.concurrent.locks.ReentrantLock;

/**
 * The log's background duty cycle: reserves and pre-faults pages ahead of the writer, prepares the next segment
 * before the roll, flushes on {@code flush.interval.ms} and after a roll, applies retention, and unmaps segments
 * that left the log once no reader is inside them.
 * <p>
 * Errors never escape the thread: they go to the agent runner's error handler (a failed flush also takes the log
 * offline). The application chooses the thread ({@link LogContext.AgentMode}). {@link #doWork()} is safe to call
 * from any one thread at a time; after {@link #close()} it does nothing.
 */
final class LogAgent implements Agent
{
    private final Log log;
    private final String roleName;
    private final ReentrantLock dutyLock = new ReentrantLock();
    private boolean closed;

    LogAgent(final Log log, final String roleName)
    {
        this.log = log;
        this.roleName = roleName;
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
            return closed ? 0 : log.doAgentWork();
        }
        finally
        {
            dutyLock.unlock();
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
