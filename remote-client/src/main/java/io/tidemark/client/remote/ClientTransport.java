package io.tidemark.client.remote;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.Subscription;
import io.aeron.logbuffer.FragmentHandler;
import io.tidemark.aeron.AeronMedia;
import io.tidemark.aeron.DatagramWaitIdleStrategy;
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
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
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
 * <p>
 * <b>Waiting without spinning.</b> A thread with nothing to do waits in the kernel for the next datagram on the
 * driver's sockets ({@link AeronMedia#awaitDatagram}) instead of spinning or parking blind: a waiting sender
 * ({@link #progressOrWait}, at most {@value #SYNC_WAIT_MS} ms at a time) and the reply agent when idle
 * ({@link #agentWait}) both wake when the answer arrives. A spinning waiter took a whole core of a 2-core machine
 * from the hosts it waited for (the one-at-a-time round trip's thread: 0.6 s of CPU a second and as much again
 * waiting for a core, while the leader's duty thread waited 0.9 s a second for one). Work handed to the driver
 * from another thread (a request offered to a host's publication, {@link #offered}) rings the waiting agent's
 * doorbell, so that the driver sends it at once. Without a datagram wait (an external driver) the agent parks as
 * before, 100 us at most.
 */
final class ClientTransport implements AutoCloseable
{
    /** The longest wait of a thread that waits for an answer, between two runs of its own agent. */
    static final long SYNC_WAIT_MS = 1;

    private final ClientConfig config;
    private final AeronMedia media;
    private final Aeron aeron;
    private final Subscription replies;
    private final UnsafeBuffer hello = new UnsafeBuffer(new byte[GatewayMessages.HELLO_LENGTH]);
    /** Held to run the embedded driver and poll the replies: by the reply agent, or by a thread that waits. */
    private final ReentrantLock progressLock = new ReentrantLock();
    private FragmentAssembler replyAssembler;
    private AgentRunner runner;
    /** Fragments read off the reply subscription so far: written under the progress lock. */
    private volatile long repliesRead;
    /** Offers to the hosts' publications so far, from any thread: the waiting agent's doorbell. */
    private final AtomicLong offers = new AtomicLong();
    /** Whether the reply agent waits for a datagram in {@link #agentWait} (its doorbell must be rung). */
    private volatile boolean agentWaiting;
    /** {@link #offers} as the agent last saw them: agent thread only. */
    private long offersSeen;

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
     * fragment {@link #progress} reads goes, reassembled, to {@code onReply}. With the driver invoked the thread
     * waits for the next datagram when idle (1 ms at most after work, {@value DatagramWaitIdleStrategy#DEEP_WAIT_MS}
     * ms once quiet: the agent's own timers, the HELLOs every {@value HostLinks#HELLO_INTERVAL_MS} ms at the most
     * often, allow that); with an external driver it parks up to 100 us.
     */
    void start(final Agent agent, final FragmentHandler onReply, final ErrorHandler errorHandler)
    {
        this.replyAssembler = new FragmentAssembler(onReply);
        final IdleStrategy idle = media.invoked() ? new DatagramWaitIdleStrategy(this::agentWait, () -> 0,
            System::nanoTime, new BackoffIdleStrategy(1, 0, 1_000, 100_000)) :
            new BackoffIdleStrategy(100, 10, 1_000, 100_000);
        this.runner = new AgentRunner(idle, errorHandler, null, agent);
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
            return progressLocked();
        }
        finally
        {
            progressLock.unlock();
        }
    }

    private int progressLocked()
    {
        final int driver = media.invoke();
        final int read = replies.poll(replyAssembler, 64);
        if (read > 0)
        {
            repliesRead += read; // under the progress lock: one writer at a time
        }
        return driver + read;
    }

    /**
     * One step of a thread that waits for an answer (a synchronous send, a flush): run the driver and read the
     * replies; when that found nothing and no other thread read a reply since {@code seenReplies}, wait for the next
     * datagram, {@value #SYNC_WAIT_MS} ms at most (the caller's own agent runs between two steps), and read it.
     * Another thread making progress meanwhile (the reply agent, perhaps in a long wait) is woken and waited for: the
     * caller's request must go out now.
     *
     * @param seenReplies what the last call returned (0 the first time).
     * @return the replies read before this call, for the next: a reply read by this call, or by another thread
     *         since, lets the next call go on without waiting.
     */
    long progressOrWait(final long seenReplies)
    {
        if (!progressLock.tryLock())
        {
            media.wakeDatagramWait();
            progressLock.lock();
        }
        try
        {
            final long before = repliesRead;
            if (0 == progressLocked() && before == seenReplies)
            {
                media.awaitDatagram(SYNC_WAIT_MS);
                progressLocked();
            }
            // what was read here counts as new for the next call: the caller's agent must take the answer (its
            // callback completes the wait) before anyone waits again
            return before;
        }
        finally
        {
            progressLock.unlock();
        }
    }

    /** A request was offered to a host's publication: the driver must send it, so a waiting agent wakes. */
    void offered()
    {
        offers.incrementAndGet();
        if (agentWaiting)
        {
            media.wakeDatagramWait();
        }
    }

    /**
     * The reply agent's wait when idle: for the next datagram, or for {@link #offered}, at most {@code timeoutMs}.
     * While another thread holds the progress lock (a waiting sender, which runs the driver and reads the replies
     * itself) it parks instead, and an offer does not ring for it: that thread sends the offer itself, and a ring
     * there would be a wake-up per request for nothing.
     */
    private void agentWait(final long timeoutMs)
    {
        if (!progressLock.tryLock())
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeoutMs)));
            return;
        }
        try
        {
            agentWaiting = true; // before the offers are read: an offer after this read rings the doorbell
            final long offered = offers.get();
            if (offered != offersSeen)
            {
                offersSeen = offered; // offered since the last look: the driver sends it in the next cycle
                return;
            }
            media.awaitDatagram(timeoutMs);
        }
        finally
        {
            agentWaiting = false;
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
