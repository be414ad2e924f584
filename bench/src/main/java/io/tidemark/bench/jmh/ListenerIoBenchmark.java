package io.tidemark.bench.jmh;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.tidemark.bench.JvmFlags;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The I/O layer under the Kafka listener (issue 19: "Netty, or NIO on Agrona agents, measured and chosen"): the same
 * size-prefixed request/response exchange over loopback TCP served by one thread of each kind, with nothing else in
 * it, so that what differs is the layer alone. {@code nio}: one thread running a {@link Selector} over non-blocking
 * channels, reading into a per-connection buffer, cutting frames at their 4-byte size prefix and writing each back,
 * as {@code KafkaListener} does; {@code netty}: one {@link NioEventLoopGroup} thread with a
 * {@link LengthFieldBasedFrameDecoder} and a handler that writes each frame back, flushed once per read. The client
 * (the benchmark thread, blocking) writes {@code pipeline} requests of {@code requestBytes} at once and reads the
 * answers back; throughput is requests a second, and the auxiliary counter {@code serverCpuNs} is the server
 * thread's CPU time over the iteration, so that its per-request cost is {@code serverCpuNs / requests}.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 2, jvmArgsAppend = {JvmFlags.ADD_EXPORTS, JvmFlags.MISC_TO_UNNAMED})
@State(Scope.Benchmark)
public class ListenerIoBenchmark
{
    private static final int PIPELINE = 16;

    /** The server's I/O layer. */
    @Param({"nio", "netty"})
    public String layer;

    /** Bytes of each request after its size prefix (a small produce; a full 16 KiB batch). */
    @Param({"100", "16384"})
    public int requestBytes;

    private Server server;
    private java.nio.channels.SocketChannel client;
    private ByteBuffer requests;
    private ByteBuffer answers;

    /** Server CPU time per iteration, reported beside the throughput. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.EVENTS)
    public static class ServerCpu
    {
        /** CPU nanoseconds the server thread used in the iteration. */
        public long serverCpuNs;
        /** Requests answered in the iteration. */
        public long requests;
        private long cpuAtStart;

        /** Start of an iteration: the server's CPU so far. */
        @Setup(Level.Iteration)
        public void start(final ListenerIoBenchmark benchmark)
        {
            serverCpuNs = 0;
            requests = 0;
            cpuAtStart = benchmark.server.cpuNanos();
        }

        /** End of an iteration: the server's CPU in it. */
        @TearDown(Level.Iteration)
        public void end(final ListenerIoBenchmark benchmark)
        {
            serverCpuNs = benchmark.server.cpuNanos() - cpuAtStart;
        }
    }

    /** Start the server and connect the client. */
    @Setup(Level.Trial)
    public void setUp() throws Exception
    {
        server = "netty".equals(layer) ? new NettyServer() : new NioServer();
        final int port = server.start();
        client = java.nio.channels.SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
        client.setOption(StandardSocketOptions.TCP_NODELAY, true);
        final int frame = 4 + requestBytes;
        requests = ByteBuffer.allocateDirect(frame * PIPELINE);
        for (int i = 0; i < PIPELINE; i++)
        {
            requests.putInt(requestBytes);
            for (int b = 0; b < requestBytes; b++)
            {
                requests.put((byte)b);
            }
        }
        answers = ByteBuffer.allocateDirect(frame * PIPELINE);
    }

    /** Stop both ends. */
    @TearDown(Level.Trial)
    public void tearDown() throws Exception
    {
        client.close();
        server.close();
    }

    /** {@code PIPELINE} requests out, their answers back. */
    @Benchmark
    @OperationsPerInvocation(PIPELINE)
    public void exchange(final ServerCpu cpu) throws IOException
    {
        requests.clear();
        while (requests.hasRemaining())
        {
            client.write(requests);
        }
        answers.clear();
        while (answers.hasRemaining())
        {
            if (client.read(answers) < 0)
            {
                throw new IOException("the server closed the connection");
            }
        }
        cpu.requests += PIPELINE;
    }

    private abstract static class Server
    {
        private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
        final AtomicLong threadId = new AtomicLong(-1);

        abstract int start() throws Exception;

        abstract void close() throws Exception;

        long cpuNanos()
        {
            final long id = threadId.get();
            return id < 0 ? 0 : Math.max(0, THREADS.getThreadCpuTime(id));
        }
    }

    /** One selector thread, as the Kafka listener's agent runs it. */
    private static final class NioServer extends Server
    {
        private Selector selector;
        private ServerSocketChannel acceptor;
        private Thread thread;
        private volatile boolean running = true;

        @Override
        int start() throws IOException
        {
            selector = Selector.open();
            acceptor = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            acceptor.configureBlocking(false);
            acceptor.register(selector, SelectionKey.OP_ACCEPT);
            thread = new Thread(this::run, "nio-listener");
            thread.setDaemon(true);
            thread.start();
            return ((InetSocketAddress)acceptor.getLocalAddress()).getPort();
        }

        private void run()
        {
            threadId.set(Thread.currentThread().getId());
            try
            {
                while (running)
                {
                    selector.select(100);
                    final Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
                    while (keys.hasNext())
                    {
                        final SelectionKey key = keys.next();
                        keys.remove();
                        if (!key.isValid())
                        {
                            continue;
                        }
                        if (key.isAcceptable())
                        {
                            final java.nio.channels.SocketChannel channel = acceptor.accept();
                            if (null != channel)
                            {
                                channel.configureBlocking(false);
                                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                                channel.register(selector, SelectionKey.OP_READ, new Connection());
                            }
                            continue;
                        }
                        ((Connection)key.attachment()).onReady(key);
                    }
                }
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    throw new IllegalStateException(ex);
                }
            }
        }

        @Override
        void close() throws Exception
        {
            running = false;
            selector.wakeup();
            thread.join(5_000);
            for (final SelectionKey key : selector.keys())
            {
                key.channel().close();
            }
            selector.close();
        }
    }

    /** A connection of the NIO server: frames cut at their size prefix, each written back. */
    private static final class Connection
    {
        private final ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
        private final ByteBuffer out = ByteBuffer.allocateDirect(1 << 20);

        void onReady(final SelectionKey key) throws IOException
        {
            final java.nio.channels.SocketChannel channel = (java.nio.channels.SocketChannel)key.channel();
            if (key.isWritable() || out.position() > 0)
            {
                flush(key, channel);
            }
            if (!key.isValid() || !key.isReadable())
            {
                return;
            }
            if (channel.read(in) < 0)
            {
                key.cancel();
                channel.close();
                return;
            }
            in.flip();
            while (in.remaining() >= 4)
            {
                final int length = in.getInt(in.position());
                if (length < 0 || length > in.capacity() - 4)
                {
                    key.cancel();
                    channel.close();
                    return;
                }
                if (in.remaining() < 4 + length || out.remaining() < 4 + length)
                {
                    break;
                }
                final int end = in.position() + 4 + length;
                final int limit = in.limit();
                in.limit(end);
                out.put(in);
                in.limit(limit);
            }
            in.compact();
            flush(key, channel);
        }

        private void flush(final SelectionKey key, final java.nio.channels.SocketChannel channel) throws IOException
        {
            out.flip();
            channel.write(out);
            out.compact();
            key.interestOps(out.position() > 0 ? SelectionKey.OP_READ | SelectionKey.OP_WRITE : SelectionKey.OP_READ);
        }
    }

    /** One Netty event loop thread serving the acceptor and the connection. */
    private static final class NettyServer extends Server
    {
        private EventLoopGroup group;
        private Channel acceptor;

        @Override
        int start() throws Exception
        {
            group = new NioEventLoopGroup(1, (Runnable task) ->
            {
                final Thread t = new Thread(() ->
                {
                    threadId.set(Thread.currentThread().getId());
                    task.run();
                }, "netty-listener");
                t.setDaemon(true);
                return t;
            });
            acceptor = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>()
                {
                    @Override
                    protected void initChannel(final SocketChannel ch)
                    {
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(1 << 20, 0, 4, 0, 0),
                            new EchoHandler());
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
            return ((InetSocketAddress)acceptor.localAddress()).getPort();
        }

        @Override
        void close() throws Exception
        {
            acceptor.close().sync();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        }
    }

    /** Writes each frame back; flushes once per read. */
    private static final class EchoHandler extends ChannelInboundHandlerAdapter
    {
        @Override
        public void channelRead(final ChannelHandlerContext ctx, final Object msg)
        {
            ctx.write((ByteBuf)msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(final ChannelHandlerContext ctx)
        {
            ctx.flush();
        }
    }
}
