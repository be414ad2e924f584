package io.tidemark.aeron;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.function.IntFunction;

/**
 * A replica host in another process, for {@link CrossProcessTransportTest}: host 1 of a two-host
 * {@link AeronTransport} that answers every request from host 0 with a response of the same bytes and the type plus
 * one. Runs until killed.
 * <p>
 * Arguments: {@code ipc <aeron dir of the parent's driver>} or {@code udp <aeron dir> <endpoint 0> <endpoint 1>}
 * (its own embedded driver).
 */
public final class EchoHostMain
{
    private EchoHostMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final boolean ipc = "ipc".equals(args[0]);
        final AeronMedia media = ipc ? AeronMedia.connectExternal(args[1]) :
            AeronMedia.launchEmbedded(Path.of(args[1]));
        final IntFunction<String> channels = ipc ? AeronTransport.ipc() : AeronTransport.udp(args[2], args[3]);
        final AeronTransport transport = new AeronTransport(media.aeron(), false, 2, channels);
        transport.hostUp(1);
        final UnsafeBuffer reply = new UnsafeBuffer(0, 0);
        System.out.println("ready");
        System.out.flush();
        while (true)
        {
            final int polled = transport.pollRequests(1, (from, type, buffer, index, length) ->
            {
                reply.wrap(buffer, index, length);
                while (!transport.sendResponse(1, 0, type + 1, reply, 0, length))
                {
                    Thread.onSpinWait();
                }
            }, 10);
            if (0 == polled)
            {
                Thread.sleep(1);
            }
        }
    }
}
