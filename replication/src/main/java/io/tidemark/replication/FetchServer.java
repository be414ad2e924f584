package io.tidemark.replication;

import io.tidemark.replication.protocol.FetchMessages;
import io.tidemark.replication.protocol.FetchSets;
import io.tidemark.replication.spi.HostLiveness;
import io.tidemark.replication.spi.Transport;
import io.tidemark.store.BatchHandler;
import io.tidemark.store.LogReader;
import io.tidemark.store.StorageException;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.collections.Int2ObjectHashMap;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The leader side of the fetch protocol on one host: answers fetch and epoch requests from followers, tracks each
 * follower's position, requests ISR expansions, advances the high watermark, and holds ("parks") fetches that
 * have nothing new until data arrives or {@code replica.fetch.wait.max.ms} passes.
 * <p>
 * A follower learns the high watermark from the next response it gets anyway (as a Kafka follower does), never from
 * a response sent only to carry it: under acks=all every batch moves the high watermark once its followers have
 * fetched it, and an answer to each such move would double the fetches per batch (a response, then the fetch it
 * sets off, both ways), the messages the media drivers and the hosts' threads spend most of their time on. The
 * leader's own high watermark, which acknowledges produce requests, is not delayed by this; a follower's lags by
 * one batch in a stream, and by up to the fetch wait when writes stop.
 * <p>
 * Requests are fenced: a request carrying an older leader epoch gets FENCED_LEADER_EPOCH, a newer one
 * UNKNOWN_LEADER_EPOCH; a replica not assigned to the partition gets NOT_ASSIGNED_REPLICA.
 * <p>
 * Identities come from the transport, not from the request: a request whose replica id is not the host that sent
 * it, or that is shorter than its type, is dropped unanswered and counted. A fetch counts only in the incarnation
 * the follower's host registered with (when the {@link HostLiveness} source tracks incarnations): the follower's
 * incarnation is never raised by a fetch, so a fetch naming a later incarnation cannot reset what the leader knows
 * of the follower, nor one naming an earlier incarnation pass for the current one.
 * <p>
 * A follower's fetches of one duty cycle arrive as one FETCH_SET ({@link FetchSets}); the answers to one follower
 * host are gathered over a duty cycle (those answered at once and parked ones now due) and leave as one
 * FETCH_RESPONSE_SET at {@link #flush}, so the messages per round between two hosts do not grow with the number of
 * partitions. A set is bounded by what the transport carries; an answer that does not fit beside the others sends
 * them first. When the transport refuses a set, each of its answers is retried as a refused single answer was.
 * Error and epoch answers go alone, at once.
 * <p>
 * Runs on the host agent's thread; allocates nothing per request in steady state.
 */
final class FetchServer
{
    private final int hostId;
    private final Transport transport;
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final Int2ObjectHashMap<Replica> replicas;
    private final IsrChanges isrChanges;
    private final UnsafeBuffer scratch;
    private final FetchMessages.FetchRequest fetchRequest = new FetchMessages.FetchRequest();
    private final FetchMessages.EpochRequest epochRequest = new FetchMessages.EpochRequest();
    private final FetchMessages.FetchResponse fetchResponse = new FetchMessages.FetchResponse();
    private final FetchMessages.EpochResponse epochResponse = new FetchMessages.EpochResponse();
    private final Transport.RequestHandler requestHandler = this::onRequest;
    private final HostLiveness registry;
    private final RateLimitedLog log = new RateLimitedLog(System.getLogger(FetchServer.class.getName()));
    private long droppedRequests;
    private final BatchHandler copyBatch = this::copyBatch;
    private final int setCapacity;
    private ResponseSet[] sets = new ResponseSet[0];
    private ResponseSet copyTarget;
    private int copyLength;
    private long copiedUpTo;
    private boolean copyOverflowed;

    /**
     * The answers gathered for one follower host in this duty cycle: a FETCH_RESPONSE_SET being written, with what
     * each entry needs should the transport refuse it.
     */
    private static final class ResponseSet
    {
        final int toHost;
        final UnsafeBuffer buffer;
        int length = FetchSets.ENTRIES_OFFSET;
        int count;
        int limit;
        FollowerState[] followers = new FollowerState[16];
        long[] correlationIds = new long[16];
        long[] fetchOffsets = new long[16];
        long[] highWatermarks = new long[16];
        int[] maxBytes = new int[16];

        ResponseSet(final int toHost, final int capacity)
        {
            this.toHost = toHost;
            this.buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(capacity));
        }

        void add(final FollowerState follower, final long correlationId, final long fetchOffset, final int max,
            final long highWatermark, final int entryLength)
        {
            if (count == followers.length)
            {
                final int n = count * 2; // grows with the partitions one follower host fetches, once
                followers = Arrays.copyOf(followers, n);
                correlationIds = Arrays.copyOf(correlationIds, n);
                fetchOffsets = Arrays.copyOf(fetchOffsets, n);
                highWatermarks = Arrays.copyOf(highWatermarks, n);
                maxBytes = Arrays.copyOf(maxBytes, n);
            }
            followers[count] = follower;
            correlationIds[count] = correlationId;
            fetchOffsets[count] = fetchOffset;
            highWatermarks[count] = highWatermark;
            maxBytes[count] = max;
            count++;
            length += entryLength;
        }
    }

    /** Sends ISR change requests to the controller. */
    interface IsrChanges
    {
        void request(Replica replica, LeaderState leader, int[] newIsr);
    }

    FetchServer(final int hostId, final Transport transport, final ReplicationContext ctx,
        final Int2ObjectHashMap<Replica> replicas, final IsrChanges isrChanges)
    {
        this.hostId = hostId;
        this.transport = transport;
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.replicas = replicas;
        this.isrChanges = isrChanges;
        this.registry = ctx.hostLiveness();
        this.scratch = new UnsafeBuffer(ByteBuffer.allocateDirect(FetchMessages.FetchResponse.HEADER_LENGTH));
        this.setCapacity = FetchSets.ENTRIES_OFFSET + FetchMessages.FetchResponse.HEADER_LENGTH +
            ctx.replicaFetchMaxBytes() + 1024 * 1024 + 64;
    }

    /** Handle the requests waiting, then send the answers they gathered. */
    int poll()
    {
        final int work = transport.pollRequests(hostId, requestHandler, 64);
        flush();
        return work;
    }

    /** Send the answers gathered since the last flush, a message per follower host. */
    void flush()
    {
        for (final ResponseSet set : sets)
        {
            if (null != set && set.count > 0)
            {
                send(set);
            }
        }
    }

    /** @return requests dropped unanswered: malformed, claiming another sender, or from an unregistered incarnation. */
    long droppedRequests()
    {
        return droppedRequests;
    }

    private void onRequest(final int fromHost, final int msgTypeId, final MutableDirectBuffer buffer, final int index,
        final int length)
    {
        if (msgTypeId == FetchMessages.FETCH_REQUEST && length == FetchMessages.FetchRequest.LENGTH)
        {
            fetchRequest.wrap(buffer, index);
            if (fetchRequest.replicaId() == fromHost)
            {
                onFetch(fetchRequest);
                return;
            }
        }
        else if (msgTypeId == FetchSets.FETCH_SET)
        {
            final FetchSets.Fault fault = FetchSets.checkRequests(buffer, index, length);
            if (null != fault)
            {
                drop("fetch-server malformed-set", "host " + hostId + " dropped a fetch set (" + length +
                    " bytes) from host " + fromHost + ": " + fault);
                return;
            }
            final int count = FetchSets.count(buffer, index);
            final int entries = index + FetchSets.ENTRIES_OFFSET;
            for (int i = 0; i < count; i++)
            {
                if (fetchRequest.wrap(buffer, entries + i * FetchMessages.FetchRequest.LENGTH).replicaId() != fromHost)
                {
                    drop("fetch-server malformed-or-misattributed", "host " + hostId + " dropped a fetch set from " +
                        "host " + fromHost + ": an entry's replica id is not its sender");
                    return;
                }
            }
            for (int i = 0; i < count; i++)
            {
                onFetch(fetchRequest.wrap(buffer, entries + i * FetchMessages.FetchRequest.LENGTH));
            }
            return;
        }
        else if (msgTypeId == FetchMessages.EPOCH_REQUEST && length == FetchMessages.EpochRequest.LENGTH)
        {
            epochRequest.wrap(buffer, index);
            if (epochRequest.replicaId() == fromHost)
            {
                onEpochRequest(epochRequest);
                return;
            }
        }
        drop("fetch-server malformed-or-misattributed", "host " + hostId + " dropped a request of type " +
            msgTypeId + " (" + length + " bytes) from host " + fromHost + ": malformed, or its replica id is not " +
            "its sender");
    }

    private void drop(final String kind, final String message)
    {
        droppedRequests++;
        log.log(System.Logger.Level.WARNING, kind, message);
    }

    private ReplicationError check(final Replica replica, final int requestEpoch, final int replicaId)
    {
        if (null == replica)
        {
            return ReplicationError.NOT_LEADER;
        }
        final LeaderState leader = replica.leaderState;
        if (null == leader)
        {
            return requestEpoch < replica.leaderEpoch ? ReplicationError.FENCED_LEADER_EPOCH :
                ReplicationError.NOT_LEADER;
        }
        if (requestEpoch < leader.epoch)
        {
            return ReplicationError.FENCED_LEADER_EPOCH;
        }
        if (requestEpoch > leader.epoch)
        {
            return ReplicationError.UNKNOWN_LEADER_EPOCH;
        }
        if (null == leader.follower(replicaId))
        {
            return ReplicationError.NOT_ASSIGNED_REPLICA;
        }
        return ReplicationError.NONE;
    }

    private void onFetch(final FetchMessages.FetchRequest request)
    {
        final long now = clock.time();
        final Replica replica = replicas.get(request.partitionId());
        final ReplicationError error = check(replica, request.leaderEpoch(), request.replicaId());
        if (error != ReplicationError.NONE)
        {
            respondError(replica, request.partitionId(), request.replicaId(), request.correlationId(), error);
            return;
        }
        final LeaderState leader = replica.leaderState;
        final FollowerState follower = leader.follower(request.replicaId());
        final long registered = registry.registeredIncarnation(follower.hostId);
        if (registered != HostLiveness.ANY_INCARNATION)
        {
            if (request.incarnation() != registered)
            {
                // Not the incarnation the follower's host registered with: a fetch of an earlier life delayed in the
                // network, one sent before the registration reached this host, or a forgery. Dropped unanswered;
                // the live fetcher sends again.
                drop("fetch-server unregistered-incarnation", "host " + hostId + " dropped fetches from host " +
                    follower.hostId + " in incarnation " + request.incarnation() + ", registered: " + registered);
                return;
            }
            if (follower.incarnation != registered)
            {
                follower.resetForIncarnation(registered, now);
            }
        }
        else if (request.incarnation() < follower.incarnation)
        {
            // A fetch from an earlier incarnation of the follower's host, delayed or duplicated in the network: that
            // fetcher is gone and its log may have lost records since (a power loss). Counting its offset would let
            // the follower into the ISR, or the HW past what its current log holds. Dropped, unanswered.
            return;
        }
        else if (request.incarnation() > follower.incarnation)
        {
            follower.resetForIncarnation(request.incarnation(), now);
        }
        final long fetchOffset = request.fetchOffset();
        final long leaderEnd = replica.log.logEndOffset();
        if (fetchOffset > leaderEnd || fetchOffset < replica.log.logStartOffset())
        {
            follower.unpark();
            respondError(replica, request.partitionId(), request.replicaId(), request.correlationId(),
                ReplicationError.OFFSET_OUT_OF_RANGE);
            return;
        }
        follower.onFetch(fetchOffset, leaderEnd, now); // supersedes an answer still being retried
        final int[] expanded = leader.expandCandidate(follower, now, ctx.replicaLagTimeMaxMs());
        if (null != expanded)
        {
            isrChanges.request(replica, leader, expanded);
        }
        leader.maybeAdvanceHighWatermark();
        if (fetchOffset < leaderEnd)
        {
            respond(replica, leader, follower, request.correlationId(), fetchOffset, request.maxBytes());
        }
        else
        {
            follower.park(request.correlationId(), fetchOffset, request.maxBytes(),
                now + ctx.replicaFetchWaitMaxMs());
        }
    }

    /**
     * Answer parked fetches of a leader replica that have something new or waited long enough.
     *
     * @return fetches answered.
     */
    int serveParked(final Replica replica, final LeaderState leader, final long now)
    {
        int work = 0;
        final long leaderEnd = replica.log.logEndOffset();
        for (final FollowerState follower : leader.followers())
        {
            if (follower.answerDue(leaderEnd, now))
            {
                respond(replica, leader, follower, follower.parkedCorrelationId, follower.parkedFetchOffset,
                    follower.parkedMaxBytes);
                work++;
            }
        }
        return work;
    }

    /** Gather the answer to a fetch into its follower host's set; {@link #flush} sends it. */
    private void respond(final Replica replica, final LeaderState leader, final FollowerState follower,
        final long correlationId, final long fetchOffset, final int maxBytes)
    {
        follower.unpark();
        final ResponseSet set = setFor(follower.hostId);
        if (set.count == FetchSets.MAX_ENTRIES ||
            (set.count > 0 && set.limit - set.length < FetchMessages.FetchResponse.HEADER_LENGTH + 8))
        {
            send(set);
        }
        try
        {
            if (!copyInto(set, replica, follower, fetchOffset, maxBytes) && set.count > 0)
            {
                send(set); // not even the first batch fits beside the answers gathered: they go first
                copyInto(set, replica, follower, fetchOffset, maxBytes);
            }
        }
        catch (final StorageException ex)
        {
            respondError(replica, replica.partitionId, follower.hostId, correlationId,
                ReplicationError.OFFSET_OUT_OF_RANGE);
            return;
        }
        final int entry = set.length;
        final int recordsLength = copyLength - entry - FetchMessages.FetchResponse.HEADER_LENGTH;
        final long hw = leader.highWatermark();
        fetchResponse.wrap(set.buffer, entry).encode(replica.partitionId, ReplicationError.NONE, leader.epoch,
            recordsLength, correlationId, hw, replica.log.logStartOffset(), replica.log.logEndOffset());
        final int entryLength = FetchSets.responseEntryLength(recordsLength);
        set.buffer.setMemory(copyLength, entry + entryLength - copyLength, (byte)0);
        set.add(follower, correlationId, fetchOffset, maxBytes, hw, entryLength);
    }

    /**
     * Copy the batches a fetch gets into the set, after room for its header, as far as they fit the set; the reader
     * is left after the last batch copied.
     *
     * @return whether a batch was copied, or there was none to copy (false: the first one did not fit).
     */
    private boolean copyInto(final ResponseSet set, final Replica replica, final FollowerState follower,
        final long fetchOffset, final int maxBytes)
    {
        LogReader reader = follower.reader;
        if (null == reader)
        {
            reader = replica.log.openReader();
            follower.reader = reader;
        }
        if (reader.position() != fetchOffset)
        {
            reader.seek(fetchOffset);
        }
        copyTarget = set;
        copyLength = set.length + FetchMessages.FetchResponse.HEADER_LENGTH;
        copiedUpTo = fetchOffset;
        copyOverflowed = false;
        final int room = set.limit - copyLength;
        reader.pollBatches(copyBatch, Long.MAX_VALUE, Math.min(Math.min(maxBytes, ctx.replicaFetchMaxBytes()), room));
        copyTarget = null;
        if (copyOverflowed)
        {
            reader.seek(copiedUpTo); // the batches left out are what the next fetch gets
            return copiedUpTo != fetchOffset;
        }
        return true;
    }

    private ResponseSet setFor(final int toHost)
    {
        if (toHost >= sets.length)
        {
            sets = Arrays.copyOf(sets, toHost + 1);
        }
        ResponseSet set = sets[toHost];
        if (null == set)
        {
            set = new ResponseSet(toHost, setCapacity);
            sets[toHost] = set;
        }
        if (0 == set.count)
        {
            set.limit = Math.min(setCapacity, transport.maxMessageLength());
        }
        return set;
    }

    /** Send a gathered set (a plain FETCH_RESPONSE when it holds one answer) and start it again empty. */
    private void send(final ResponseSet set)
    {
        final int count = set.count;
        final boolean sent;
        if (1 == count)
        {
            sent = transport.sendResponse(hostId, set.toHost, FetchMessages.FETCH_RESPONSE, set.buffer,
                FetchSets.ENTRIES_OFFSET, FetchMessages.FetchResponse.HEADER_LENGTH +
                set.buffer.getInt(FetchSets.ENTRIES_OFFSET + 12));
        }
        else
        {
            FetchSets.putHeader(set.buffer, 0, count);
            sent = transport.sendResponse(hostId, set.toHost, FetchSets.FETCH_RESPONSE_SET, set.buffer, 0,
                set.length);
        }
        final long now = sent ? 0 : clock.time();
        for (int i = 0; i < count; i++)
        {
            final FollowerState follower = set.followers[i];
            set.followers[i] = null;
            if (sent)
            {
                follower.onAnswerSent(set.highWatermarks[i]);
            }
            else
            {
                final long fetchOffset = set.fetchOffsets[i];
                if (null != follower.reader && follower.reader.position() != fetchOffset)
                {
                    follower.reader.seek(fetchOffset); // not delivered: serve the same bytes again next time
                }
                follower.onAnswerRefused(set.correlationIds[i], fetchOffset, set.maxBytes[i], now,
                    ctx.replicaFetchWaitMaxMs());
            }
        }
        set.count = 0;
        set.length = FetchSets.ENTRIES_OFFSET;
        set.limit = Math.min(setCapacity, transport.maxMessageLength());
    }

    private void copyBatch(final io.tidemark.store.RecordBatch batch)
    {
        final int length = batch.frameLength();
        if (!copyOverflowed && copyLength + length <= copyTarget.limit)
        {
            copyTarget.buffer.putBytes(copyLength, batch.buffer(), batch.offset(), length);
            copyLength += length;
            copiedUpTo = batch.nextOffset();
        }
        else
        {
            copyOverflowed = true;
        }
    }

    private void respondError(final Replica replica, final int partitionId, final int toHost,
        final long correlationId, final ReplicationError error)
    {
        final int epoch = null == replica ? -1 : replica.leaderEpoch;
        final long start = null == replica ? -1 : replica.log.logStartOffset();
        final long end = null == replica ? -1 : replica.log.logEndOffset();
        final long hw = null == replica ? -1 : replica.highWatermark.get();
        fetchResponse.wrap(scratch, 0).encode(partitionId, error, epoch, 0, correlationId, hw, start, end);
        transport.sendResponse(hostId, toHost, FetchMessages.FETCH_RESPONSE, scratch, 0,
            FetchMessages.FetchResponse.HEADER_LENGTH);
    }

    private void onEpochRequest(final FetchMessages.EpochRequest request)
    {
        final Replica replica = replicas.get(request.partitionId());
        final ReplicationError error = check(replica, request.leaderEpoch(), request.replicaId());
        int epoch = LeaderEpochCache.UNDEFINED_EPOCH;
        long endOffset = LeaderEpochCache.UNDEFINED_OFFSET;
        if (error == ReplicationError.NONE)
        {
            final LeaderEpochCache.EpochEndOffset answer =
                replica.epochCache.endOffsetFor(request.requestedEpoch(), replica.log.logEndOffset());
            epoch = answer.epoch();
            endOffset = answer.endOffset();
        }
        epochResponse.wrap(scratch, 0).encode(request.partitionId(), error,
            null == replica ? -1 : replica.leaderEpoch, epoch, request.correlationId(), endOffset);
        transport.sendResponse(hostId, request.replicaId(), FetchMessages.EPOCH_RESPONSE, scratch, 0,
            FetchMessages.EpochResponse.LENGTH);
    }
}
