package io.tidemark.bench.jmh;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.aeron.FrameReader;
import io.tidemark.aeron.HmacSha256;
import io.tidemark.bench.JvmFlags;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The cost of authenticating one message ({@link FrameDescriptor}): {@link #tag} is what a sender adds (HMAC-SHA256
 * over the stream id, the 48 header bytes and the payload), {@link #verify} what a receiver adds (the same HMAC, the
 * constant-time compare and the frame's checks) over a frame in a direct buffer, as Aeron hands it over. Payloads:
 * 40 bytes (a fetch request), 1 KiB (a produce of a few small records) and 1 MiB (a full fetch response at the
 * default {@code replica.fetch.max.bytes}). Average time per operation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Benchmark)
public class FrameAuthenticationBenchmark
{
    private static final int STREAM_ID = 1_001;

    /** Payload bytes of the frame. */
    @Param({"40", "1024", "1048576"})
    public int payloadBytes;

    private Path secretDir;
    private HmacSha256 mac;
    private FrameReader reader;
    private UnsafeBuffer frame;
    private final byte[] tagOut = new byte[HmacSha256.LENGTH];
    private final byte[] stream = { (byte)STREAM_ID, (byte)(STREAM_ID >>> 8), 0, 0 };

    /** A secret, and a valid frame of the payload size in a direct buffer. */
    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        secretDir = Files.createTempDirectory("tidemark-frame-bench");
        ClusterSecret.generate(secretDir.resolve("secret"));
        final ClusterSecret secret = ClusterSecret.load(secretDir.resolve("secret"), "bench");
        mac = secret.newMac();
        reader = new FrameReader(secret, 7);
        frame = new UnsafeBuffer(ByteBuffer.allocateDirect(FrameDescriptor.HEADER_LENGTH + payloadBytes));
        final byte[] payload = new byte[payloadBytes];
        new SplittableRandom(1).nextBytes(payload);
        frame.putByte(FrameDescriptor.VERSION_OFFSET, (byte)FrameDescriptor.VERSION);
        frame.putByte(FrameDescriptor.SENDER_KIND_OFFSET, (byte)FrameDescriptor.HOST);
        frame.putShort(FrameDescriptor.FLAGS_OFFSET, (short)FrameDescriptor.TAGGED, FrameDescriptor.ORDER);
        frame.putInt(FrameDescriptor.CLUSTER_OFFSET, 7, FrameDescriptor.ORDER);
        frame.putInt(FrameDescriptor.TYPE_OFFSET, 1, FrameDescriptor.ORDER);
        frame.putInt(FrameDescriptor.RECEIVER_ID_OFFSET, 1, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SENDER_ID_OFFSET, 0, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SENDER_EPOCH_OFFSET, 3, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.RECEIVER_EPOCH_OFFSET, 4, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SEQUENCE_OFFSET, 5, FrameDescriptor.ORDER);
        frame.putBytes(FrameDescriptor.HEADER_LENGTH, payload);
        tag();
        frame.putBytes(FrameDescriptor.TAG_OFFSET, tagOut, 0, FrameDescriptor.TAG_LENGTH);
        if (null != reader.verify(frame, 0, frame.capacity(), STREAM_ID))
        {
            throw new IllegalStateException("the benchmark's frame does not verify");
        }
    }

    /** Remove the secret. */
    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        Files.deleteIfExists(secretDir.resolve("secret"));
        Files.deleteIfExists(secretDir);
    }

    /** @return the sender's work: the tag over stream id, header and payload. */
    @Benchmark
    public byte tag()
    {
        mac.begin();
        mac.update(stream, 0, 4);
        mac.update(frame, 0, FrameDescriptor.TAG_OFFSET);
        mac.update(frame, FrameDescriptor.HEADER_LENGTH, payloadBytes);
        mac.finish(tagOut, 0);
        return tagOut[0];
    }

    /** @return the receiver's work: the frame's checks and its tag. */
    @Benchmark
    public EdgeCounters.Reason verify()
    {
        return reader.verify(frame, 0, frame.capacity(), STREAM_ID);
    }
}
