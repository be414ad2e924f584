package io.tidemark.client.remote;

import io.aeron.Aeron;
import io.aeron.Publication;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.aeron.ReplayWindow;
import io.tidemark.aeron.UdpChannels;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.protocol.PartitionState;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * This client's links to the hosts: one per host, to its current incarnation (a new incarnation gets a new link), each
 * with its publication to the host's gateway, the frame writer that signs what the client sends, and the replay
 * window of the host's answers. A link is ready once the host answered the client's HELLO; the client introduces
 * itself to every registered host, not only today's leaders, so that a failover finds the new leader ready.
 */
final class HostLinks implements AutoCloseable
{
    /** How often a client repeats its HELLO to a host that has not answered yet. */
    static final long HELLO_INTERVAL_MS = 50;
    /** How often a client repeats its HELLO to a host that knows it, so that the host does not forget it. */
    static final long KEEPALIVE_MS = 5_000;

    private final ClusterMetadata metadata;
    private final ClientTransport transport;
    private final Aeron aeron;
    private final int transportMtu;
    private final ClusterSecret secret;
    private final int clusterHash;
    private final long clientId;
    private final DirectBuffer hello;
    private final Map<Integer, HostLink> links = new ConcurrentHashMap<>();
    /** The same links by host id, for the lookups of every send and every answer: no hashing, no boxing. */
    private final AtomicReferenceArray<HostLink> linksById = new AtomicReferenceArray<>(PartitionState.MAX_HOSTS);

    /** This client's connection to one incarnation of a host. */
    final class HostLink
    {
        final int hostId;
        final ClusterMetadata.HostInfo info;
        final Publication gateway;
        final FrameWriter writer;
        /** Replay window of the host's answers; used by the reply agent only. */
        final ReplayWindow window = new ReplayWindow();
        volatile boolean ready;
        volatile long lastHelloMs;

        HostLink(final int hostId, final ClusterMetadata.HostInfo info)
        {
            this.hostId = hostId;
            this.info = info;
            this.gateway = aeron.addPublication(UdpChannels.publication(info.endpoint(), transportMtu),
                GatewayMessages.GATEWAY_STREAM_ID);
            this.writer = new FrameWriter(secret, clusterHash, FrameDescriptor.CLIENT, clientId, 0,
                GatewayMessages.MAX_PREFIX_LENGTH);
        }

        /** Introduce this client: until the host answers, then every {@link #KEEPALIVE_MS} (it forgets the idle). */
        void helloIfDue(final long now)
        {
            if (now - lastHelloMs >= (ready ? KEEPALIVE_MS : HELLO_INTERVAL_MS))
            {
                lastHelloMs = now;
                writer.offer(gateway, GatewayMessages.HELLO, hostId, info.incarnation(), hello, 0,
                    GatewayMessages.HELLO_LENGTH);
            }
        }

        /** Send a frame of {@code type}: the payload {@code header} then {@code body}. @return as FrameWriter.offer. */
        long offer(final int type, final DirectBuffer header, final int headerLength, final DirectBuffer body,
            final int bodyLength)
        {
            final long result = writer.offer(gateway, type, hostId, info.incarnation(), header, 0, headerLength, body,
                0, bodyLength);
            transport.offered();
            return result;
        }

        /** Send a frame of {@code type} with {@code payload}. @return as FrameWriter.offer. */
        long offer(final int type, final DirectBuffer payload, final int length)
        {
            return offer(type, payload, 0, length);
        }

        /** Send a frame of {@code type} with {@code length} bytes of {@code payload} from {@code offset}. */
        long offer(final int type, final DirectBuffer payload, final int offset, final int length)
        {
            final long result = writer.offer(gateway, type, hostId, info.incarnation(), payload, offset, length);
            transport.offered();
            return result;
        }

        void close()
        {
            if (ready)
            {
                writer.offer(gateway, GatewayMessages.GOODBYE, hostId, info.incarnation(), hello, 0, 0);
            }
            CloseHelper.quietClose(gateway);
        }
    }

    HostLinks(final ClusterMetadata metadata, final ClientTransport transport, final int transportMtu,
        final ClusterSecret secret, final int clusterHash, final long clientId)
    {
        this.metadata = metadata;
        this.transport = transport;
        this.aeron = transport.aeron();
        this.hello = transport.hello();
        this.transportMtu = transportMtu;
        this.secret = secret;
        this.clusterHash = clusterHash;
        this.clientId = clientId;
    }

    /** @return the link to the current incarnation of a host, or null when it is not registered. */
    HostLink linkTo(final int hostId)
    {
        final ClusterMetadata.HostInfo info = metadata.host(hostId);
        HostLink link = linked(hostId);
        if (null == info)
        {
            return null;
        }
        if (null == link || (link.info != info && !link.info.equals(info)))
        {
            synchronized (links)
            {
                link = links.get(hostId);
                if (null == link || !link.info.equals(info))
                {
                    if (null != link)
                    {
                        link.close();
                    }
                    link = new HostLink(hostId, info);
                    links.put(hostId, link);
                    linksById.set(hostId, link);
                }
            }
        }
        return link;
    }

    /** @return the link last made to a host, whatever its incarnation, or null (the answers' check). */
    HostLink linked(final int hostId)
    {
        return hostId >= 0 && hostId < PartitionState.MAX_HOSTS ? linksById.get(hostId) : null;
    }

    /** @return HELLOs sent: to every registered host whose introduction or keep-alive is due. */
    int helloIfDue(final long now)
    {
        int sent = 0;
        for (final Integer hostId : metadata.hostIds())
        {
            final HostLink link = linkTo(hostId);
            if (null != link)
            {
                final long before = link.lastHelloMs;
                link.helloIfDue(now);
                sent += link.lastHelloMs != before ? 1 : 0;
            }
        }
        return sent;
    }

    /** Say goodbye to the hosts that know this client and close the publications. */
    @Override
    public void close()
    {
        for (final HostLink link : links.values())
        {
            link.close();
        }
    }
}
