package io.tidemark.aeron;

import io.aeron.Aeron;
import io.aeron.ChannelUri;
import io.aeron.Publication;
import io.aeron.Subscription;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UdpChannelsTest
{
    @TempDir
    Path tmp;

    @Test
    void theMtuFollowsTheInterface()
    {
        assertEquals(UdpChannels.DEFAULT_MTU, UdpChannels.mtuFor(1500, false), "Ethernet: Aeron's default");
        assertEquals(UdpChannels.DEFAULT_MTU, UdpChannels.mtuFor(-1, false), "unknown: Aeron's default");
        assertEquals(1216, UdpChannels.mtuFor(1280, true), "a smaller interface: its payload, 32-byte aligned");
        assertEquals(8960, UdpChannels.mtuFor(9000, false), "jumbo frames");
        assertEquals(8928, UdpChannels.mtuFor(9000, true), "jumbo frames over IPv6");
        assertEquals(UdpChannels.MAX_MTU, UdpChannels.mtuFor(65536, false), "loopback: the largest UDP payload");
    }

    @Test
    void theReceiverWindowHoldsThirtyTwoDatagramsWithinTheSystemLimit()
    {
        assertEquals(128 * 1024, UdpChannels.receiverWindow(UdpChannels.DEFAULT_MTU, 0));
        assertEquals(512 * 1024, UdpChannels.receiverWindow(8960, 0));
        assertEquals(2 * 1024 * 1024, UdpChannels.receiverWindow(UdpChannels.MAX_MTU, 0));
        assertEquals(128 * 1024, UdpChannels.receiverWindow(UdpChannels.MAX_MTU, 212_992), "rmem_max caps it");
    }

    @Test
    void onlyTheEndpointIsTakenFromAChannel()
    {
        assertEquals("10.0.0.1:40100", UdpChannels.endpointOf("aeron:udp?endpoint=10.0.0.1:40100|mtu=8960"));
        assertEquals("127.0.0.1:5", UdpChannels.endpointOf("aeron:udp?rcv-wnd=1|endpoint=127.0.0.1:5"));
        assertNull(UdpChannels.endpointOf("aeron:ipc"));
        assertNull(UdpChannels.endpointOf("aeron:udp?control=1.2.3.4:5"));
        assertNull(UdpChannels.endpointOf("aeron:udp?endpoint="));
    }

    @Test
    void loopbackChannelsCarryLargeDatagramsEndToEnd() throws Exception
    {
        final int port;
        try (DatagramSocket free = new DatagramSocket(0))
        {
            port = free.getLocalPort();
        }
        final String endpoint = "127.0.0.1:" + port;
        final String publication = UdpChannels.publication(endpoint, UdpChannels.AUTO);
        final String subscription = UdpChannels.subscription(endpoint, UdpChannels.AUTO);
        final int mtu = UdpChannels.pathMtu(endpoint);
        assertTrue(mtu >= UdpChannels.DEFAULT_MTU, "loopback: " + mtu);
        if (mtu > UdpChannels.DEFAULT_MTU)
        {
            assertEquals(Integer.toString(mtu), ChannelUri.parse(publication).get("mtu"));
        }
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("driver"), AeronMedia.Profile.SHARED, null,
            true))
        {
            final Aeron aeron = media.aeron();
            try (Subscription sub = aeron.addSubscription(subscription, 7);
                Publication pub = aeron.addPublication(publication, 7))
            {
                final UnsafeBuffer message = new UnsafeBuffer(new byte[200_000]);
                for (int i = 0; i < message.capacity(); i++)
                {
                    message.putByte(i, (byte)i);
                }
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (pub.offer(message) < 0)
                {
                    media.invoke();
                    assertTrue(System.nanoTime() < deadline, "not sent");
                }
                final int[] received = new int[1];
                final io.aeron.FragmentAssembler assembler = new io.aeron.FragmentAssembler((buffer, offset, length,
                    header) ->
                {
                    for (int i = 0; i < length; i++)
                    {
                        assertEquals((byte)i, buffer.getByte(offset + i));
                    }
                    received[0] = length;
                });
                while (received[0] == 0)
                {
                    media.invoke();
                    sub.poll(assembler, 10);
                    assertTrue(System.nanoTime() < deadline, "not received");
                }
                assertEquals(message.capacity(), received[0]);
            }
        }
    }
}
