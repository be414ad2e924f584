package io.tidemark.aeron;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.DatagramSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The transport between two processes: this JVM is host 0, a child JVM ({@link EchoHostMain}) is host 1. Over IPC
 * the child uses this JVM's media driver (an external driver, for it); over UDP each process has its own embedded
 * driver. Requests and responses (one over the MTU) cross, and after the child is killed a new one takes its place
 * without anything of the old one reaching this host.
 */
class CrossProcessTransportTest
{
    @TempDir
    Path tmp;

    private static Process startChild(final List<String> args) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--add-exports");
        command.add("java.base/jdk.internal.misc=ALL-UNNAMED");
        command.add("-Xmx256m");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(EchoHostMain.class.getName());
        command.addAll(args);
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final BufferedReader out = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        final String line = out.readLine();
        if (!"ready".equals(line))
        {
            process.destroyForcibly();
            throw new AssertionError("child did not start: " + line);
        }
        return process;
    }

    /**
     * Send {@code count} requests to host 1 and check each echo. A request is sent again when no echo came within a
     * second, as the protocol re-sends an unanswered fetch: over UDP a request sent just after host 1's process was
     * replaced can go to the dead receiver before the publication notices. Echoes of earlier requests (a re-sent one
     * answered twice) are told apart by their random content and skipped.
     */
    private static void exchange(final AeronTransport transport, final int count, final int bigEvery)
        throws InterruptedException
    {
        for (int i = 0; i < count; i++)
        {
            final byte[] bytes = new byte[i % bigEvery == bigEvery - 1 ? 512 * 1024 : 64 + i];
            ThreadLocalRandom.current().nextBytes(bytes);
            final UnsafeBuffer request = new UnsafeBuffer(bytes);
            final int type = 10 + (i % 5);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            final int[] echoType = {-1};
            final boolean[] echoed = {false};
            while (!echoed[0])
            {
                while (!transport.sendRequest(0, 1, type, request, 0, bytes.length))
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new AssertionError("request " + i + " not accepted: host 1 unreachable");
                    }
                    Thread.sleep(1);
                }
                final long resendAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
                while (!echoed[0] && System.nanoTime() < resendAt)
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw new AssertionError("no echo for request " + i);
                    }
                    transport.pollResponses(0, 1, (t, buffer, index, length) ->
                    {
                        final byte[] copy = new byte[length];
                        buffer.getBytes(index, copy);
                        if (java.util.Arrays.equals(bytes, copy))
                        {
                            echoType[0] = t;
                            echoed[0] = true;
                        }
                    }, 10);
                }
            }
            assertEquals(type + 1, echoType[0], "echo of request " + i);
        }
    }

    private void run(final AeronTransport transport, final List<String> childArgs) throws Exception
    {
        transport.hostUp(0);
        Process child = startChild(childArgs);
        try
        {
            exchange(transport, 200, 50);
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            // A new incarnation of host 1 in a new process: host 0 reaches it without restarting anything.
            child = startChild(childArgs);
            exchange(transport, 50, 25);
        }
        finally
        {
            child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void ipcBetweenProcessesThroughOneMediaDriver() throws Exception
    {
        final Path aeronDir = tmp.resolve("aeron");
        try (AeronMedia media = AeronMedia.launchEmbedded(aeronDir);
            AeronTransport transport = new AeronTransport(media.aeron(), false, 2, AeronTransport.ipc()))
        {
            run(transport, List.of("ipc", media.aeron().context().aeronDirectoryName()));
        }
    }

    @Test
    void udpBetweenProcessesWithADriverEach() throws Exception
    {
        final String[] endpoints = new String[2];
        for (int i = 0; i < endpoints.length; i++)
        {
            try (DatagramSocket socket = new DatagramSocket(0))
            {
                endpoints[i] = "localhost:" + socket.getLocalPort();
            }
        }
        final IntFunction<String> channels = AeronTransport.udp(endpoints);
        try (AeronMedia media = AeronMedia.launchEmbedded(tmp.resolve("aeron-0"));
            AeronTransport transport = new AeronTransport(media.aeron(), false, 2, channels))
        {
            run(transport, List.of("udp", tmp.resolve("aeron-1").toString(), endpoints[0], endpoints[1]));
        }
    }
}
