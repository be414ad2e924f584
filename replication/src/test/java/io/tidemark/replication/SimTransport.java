package io.tidemark.replication;

import io.tidemark.replication.spi.Transport;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.PriorityQueue;
import java.util.Random;

/**
 * A {@link Transport} for the fault simulation: every message is delivered after a random delay (so messages
 * reorder), may be dropped or duplicated, and is lost when its link is cut or either end is down. Everything is
 * driven by the simulation's seeded {@link Random} and manual clock, so a seed replays exactly. Single-threaded.
 */
final class SimTransport implements Transport
{
    private final int maxHosts;
    private final Random random;
    private final Random staleRandom;
    private final CachedEpochClock clock;
    private final java.util.List<PriorityQueue<Message>> queues = new java.util.ArrayList<>();
    private final boolean[] up;
    private final boolean[][] cut;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private long sequence;
    double dropRate;
    double duplicateRate;
    int maxDelayMs;
    long delivered;
    long dropped;
    long duplicated;

    /** A message in flight. */
    private record Message(long deliverAtMs, long sequence, int fromHost, int typeId, byte[] bytes)
    {
    }

    SimTransport(final int maxHosts, final Random random, final Random staleRandom, final CachedEpochClock clock)
    {
        this.maxHosts = maxHosts;
        this.random = random;
        this.staleRandom = staleRandom;
        this.clock = clock;
        for (int i = 0; i < maxHosts * (maxHosts + 1); i++)
        {
            queues.add(new PriorityQueue<>((a, b) -> a.deliverAtMs != b.deliverAtMs ?
                Long.compare(a.deliverAtMs, b.deliverAtMs) : Long.compare(a.sequence, b.sequence)));
        }
        this.up = new boolean[maxHosts];
        this.cut = new boolean[maxHosts][maxHosts];
    }

    private int requestQueue(final int host)
    {
        return host * (maxHosts + 1);
    }

    private int responseQueue(final int host, final int from)
    {
        return host * (maxHosts + 1) + 1 + from;
    }

    void isolate(final int a, final int b)
    {
        cut[a][b] = true;
        cut[b][a] = true;
    }

    void heal()
    {
        for (final boolean[] row : cut)
        {
            java.util.Arrays.fill(row, false);
        }
    }

    boolean isCut(final int a, final int b)
    {
        return cut[a][b];
    }

    private boolean send(final int from, final int to, final int queue, final int typeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        if (!up[from] || !up[to] || cut[from][to])
        {
            dropped++;
            return true; // lost in the network, as far as the sender can tell it was sent
        }
        if (random.nextDouble() < dropRate)
        {
            dropped++;
            return true;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        final int copies = random.nextDouble() < duplicateRate ? 2 : 1;
        duplicated += copies - 1;
        for (int i = 0; i < copies; i++)
        {
            final long delay = maxDelayMs == 0 ? 0 : random.nextInt(maxDelayMs + 1);
            queues.get(queue).add(new Message(clock.time() + delay, sequence++, from, typeId, bytes));
        }
        return true;
    }

    @Override
    public boolean sendRequest(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return send(fromHost, toHost, requestQueue(toHost), msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return send(fromHost, toHost, responseQueue(toHost, fromHost), msgTypeId, buffer, offset, length);
    }

    private int poll(final int queue, final MessageHandler handler, final int limit)
    {
        return poll(queue, (from, typeId, buffer, index, length) -> handler.onMessage(typeId, buffer, index, length),
            limit);
    }

    private int poll(final int queue, final RequestHandler handler, final int limit)
    {
        int count = 0;
        final PriorityQueue<Message> pending = queues.get(queue);
        while (count < limit && !pending.isEmpty() && pending.peek().deliverAtMs <= clock.time())
        {
            final Message message = pending.poll();
            view.wrap(message.bytes);
            handler.onRequest(message.fromHost, message.typeId, view, 0, message.bytes.length);
            count++;
            delivered++;
        }
        return count;
    }

    @Override
    public int pollRequests(final int host, final RequestHandler handler, final int limit)
    {
        return up[host] ? poll(requestQueue(host), handler, limit) : 0;
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        return up[host] ? poll(responseQueue(host, fromHost), handler, limit) : 0;
    }

    @Override
    public void hostUp(final int host)
    {
        up[host] = true;
        // Like Aeron, a network transport may still hand a restarted host some messages sent to its previous
        // incarnation: half the time they are kept and delivered.
        if (null == staleRandom || staleRandom.nextBoolean())
        {
            queues.get(requestQueue(host)).clear();
            for (int from = 0; from < maxHosts; from++)
            {
                queues.get(responseQueue(host, from)).clear();
            }
        }
    }

    @Override
    public void hostDown(final int host)
    {
        up[host] = false;
    }
}
