package io.tidemark.host;

import io.aeron.Publication;
import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameWriter;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.replication.ControlChannel;
import io.tidemark.replication.spi.HostLiveness;
import org.agrona.DirectBuffer;

import java.util.function.IntToLongFunction;

/**
 * Carries control messages to the process of another host, on its control stream, in authenticated frames.
 * <p>
 * Owns a publication and a frame writer per other host. Called by the {@link ControlChannel}'s senders; the role,
 * set once the controller role exists, is read through a volatile field.
 */
final class ControlLinkOverAeron implements ControlChannel.ControlLink
{
    private final Publication[] control;
    private final FrameWriter[] writers;
    private final IntToLongFunction registry;
    volatile ControllerRole role;

    ControlLinkOverAeron(final Publication[] control, final int clusterHash, final ClusterSecret secret,
        final int hostId, final long incarnation, final IntToLongFunction registry)
    {
        this.control = control;
        this.registry = registry;
        this.writers = new FrameWriter[control.length];
        for (int h = 0; h < control.length; h++)
        {
            writers[h] = new FrameWriter(secret, clusterHash, FrameDescriptor.HOST, hostId, incarnation, 0);
        }
    }

    @Override
    public int controllerHost()
    {
        final ControllerRole current = role;
        return null == current ? -1 : current.controllerHost();
    }

    @Override
    public boolean send(final int host, final DirectBuffer buffer, final int offset, final int length)
    {
        if (host < 0 || host >= control.length || null == control[host])
        {
            return false;
        }
        final long receiver = registry.applyAsLong(host);
        if (receiver == HostLiveness.NOT_REGISTERED)
        {
            return false; // not registered now: the protocol repeats what matters
        }
        return writers[host].offer(control[host], GatewayMessages.CONTROL, host,
            receiver == HostLiveness.ANY_INCARNATION ? 0 : receiver, buffer, offset, length) > 0;
    }
}
