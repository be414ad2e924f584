package io.tidemark.aeron;

import io.aeron.Publication;
import io.aeron.Subscription;
import io.tidemark.replication.spi.HostLiveness;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.BooleanSupplier;

import static io.tidemark.aeron.EdgeCounters.Reason.*;
import static io.tidemark.aeron.EdgeCounters.Stream.FETCH;
import static org.junit.jupiter.api.Assertions.*;

/**
 * The transport between hosts with a cluster secret and an incarnation registry: a frame reaches the protocol only
 * with a valid tag, from a host in its registered incarnation, addressed to this incarnation, and only once.
 */
class AuthenticatedTransportTest
{
    @TempDir
    Path tmp;

    private AeronMedia media;
    private ClusterSecret secret;
    /** Incarnations as the sending process (host 0) sees them. */
    private final AtomicLongArray senderView = new AtomicLongArray(new long[]{ 100, 200 });
    /** Incarnations as the receiving process (host 1) sees them. */
    private final AtomicLongArray receiverView = new AtomicLongArray(new long[]{ 100, 200 });

    /** A request as the protocol received it. */
    private record Received(int from, int type, String text)
    {
    }

    @BeforeEach
    void launch() throws Exception
    {
        media = AeronMedia.launchEmbedded(tmp.resolve("aeron"));
        ClusterSecret.generate(tmp.resolve("secret"));
        secret = ClusterSecret.load(tmp.resolve("secret"), "cluster.secret.file");
    }

    @AfterEach
    void close()
    {
        media.close();
    }

    private AeronTransport transport(final ClusterSecret key, final AtomicLongArray view)
    {
        return new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc(), 42, key, view::get,
            new EdgeCounters("test"));
    }

    private static void await(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + 10_000_000_000L;
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "timed out waiting for " + what);
            Thread.sleep(1);
        }
    }

    private static boolean send(final AeronTransport from, final String text)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(text.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        return from.sendRequest(0, 1, 7, buffer, 0, buffer.capacity());
    }

    private static void sendUntilAccepted(final AeronTransport from, final String text) throws InterruptedException
    {
        await(() -> send(from, text), "the send of " + text);
    }

    private static int poll(final AeronTransport at, final List<Received> into)
    {
        return at.pollRequests(1, (from, type, buffer, index, length) ->
        {
            final byte[] bytes = new byte[length];
            buffer.getBytes(index, bytes);
            into.add(new Received(from, type, new String(bytes, java.nio.charset.StandardCharsets.US_ASCII)));
        }, 10);
    }

    @Test
    void onlyAuthenticFreshFramesOfRegisteredIncarnationsReachTheProtocol() throws Exception
    {
        ClusterSecret.generate(tmp.resolve("other"));
        final ClusterSecret otherSecret = ClusterSecret.load(tmp.resolve("other"), "k");
        try (AeronTransport receiver = transport(secret, receiverView);
            AeronTransport sender = transport(secret, senderView);
            AeronTransport forger = transport(otherSecret, senderView);
            AeronTransport insecure = transport(ClusterSecret.insecure(), senderView);
            Subscription spy = media.aeron().addSubscription("aeron:ipc", AeronTransport.requestStreamId(1)))
        {
            receiver.hostUp(1);
            sender.hostUp(0);
            final List<Received> received = new CopyOnWriteArrayList<>();
            final EdgeCounters drops = receiver.counters();

            sendUntilAccepted(sender, "hello");
            await(() -> poll(receiver, received) >= 0 && received.size() == 1, "the authentic request");
            assertEquals(new Received(0, 7, "hello"), received.get(0), "delivered with its authenticated sender");

            // capture the frame as it went over the stream, to replay it
            final byte[][] captured = new byte[1][];
            await(() ->
            {
                spy.poll((buffer, offset, length, header) ->
                {
                    captured[0] = new byte[length];
                    buffer.getBytes(offset, captured[0]);
                }, 10);
                return null != captured[0];
            }, "the captured frame");

            forger.hostUp(0);
            sendUntilAccepted(forger, "forged");
            await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, BAD_TAG) == 1, "bad tag counted");
            forger.hostDown(0);

            insecure.hostUp(0);
            sendUntilAccepted(insecure, "untagged");
            await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, UNAUTHENTICATED) == 1,
                "untagged counted");
            insecure.hostDown(0);

            try (Publication raw = media.aeron().addPublication("aeron:ipc", AeronTransport.requestStreamId(1)))
            {
                final UnsafeBuffer replay = new UnsafeBuffer(captured[0]);
                await(() -> raw.offer(replay) > 0, "the replay sent");
                await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, REPLAYED) == 1, "replay counted");

                // a frame claiming another sender: a host outside the cluster
                final UnsafeBuffer outsider = new UnsafeBuffer(captured[0].clone());
                outsider.putLong(FrameDescriptor.SENDER_ID_OFFSET, 5, FrameDescriptor.ORDER);
                await(() -> raw.offer(outsider) > 0, "the outsider sent");
                await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, BAD_TAG) == 2,
                    "a changed sender breaks the tag");
            }
            // the captured request replayed on host 1's response stream from host 0: the tag binds the stream
            try (Publication raw = media.aeron().addPublication("aeron:ipc", AeronTransport.responseStreamId(1, 0)))
            {
                final UnsafeBuffer replay = new UnsafeBuffer(captured[0]);
                await(() -> raw.offer(replay) > 0, "the replay on another stream sent");
                await(() -> receiver.pollResponses(1, 0, (type, buffer, index, length) -> received.add(
                    new Received(0, type, "response")), 10) >= 0 && drops.dropped(FETCH, BAD_TAG) == 3,
                    "a frame replayed on another stream breaks the tag");
            }

            // the receiver learns that host 0 restarted: frames of the old incarnation are stale
            receiverView.set(0, 101);
            sendUntilAccepted(sender, "old life");
            await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, STALE_SENDER) == 1, "stale counted");
            receiverView.set(0, 100);

            // host 1 restarted (incarnation 201) but the sender still addresses incarnation 200
            receiverView.set(1, 201);
            sendUntilAccepted(sender, "to the old receiver");
            await(() -> poll(receiver, received) >= 0 && drops.dropped(FETCH, WRONG_RECEIVER) == 1,
                "wrong receiver counted");
            receiverView.set(1, 200);

            // an unregistered destination is not addressed at all
            senderView.set(1, HostLiveness.NOT_REGISTERED);
            assertFalse(send(sender, "nobody"));
            senderView.set(1, 200);

            sendUntilAccepted(sender, "again");
            await(() -> poll(receiver, received) >= 0 && received.size() == 2, "the next authentic request");
            assertEquals(new Received(0, 7, "again"), received.get(1));
            assertEquals(7, drops.total(), "every drop counted once: " + drops.total());
        }
    }
}
