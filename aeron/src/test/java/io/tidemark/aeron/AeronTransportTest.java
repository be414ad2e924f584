package io.tidemark.aeron;

import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramSocket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AeronTransportTest
{
    @TempDir
    Path tmp;

    private AeronMedia media;

    @BeforeEach
    void launch()
    {
        media = AeronMedia.launchEmbedded(tmp.resolve("aeron"));
    }

    @AfterEach
    void close()
    {
        media.close();
    }

    /** A received message, copied out of the transport's buffer. */
    private record Received(int type, byte[] bytes)
    {
    }

    private static io.tidemark.replication.spi.Transport.RequestHandler requestsInto(final List<Received> out)
    {
        final MessageHandler handler = into(out);
        return (from, type, buffer, index, length) -> handler.onMessage(type, buffer, index, length);
    }

    private static MessageHandler into(final List<Received> out)
    {
        return (type, buffer, index, length) ->
        {
            final byte[] bytes = new byte[length];
            buffer.getBytes(index, bytes);
            out.add(new Received(type, bytes));
        };
    }

    private static void await(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadline)
            {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(1);
        }
    }

    private static byte[] randomBytes(final int length)
    {
        final byte[] bytes = new byte[length];
        ThreadLocalRandom.current().nextBytes(bytes);
        return bytes;
    }

    /** Send until the destination is connected and accepts it (a fresh publication is not connected at once). */
    private static void sendRequest(final AeronTransport t, final int from, final int to, final int type,
        final byte[] bytes) throws InterruptedException
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        await(() -> t.sendRequest(from, to, type, buffer, 0, bytes.length), "request " + from + "->" + to);
    }

    private static void sendResponse(final AeronTransport t, final int from, final int to, final int type,
        final byte[] bytes) throws InterruptedException
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        await(() -> t.sendResponse(from, to, type, buffer, 0, bytes.length), "response " + from + "->" + to);
    }

    private void roundTrips(final AeronTransport transport) throws InterruptedException
    {
        transport.hostUp(0);
        transport.hostUp(1);
        transport.hostUp(2);

        // Requests reach the destination host's queue with their type and bytes.
        final byte[] request = randomBytes(100);
        sendRequest(transport, 1, 0, 7, request);
        final List<Received> atZero = new ArrayList<>();
        await(() -> transport.pollRequests(0, requestsInto(atZero), 10) >= 0 && !atZero.isEmpty(), "request at host 0");
        assertEquals(1, atZero.size());
        assertEquals(7, atZero.get(0).type());
        assertArrayEquals(request, atZero.get(0).bytes());

        // A response larger than the MTU is fragmented and reassembled; it reaches only the fetcher of host 1
        // that fetches from host 0, not host 1's fetcher for host 2.
        final byte[] response = randomBytes(1024 * 1024);
        sendResponse(transport, 0, 1, 9, response);
        final List<Received> fromZero = new ArrayList<>();
        final List<Received> fromTwo = new ArrayList<>();
        await(() ->
        {
            transport.pollResponses(1, 2, into(fromTwo), 10);
            return transport.pollResponses(1, 0, into(fromZero), 10) >= 0 && !fromZero.isEmpty(); // poll counts fragments
        }, "response at host 1");
        assertEquals(1, fromZero.size());
        assertEquals(9, fromZero.get(0).type());
        assertArrayEquals(response, fromZero.get(0).bytes());
        assertTrue(fromTwo.isEmpty());
        assertTrue(transport.maxMessageLength(0) >= 1024 * 1024 + 64,
            "a default fetch response fits: " + transport.maxMessageLength(0));

        // A host that is down receives nothing: sends to it fail (once the driver has noticed), and after it comes
        // back it receives what is sent to the new incarnation. A stale message sent before the driver noticed may
        // arrive too (the protocol's correlation ids make it harmless); nothing else does.
        transport.hostDown(0);
        final UnsafeBuffer stale = new UnsafeBuffer(new byte[] {1, 2, 3});
        await(() -> !transport.sendRequest(2, 0, 1, stale, 0, 3), "sends to a stopped host to fail");
        assertFalse(transport.sendRequest(0, 1, 1, stale, 0, 3), "a stopped host cannot send");
        transport.hostUp(0);
        final byte[] fresh = randomBytes(16);
        sendRequest(transport, 2, 0, 3, fresh);
        final List<Received> afterRestart = new ArrayList<>();
        await(() -> transport.pollRequests(0, requestsInto(afterRestart), 10) >= 0 &&
            afterRestart.stream().anyMatch((r) -> java.util.Arrays.equals(fresh, r.bytes())), "request after restart");
        assertArrayEquals(fresh, afterRestart.get(afterRestart.size() - 1).bytes());
        for (int i = 0; i < afterRestart.size() - 1; i++)
        {
            assertArrayEquals(new byte[] {1, 2, 3}, afterRestart.get(i).bytes(), "only the stale sends, if any");
        }
    }

    @Test
    void ipcCarriesRequestsAndReassembledResponsesAndForgetsStoppedHosts() throws InterruptedException
    {
        try (AeronTransport transport = new AeronTransport(media.aeron(), false, 3, AeronTransport.ipc()))
        {
            roundTrips(transport);
        }
    }

    @Test
    void udpUnicastBetweenEndpoints() throws Exception
    {
        final String[] endpoints = new String[3];
        for (int i = 0; i < endpoints.length; i++)
        {
            try (DatagramSocket socket = new DatagramSocket(0))
            {
                endpoints[i] = "localhost:" + socket.getLocalPort();
            }
        }
        try (AeronTransport transport = new AeronTransport(media.aeron(), false, 3, AeronTransport.udp(endpoints)))
        {
            roundTrips(transport);
        }
    }

    @Test
    void messagesTooLargeForAeronAreRefusedNotTruncated()
    {
        try (AeronTransport transport = new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc()))
        {
            transport.hostUp(0);
            transport.hostUp(1);
            final int tooLarge = transport.maxMessageLength(0) + 1;
            final UnsafeBuffer big = new UnsafeBuffer(ByteBuffer.allocateDirect(tooLarge));
            assertFalse(transport.sendResponse(0, 1, 1, big, 0, tooLarge));
        }
    }

    @Test
    void badConfigurationIsRefused()
    {
        assertThrows(IllegalArgumentException.class,
            () -> new AeronTransport(media.aeron(), false, 0, AeronTransport.ipc()));
        assertThrows(IllegalArgumentException.class,
            () -> new AeronTransport(media.aeron(), false, 65, AeronTransport.ipc()));
        assertThrows(IllegalArgumentException.class,
            () -> new AeronTransport(media.aeron(), false, 2, AeronTransport.udp("localhost:40123")));
        try (AeronTransport transport = new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc()))
        {
            assertThrows(IllegalArgumentException.class, () -> transport.hostUp(2));
        }
    }

    @Test
    void messagesOfAnotherClusterAreDroppedAndCounted() throws InterruptedException
    {
        try (AeronTransport ours = new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc(), 11);
            AeronTransport theirs = new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc(), 22))
        {
            theirs.hostUp(0); // another cluster's host 0 on the same streams
            ours.hostUp(1);
            final byte[] bytes = randomBytes(64);
            sendRequest(theirs, 0, 1, 3, bytes);
            final List<Received> received = new ArrayList<>();
            await(() ->
            {
                ours.pollRequests(1, requestsInto(received), 10);
                return ours.foreignMessages() > 0;
            }, "the foreign request counted");
            assertTrue(received.isEmpty(), "nothing of another cluster is delivered");

        }
    }
}
