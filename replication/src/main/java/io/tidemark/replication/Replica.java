package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.StorageException;
import io.tidemark.store.format.RecordBatchDescriptor;
import org.agrona.DirectBuffer;
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

    /**
     * Append the records of one fetch response as a follower, in one step: the epochs of the fetched batches reach
     * the epoch checkpoint before the batches reach the log (Kafka assigns the epoch start before the local append: a
     * crash between the two leaves the cache ahead of the log, which the next load cuts, never behind it), the
     * producer state follows what was appended, and the high watermark advances to the leader's, never past the log
     * end. Called by the follower fetcher, the log's single writer while this replica follows.
     *
     * @param buffer              the response.
     * @param offset              where its records start.
     * @param length              their length in bytes (0: none, only the high watermark moves).
     * @param leaderHighWatermark the leader's high watermark carried by the response.
     * @param errorHandler        where a failure after the records were appended is reported (a checkpoint left
     *                            behind for lack of space: the data is forced).
     * @return null when the records were appended (or there were none), else why nothing was appended: an
     *         {@link io.tidemark.store.StorageErrorCode#INVALID_BATCH} (the bytes do not continue this log: reconcile)
     *         or a log that failed this time (back off and fetch again); the epochs of what failed are cut again.
     * @throws StorageException a fatal failure ({@link FailStop#isFatal}): nothing more may be appended.
     */
    StorageException appendAsFollower(final DirectBuffer buffer, final int offset, final int length,
        final long leaderHighWatermark, final ErrorHandler errorHandler)
    {
        if (length > 0)
        {
            learnEpochs(buffer, offset, length);
            final long endBefore = log.logEndOffset();
            StorageException failure = null;
            try
            {
                log.appendRaw(buffer, offset, length);
            }
            catch (final StorageException ex)
            {
                failure = ex;
            }
            if (null != failure && log.logEndOffset() == endBefore)
            {
                if (FailStop.isFatal(failure))
                {
                    throw failure; // fail-stop
                }
                epochCache.truncateFromEnd(log.logEndOffset()); // epochs of what failed
                return failure;
            }
            // Appended (a flush that failed after it does not undo it): the producer state follows the log.
            producerState.onAppendRaw(buffer, offset, length);
            if (null != failure)
            {
                if (FailStop.isFatal(failure))
                {
                    throw failure; // fail-stop
                }
                errorHandler.onError(failure);
            }
        }
        highWatermark.advanceTo(Math.min(leaderHighWatermark, log.logEndOffset()));
        return null;
    }

    /**
     * New epochs in fetched batches start new entries of the epoch cache, before the batches are appended. The bytes
     * are not validated yet (the append does that): only frames that lie inside the response and continue from the
     * log end are read, so that no entry below the log end is ever replaced; entries of batches the append then
     * refuses are cut again.
     */
    private void learnEpochs(final DirectBuffer buffer, final int offset, final int length)
    {
        final int end = offset + length;
        long expected = log.logEndOffset();
        for (int at = offset; at + RecordBatchDescriptor.HEADER_LENGTH <= end; )
        {
            final int batchLength = buffer.getInt(at + RecordBatchDescriptor.LENGTH_OFFSET);
            final long base = buffer.getLong(at + RecordBatchDescriptor.BASE_OFFSET_OFFSET);
            final int count = buffer.getInt(at + RecordBatchDescriptor.RECORD_COUNT_OFFSET);
            if (batchLength < RecordBatchDescriptor.HEADER_LENGTH || batchLength > end - at || base != expected ||
                count <= 0)
            {
                return; // not a batch the append would take: it refuses the response
            }
            final int epoch = buffer.getInt(at + RecordBatchDescriptor.LEADER_EPOCH_OFFSET);
            if (epoch > epochCache.latestEpoch())
            {
                epochCache.assign(epoch, base);
            }
            expected = base + count;
            at += RecordBatchDescriptor.frameLength(batchLength);
        }
    }

    /**
     * Cut this follower's log back to the point it shares with the leader, in one step: the log, the producer state
     * rebuilt from it, the high watermark where the log now ends below it (only with unclean election, which lets
     * the target fall below it), and the epochs that start at or after the common point (even those without records:
     * they are not this log's any more).
     *
     * @param target the common point with the leader's log.
     * @return the log end offset now.
     */
    long truncateAsFollowerTo(final long target)
    {
        final long localEnd = log.logEndOffset();
        long newEnd = localEnd;
        if (target < localEnd)
        {
            newEnd = log.truncateTo(target);
            producerState.rebuild(log);
            if (highWatermark.get() > newEnd)
            {
                highWatermark.reset(newEnd); // only with unclean election enabled
            }
        }
        epochCache.truncateFromEnd(Math.min(target, newEnd));
        return log.logEndOffset();
    }

    /**
     * This follower is behind the leader's log start: empty its log and start it again there, with no epochs, no
     * producer state and the high watermark at the new start.
     *
     * @param leaderLogStartOffset the leader's log start offset.
     */
    void restartAsFollowerAt(final long leaderLogStartOffset)
    {
        log.truncateFullyAndStartAt(leaderLogStartOffset);
        epochCache.clear();
        producerState.rebuild(log);
        highWatermark.reset(leaderLogStartOffset);
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
