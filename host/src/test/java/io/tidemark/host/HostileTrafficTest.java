package io.tidemark.host;

import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.client.remote.protocol.GatewayMessages;
import io.aeron.Aeron;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.tidemark.aeron.AeronTransport;
import io.tidemark.aeron.EdgeCounters;
import io.tidemark.aeron.FrameDescriptor;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.store.file.CountersFile;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three host processes on loopback under hostile traffic while an idempotent acks=all producer writes: raw UDP
 * datagrams (random, truncated Aeron headers, oversized) at every host endpoint, and Aeron messages on every stream
 * of every host (fetch requests and responses, control, client requests): random bytes, fetches and control
 * messages in the old unauthenticated format, forged frames claiming real hosts and their registered incarnations
 * (untagged, or with a made-up tag) with fetches at the leader's log end and a later incarnation, forged
 * UNREGISTER_HOST and REGISTER_HOST, HELLOs with injected channel parameters, and replays of valid frames captured
 * on the hosts' own streams (to the same host, and to another).
 * <p>
 * The hosts share one media driver in this JVM, so that the test can capture what reaches them (a second
 * subscription on a host's channel and stream sees every frame the host sees). The sender has no secret.
 * <p>
 * Then: every acknowledged record is in every in-sync replica (the checker's re-read), the ISR is full, each host's
 * resident memory grew by less than {@link #RSS_GROWTH_BOUND_KB} and its open file descriptors by less than
 * {@link #FD_GROWTH_BOUND}, its log gained at most {@link #LOG_LINES_BOUND} lines while under attack (drops are
 * logged once per kind per interval), and its counters file shows the drops ({@code tidemark stat}).
 */
class HostileTrafficTest
{
    private static final String TOPIC = "orders";
    /** How long the hostile sender runs (ms); longer runs with -Dtidemark.hostile.ms. */
    private static final long ATTACK_MS = Long.getLong("tidemark.hostile.ms", 15_000);
    /** Most a host's resident memory may grow from before to after the attack (kB). */
    static final long RSS_GROWTH_BOUND_KB = 96 * 1024;
    /** Most a host's open file descriptors may grow from before to after the attack. */
    static final int FD_GROWTH_BOUND = 16;
    /** Most lines a host may log while under attack (30 s of attack at most 3 lines per kind of drop). */
    static final int LOG_LINES_BOUND = 200;
    private static final int[] STREAMS_OF_A_HOST = { GatewayMessages.GATEWAY_STREAM_ID,
        GatewayMessages.CONTROL_STREAM_ID };

    @TempDir
    Path tmp;

    /** Frames as they reached the hosts, for replaying: the last few of each host and stream. */
    private static final class Tap implements AutoCloseable
    {
        final int host;
        final int streamId;
        final Subscription subscription;
        final AtomicReferenceArray<byte[]> frames = new AtomicReferenceArray<>(32);
        final AtomicLong captured = new AtomicLong();

        Tap(final Aeron aeron, final String channel, final int host, final int streamId)
        {
            this.host = host;
            this.streamId = streamId;
            this.subscription = aeron.addSubscription(channel, streamId);
        }

        int poll()
        {
            return subscription.poll((buffer, offset, length, header) ->
            {
                final byte[] copy = new byte[length];
                buffer.getBytes(offset, copy);
                frames.set((int)(captured.getAndIncrement() % frames.length()), copy);
            }, 16);
        }

        @Override
        public void close()
        {
            subscription.close();
        }
    }

    @Test
    void hostileTrafficLosesNothingAndCostsBoundedMemoryDescriptorsAndLogLines() throws Exception
    {
        final Path driverDir = tmp.resolve("aeron-shared");
        try (MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
            .aeronDirectoryName(driverDir.toString())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .termBufferSparseFile(true)
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(new BackoffIdleStrategy(100, 10, 1_000, 100_000))))
        {
            final Properties extra = new Properties();
            extra.setProperty("min.insync.replicas", "2");
            extra.setProperty("aeron.dir", driver.aeronDirectoryName());
            try (ProcessCluster cluster = new ProcessCluster(tmp, 3, extra))
            {
                cluster.start();
                cluster.createTopicInSync(TOPIC, 1);
                run(cluster, cluster.client(), driver.aeronDirectoryName());
            }
        }
    }

    private void run(final ProcessCluster cluster, final TidemarkClient client, final String aeronDir)
        throws Exception
    {
        final Map<Long, String> acked;
        try (BackgroundWriter writer = new BackgroundWriter(client, TOPIC, 0, "hostile-test-producer"))
        {
            acked = writer.acked;
            assertTrue(ProcessCluster.await(() -> acked.size() > 200, 60_000), "the producer is running");

            final long[] rssBefore = new long[3];
            final long[] fdsBefore = new long[3];
            final int[] linesBefore = new int[3];
            for (int id = 0; id < 3; id++)
            {
                rssBefore[id] = rssKb(cluster.host(id).process.pid());
                fdsBefore[id] = fds(cluster.host(id).process.pid());
                linesBefore[id] = cluster.host(id).log.size();
            }
            final int ackedBefore = acked.size();
            final Map<String, Long> sent = attack(client, aeronDir);
            final int[] linesDuring = new int[3];
            for (int id = 0; id < 3; id++)
            {
                linesDuring[id] = cluster.host(id).log.size() - linesBefore[id];
            }
            System.out.println("hostile sender: " + sent + "; acknowledged during the attack: " +
                (acked.size() - ackedBefore));

            final int ackedAfterAttack = acked.size();
            assertTrue(ProcessCluster.await(() -> acked.size() > ackedAfterAttack + 200, 60_000),
                "acks=all writes go on after the attack");
            assertTrue(ProcessCluster.await(() -> cluster.state(TOPIC, 0).isr().length == 3, 30_000),
                "the ISR is full: " + cluster.state(TOPIC, 0));
            writer.stop();

            for (int id = 0; id < 3; id++)
            {
                final long pid = cluster.host(id).process.pid();
                final long rssGrowth = rssKb(pid) - rssBefore[id];
                final long fdGrowth = fds(pid) - fdsBefore[id];
                final Map<String, Long> drops = drops(cluster.hostDir(id));
                System.out.println("host " + id + ": rss +" + rssGrowth + " kB, fds +" + fdGrowth + ", log lines " +
                    "during the attack " + linesDuring[id] + ", drops " + drops);
                assertTrue(rssGrowth < RSS_GROWTH_BOUND_KB, "host " + id + " resident memory grew by " + rssGrowth +
                    " kB");
                assertTrue(fdGrowth < FD_GROWTH_BOUND, "host " + id + " open files grew by " + fdGrowth);
                assertTrue(linesDuring[id] <= LOG_LINES_BOUND, "host " + id + " logged " + linesDuring[id] +
                    " lines under attack:\n" + String.join("\n", cluster.host(id).log.subList(linesBefore[id],
                    Math.min(cluster.host(id).log.size(), linesBefore[id] + 300))));
                final long total = drops.values().stream().mapToLong(Long::longValue).sum();
                assertTrue(total > 0, "host " + id + " counted what it dropped: " + drops);
                assertTrue(drops.getOrDefault("client unauthenticated", 0L) > 0 &&
                    drops.getOrDefault("fetch bad-tag", 0L) > 0, "host " + id + " drops: " + drops);
            }
            final Map<String, Long> all = new TreeMap<>();
            for (int id = 0; id < 3; id++)
            {
                drops(cluster.hostDir(id)).forEach((k, v) -> all.merge(k, v, Long::sum));
            }
            assertTrue(all.entrySet().stream().anyMatch((e) -> e.getKey().endsWith("replayed") && e.getValue() > 0),
                "replays of captured frames were refused as replays: " + all);
            assertTrue(all.entrySet().stream().anyMatch((e) -> e.getKey().endsWith("wrong-receiver") &&
                e.getValue() > 0), "frames replayed to another host were refused: " + all);
            assertEquals(0, writer.failed.get(), "sends that failed");
        }
        assertEquals(3, cluster.state(TOPIC, 0).isr().length);
        ClusterChecker.stopAllAndCheckReplicas(cluster, TOPIC, 0, acked);
    }

    /** Run the hostile sender for {@link #ATTACK_MS}. @return what it sent, by kind. */
    private static Map<String, Long> attack(final TidemarkClient client, final String aeronDir) throws Exception
    {
        final Map<String, Long> sent = new TreeMap<>();
        final Random random = new Random(16);
        final Map<Integer, String> endpoints = client.hosts();
        final int clusterHash = GatewayMessages.clusterHash(ProcessCluster.CLUSTER);
        final List<Tap> taps = new ArrayList<>();
        final List<Publication> publications = new ArrayList<>();
        final AtomicBoolean tapping = new AtomicBoolean(true);
        try (Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
            DatagramSocket udp = new DatagramSocket())
        {
            final Publication[][] out = new Publication[3][];
            for (int h = 0; h < 3; h++)
            {
                final String channel = "aeron:udp?endpoint=" + endpoints.get(h);
                taps.add(new Tap(aeron, channel, h, AeronTransport.REQUEST_STREAM_ID_BASE + h));
                for (final int stream : STREAMS_OF_A_HOST)
                {
                    taps.add(new Tap(aeron, channel, h, stream));
                }
                out[h] = new Publication[]{
                    aeron.addPublication(channel, AeronTransport.REQUEST_STREAM_ID_BASE + h),
                    aeron.addPublication(channel, GatewayMessages.GATEWAY_STREAM_ID),
                    aeron.addPublication(channel, GatewayMessages.CONTROL_STREAM_ID),
                    aeron.addPublication(channel, AeronTransport.RESPONSE_STREAM_ID_BASE + h * AeronTransport.MAX_HOSTS +
                        (h + 1) % 3)};
                publications.addAll(List.of(out[h]));
            }
            final Thread tapper = new Thread(() ->
            {
                while (tapping.get())
                {
                    int work = 0;
                    for (final Tap tap : taps)
                    {
                        work += tap.poll();
                    }
                    if (work == 0)
                    {
                        Thread.onSpinWait();
                        try
                        {
                            Thread.sleep(0, 200_000);
                        }
                        catch (final InterruptedException ex)
                        {
                            return;
                        }
                    }
                }
            }, "hostile-test-tap");
            tapper.start();
            final long end = System.nanoTime() + ATTACK_MS * 1_000_000L;
            while (System.nanoTime() < end)
            {
                final int h = random.nextInt(3);
                final InetSocketAddress target = address(endpoints.get(h));
                final long incarnation = client.incarnationOf(h);
                final int kind = random.nextInt(11);
                final String name;
                switch (kind)
                {
                    case 0 ->
                    {
                        name = "udp-random";
                        final byte[] bytes = new byte[1 + random.nextInt(1400)];
                        random.nextBytes(bytes);
                        udp.send(new DatagramPacket(bytes, bytes.length, target));
                    }
                    case 1 ->
                    {
                        name = random.nextBoolean() ? "udp-oversized" : "udp-truncated-header";
                        final byte[] bytes = name.equals("udp-oversized") ? new byte[60_000] :
                            new byte[8 + random.nextInt(24)];
                        random.nextBytes(bytes);
                        final UnsafeBuffer header = new UnsafeBuffer(bytes);
                        header.putInt(0, name.equals("udp-oversized") ? 60_000 : 1_000); // a data frame's length
                        header.putByte(4, (byte)0); // version
                        header.putByte(5, (byte)0xC0); // begin and end flags
                        header.putShort(6, (short)1); // type: data
                        udp.send(new DatagramPacket(bytes, bytes.length, target));
                    }
                    case 2 ->
                    {
                        name = "aeron-random";
                        final byte[] bytes = new byte[1 + random.nextInt(random.nextInt(10) == 0 ? 65_536 : 512)];
                        random.nextBytes(bytes);
                        out[h][random.nextInt(4)].offer(new UnsafeBuffer(bytes));
                    }
                    case 3 ->
                    {
                        name = "old-format-forged-fetch";
                        final UnsafeBuffer m = new UnsafeBuffer(new byte[8 + 40]);
                        m.putInt(0, 1);
                        m.putInt(4, clusterHash);
                        m.putInt(8, 0);
                        m.putInt(12, new int[]{ -1, 0, 1, 2, 63, 64, 1 << 20 }[random.nextInt(7)]);
                        m.putInt(16, random.nextInt(5));
                        m.putInt(20, 1 << 20);
                        m.putLong(24, incarnation + 1_000);
                        m.putLong(32, Long.MAX_VALUE / 2);
                        m.putLong(40, random.nextLong());
                        out[h][0].offer(m);
                    }
                    case 4, 5 ->
                    {
                        final int from = (h + 1 + random.nextInt(2)) % 3;
                        final boolean tagged = kind == 5;
                        name = tagged ? "forged-fetch-made-up-tag" : "forged-fetch-untagged";
                        final UnsafeBuffer fetch = new UnsafeBuffer(new byte[40]);
                        fetch.putInt(0, 0);
                        fetch.putInt(4, from);
                        fetch.putInt(8, random.nextInt(5));
                        fetch.putInt(12, 1 << 20);
                        fetch.putLong(16, client.incarnationOf(from) + random.nextInt(2) * 1_000);
                        fetch.putLong(24, Long.MAX_VALUE / 2);
                        fetch.putLong(32, random.nextLong());
                        out[h][random.nextBoolean() ? 0 : 3].offer(frame(FrameDescriptor.HOST, from,
                            client.incarnationOf(from), incarnation, 1, clusterHash, tagged, random, fetch));
                    }
                    case 6 ->
                    {
                        name = "forged-control";
                        final int leader = cluster(client).leader();
                        final int claimed = leader < 0 ? 0 : leader;
                        final UnsafeBuffer control = new UnsafeBuffer(new byte[4 + 16]);
                        control.putInt(0, random.nextBoolean() ? -1 : h);
                        control.putByte(4, (byte)1); // version
                        control.putByte(5, (byte)(random.nextBoolean() ? 3 : 1)); // UNREGISTER_HOST or REGISTER_HOST
                        control.putInt(8, claimed);
                        control.putLong(12, client.incarnationOf(claimed) + random.nextInt(2) * 1_000);
                        if (random.nextBoolean())
                        {
                            final UnsafeBuffer old = new UnsafeBuffer(new byte[8 + control.capacity()]);
                            old.putInt(0, clusterHash);
                            old.putInt(4, GatewayMessages.CONTROL);
                            old.putBytes(8, control, 0, control.capacity());
                            out[h][2].offer(old);
                        }
                        else
                        {
                            out[h][2].offer(frame(FrameDescriptor.HOST, claimed, client.incarnationOf(claimed),
                                incarnation, GatewayMessages.CONTROL, clusterHash, random.nextBoolean(), random,
                                control));
                        }
                    }
                    case 7 ->
                    {
                        name = "hello-with-channel-parameters";
                        final byte[] channel = "aeron:udp?endpoint=127.0.0.1:9|term-length=64m|sparse=false"
                            .getBytes(StandardCharsets.US_ASCII);
                        final long clientId = random.nextLong();
                        if (random.nextBoolean())
                        {
                            final UnsafeBuffer old = new UnsafeBuffer(new byte[20 + channel.length]);
                            old.putInt(0, clusterHash);
                            old.putInt(4, GatewayMessages.HELLO);
                            old.putLong(8, clientId);
                            old.putInt(16, channel.length);
                            old.putBytes(20, channel);
                            out[h][1].offer(old);
                        }
                        else
                        {
                            out[h][1].offer(frame(FrameDescriptor.CLIENT, clientId, 0, incarnation,
                                GatewayMessages.HELLO, clusterHash, random.nextBoolean(), random,
                                new UnsafeBuffer(channel)));
                        }
                    }
                    default ->
                    {
                        final Tap tap = taps.get(random.nextInt(taps.size()));
                        final byte[] frame = tap.frames.get(random.nextInt(tap.frames.length()));
                        if (null == frame)
                        {
                            continue;
                        }
                        // replay to the host it was captured at, or to another one
                        final boolean elsewhere = random.nextInt(3) == 0;
                        final int to = elsewhere ? (tap.host + 1) % 3 : tap.host;
                        final int slot = tap.streamId == GatewayMessages.GATEWAY_STREAM_ID ? 1 :
                            tap.streamId == GatewayMessages.CONTROL_STREAM_ID ? 2 : 0;
                        name = elsewhere ? "replay-to-another-host" : "replay";
                        if (slot == 0 && elsewhere)
                        {
                            continue; // another host's request stream is another stream id
                        }
                        out[to][slot].offer(new UnsafeBuffer(frame));
                    }
                }
                sent.merge(name, 1L, Long::sum);
                if ((sent.values().stream().mapToLong(Long::longValue).sum() & 3) == 0)
                {
                    Thread.sleep(1);
                }
            }
            tapping.set(false);
            tapper.join(10_000);
            for (final Tap tap : taps)
            {
                sent.merge("captured", tap.captured.get(), Long::sum);
            }
        }
        finally
        {
            tapping.set(false);
            taps.forEach(CloseHelper::quietClose);
            publications.forEach(CloseHelper::quietClose);
        }
        return sent;
    }

    private static PartitionState cluster(final TidemarkClient client)
    {
        return client.partitions(TOPIC).get(0);
    }

    /** A frame of the current format, untagged or with a made-up tag (the sender has no secret). */
    private static UnsafeBuffer frame(final int kind, final long senderId, final long senderEpoch,
        final long receiverEpoch, final int type, final int clusterHash, final boolean tagged, final Random random,
        final UnsafeBuffer payload)
    {
        final UnsafeBuffer frame = new UnsafeBuffer(new byte[FrameDescriptor.HEADER_LENGTH + payload.capacity()]);
        frame.putByte(FrameDescriptor.VERSION_OFFSET, (byte)FrameDescriptor.VERSION);
        frame.putByte(FrameDescriptor.SENDER_KIND_OFFSET, (byte)kind);
        frame.putShort(FrameDescriptor.FLAGS_OFFSET, (short)(tagged ? FrameDescriptor.TAGGED : 0),
            FrameDescriptor.ORDER);
        frame.putInt(FrameDescriptor.CLUSTER_OFFSET, clusterHash, FrameDescriptor.ORDER);
        frame.putInt(FrameDescriptor.TYPE_OFFSET, type, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SENDER_ID_OFFSET, senderId, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SENDER_EPOCH_OFFSET, senderEpoch, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.RECEIVER_EPOCH_OFFSET, receiverEpoch, FrameDescriptor.ORDER);
        frame.putLong(FrameDescriptor.SEQUENCE_OFFSET, Long.MAX_VALUE - random.nextInt(1000), FrameDescriptor.ORDER);
        if (tagged)
        {
            final byte[] tag = new byte[FrameDescriptor.TAG_LENGTH];
            random.nextBytes(tag);
            frame.putBytes(FrameDescriptor.TAG_OFFSET, tag);
        }
        frame.putBytes(FrameDescriptor.HEADER_LENGTH, payload, 0, payload.capacity());
        return frame;
    }

    private static InetSocketAddress address(final String endpoint)
    {
        final int colon = endpoint.lastIndexOf(':');
        return new InetSocketAddress(endpoint.substring(0, colon), Integer.parseInt(endpoint.substring(colon + 1)));
    }

    /** @return the drop counters in a host's counters file, "stream reason" to count. */
    private static Map<String, Long> drops(final Path hostDir) throws IOException
    {
        final Map<String, Long> drops = new TreeMap<>();
        try (CountersFile counters = CountersFile.openReadOnly(hostDir.resolve("counters.dat")))
        {
            counters.reader().forEach((id, type, key, label) ->
            {
                if (type == EdgeCounters.DROPPED_TYPE_ID)
                {
                    final String[] parts = label.split(" ");
                    final String name = parts[2].substring("stream=".length()) + " " +
                        parts[3].substring("reason=".length());
                    drops.merge(name, counters.reader().getCounterValue(id), Long::sum);
                }
            });
        }
        drops.values().removeIf((v) -> v == 0);
        return drops;
    }

    private static long rssKb(final long pid) throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/" + pid + "/status")))
        {
            if (line.startsWith("VmRSS:"))
            {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS for " + pid);
    }

    private static long fds(final long pid) throws IOException
    {
        try (Stream<Path> entries = Files.list(Path.of("/proc/" + pid + "/fd")))
        {
            return entries.count();
        }
    }
}
