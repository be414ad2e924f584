package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * The parts of one open log, opened in the one order that is safe and shut down in the one order that is safe:
 * the directory lock first, then the load ({@link LogLoader}), the segment set, the counters, the flusher, the writer,
 * truncation, retention and the agent on the thread the context chooses; a close or a halt stops the agent, then the
 * writer, then flushes, trims and marks the directory clean (close only), releases the mappings and the counters, and
 * releases the directory lock last. An open that fails at any step releases what it took, the directory lock last,
 * whatever the failure.
 * <p>
 * It holds the parts for {@link Log}, which reaches them through its own final fields on every call; this class
 * holds no pointer back to the log. Threads: built by the opening thread; {@link #shutdown} runs once (the writer's
 * closed flag says which call runs it) under the flusher's lock, then the segment set's.
 */
final class LogLifecycle
{
    /**
     * How long a close waits for readers inside a poll, and for a writer call in progress, before it goes on
     * without them (readers then release their segment's mapping themselves when they leave the poll).
     */
    static final long CLOSE_WAIT_MS = 1000;

    static
    {
        if (ByteOrder.nativeOrder() != ByteOrder.LITTLE_ENDIAN)
        {
            throw new ExceptionInInitializerError("Tidemark's on-disk format is little-endian; this platform is not");
        }
    }

    final LogContext ctx;
    final Path dir;
    final LogDirectory directory;
    final LogCounters counters;
    final RecoveryReport recoveryReport;
    final LogSegments segments;
    final LogFlusher flusher;
    final LogWriter writer;
    final LogTruncation truncation;
    final LogRetention retention;
    final LogAgent agent;
    private final AgentRunner agentRunner;
    private final AgentInvoker agentInvoker;
    private final System.Logger logger = System.getLogger(Log.class.getName());

    /** Open the log of a concluded context: lock, load, recover, start the agent. */
    LogLifecycle(final LogContext ctx)
    {
        this.ctx = ctx;
        this.dir = ctx.logDir();
        final FileSync sync = ctx.fileSync();
        final EpochClock clock = ctx.epochClock();
        final int maxIndexEntries = LogLoader.maxIndexEntries(ctx);
        this.directory = LogDirectory.open(dir, clock.time(), sync);
        LogCounters openedCounters = null;
        LogSegments loadedSet = null;
        try
        {
            final LogCheckpoint checkpoint = new LogCheckpoint(dir, sync);
            final LogLoader.Loaded loaded = new LogLoader(ctx).load(directory.hasCleanShutdownMarker(), checkpoint);
            loadedSet = new LogSegments(ctx, maxIndexEntries, loaded.segments.toArray(new Segment[0]),
                loaded.logStartOffset);
            this.segments = loadedSet;
            this.recoveryReport = loaded.report;
            openedCounters = LogCounters.create(ctx, clock.time());
            this.counters = openedCounters;
            this.flusher = new LogFlusher(dir, sync, clock, checkpoint, counters, loaded.recoveryPoint);
            this.writer = new LogWriter(ctx, counters, segments, flusher, loaded.lastLeaderEpoch);
            this.truncation = new LogTruncation(ctx, maxIndexEntries, segments, flusher, writer, counters);
            this.retention = new LogRetention(ctx, segments, flusher, counters);
            // A plain kill (loaded.checkpointStands): the checkpoint still describes the log, so the open neither forces
            // the tail it re-validated nor moves the recovery point; that tail is flushed as any unflushed append is
            // (flush interval, roll, close), and a crash before then re-validates it again. Forcing what a kill left
            // unflushed here (hundreds of MB of dirty pages) was a third of a restarted host's log phase; deferred to
            // the log agent instead, it held the flush lock that a restarted follower's truncation waits for.
            if (loaded.recovered && !loaded.checkpointStands)
            {
                flusher.lock().lock();
                try
                {
                    flusher.directoryChanged();
                    flusher.forceAndCheckpoint(segments.snapshot(), writer.logEndOffset(), segments.logStartOffset(),
                        true, false);
                }
                finally
                {
                    flusher.lock().unlock();
                }
            }
            directory.deleteCleanShutdownMarker();
            counters.logEndOffset.setRelease(writer.logEndOffset());
            counters.recoveryPoint.setRelease(flusher.recoveryPoint());
            counters.logStartOffset.setRelease(segments.logStartOffset());
            counters.segmentCount.setRelease(segments.count());
            final boolean repaired = recoveryReport.segmentsRecovered() > 0 || !recoveryReport.notes().isEmpty();
            logger.log(repaired ? System.Logger.Level.INFO : System.Logger.Level.DEBUG,
                () -> "opened " + dir + ": " + recoveryReport);
        }
        catch (final IOException ex)
        {
            closeOnFailedOpen(loadedSet, openedCounters, ex);
            throw new StorageException(StorageErrorCode.IO_ERROR, "failed to open log " + dir, ex);
        }
        catch (final InternalError ex)
        {
            // What the JVM turns a fault on a mapped page into (SIGBUS: a hole of a full file system, a disk error).
            closeOnFailedOpen(loadedSet, openedCounters, ex);
            throw new StorageException(StorageErrorCode.IO_ERROR, "failed to open log " + dir +
                ": a memory-mapped access faulted (an unreadable page: a full file system or a disk error)", ex);
        }
        catch (final RuntimeException | Error ex)
        {
            closeOnFailedOpen(loadedSet, openedCounters, ex);
            throw ex;
        }

        final ErrorHandler errorHandler = null != ctx.errorHandler() ? ctx.errorHandler() :
            (t) -> logger.log(System.Logger.Level.ERROR, "log agent error in " + dir, t);
        this.agent = new LogAgent(ctx, segments, flusher, retention, writer, "tidemark-log-" + dir.getFileName(),
            errorHandler);
        switch (ctx.agentMode())
        {
            case DEDICATED:
                agentRunner = new AgentRunner(ctx.agentIdleStrategy(), errorHandler, null, agent);
                agentInvoker = null;
                AgentRunner.startOnThread(agentRunner, ctx.agentThreadFactory());
                break;
            case INVOKER:
                agentRunner = null;
                agentInvoker = new AgentInvoker(errorHandler, null, agent);
                agentInvoker.start();
                break;
            default:
                agentRunner = null;
                agentInvoker = null;
                break;
        }
    }

    /** Release everything a failed open took, whatever the failure; the directory lock last, always. */
    private void closeOnFailedOpen(
        final LogSegments loadedSet, final LogCounters openedCounters, final Throwable failure)
    {
        try
        {
            if (null != loadedSet)
            {
                for (final Segment segment : loadedSet.snapshot())
                {
                    segment.close();
                }
            }
            if (null != openedCounters)
            {
                openedCounters.close();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            failure.addSuppressed(ex);
        }
        finally
        {
            directory.close();
        }
    }

    /** {@link Log#flush()}: force everything appended and checkpoint, under the flusher's lock. */
    void flush()
    {
        writer.checkOnline();
        flusher.lock().lock();
        try
        {
            writer.checkOnline();
            flusher.forceAndCheckpoint(segments.snapshot(), writer.logEndOffset(), segments.logStartOffset(), false,
                true);
        }
        finally
        {
            flusher.lock().unlock();
        }
    }

    /** {@link Log#advanceLogStartOffset(long)}: at most the log end offset. */
    void advanceLogStartOffset(final long offset)
    {
        writer.checkOnline();
        if (offset > writer.logEndOffset())
        {
            throw new IllegalArgumentException("log start offset " + offset + " beyond the log end " +
                writer.logEndOffset());
        }
        retention.advanceLogStartOffset(offset);
    }

    /** {@link Log#openReader()}: a reader registered with the segment set, which waits for it before unmapping. */
    LogReader openReader()
    {
        writer.checkOpen();
        final LogReader reader = new LogReader(segments, writer, dir, ctx.readVerifyCrc());
        segments.addReader(reader);
        return reader;
    }

    /**
     * Run one duty cycle of the agent on the calling thread (agent mode {@link LogContext.AgentMode#INVOKER}).
     *
     * @return work done.
     */
    int invokeAgent()
    {
        if (null == agentInvoker)
        {
            throw new IllegalStateException("agent mode is " + ctx.agentMode() + ", not INVOKER");
        }
        return agentInvoker.invoke();
    }

    /** Close ({@code clean}: flushed, trimmed, checkpointed, marked clean) or halt; idempotent. */
    void shutdown(final boolean clean)
    {
        if (!writer.markClosed())
        {
            return;
        }
        stopAgent();
        final boolean writerStopped = stopWriter();
        flusher.lock().lock();
        segments.lock().lock();
        try
        {
            if (clean && !flusher.isOffline() && writerStopped)
            {
                try
                {
                    flusher.forceAndCheckpoint(segments.snapshot(), writer.logEndOffset(), segments.logStartOffset(),
                        false, true);
                    writer.active().trimForClose(ctx.fileSync());
                    flusher.writeCheckpointOnClose(writer.logEndOffset(), segments.logStartOffset());
                    directory.writeCleanShutdownMarker();
                }
                catch (final IOException | RuntimeException ex)
                {
                    logger.log(System.Logger.Level.ERROR, "unclean close of " + dir + ": next open recovers it", ex);
                }
            }
            releaseMappings(writerStopped);
            segments.dropSpare(clean); // a halt leaves the spare's files, as a killed process does
            counters.close();
        }
        finally
        {
            segments.lock().unlock();
            flusher.lock().unlock();
            if (writerStopped)
            {
                writer.releaseAfterClose(); // later writer calls get CLOSED, not "another writer call is in progress"
            }
            directory.close();
        }
    }

    private void stopAgent()
    {
        if (null != agentRunner)
        {
            agentRunner.close();
        }
        else if (null != agentInvoker)
        {
            agentInvoker.close();
        }
        agent.close();
    }

    /**
     * Make sure no writer call runs from now on: abort a claim the closing thread left open, and wait for a writer
     * call in progress on another thread to end.
     *
     * @return true when the writer guard is now held by this thread; false when another thread is still inside a
     *         writer call (then its segment must stay mapped and untrimmed).
     */
    private boolean stopWriter()
    {
        if (writer.stop(CLOSE_WAIT_MS))
        {
            return true;
        }
        logger.log(System.Logger.Level.WARNING, "closing " + dir + " while another thread is still inside a writer " +
            "call after " + CLOSE_WAIT_MS + " ms: the active segment is left mapped and untrimmed, and the next open " +
            "recovers the log");
        return false;
    }

    private void releaseMappings(final boolean writerStopped)
    {
        final int leftToReaders = segments.releaseMappings(writerStopped ? null : writer.active(), CLOSE_WAIT_MS);
        if (leftToReaders > 0)
        {
            logger.log(System.Logger.Level.INFO, "closed " + dir + " while readers were inside a poll: " +
                leftToReaders + " segment mapping(s) are released by those readers as they leave");
        }
    }
}
