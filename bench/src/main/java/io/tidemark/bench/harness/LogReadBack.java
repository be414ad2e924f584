package io.tidemark.bench.harness;

import io.tidemark.replication.PartitionReader;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.RecordView;
import org.agrona.DirectBuffer;

/**
 * The read-back at the end of a harness run: once the cluster is quiet, every partition's log is read from its
 * start to its high watermark, and every acknowledged record must be there at the offset its acknowledgement gave,
 * with its producer's id and sequence ({@link AckChecker}); in a clean run the logs hold exactly the records
 * queued. Not thread-safe: one check per instance.
 */
final class LogReadBack
{
    /** How long the logs may take to quiesce (the leaders to append, the high watermarks to catch up). */
    private static final long QUIESCE_TIMEOUT_MS = 60_000;

    long verified;
    long recordsInLogs;
    String problem;

    private LogReadBack()
    {
    }

    void fail(final String text)
    {
        if (null == problem)
        {
            problem = text;
        }
    }

    /**
     * @param cluster     the cluster, still running.
     * @param tps         the scenario's partitions.
     * @param acks        each partition's acknowledgements, by partition index.
     * @param queuedTotal records the producers queued.
     * @param clean       nothing failed and no host was killed: every queued record must then be in the logs.
     * @return the outcome.
     */
    static LogReadBack check(final ReplicationCluster cluster, final TopicPartition[] tps, final AckLog[] acks,
        final long queuedTotal, final boolean clean)
    {
        final LogReadBack v = new LogReadBack();
        if (clean && !cluster.await(() -> sumLogEnd(cluster, tps) >= queuedTotal, QUIESCE_TIMEOUT_MS))
        {
            v.problem = "the leaders appended " + sumLogEnd(cluster, tps) + " of " + queuedTotal + " queued records";
        }
        for (int p = 0; p < tps.length; p++)
        {
            try (PartitionReader reader = cluster.openReader(tps[p]))
            {
                if (!cluster.await(() -> reader.highWatermark() >= 0 &&
                    reader.highWatermark() >= reader.logEndOffset(), QUIESCE_TIMEOUT_MS))
                {
                    v.fail("partition " + p + ": high watermark " + reader.highWatermark() +
                        " did not reach the log end " + reader.logEndOffset());
                    continue;
                }
                final long end = reader.highWatermark();
                final AckChecker checker = new AckChecker(acks[p]);
                reader.seek(Math.max(0, reader.logStartOffset()));
                final io.tidemark.store.RecordHandler handler = (RecordView record) ->
                {
                    final DirectBuffer buffer = record.buffer();
                    final int at = record.valueOffset();
                    final boolean ours = record.valueLength() >= Scenario.MIN_MESSAGE_SIZE;
                    checker.onRecord(record.offset(), ours ? buffer.getLong(at) : -1,
                        ours ? buffer.getInt(at + 8) : -1);
                };
                int idle = 0;
                while (reader.position() < end && idle < 1_000)
                {
                    idle = reader.poll(handler, 10_000) == 0 ? idle + 1 : 0;
                }
                v.recordsInLogs += checker.recordsRead();
                v.verified += checker.found();
                if (!checker.ok())
                {
                    v.fail("partition " + p + ": " + checker.problem());
                }
            }
        }
        if (null == v.problem && clean && v.recordsInLogs != queuedTotal)
        {
            v.fail("the logs hold " + v.recordsInLogs + " records, " + queuedTotal + " were queued");
        }
        return v;
    }

    /** @return the partitions' log end offsets added up. */
    static long sumLogEnd(final ReplicationCluster cluster, final TopicPartition[] tps)
    {
        long total = 0;
        for (final TopicPartition tp : tps)
        {
            try (PartitionReader reader = cluster.openReader(tp))
            {
                total += Math.max(0, reader.logEndOffset());
            }
        }
        return total;
    }
}
