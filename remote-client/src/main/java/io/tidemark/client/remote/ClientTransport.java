package io.tidemark.client.remote;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.tidemark.aeron.AeronMedia;
import io.tidemark.aeron.UdpChannels;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.tidemark.store.ConfigException;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The client's Aeron: its media driver (embedded, in this client's duty cycle, or external), the subscription the
 * hosts answer on, the HELLO payload that tells them where that is, and the thread that runs the duty cycle.
 * <p>
 * The embedded driver runs in Aeron's INVOKER mode: on the reply agent's thread, and on any thread that waits on the
 * cluster ({@link #progress}), e.g. a producer in {@code AgentMode.INVOKER} waiting for a synchronous send. Such a
 * thread sends its request, then reads the answer off the socket itself: no thread hands the record or its
 * acknowledgement to another on this side (the synchronous one-record path). The progress lock makes one thread at a
 * time do it.
 */
final class ClientTransport implements AutoCloseable
{
    private final ClientConfig config;
    private final AeronMedia media;
    private final Aeron aeron;
    private final Subscription replies;
    private final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH]);
    /** Held to run the embedded driver and poll the replies: by the reply agent, or by a thread that waits. */
    private final ReentrantLock progressLock = new ReentrantLock();
    private FragmentAssembler replyAssembler;
    private AgentRunner runner;

    /**
     * Start the media driver (or connect to the external one) and bind the reply endpoint.
     *
     * @throws ConfigException naming {@link ClientConfig#CLIENT_ENDPOINT} when it cannot be bound or answered to.
     */
    ClientTransport(final ClientConfig config, final long clientId)
    {
        this.config = config;
        this.media = null == config.aeronDir() ?
            AeronMedia.launchEmbedded(embeddedDir(clientId), AeronMedia.Profile.SHARED, null, true) :
            AeronMedia.connectExternal(config.aeronDir());
        try
        {
            this.aeron = media.aeron();
            this.replies = aeron.addSubscription(UdpChannels.subscription(config.endpoint(), config.transportMtu()),
                GatewayMessages.REPLY_STREAM_ID);
            try
            {
                encodeReplyAddress(resolveReplyChannel(replies));
            }
            catch (final RuntimeException ex)
            {
                CloseHelper.quietClose(replies);
                throw ex;
            }
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(media);
            throw ex;
        }
    }

    /** The directory of this client's embedded media driver; those of killed clients are removed first. */
    private static Path embeddedDir(final long clientId)
    {
        ClusterSettings.removeStaleAeronDirs(TidemarkClient.EMBEDDED_DIR_PREFIX);
        return ClusterSettings.embeddedAeronDir(TidemarkClient.EMBEDDED_DIR_PREFIX + ProcessHandle.current().pid() +
            "-" + Long.toHexString(clientId));
    }

    private String resolveReplyChannel(final Subscription subscription)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (System.nanoTime() < deadline)
        {
            final String resolved = subscription.tryResolveChannelEndpointPort();
            if (null != resolved)
            {
                return resolved;
            }
            if (media.invoke() == 0)
            {
                Thread.onSpinWait();
            }
        }
        throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "cannot bind " + config.endpoint());
    }

    /** Where the hosts answer, as a HELLO states it: the resolved address and port, never a channel string. */
    private void encodeReplyAddress(final String resolvedChannel)
    {
        final String endpoint = resolvedChannel.substring(resolvedChannel.indexOf("endpoint=") + 9).split("\\|")[0];
        final int colon = endpoint.lastIndexOf(':');
        final String host = endpoint.substring(0, colon).replace("[", "").replace("]", "");
        final InetAddress address;
        try
        {
            address = InetAddress.getByName(host); // a literal address: Aeron resolved it
        }
        catch (final UnknownHostException ex)
        {
            throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "cannot use " + endpoint + ": " + ex.getMessage());
        }
        if (address.isAnyLocalAddress() || address.isMulticastAddress())
        {
            throw new ConfigException(ClientConfig.CLIENT_ENDPOINT, "needs the address hosts can answer to, not " +
                address.getHostAddress());
        }
        GatewayMessages.encodeHello(address, Integer.parseInt(endpoint.substring(colon + 1)), hello);
    }

    /** @return the Aeron client. */
    Aeron aeron()
    {
        return aeron;
    }

    /** @return the HELLO payload: where this client listens. */
    DirectBuffer hello()
    {
        return hello;
    }

    /**
     * Start the duty cycle on a thread of its own: {@code agent} runs it (calling {@link #progress}), and every
     * fragment {@link #progress} reads goes, reassembled, to {@code onReply}.
     */
    void start(final Agent agent, final FragmentHandler onReply, final ErrorHandler errorHandler)
    {
        this.replyAssembler = new FragmentAssembler(onReply);
        // with the driver invoked, every empty cycle reads the sockets: spin little, park soon
        this.runner = new AgentRunner(media.invoked() ? new BackoffIdleStrategy(1, 1, 1_000, 100_000) :
            new BackoffIdleStrategy(100, 10, 1_000, 100_000), errorHandler, null, agent);
        AgentRunner.startOnThread(runner);
    }

    /** @return work done: the driver's and the replies read (0 when another thread is making progress). */
    int progress()
    {
        if (!progressLock.tryLock())
        {
            Thread.onSpinWait();
            return 0;
        }
        try
        {
            return media.invoke() + replies.poll(replyAssembler, 64);
        }
        finally
        {
            progressLock.unlock();
        }
    }

    /** Stop the duty cycle's thread (the driver then runs only when {@link #close} invokes it). */
    void stop()
    {
        CloseHelper.quietClose(runner);
    }

    /** Let an invoked driver send what was offered last (the goodbyes), then close the subscription and the driver. */
    @Override
    public void close()
    {
        for (int i = 0; i < 10; i++)
        {
            media.invoke(); // an invoked driver sends the goodbyes now: no thread of its own would
        }
        CloseHelper.quietCloseAll(replies, media);
    }
}
