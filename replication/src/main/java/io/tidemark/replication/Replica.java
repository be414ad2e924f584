package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.agrona.concurrent.status.CountersManager;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * One replica of a partition on one host: its log, leader-epoch cache, high watermark, produce ring and counters,
 * and its role (leader state while leading).
 * <p>
 * <b>Single writer.</b> The log has one writer at a time: the host agent while this replica leads (produce
 * appends), the follower fetcher while it follows (raw appends, truncation). Role changes hand the log over under
 * the fetcher's lock ({@link FollowerFetcher#remove}), so the two never write at once.
 */
final class Replica implements AutoCloseable
{
    final int hostId;
    final int partitionId;
    final TopicPartition topicPartition;
    final Log log;
    final LeaderEpochCache epochCache;
    final HighWatermark highWatermark;
    final RingBuffer produceRing;
    final ReplicaCounters counters;
    final ProducerStateManager producerState = new ProducerStateManager();
    volatile PartitionState state;
    volatile LeaderState leaderState;
    volatile int leaderEpoch = -1;
    volatile int leaderId = PartitionState.NO_LEADER;
    int fetchingFrom = PartitionState.NO_LEADER;
    /** Bytes the log pretouches ahead (0 when the host's pretouch budget was spent when it opened). */
    long pretouchBytes;
    private long nextCheckpointMs; // the housekeeping thread's

    private Replica(final int hostId, final PartitionState state, final Log log, final CountersManager counters,
        final int produceRingBytes)
    {
        this.hostId = hostId;
        this.partitionId = state.partitionId();
        this.topicPartition = state.topicPartition();
        this.log = log;
        this.epochCache = LeaderEpochCache.load(log);
        this.highWatermark = HighWatermark.load(log.directory(), log.logEndOffset(), log.context().fileSync());
        this.produceRing = new ManyToOneRingBuffer(new UnsafeBuffer(
            ByteBuffer.allocateDirect(produceRingBytes + RingBufferDescriptor.TRAILER_LENGTH)));
        this.counters = new ReplicaCounters(counters, hostId, state);
        this.counters.highWatermark.setRelease(highWatermark.get());
        this.producerState.rebuild(log);
    }

    /**
     * Open (recovering if needed) the replica's log under {@code hostDir}.
     */
    static Replica open(final Path hostDir, final int hostId, final PartitionState state, final ReplicationContext ctx,
        final CountersManager counters)
    {
        return open(hostId, state, openLog(hostDir.resolve(state.topicPartition().logName()), ctx, counters,
            Long.MAX_VALUE), ctx, counters);
    }

    /**
     * Open (recovering if needed) a replica log directory as the replication layer runs it.
     *
     * @param pretouchAllowance bytes of the host's pretouch budget left: a log that would pretouch more does not
     *                          pretouch at all ({@link #pretouchBytes} of its replica says what it does).
     */
    static Log openLog(final Path logDir, final ReplicationContext ctx, final CountersManager counters,
        final long pretouchAllowance)
    {
        final LogContext logContext = ctx.logContextFactory().apply(logDir)
            .agentMode(LogContext.AgentMode.EXTERNAL)
            .epochClock(ctx.epochClock())
            .countersManager(counters);
        if (logContext.pretouchBytes() > pretouchAllowance)
        {
            logContext.pretouchBytes(0);
        }
        return Log.open(logContext);
    }

    /** The replica over a log opened already ({@link #openLog}); the log is closed if this fails. */
    static Replica open(final int hostId, final PartitionState state, final Log log, final ReplicationContext ctx,
        final CountersManager counters)
    {
        try
        {
            final Replica replica = new Replica(hostId, state, log, counters, ctx.produceRingBytes());
            replica.pretouchBytes = log.context().pretouchBytes();
            return replica;
        }
        catch (final RuntimeException ex)
        {
            log.close();
            throw ex;
        }
        catch (final Error ex)
        {
            log.halt(); // the thread dies here: leave the files as they are, release the directory
            throw ex;
        }
    }

    boolean isLeader()
    {
        return null != leaderState;
    }

    /**
     * The log's housekeeping: its background agent (block reservation, pre-faulting, flushes, writeback, retention)
     * and the high watermark checkpoint when due. Both make system calls that can wait on the disk (the checkpoint
     * forces a file and its directory, which on ext4 waits for a journal commit behind the file system's dirty
     * pages: up to a second after a burst of appends), so they run on the thread that runs the host's housekeeping,
     * one thread at a time, and on the replication duty cycle only where no housekeeping thread exists.
     *
     * @param nowMs                the time.
     * @param checkpointIntervalMs how often the high watermark is checkpointed.
     * @param errorHandler         where a failed checkpoint is reported (the log's recovery and HW = min(checkpoint,
     *                             LEO) on restart cover a stale one; a failing disk takes the log offline through its
     *                             own writes).
     * @return the work done.
     * @throws Exception what the log's agent throws (a storage failure it could not handle).
     */
    int housekeeping(final long nowMs, final long checkpointIntervalMs, final ErrorHandler errorHandler)
        throws Exception
    {
        final int work = log.agent().doWork();
        if (nowMs >= nextCheckpointMs)
        {
            nextCheckpointMs = nowMs + checkpointIntervalMs;
            try
            {
                highWatermark.checkpoint();
            }
            catch (final IOException ex)
            {
                errorHandler.onError(ex);
            }
        }
        return work;
    }

    void updateCounters()
    {
        counters.highWatermark.setRelease(highWatermark.get());
        counters.leader.setRelease(leaderId);
        counters.leaderEpoch.setRelease(leaderEpoch);
        final LeaderState leader = leaderState;
        if (null != leader)
        {
            final long end = log.logEndOffset();
            counters.isrSize.setRelease(leader.isrSize());
            counters.replica(hostId, end, end);
            for (final FollowerState follower : leader.followers())
            {
                counters.replica(follower.hostId, follower.logEndOffset, end);
            }
        }
    }

    /** Clean close: checkpoint the high watermark, close the log cleanly. */
    @Override
    public void close()
    {
        final LeaderState leader = leaderState;
        if (null != leader)
        {
            leader.close();
        }
        try
        {
            highWatermark.close();
        }
        catch (final IOException ignore)
        {
            // the log's recovery and HW = min(checkpoint, LEO) cover a stale checkpoint
        }
        log.close();
        counters.close();
    }

    /** Stop as a killed process would: nothing flushed or checkpointed. */
    void halt()
    {
        final LeaderState leader = leaderState;
        if (null != leader)
        {
            leader.close();
        }
        highWatermark.halt();
        log.halt();
        counters.close();
    }

    @Override
    public String toString()
    {
        return topicPartition + "@" + hostId + "{epoch=" + leaderEpoch + ", leader=" + leaderId + ", leo=" +
            log.logEndOffset() + ", hw=" + highWatermark + '}';
    }
}
