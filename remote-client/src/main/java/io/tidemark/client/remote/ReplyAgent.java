package io.tidemark.client.remote;

import io.aeron.logbuffer.Header;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameReader;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;

/**
 * The client's duty cycle: runs the transport (the embedded driver and the reply subscription), hears the hosts'
 * answers, each checked as a frame from the host's registered incarnation to this client, new in its sequence, and
 * hands it to produce, reads or the host's link; introduces this client to hosts that have not answered yet and
 * repeats the introduction to the others every {@link HostLinks#KEEPALIVE_MS}.
 */
final class ReplyAgent implements Agent
{
    private final ClientTransport transport;
    private final HostLinks links;
    private final RemoteProduce produce;
    private final RemoteReads reads;
    private final EdgeCounters counters;
    private final long clientId;
    // used under the transport's progress lock only (onReply runs inside progress())
    private final FrameReader reader;
    private long nextHelloCheckMs;

    ReplyAgent(final ClientTransport transport, final HostLinks links, final RemoteProduce produce,
        final RemoteReads reads, final EdgeCounters counters, final ClusterSecret secret, final int clusterHash,
        final long clientId)
    {
        this.transport = transport;
        this.links = links;
        this.produce = produce;
        this.reads = reads;
        this.counters = counters;
        this.clientId = clientId;
        this.reader = new FrameReader(secret, clusterHash);
    }

    @Override
    public int doWork()
    {
        int work = transport.progress();
        final long now = System.currentTimeMillis();
        if (now >= nextHelloCheckMs)
        {
            nextHelloCheckMs = now + HostLinks.HELLO_INTERVAL_MS;
            // every registered host, not only today's leaders: a failover then finds the link ready
            work += links.helloIfDue(now);
        }
        return work;
    }

    private void drop(final EdgeCounters.Reason reason, final long sender)
    {
        counters.drop(EdgeCounters.Stream.REPLY, reason, sender, null);
    }

    /** One reassembled message on the reply stream. */
    void onReply(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final EdgeCounters.Reason refused = reader.verify(buffer, offset, length, GatewayMessages.REPLY_STREAM_ID);
        if (null != refused)
        {
            drop(refused, -1);
            return;
        }
        final long sender = reader.senderId();
        final HostLinks.HostLink link = reader.senderKind() == FrameDescriptor.HOST && sender >= 0 &&
            sender < PartitionState.MAX_HOSTS ? links.linked((int)sender) : null;
        if (null == link)
        {
            drop(EdgeCounters.Reason.UNKNOWN_SENDER, sender);
            return;
        }
        if (reader.senderEpoch() != link.info.incarnation())
        {
            drop(EdgeCounters.Reason.STALE_SENDER, sender);
            return;
        }
        if (reader.receiverId() != FrameDescriptor.CLIENT_RECEIVER || reader.receiverEpoch() != clientId)
        {
            drop(EdgeCounters.Reason.WRONG_RECEIVER, sender);
            return;
        }
        if (!link.window.accept(reader.senderEpoch(), reader.sequence()))
        {
            drop(EdgeCounters.Reason.REPLAYED, sender);
            return;
        }
        final int type = reader.type();
        final int at = reader.payloadOffset();
        final int payloadLength = reader.payloadLength();
        if (type == GatewayMessages.PRODUCE_RESULT && payloadLength == GatewayMessages.PRODUCE_RESULT_LENGTH)
        {
            produce.onResult(buffer, at);
        }
        else if (type == GatewayMessages.READ_RESULT && payloadLength >= GatewayMessages.READ_RESULT_BATCHES_OFFSET)
        {
            reads.onResult(buffer, at, payloadLength);
        }
        else if (type == GatewayMessages.HELLO_ACK && payloadLength == GatewayMessages.HELLO_ACK_LENGTH)
        {
            link.writer.senderEpoch(buffer.getLong(at + GatewayMessages.HELLO_ACK_TOKEN_OFFSET,
                GatewayMessages.ORDER));
            link.ready = true;
        }
        else
        {
            drop(EdgeCounters.Reason.MALFORMED, sender);
        }
    }

    @Override
    public String roleName()
    {
        return "tidemark-client";
    }
}
