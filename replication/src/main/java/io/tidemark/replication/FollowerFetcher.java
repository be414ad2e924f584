package io.tidemark.replication;

import io.tidemark.replication.protocol.FetchMessages;
import io.tidemark.replication.protocol.FetchSets;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.ErrorHandler;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.MessageHandler;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Replicates, onto one host, the partitions whose leader is one given other host: an Agrona {@link Agent} that
 * sends fetch and epoch requests to that leader over the {@link Transport} and appends the fetched batches to the
 * local logs as raw bytes. Each partition runs the state machine of {@link PartitionFetch}: reconcile the log
 * with the leader's epochs (truncating), then fetch, one request in flight.
 * <p>
 * The fetches of one duty cycle leave together, one FETCH_SET message to the leader ({@link FetchSets}), and the
 * leader answers those it can in one FETCH_RESPONSE_SET: the messages, tags and wake-ups per round stay one each way
 * however many partitions this host follows from that leader, where a message per partition multiplied them by the
 * partition count. Each entry keeps its partition's own state, correlation id and error.
 * <p>
 * Partitions are added and removed by the host agent when roles change, under {@link #lock}, which the duty cycle
 * also holds: a partition leaving this fetcher is guaranteed not to be written by it afterwards.
 */
final class FollowerFetcher implements Agent
{
    private static final System.Logger LOGGER = System.getLogger(FollowerFetcher.class.getName());
    private static final long REFUSAL_LOG_INTERVAL_MS = 10_000;
    /** Fetches per FETCH_SET: 10 KiB of requests, well inside the smallest request queue a transport has. */
    private static final int MAX_SET_ENTRIES = 256;

    private final int hostId;
    private final int leaderHostId;
    private final long incarnation;
    private final Transport transport;
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ErrorHandler errorHandler;
    private final FailStop failStop;
    private final ReentrantLock lock = new ReentrantLock();
    private long lastRefusalLogMs = Long.MIN_VALUE / 2;
    private long lastDropLogMs = Long.MIN_VALUE / 2;
    private long droppedResponses;
    private final ExpandableArrayBuffer requestBuffer = new ExpandableArrayBuffer(64);
    private final ExpandableArrayBuffer setBuffer = new ExpandableArrayBuffer(
        FetchSets.ENTRIES_OFFSET + 16 * FetchMessages.FetchRequest.LENGTH);
    private PartitionFetch[] gathered = new PartitionFetch[16];
    private int gatheredCount;
    private final FetchMessages.FetchRequest fetchRequest = new FetchMessages.FetchRequest();
    private final FetchMessages.EpochRequest epochRequest = new FetchMessages.EpochRequest();
    private final FetchMessages.FetchResponse fetchResponse = new FetchMessages.FetchResponse();
    private final FetchMessages.EpochResponse epochResponse = new FetchMessages.EpochResponse();
    private final MessageHandler responseHandler = this::onResponse;
    private PartitionFetch[] partitions = new PartitionFetch[0];
    private long nextCorrelationId;

    FollowerFetcher(final int hostId, final int leaderHostId, final long incarnation, final Transport transport,
        final ReplicationContext ctx, final ErrorHandler errorHandler, final FailStop failStop)
    {
        this.failStop = failStop;
        this.hostId = hostId;
        this.leaderHostId = leaderHostId;
        this.incarnation = incarnation;
        this.transport = transport;
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.errorHandler = errorHandler;
        // Host, leader and incarnation in the high bits: a response to an earlier incarnation's fetch, delivered late
        // by a network transport (Aeron may hand a restarted host messages sent before it subscribed again), never
        // matches a request of this one.
        this.nextCorrelationId = (long)hostId << 57 | (long)leaderHostId << 51 | (incarnation & 0x7FFFL) << 36;
    }

    int leaderHostId()
    {
        return leaderHostId;
    }

    /** Start (or restart, for a new leader epoch) replicating a partition: it begins by reconciling. */
    void add(final Replica replica, final int leaderEpoch)
    {
        lock.lock();
        try
        {
            for (final PartitionFetch existing : partitions)
            {
                if (existing.replica == replica)
                {
                    existing.restart(leaderEpoch, clock.time());
                    return;
                }
            }
            final PartitionFetch fetch = new PartitionFetch(replica, leaderEpoch, clock.time());
            partitions = Arrays.copyOf(partitions, partitions.length + 1);
            partitions[partitions.length - 1] = fetch;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** Stop replicating a partition; once this returns the fetcher no longer writes its log. */
    void remove(final Replica replica)
    {
        lock.lock();
        try
        {
            partitions = Arrays.stream(partitions).filter((p) -> p.replica != replica).toArray(PartitionFetch[]::new);
        }
        finally
        {
            lock.unlock();
        }
    }

    /** @return the state of a partition's fetch, or null (for tests and diagnostics). */
    PartitionFetch.State stateOf(final int partitionId)
    {
        lock.lock();
        try
        {
            for (final PartitionFetch p : partitions)
            {
                if (p.replica.partitionId == partitionId)
                {
                    return p.state;
                }
            }
            return null;
        }
        finally
        {
            lock.unlock();
        }
    }

    @Override
    public int doWork()
    {
        if (failStop.stopped())
        {
            return 0;
        }
        lock.lock();
        try
        {
            int work = transport.pollResponses(hostId, leaderHostId, responseHandler, 64);
            final long now = clock.time();
            for (final PartitionFetch p : partitions)
            {
                work += step(p, now);
            }
            sendGathered(now);
            return work;
        }
        finally
        {
            lock.unlock();
        }
    }

    private int step(final PartitionFetch p, final long now)
    {
        switch (p.state)
        {
            case RECONCILE:
                return sendEpochRequest(p, now);
            case FETCH:
                return sendFetch(p, now);
            case AWAIT_EPOCH:
            case AWAIT_FETCH:
                if (now - p.sentAtMs > ctx.replicaFetchWaitMaxMs() + ctx.lostAnswerTimeoutMs())
                {
                    backoff(p, p.state == PartitionFetch.State.AWAIT_EPOCH ? PartitionFetch.State.RECONCILE :
                        PartitionFetch.State.FETCH, "no response from leader " + leaderHostId, now);
                    return 1;
                }
                return 0;
            case BACKOFF:
                if (now >= p.backoffUntilMs)
                {
                    p.transition(p.afterBackoff, "backoff over", now);
                    return 1;
                }
                return 0;
            default:
                return 0;
        }
    }

    private int sendEpochRequest(final PartitionFetch p, final long now)
    {
        final int latest = p.replica.epochCache.latestEpoch();
        if (latest == LeaderEpochCache.UNDEFINED_EPOCH)
        {
            p.transition(PartitionFetch.State.FETCH, "no epochs to reconcile", now);
            return 1;
        }
        p.correlationId = ++nextCorrelationId;
        epochRequest.wrap(requestBuffer, 0).encode(p.replica.partitionId, hostId, p.leaderEpoch, latest,
            p.correlationId);
        if (transport.sendRequest(hostId, leaderHostId, FetchMessages.EPOCH_REQUEST, requestBuffer, 0,
            FetchMessages.EpochRequest.LENGTH))
        {
            p.sentAtMs = now;
            p.transition(PartitionFetch.State.AWAIT_EPOCH, "asked end of epoch " + latest, now);
        }
        else
        {
            backoff(p, PartitionFetch.State.RECONCILE, "request not sent", now);
        }
        return 1;
    }

    /** Gather a partition's fetch into this cycle's FETCH_SET; {@link #sendGathered} sends it. */
    private int sendFetch(final PartitionFetch p, final long now)
    {
        if (gatheredCount == MAX_SET_ENTRIES)
        {
            sendGathered(now);
        }
        p.correlationId = ++nextCorrelationId;
        p.fetchOffset = p.replica.log.logEndOffset();
        final int at = FetchSets.ENTRIES_OFFSET + gatheredCount * FetchMessages.FetchRequest.LENGTH;
        fetchRequest.wrap(setBuffer, at).encode(p.replica.partitionId, hostId, p.leaderEpoch,
            ctx.replicaFetchMaxBytes(), incarnation, p.fetchOffset, p.correlationId);
        if (gatheredCount == gathered.length)
        {
            gathered = Arrays.copyOf(gathered, gathered.length * 2); // grows with the partitions followed, once
        }
        gathered[gatheredCount++] = p;
        p.sentAtMs = now;
        p.state = PartitionFetch.State.AWAIT_FETCH; // the steady-state loop records no reason: it allocates nothing
        return 1;
    }

    /**
     * Send the fetches gathered in this cycle: one FETCH_SET, or the plain FETCH_REQUEST when there is one. A set
     * the transport refuses backs off each of its partitions, as a refused single fetch did.
     */
    private void sendGathered(final long now)
    {
        final int count = gatheredCount;
        if (0 == count)
        {
            return;
        }
        gatheredCount = 0;
        final boolean sent;
        if (1 == count)
        {
            sent = transport.sendRequest(hostId, leaderHostId, FetchMessages.FETCH_REQUEST, setBuffer,
                FetchSets.ENTRIES_OFFSET, FetchMessages.FetchRequest.LENGTH);
        }
        else
        {
            FetchSets.putHeader(setBuffer, 0, count);
            sent = transport.sendRequest(hostId, leaderHostId, FetchSets.FETCH_SET, setBuffer, 0,
                FetchSets.ENTRIES_OFFSET + count * FetchMessages.FetchRequest.LENGTH);
        }
        for (int i = 0; i < count; i++)
        {
            final PartitionFetch p = gathered[i];
            gathered[i] = null;
            if (!sent && p.state == PartitionFetch.State.AWAIT_FETCH)
            {
                backoff(p, PartitionFetch.State.FETCH, "request not sent", now);
            }
        }
    }

    private void backoff(final PartitionFetch p, final PartitionFetch.State then, final String why, final long now)
    {
        p.transition(PartitionFetch.State.BACKOFF, why, now);
        p.resumeIn(then, now + ctx.replicaFetchBackoffMs());
    }

    private PartitionFetch find(final int partitionId, final long correlationId)
    {
        for (final PartitionFetch p : partitions)
        {
            if (p.replica.partitionId == partitionId)
            {
                return p.correlationId == correlationId ? p : null;
            }
        }
        return null;
    }

    private void onResponse(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        try
        {
            if (msgTypeId == FetchMessages.FETCH_RESPONSE)
            {
                if (length >= FetchMessages.FetchResponse.HEADER_LENGTH)
                {
                    fetchResponse.wrap(buffer, index);
                    final int recordsLength = fetchResponse.recordsLength();
                    if (recordsLength >= 0 && recordsLength <= length - FetchMessages.FetchResponse.HEADER_LENGTH)
                    {
                        onFetchEntry(clock.time());
                        return;
                    }
                }
                dropResponse(msgTypeId, length, "a fetch response whose records do not fit it");
            }
            else if (msgTypeId == FetchSets.FETCH_RESPONSE_SET)
            {
                final FetchSets.Fault fault = FetchSets.checkResponses(buffer, index, length);
                if (null != fault)
                {
                    dropResponse(msgTypeId, length, "a fetch response set refused: " + fault);
                    return;
                }
                final int count = FetchSets.count(buffer, index);
                final long now = clock.time();
                int at = index + FetchSets.ENTRIES_OFFSET;
                for (int i = 0; i < count; i++)
                {
                    fetchResponse.wrap(buffer, at);
                    at += FetchSets.responseEntryLength(buffer, at);
                    onFetchEntry(now);
                }
            }
            else if (msgTypeId == FetchMessages.EPOCH_RESPONSE && length >= FetchMessages.EpochResponse.LENGTH)
            {
                epochResponse.wrap(buffer, index);
                final PartitionFetch p = find(epochResponse.partitionId(), epochResponse.correlationId());
                if (null != p && p.state == PartitionFetch.State.AWAIT_EPOCH)
                {
                    onEpochResponse(p, clock.time());
                }
            }
        }
        catch (final StorageException ex)
        {
            if (FailStop.isFatal(ex))
            {
                // an epoch checkpoint or the log could not be written: nothing more may be appended or truncated
                failStop.stop("replicating from host " + leaderHostId, ex);
            }
            else if (ex.code() != StorageErrorCode.CLOSED)
            {
                errorHandler.onError(ex);
            }
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
        }
    }

    /** The response {@link #fetchResponse} wraps, checked in bounds: to its partition if it answers its fetch. */
    private void onFetchEntry(final long now)
    {
        final PartitionFetch p = find(fetchResponse.partitionId(), fetchResponse.correlationId());
        if (null != p && p.state == PartitionFetch.State.AWAIT_FETCH)
        {
            onFetchResponse(p, now);
        }
    }

    private void dropResponse(final int msgTypeId, final int length, final String what)
    {
        droppedResponses++;
        final long now = clock.time();
        if (now - lastDropLogMs > REFUSAL_LOG_INTERVAL_MS)
        {
            lastDropLogMs = now;
            LOGGER.log(System.Logger.Level.WARNING, "host " + hostId + " dropped " + what + " from leader " +
                leaderHostId + " (type " + msgTypeId + ", " + length + " bytes)");
        }
    }

    /** @return responses dropped as malformed (out of bounds, or a set refused whole). */
    long droppedResponses()
    {
        lock.lock();
        try
        {
            return droppedResponses;
        }
        finally
        {
            lock.unlock();
        }
    }

    private void onFetchResponse(final PartitionFetch p, final long now)
    {
        final Replica replica = p.replica;
        final ReplicationError error = fetchResponse.error();
        switch (error)
        {
            case NONE:
                final int length = fetchResponse.recordsLength();
                final StorageException refused = replica.appendAsFollower(fetchResponse.buffer(),
                    fetchResponse.recordsOffset(), length, fetchResponse.highWatermark(), errorHandler);
                if (null != refused)
                {
                    if (refused.code() == StorageErrorCode.INVALID_BATCH)
                    {
                        p.transition(PartitionFetch.State.RECONCILE, "append rejected: " + refused.getMessage(), now);
                    }
                    else
                    {
                        backoff(p, PartitionFetch.State.FETCH, "local log failed: " + refused.getMessage(), now);
                    }
                    return;
                }
                p.state = PartitionFetch.State.FETCH;
                break;
            case OFFSET_OUT_OF_RANGE:
                if (p.fetchOffset < fetchResponse.logStartOffset())
                {
                    replica.restartAsFollowerAt(fetchResponse.logStartOffset());
                    p.transition(PartitionFetch.State.FETCH, "behind the leader's log start: restarted empty", now);
                }
                else
                {
                    p.transition(PartitionFetch.State.RECONCILE, "ahead of the leader's log end", now);
                }
                break;
            case UNKNOWN_LEADER_EPOCH:
                backoff(p, PartitionFetch.State.FETCH, "leader does not know epoch " + p.leaderEpoch + " yet", now);
                break;
            case NOT_ASSIGNED_REPLICA:
                if (now - lastRefusalLogMs > REFUSAL_LOG_INTERVAL_MS)
                {
                    lastRefusalLogMs = now;
                    LOGGER.log(System.Logger.Level.WARNING, "host " + hostId + ": leader " + leaderHostId +
                        " refuses fetches of partition " + replica.partitionId + ": this host is not one of its " +
                        "assigned replicas there (a stale assignment, or a host of another configuration)");
                }
                backoff(p, PartitionFetch.State.RECONCILE, "fetch refused: " + error, now);
                break;
            default:
                backoff(p, PartitionFetch.State.RECONCILE, "fetch refused: " + error, now);
                break;
        }
    }

    /**
     * The leader answered "the largest epoch I know at or below the one you asked is E, and it ends at X"
     * (KIP-101/279). Truncate to the common point and either fetch or ask again. Never below the high watermark
     * unless unclean election is enabled.
     */
    private void onEpochResponse(final PartitionFetch p, final long now)
    {
        final Replica replica = p.replica;
        final ReplicationError error = epochResponse.error();
        if (error != ReplicationError.NONE)
        {
            backoff(p, PartitionFetch.State.RECONCILE, "epoch query refused: " + error, now);
            return;
        }
        final int epoch = epochResponse.epoch();
        final long leaderEnd = epochResponse.endOffset();
        final long localEnd = replica.log.logEndOffset();
        long target;
        boolean done = true;
        if (epoch == LeaderEpochCache.UNDEFINED_EPOCH)
        {
            target = replica.highWatermark.get();
        }
        else if (replica.epochCache.contains(epoch))
        {
            target = Math.min(leaderEnd, replica.epochCache.endOffsetFor(epoch, localEnd).endOffset());
        }
        else
        {
            // We lack E: drop every record of our epochs above E, then ask again about what is left.
            final int previous = replica.epochCache.previousEpoch(epoch);
            target = previous == LeaderEpochCache.UNDEFINED_EPOCH ? replica.log.logStartOffset() :
                replica.epochCache.endOffsetFor(previous, localEnd).endOffset();
            done = previous == LeaderEpochCache.UNDEFINED_EPOCH;
        }
        if (!ctx.uncleanLeaderElectionEnable())
        {
            target = Math.max(target, replica.highWatermark.get());
        }
        replica.truncateAsFollowerTo(target);
        p.transition(done ? PartitionFetch.State.FETCH : PartitionFetch.State.RECONCILE,
            "leader: epoch " + epoch + " ends at " + leaderEnd + "; log end now " + replica.log.logEndOffset(), now);
    }

    @Override
    public String roleName()
    {
        return "tidemark-fetcher-" + hostId + "-from-" + leaderHostId;
    }
}
