package io.tidemark.host;

import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerRecord;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.replication.Acks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The load a drill runs under: a thread that sends {@code r-0}, {@code r-1}, ... to one partition through an
 * idempotent acks=all producer, a record every 2 ms, until closed. Keeps every acknowledged record by its offset and
 * counts the sends that failed (each also printed). Fields are safe to read from the test thread while it runs.
 */
final class BackgroundWriter implements AutoCloseable
{
    /** Acknowledged records by offset. */
    final Map<Long, String> acked = new ConcurrentHashMap<>();
    /** Sends that threw. */
    final AtomicLong failed = new AtomicLong();
    private final AtomicBoolean producing = new AtomicBoolean(true);
    private final Producer producer;
    private final Thread thread;
    private boolean closed;

    BackgroundWriter(final TidemarkClient client, final String topic, final int partition, final String threadName)
    {
        producer = new Producer(client, new ProducerContext().acks(Acks.ALL).enableIdempotence(true)
            .requestTimeoutMs(2_000).deliveryTimeoutMs(60_000));
        thread = new Thread(() ->
        {
            final ProducerRecord record = new ProducerRecord().topic(topic).partition(partition);
            for (int i = 0; producing.get(); i++)
            {
                final String value = "r-" + i;
                try
                {
                    acked.put(producer.send(record.value(value)), value);
                    Thread.sleep(2);
                }
                catch (final InterruptedException ex)
                {
                    return;
                }
                catch (final RuntimeException ex)
                {
                    failed.incrementAndGet();
                    System.out.println("send failed: " + ex);
                }
            }
        }, threadName);
        thread.start();
    }

    /** Same as {@link #stop()}. */
    @Override
    public void close()
    {
        stop();
    }

    /** Stop sending, wait for the send in progress, close the producer. Idempotent; test thread only. */
    void stop()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        producing.set(false);
        try
        {
            thread.join(60_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        producer.close();
    }
}
