package io.tidemark.replication;

import io.tidemark.store.Log;
import io.tidemark.store.LogReader;
import io.tidemark.store.RecordBatch;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.DirectBuffer;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * Idempotent-producer state of one replica: for each producer id, its epoch and its last
 * {@value #BATCHES_KEPT} batches (sequence range and offsets). The leader checks every idempotent produce
 * request against it: a retry of a kept batch is answered with the original offsets and nothing is appended; a
 * sequence gap is rejected; an older producer epoch is fenced; and the first batch of a producer (or of a new epoch)
 * must start at sequence 0.
 * <p>
 * That last rule is stricter than Kafka's broker, which takes any sequence from a producer it has no state for (so
 * that a producer whose batches retention removed can go on). A producer pipelines up to five batches: when its
 * first one is refused without being appended (too small an ISR, a full leader queue, a leader move) and the next one
 * arrives once the partition can take it, a leader taking any sequence appends the second before the first, and the
 * first can then never follow it (Kafka's client retries it as out of order until its delivery timeout). Refusing
 * the second as out of order instead makes the client send the first again before it. A producer whose state was
 * truly lost gets OUT_OF_ORDER_SEQUENCE for its next batch, which both Kafka's client and Tidemark's answer with a
 * new epoch starting at sequence 0. Sequences wrap from {@link Integer#MAX_VALUE} to 0, as Kafka's do.
 * <p>
 * The state is derived from the log only, never kept in memory alone: followers update it from every batch they
 * append, so a new leader has it; it is rebuilt by scanning the log when the replica opens (after recovery) and
 * after a truncation.
 * <p>
 * Not thread-safe: used by the log's current writer (host agent as leader, fetcher as follower), which the role
 * hand-over serializes.
 */
final class ProducerStateManager
{
    /** Batches remembered per producer. */
    static final int BATCHES_KEPT = 5;
    /** Result of {@link #check}: append the batch. */
    static final long APPEND = -1;
    /** Result of {@link #check}: a sequence gap. */
    static final long OUT_OF_SEQUENCE = -2;
    /** Result of {@link #check}: an older producer epoch. */
    static final long FENCED_EPOCH = -3;

    private final Long2ObjectHashMap<Entry> producers = new Long2ObjectHashMap<>();
    private final RecordBatch batch = new RecordBatch();

    /** One producer's state. */
    private static final class Entry
    {
        short epoch;
        final int[] firstSequence = new int[BATCHES_KEPT];
        final int[] lastSequence = new int[BATCHES_KEPT];
        final long[] firstOffset = new long[BATCHES_KEPT];
        int count;
        int next;

        void reset(final short newEpoch)
        {
            epoch = newEpoch;
            count = 0;
            next = 0;
        }

        void add(final int first, final int last, final long offset)
        {
            firstSequence[next] = first;
            lastSequence[next] = last;
            firstOffset[next] = offset;
            next = (next + 1) % BATCHES_KEPT;
            count = Math.min(count + 1, BATCHES_KEPT);
        }

        int lastSequence()
        {
            return lastSequence[(next + BATCHES_KEPT - 1) % BATCHES_KEPT];
        }
    }

    /**
     * Check an idempotent batch before it is appended.
     *
     * @return {@link #APPEND}; or, for a retry of a kept batch, its original base offset (append nothing); or
     *         {@link #OUT_OF_SEQUENCE} / {@link #FENCED_EPOCH}.
     */
    long check(final long producerId, final short epoch, final int baseSequence, final int recordCount)
    {
        if (producerId < 0)
        {
            return APPEND;
        }
        final Entry entry = producers.get(producerId);
        if (null == entry || entry.count == 0)
        {
            // a producer this replica has no state for (new, or all its batches retained away): its first batch
            return baseSequence == 0 ? APPEND : OUT_OF_SEQUENCE;
        }
        if (epoch < entry.epoch)
        {
            return FENCED_EPOCH;
        }
        if (epoch > entry.epoch)
        {
            return baseSequence == 0 ? APPEND : OUT_OF_SEQUENCE;
        }
        final int lastSequence = lastSequence(baseSequence, recordCount);
        for (int i = 0; i < entry.count; i++)
        {
            if (entry.firstSequence[i] == baseSequence && entry.lastSequence[i] == lastSequence)
            {
                return entry.firstOffset[i];
            }
        }
        return inSequence(entry.lastSequence(), baseSequence) ? APPEND : OUT_OF_SEQUENCE;
    }

    /** @return the sequence of the last record of a batch, wrapping past {@link Integer#MAX_VALUE} to 0. */
    static int lastSequence(final int baseSequence, final int recordCount)
    {
        final int increment = recordCount - 1;
        return baseSequence > Integer.MAX_VALUE - increment ? increment - (Integer.MAX_VALUE - baseSequence) - 1 :
            baseSequence + increment;
    }

    /** @return whether {@code next} follows {@code last}, wrapping past {@link Integer#MAX_VALUE} to 0. */
    static boolean inSequence(final int last, final int next)
    {
        return next == last + 1L || (next == 0 && last == Integer.MAX_VALUE);
    }

    /** Record a batch now in the log. */
    void onAppend(final long producerId, final short epoch, final int baseSequence, final int recordCount,
        final long baseOffset)
    {
        if (producerId < 0 || baseSequence < 0)
        {
            return;
        }
        Entry entry = producers.get(producerId);
        if (null == entry)
        {
            entry = new Entry();
            entry.epoch = epoch;
            producers.put(producerId, entry);
        }
        if (epoch != entry.epoch)
        {
            entry.reset(epoch);
        }
        entry.add(baseSequence, lastSequence(baseSequence, recordCount), baseOffset);
    }

    /** Record every batch in a run of raw batch frames (a follower's fetched bytes). */
    void onAppendRaw(final DirectBuffer buffer, final int offset, final int length)
    {
        final int end = offset + length;
        for (int at = offset; at + RecordBatchDescriptor.HEADER_LENGTH <= end; )
        {
            batch.wrap(buffer, at);
            onAppend(batch.producerId(), batch.producerEpoch(), batch.baseSequence(), batch.recordCount(),
                batch.baseOffset());
            at += batch.frameLength();
        }
    }

    /** Forget everything and rebuild from the log (after recovery or a truncation). */
    void rebuild(final Log log)
    {
        producers.clear();
        try (LogReader reader = log.openReader())
        {
            while (reader.pollBatches((b) -> onAppend(b.producerId(), b.producerEpoch(), b.baseSequence(),
                b.recordCount(), b.baseOffset()), Long.MAX_VALUE, 1 << 20) > 0)
            {
                // scan on
            }
        }
        catch (final StorageException ex)
        {
            if (ex.code() != StorageErrorCode.CORRUPT_BATCH)
            {
                throw ex;
            }
        }
    }

    /** @return producers known. */
    int size()
    {
        return producers.size();
    }
}
