package io.tidemark.host;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.zookeeper.ZooKeeperHostLiveness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The liveness watch ({@link ProcessExitWatch}) in one JVM: a verified connection's close is an exit, and nothing
 * else is (a listener that answers as another incarnation, a forged, truncated or oversized hello, a connection
 * closed before its hello); the listener bounds its connections and closes the silent ones.
 */
class ProcessExitWatchTest
{
    private static final int CLUSTER = 0x0bad_cafe;
    private static final Map<Integer, String> ENDPOINTS = Map.of(0, "127.0.0.1:40100", 1, "127.0.0.1:40101");

    @TempDir
    Path tmp;

    private ClusterSecret secret;
    private final AtomicReferenceArray<ZooKeeperHostLiveness.Registration> registrations =
        new AtomicReferenceArray<>(2);
    private final List<AutoCloseable> resources = new ArrayList<>();

    @BeforeEach
    void secret() throws Exception
    {
        ClusterSecret.generate(tmp.resolve("cluster.secret"));
        secret = ClusterSecret.load(tmp.resolve("cluster.secret"), "cluster.secret.file");
    }

    @AfterEach
    void close() throws Exception
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            resources.get(i).close();
        }
    }

    private ProcessExitWatch watch(final int hostId, final long incarnation)
    {
        final ProcessExitWatch watch = new ProcessExitWatch(hostId, incarnation, ENDPOINTS, 0, CLUSTER, secret);
        resources.add(watch);
        return watch;
    }

    /** Host 0's watch, over {@link #registrations}. */
    private ProcessExitWatch watcher()
    {
        final ProcessExitWatch watcher = watch(0, 1);
        watcher.watch(registrations::get);
        return watcher;
    }

    private void register(final ProcessExitWatch watcher, final long incarnation, final int port)
    {
        registrations.set(1, new ZooKeeperHostLiveness.Registration(incarnation, ENDPOINTS.get(1), "token", port));
        watcher.registrationsChanged();
    }

    @Test
    void theCloseOfAVerifiedConnectionIsTheProcessExit() throws Exception
    {
        final ProcessExitWatch watcher = watcher();
        final ProcessExitWatch peer = watch(1, 7);
        register(watcher, 7, peer.port());
        assertTrue(ProcessCluster.await(() -> watcher.verified(1), 30_000), "verified");
        assertFalse(watcher.exited(1, 7));
        peer.close(); // as the kernel does at a process's end
        assertTrue(ProcessCluster.await(() -> watcher.exited(1, 7), 30_000), "the exit is seen");
        assertFalse(watcher.exited(1, 8), "for that incarnation only");
        assertFalse(watcher.exited(1, io.tidemark.replication.spi.HostLiveness.ANY_INCARNATION),
            "an untracked incarnation is never down");
    }

    @Test
    void aNewIncarnationIsWatchedAfresh() throws Exception
    {
        final ProcessExitWatch watcher = watcher();
        final ProcessExitWatch first = watch(1, 7);
        register(watcher, 7, first.port());
        assertTrue(ProcessCluster.await(() -> watcher.verified(1), 30_000), "verified");
        first.close();
        assertTrue(ProcessCluster.await(() -> watcher.exited(1, 7), 30_000), "the first exit is seen");
        final ProcessExitWatch second = watch(1, 8);
        register(watcher, 8, second.port());
        assertTrue(ProcessCluster.await(() -> watcher.verified(1), 30_000), "the next incarnation verified");
        assertFalse(watcher.exited(1, 8));
    }

    @Test
    void forgedTruncatedOrOversizedHellosOrAnotherIncarnationAreNoExit() throws Exception
    {
        final HelloServer later = new HelloServer((nonce) -> hello(nonce, 8, secret)); // the port's next owner
        final ClusterSecret other = forgedSecret();
        final HelloServer forged = new HelloServer((nonce) -> hello(nonce, 7, other));
        final HelloServer truncated = new HelloServer((nonce) -> java.util.Arrays.copyOf(hello(nonce, 7, secret), 30));
        final HelloServer oversized = new HelloServer((nonce) -> java.util.Arrays.copyOf(hello(nonce, 7, secret),
            LivenessHello.HELLO_LENGTH + 1));
        for (final HelloServer server : List.of(later, forged, truncated, oversized))
        {
            final ProcessExitWatch watcher = watch(0, 1);
            final AtomicReferenceArray<ZooKeeperHostLiveness.Registration> registry = new AtomicReferenceArray<>(2);
            registry.set(1, new ZooKeeperHostLiveness.Registration(7, ENDPOINTS.get(1), "token", server.port()));
            watcher.watch(registry::get);
            assertTrue(ProcessCluster.await(() -> server.answered.get() >= 2, 30_000), "tried and tried again");
            server.closeAll();
            final int answered = server.answered.get();
            // one more attempt: the watcher has dealt with every earlier connection and its close
            assertTrue(ProcessCluster.await(() -> server.answered.get() > answered, 30_000), "tried again");
            assertFalse(watcher.verified(1));
            assertFalse(watcher.exited(1, 7), "no exit from an unverified connection");
            watcher.close();
        }
    }

    @Test
    void aGenuineHelloFromAnotherImplementationVerifiesAndItsCloseCounts() throws Exception
    {
        final HelloServer genuine = new HelloServer((nonce) -> hello(nonce, 7, secret));
        final ProcessExitWatch watcher = watcher();
        register(watcher, 7, genuine.port());
        assertTrue(ProcessCluster.await(() -> watcher.verified(1), 30_000), "verified");
        genuine.closeAll();
        assertTrue(ProcessCluster.await(() -> watcher.exited(1, 7), 30_000), "the exit is seen");
    }

    @Test
    void theListenerAnswersAChallengeWithAHelloThatVerifies() throws Exception
    {
        final ProcessExitWatch listener = watch(1, 9);
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), listener.port()))
        {
            final byte[] nonce = new byte[LivenessHello.NONCE_LENGTH];
            nonce[0] = 42;
            final ByteBuffer challenge = ByteBuffer.allocate(LivenessHello.CHALLENGE_LENGTH);
            LivenessHello.writeChallenge(challenge, CLUSTER, nonce);
            socket.getOutputStream().write(challenge.array());
            final byte[] hello = new byte[LivenessHello.HELLO_LENGTH];
            new DataInputStream(socket.getInputStream()).readFully(hello);
            assertEquals(LivenessHello.VERIFIED, LivenessHello.verifyHello(ByteBuffer.wrap(hello), CLUSTER, 1, 9,
                nonce, secret.newMac()));
        }
    }

    @Test
    void theListenerClosesGarbageSilenceAndConnectionsBeyondItsBound() throws Exception
    {
        final ProcessExitWatch listener = watch(1, 9);
        try (Socket garbage = new Socket(InetAddress.getLoopbackAddress(), listener.port()))
        {
            garbage.getOutputStream().write(new byte[LivenessHello.CHALLENGE_LENGTH]);
            assertEquals(-1, garbage.getInputStream().read(), "closed without a hello");
        }
        final int bound = 2 * 2 + 8;
        final List<Socket> silent = new ArrayList<>();
        try
        {
            for (int i = 0; i < bound + 3; i++)
            {
                silent.add(new Socket(InetAddress.getLoopbackAddress(), listener.port()));
            }
            int closed = 0;
            for (final Socket socket : silent)
            {
                socket.setSoTimeout(60_000);
                // every one is closed: those beyond the bound at once, the rest after the hello timeout
                assertEquals(-1, socket.getInputStream().read());
                closed++;
            }
            assertEquals(bound + 3, closed);
        }
        finally
        {
            for (final Socket socket : silent)
            {
                socket.close();
            }
        }
        final ProcessExitWatch watcher = watcher();
        register(watcher, 9, listener.port());
        assertTrue(ProcessCluster.await(() -> watcher.verified(1), 30_000), "served again once they are gone");
    }

    @Test
    void aListenerThatCannotBindFailsTheStartNamingItsKey() throws Exception
    {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1")))
        {
            final HostStartException ex = assertThrows(HostStartException.class, () -> new ProcessExitWatch(0, 1,
                ENDPOINTS, taken.getLocalPort(), CLUSTER, secret));
            assertTrue(ex.getMessage().contains(HostConfig.LIVENESS_PORT), ex.getMessage());
        }
    }

    private ClusterSecret forgedSecret() throws IOException
    {
        final Path file = tmp.resolve("forged.secret");
        if (!java.nio.file.Files.exists(file))
        {
            ClusterSecret.generate(file);
        }
        return ClusterSecret.load(file, "k");
    }

    private static byte[] hello(final byte[] nonce, final long incarnation, final ClusterSecret with)
    {
        final ByteBuffer out = ByteBuffer.allocate(LivenessHello.HELLO_LENGTH);
        LivenessHello.writeHello(out, CLUSTER, 1, incarnation, nonce, with.newMac());
        return out.array();
    }

    /** A listener of the test's own: answers each challenge with what {@code answer} makes, then holds it open. */
    private final class HelloServer implements AutoCloseable
    {
        final ServerSocket server = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        final List<Socket> open = java.util.Collections.synchronizedList(new ArrayList<>());
        final AtomicInteger answered = new AtomicInteger();
        final Thread thread;

        HelloServer(final Function<byte[], byte[]> answer) throws IOException
        {
            resources.add(this);
            thread = new Thread(() ->
            {
                while (!server.isClosed())
                {
                    try
                    {
                        final Socket socket = server.accept();
                        open.add(socket);
                        final InputStream in = socket.getInputStream();
                        final byte[] challenge = new byte[LivenessHello.CHALLENGE_LENGTH];
                        new DataInputStream(in).readFully(challenge);
                        final byte[] nonce = new byte[LivenessHello.NONCE_LENGTH];
                        LivenessHello.readChallenge(ByteBuffer.wrap(challenge), CLUSTER, nonce);
                        final OutputStream out = socket.getOutputStream();
                        final byte[] reply = answer.apply(nonce);
                        out.write(reply);
                        out.flush();
                        if (reply.length < LivenessHello.HELLO_LENGTH)
                        {
                            socket.close(); // truncated: the hello is cut short by the close
                        }
                        answered.incrementAndGet();
                    }
                    catch (final IOException ex)
                    {
                        // closed
                    }
                }
            }, "hello-server");
            thread.setDaemon(true);
            thread.start();
        }

        int port()
        {
            return server.getLocalPort();
        }

        void closeAll() throws IOException
        {
            synchronized (open)
            {
                for (final Socket socket : open)
                {
                    socket.close();
                }
            }
        }

        @Override
        public void close() throws IOException
        {
            server.close();
            closeAll();
        }
    }
}
