package io.tidemark.host;

import io.aeron.Publication;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.replication.RateLimitedLog;
import io.tidemark.replication.ReplicationError;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.tidemark.client.remote.protocol.GatewayMessages.ORDER;
import static io.tidemark.client.remote.protocol.GatewayMessages.PRODUCE_RESULT;
import static io.tidemark.client.remote.protocol.GatewayMessages.PRODUCE_RESULT_BASE_OFFSET;
import static io.tidemark.client.remote.protocol.GatewayMessages.PRODUCE_RESULT_LENGTH;
import static io.tidemark.client.remote.protocol.GatewayMessages.RESULT_CORRELATION_OFFSET;
import static io.tidemark.client.remote.protocol.GatewayMessages.RESULT_ERROR_OFFSET;
import static io.tidemark.client.remote.protocol.GatewayMessages.RESULT_PARTITION_OFFSET;

/**
 * The produce results to one client over its reply publication: each is sent at once, or, when the publication
 * refuses it (back pressure), kept in the client's {@link ResultBacklog} and sent again, oldest first, before any newer
 * result ({@link #resendBacklog}, every duty cycle of the gateway while any client has a backlog).
 * <p>
 * Thread-safety: results come from the replica host's agent thread and the resends from the gateway's (one thread in
 * the shared profile, two in the latency one); both hold this object's lock.
 */
final class ClientReplies
{
    /**
     * What a gateway's clients share: how many have a backlog, the room their backlogs take together, how many
     * results were dropped, and the log.
     */
    static final class Totals
    {
        final AtomicInteger clientsWithBacklog = new AtomicInteger();
        final AtomicLong dropped = new AtomicLong();
        final RateLimitedLog log = new RateLimitedLog(System.getLogger(HostGateway.class.getName()));
        final ResultBacklog.Budget budget;

        Totals()
        {
            this(ResultBacklog.HOST_MAX_ENTRIES);
        }

        /** @param hostMaxEntries results the host keeps for all its clients together at most. */
        Totals(final long hostMaxEntries)
        {
            this.budget = new ResultBacklog.Budget(hostMaxEntries);
        }
    }

    private final int hostId;
    private final long clientId;
    private final String sourceAddress;
    private final Publication reply;
    private final FrameWriter writer;
    private final Totals totals;
    private final UnsafeBuffer result = new UnsafeBuffer(ByteBuffer.allocateDirect(PRODUCE_RESULT_LENGTH));
    private final ResultBacklog backlog;
    private boolean backlogged;

    ClientReplies(final int hostId, final long clientId, final String sourceAddress, final Publication reply,
        final FrameWriter writer, final Totals totals)
    {
        this.hostId = hostId;
        this.clientId = clientId;
        this.sourceAddress = sourceAddress;
        this.reply = reply;
        this.writer = writer;
        this.totals = totals;
        this.backlog = new ResultBacklog(totals.budget);
    }

    /** Send a produce result, or keep it, in order behind any kept before, when the reply publication refuses it. */
    synchronized void send(final int partitionId, final long correlationId, final long baseOffset,
        final ReplicationError error)
    {
        if (backlog.isEmpty() && offer(partitionId, error.code(), correlationId, baseOffset))
        {
            return;
        }
        if (!backlog.add(partitionId, error.code(), correlationId, baseOffset))
        {
            final long dropped = totals.dropped.incrementAndGet(); // the client's own backstop applies
            if (totals.log.shouldLog("results dropped") >= 0) // no string per dropped result
            {
                System.getLogger(HostGateway.class.getName()).log(System.Logger.Level.WARNING, "host " + hostId +
                    " dropped " + dropped + " produce result(s) in all for clients that read too slowly (" +
                    (backlog.refusedForHost() ? "the results kept for all clients reached the host's bound of " +
                    totals.budget.limit() : "this one read none of its last " + ResultBacklog.MAX_ENTRIES) +
                    "; client " + clientId + " at " + sourceAddress + ")");
            }
        }
        else if (!backlogged)
        {
            backlogged = true;
            totals.clientsWithBacklog.incrementAndGet();
        }
    }

    /** @return results waiting in this client's backlog. */
    synchronized int backlogged()
    {
        return backlog.size();
    }

    /** @return results of the backlog sent now, oldest first, until the publication refuses one. */
    synchronized int resendBacklog()
    {
        int sent = 0;
        while (!backlog.isEmpty() && offer(backlog.partitionId(), backlog.errorCode(), backlog.correlationId(),
            backlog.baseOffset()))
        {
            backlog.removeOldest();
            sent++;
        }
        if (backlog.isEmpty())
        {
            unmarkBacklogged();
        }
        return sent;
    }

    /** The client is forgotten: its backlog goes. */
    synchronized void close()
    {
        backlog.clear();
        unmarkBacklogged();
    }

    private void unmarkBacklogged()
    {
        if (backlogged)
        {
            backlogged = false;
            totals.clientsWithBacklog.decrementAndGet();
        }
    }

    private boolean offer(final int partitionId, final int errorCode, final long correlationId, final long baseOffset)
    {
        result.putInt(RESULT_PARTITION_OFFSET, partitionId, ORDER);
        result.putInt(RESULT_ERROR_OFFSET, errorCode, ORDER);
        result.putLong(RESULT_CORRELATION_OFFSET, correlationId, ORDER);
        result.putLong(PRODUCE_RESULT_BASE_OFFSET, baseOffset, ORDER);
        return writer.offer(reply, PRODUCE_RESULT, FrameDescriptor.CLIENT_RECEIVER, clientId, result, 0,
            PRODUCE_RESULT_LENGTH) > 0;
    }
}
