package io.tidemark.cli;

import io.tidemark.client.ClusterConnection;
import io.tidemark.client.Producer;
import io.tidemark.client.ProducerContext;
import io.tidemark.client.ProducerException;
import io.tidemark.client.ProducerRecord;
import io.tidemark.replication.TopicPartition;

import java.io.BufferedReader;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Sends lines as records (split at an optional key separator, as {@link Lines#split}) through a {@link Producer}
 * over any {@link ClusterConnection}, waits for every acknowledgement, and sums up the offsets per partition in
 * the words of {@code tidemark produce --cluster}. Used by one command thread; the callbacks come from the
 * producer's thread.
 */
final class LineSender
{
    private final Map<Integer, long[]> offsets = new TreeMap<>();
    private long sent;
    private long acknowledged;
    private long failed;
    private ProducerException firstError;

    /**
     * Send every line of {@code in} and wait for the acknowledgements.
     *
     * @param partition the partition of every record, or null for the producer's partitioner.
     */
    void send(final ClusterConnection connection, final ProducerContext context, final String topic,
        final Integer partition, final String keySeparator, final BufferedReader in) throws IOException
    {
        try (Producer producer = new Producer(connection, context))
        {
            final ProducerRecord record = new ProducerRecord();
            String line;
            while (null != (line = in.readLine()))
            {
                final String[] keyValue = Lines.split(line, keySeparator);
                record.clear().topic(topic).value(keyValue[1]);
                if (null != keyValue[0])
                {
                    record.key(keyValue[0]);
                }
                if (null != partition)
                {
                    record.partition(partition);
                }
                producer.sendAsync(record, this::onComplete);
                sent++;
            }
            producer.flush();
        }
    }

    private synchronized void onComplete(final TopicPartition tp, final long offset, final ProducerException error)
    {
        if (null != error)
        {
            failed++;
            firstError = null == firstError ? error : firstError;
            return;
        }
        acknowledged++;
        final long[] range = offsets.computeIfAbsent(tp.partition(), (p) -> new long[] {-1, -1});
        if (offset >= 0)
        {
            range[0] = range[0] < 0 ? offset : Math.min(range[0], offset);
            range[1] = Math.max(range[1], offset);
        }
    }

    /**
     * @param modes how it was sent, e.g. {@code acks=all}.
     * @return {@code produced 3 of 3 record(s) to topic orders (acks=all), partition 0 offsets 0..2}.
     */
    synchronized String summary(final String topic, final String modes)
    {
        final StringBuilder summary = new StringBuilder("produced " + acknowledged + " of " + sent +
            " record(s) to topic " + topic + " (" + modes + ")");
        for (final Map.Entry<Integer, long[]> e : offsets.entrySet())
        {
            summary.append(", partition ").append(e.getKey()).append(e.getValue()[0] < 0 ? " (unacknowledged)" :
                " offsets " + e.getValue()[0] + ".." + e.getValue()[1]);
        }
        return summary.toString();
    }

    /** @throws CliException UNAVAILABLE when a record failed, with the first error. */
    synchronized void checkNoneFailed()
    {
        if (failed > 0)
        {
            throw new CliException(ExitCodes.UNAVAILABLE, failed + " record(s) failed; the first: " +
                firstError.getMessage() + (firstError.outcomeUnknown() ?
                " (outcome unknown: it may be in the log)" : ""), firstError);
        }
    }
}
