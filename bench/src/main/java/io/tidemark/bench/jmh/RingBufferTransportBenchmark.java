package io.tidemark.bench.jmh;

import io.tidemark.bench.JvmFlags;
import io.tidemark.replication.InProcessTransport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Control;

import java.util.concurrent.TimeUnit;

/**
 * The replication transport between hosts of one JVM ({@link InProcessTransport}: an Agrona
 * {@code ManyToOneRingBuffer} per (follower, leader) pair for fetch responses), carrying messages of
 * {@link #messageBytes}: 64 B (a fetch request's size) and 16 KiB (a fetch response with records).
 * <ul>
 *     <li>{@link #sendAndPoll}: one thread sends a message and polls it back: the cost of one hop without a
 *     thread hand-off.</li>
 *     <li>{@code handOff} group: a sender thread and a poller thread, the way a leader's host agent and a
 *     follower's fetcher use it; the score is messages per second through the ring (sender + poller ops, so
 *     twice the message rate when neither waits).</li>
 * </ul>
 * The poller touches each message's first and last byte; nothing is allocated per message.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Group)
public class RingBufferTransportBenchmark
{
    private static final int LEADER = 0;
    private static final int FOLLOWER = 1;
    private static final int MSG_TYPE = 2;

    /** Message length in bytes. */
    @Param({"64", "16384"})
    public int messageBytes;

    InProcessTransport transport;
    private UnsafeBuffer message;
    private long checksum;
    private final MessageHandler handler = this::onMessage;

    /** A transport between two hosts with the replication defaults (1 MiB request, 16 MiB response rings). */
    @Setup(Level.Trial)
    public void start()
    {
        transport = new InProcessTransport(2, 1 << 20, 16 << 20);
        transport.hostUp(LEADER);
        transport.hostUp(FOLLOWER);
        message = BenchLogs.value(messageBytes);
    }

    private void onMessage(final int msgTypeId, final DirectBuffer buffer, final int index, final int length)
    {
        checksum += buffer.getByte(index) + buffer.getByte(index + length - 1) + msgTypeId;
    }

    /** @return a checksum of the messages polled so far. */
    @Benchmark
    @Group("sendAndPoll")
    @GroupThreads(1)
    public long sendAndPoll()
    {
        if (!transport.sendResponse(LEADER, FOLLOWER, MSG_TYPE, message, 0, messageBytes))
        {
            throw new IllegalStateException("ring full with one message in flight");
        }
        // At the end of the ring a read may step over the padding only and deliver nothing: read again
        if (transport.pollResponses(FOLLOWER, LEADER, handler, 1) != 1 &&
            transport.pollResponses(FOLLOWER, LEADER, handler, 1) != 1)
        {
            throw new IllegalStateException("message not delivered");
        }
        return checksum;
    }

    /**
     * Send one message, waiting while the ring is full.
     *
     * @param control JMH's control, to stop waiting when the iteration ends.
     * @return whether it was sent.
     */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public boolean send(final Control control)
    {
        while (!transport.sendResponse(LEADER, FOLLOWER, MSG_TYPE, message, 0, messageBytes))
        {
            if (control.stopMeasurement)
            {
                return false;
            }
            Thread.onSpinWait();
        }
        return true;
    }

    /**
     * Poll one message, waiting while the ring is empty.
     *
     * @param control JMH's control, to stop waiting when the iteration ends.
     * @return a checksum of the messages polled so far.
     */
    @Benchmark
    @Group("handOff")
    @GroupThreads(1)
    public long poll(final Control control)
    {
        while (transport.pollResponses(FOLLOWER, LEADER, handler, 1) == 0)
        {
            if (control.stopMeasurement)
            {
                break;
            }
            Thread.onSpinWait();
        }
        return checksum;
    }
}
