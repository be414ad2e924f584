package io.tidemark.aeron;

import io.aeron.Subscription;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link DatagramWait} on a real embedded, invoked driver: it reaches the driver's selectors with the Aeron
 * version this build pins (an upgrade that moves it fails here, not silently in production), a datagram on a
 * subscription's socket ends a long wait, and so does {@link DatagramWait#wakeup}. Each wait is a minute long; it
 * must end well before that (the assertions allow half of it, so a loaded machine cannot fail them).
 */
class DatagramWaitTest
{
    private static final long LONG_WAIT_MS = 60_000;

    @TempDir
    Path tmp;

    @Test
    void aDatagramOnAReceiveSocketEndsTheWait() throws Exception
    {
        final int port;
        try (DatagramSocket probe = new DatagramSocket(0, InetAddress.getLoopbackAddress()))
        {
            port = probe.getLocalPort();
        }
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron"), AeronMedia.Profile.SHARED, null, true);
            Subscription subscription = media.aeron().addSubscription("aeron:udp?endpoint=127.0.0.1:" + port, 7))
        {
            assertNotNull(subscription);
            assertInstanceOf(DatagramWaitIdleStrategy.class, media.invokedIdleStrategy(() -> 0));
            try (DatagramWait wait = DatagramWait.of(media.driver()))
            {
                assertNotNull(wait, () -> DatagramWait.unreachableReason(media.driver()));
                final CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> timedWait(wait));
                try (DatagramSocket sender = new DatagramSocket())
                {
                    final byte[] junk = {1, 2, 3, 4};
                    sender.send(new DatagramPacket(junk, junk.length, InetAddress.getLoopbackAddress(), port));
                }
                final long ms = waited.get(2 * LONG_WAIT_MS, TimeUnit.MILLISECONDS);
                assertTrue(ms < LONG_WAIT_MS / 2, "the datagram ended the wait: " + ms + " ms");
            }
        }
    }

    @Test
    void wakeupEndsTheWait() throws Exception
    {
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron"), AeronMedia.Profile.SHARED, null, true))
        {
            try (DatagramWait wait = DatagramWait.of(media.driver()))
            {
                assertNotNull(wait, () -> DatagramWait.unreachableReason(media.driver()));
                final CompletableFuture<Long> waited = CompletableFuture.supplyAsync(() -> timedWait(wait));
                wait.wakeup();
                final long ms = waited.get(2 * LONG_WAIT_MS, TimeUnit.MILLISECONDS);
                assertTrue(ms < LONG_WAIT_MS / 2, "the wakeup ended the wait: " + ms + " ms");
            }
        }
    }

    private static long timedWait(final DatagramWait wait)
    {
        final long start = System.nanoTime();
        wait.await(LONG_WAIT_MS);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }
}
