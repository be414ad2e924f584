package io.tidemark.replication;

import io.tidemark.store.Log;
import io.tidemark.store.LogReader;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.CheckpointDescriptor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A replica's leader-epoch cache: for each leader epoch present in its log, the offset at which the epoch starts.
 * Epochs and start offsets strictly increase. Kept in {@code leader-epoch.checkpoint} in the log directory,
 * rewritten atomically on every change, truncated with the log, and rebuilt from the batches' epochs when the
 * file is missing or damaged.
 * <pre>
 *  leader-epoch.checkpoint (framing: CheckpointFile, magic 'TMEP')
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                      Magic, Version (8 bytes)                ...  0
 *  +---------------------------------------------------------------+
 *  |                         Entry count                           |  8
 *  +---------------------------------------------------------------+
 *  |            Epoch (int32) | Start offset (int64), repeated    ... 12
 *  +---------------------------------------------------------------+
 *  |                            CRC32C                             |
 *  +---------------------------------------------------------------+
 * </pre>
 * Answers the follower's reconciliation question (KIP-101/279): "what is the end offset of epoch E?" with the
 * largest epoch at or below E that this replica knows, and where it ends.
 * <p>
 * Thread-safe (synchronized): the fetcher thread writes it while following, the host agent while leading.
 */
final class LeaderEpochCache
{
    /** No epoch: the replica knows no epoch at or below the one asked. */
    static final int UNDEFINED_EPOCH = -1;
    /** No offset. */
    static final long UNDEFINED_OFFSET = -1;
    static final String FILE_NAME = "leader-epoch.checkpoint";
    static final int MAGIC = 0x50454D54;
    private static final int ENTRY_LENGTH = 12;

    /** An epoch and where it ends, as answered to a follower. */
    record EpochEndOffset(int epoch, long endOffset)
    {
    }

    private final Path file;
    private final FileSync sync;
    private int[] epochs = new int[8];
    private long[] starts = new long[8];
    private int size;
    private volatile int latestEpoch = UNDEFINED_EPOCH;
    private StorageException persistFailure;

    private LeaderEpochCache(final Path file, final FileSync sync)
    {
        this.file = file;
        this.sync = sync;
    }

    /**
     * Load the cache of the replica whose log is {@code log}: from its checkpoint, or rebuilt from the log when
     * the checkpoint is missing or damaged; then cut to the log's range. After an unclean shutdown the checkpoint is
     * also checked against the log ({@link #verify}): the cache may be ahead of the log (an epoch recorded before its
     * first batch was appended: cut here), never behind it.
     */
    static LeaderEpochCache load(final Log log)
    {
        final LeaderEpochCache cache = new LeaderEpochCache(log.directory().resolve(FILE_NAME),
            log.context().fileSync());
        boolean loaded = false;
        try
        {
            loaded = cache.read();
        }
        catch (final IOException ex)
        {
            loaded = false;
        }
        if (!loaded)
        {
            cache.rebuild(log);
        }
        cache.truncateFromEnd(log.logEndOffset());
        cache.truncateFromStart(log.logStartOffset());
        if (loaded && !log.recoveryReport().cleanShutdown())
        {
            cache.verify(log);
        }
        return cache;
    }

    /**
     * Check a loaded checkpoint against the log after an unclean shutdown: every entry must start at a batch of its
     * epoch (otherwise the whole cache is rebuilt from the log), and the batches from the recovery point on (the
     * part recovery re-validated, as Kafka re-assigns the epochs of the batches it recovers) may not carry an epoch
     * the cache lacks: one that does starts its entry; one older than its covering entry means the checkpoint does
     * not describe this log, and the cache is rebuilt.
     */
    private void verify(final Log log)
    {
        final long end = log.logEndOffset();
        final int[] seenEpoch = new int[1];
        final long[] seenBase = new long[1];
        final boolean[] consistent = { true };
        final int[] added = new int[1];
        try (LogReader reader = log.openReader())
        {
            for (final long[] entry : entries())
            {
                if (entry[1] < log.logStartOffset() || entry[1] >= end)
                {
                    continue;
                }
                reader.seek(entry[1]);
                seenBase[0] = -1;
                reader.pollBatches((batch) ->
                {
                    seenEpoch[0] = batch.leaderEpoch();
                    seenBase[0] = batch.baseOffset();
                }, Long.MAX_VALUE, 1);
                if (seenBase[0] != entry[1] || seenEpoch[0] != entry[0])
                {
                    rebuild(log);
                    return;
                }
            }
            reader.seek(Math.max(log.logStartOffset(), Math.min(log.recoveryReport().recoveryPoint(), end)));
            while (consistent[0] && reader.pollBatches((batch) ->
            {
                final int epoch = batch.leaderEpoch();
                if (epoch < 0 || !consistent[0])
                {
                    return;
                }
                if (size == 0 || epoch > epochs[size - 1])
                {
                    add(epoch, batch.baseOffset());
                    added[0]++;
                }
                else if (epoch < epochForOffset(batch.baseOffset()))
                {
                    consistent[0] = false;
                }
            }, Long.MAX_VALUE, 1 << 20) > 0)
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
            // a damaged batch: the epochs after it are re-learnt as batches arrive
        }
        if (!consistent[0])
        {
            rebuild(log);
            return;
        }
        if (added[0] > 0)
        {
            latestEpoch = epochs[size - 1];
            persist();
        }
    }

    private boolean read() throws IOException
    {
        if (!Files.exists(file))
        {
            return false;
        }
        final long length = Files.size(file);
        if (length < CheckpointDescriptor.FIELDS_OFFSET + 8 || length > 64L * 1024 * 1024)
        {
            return false;
        }
        final ByteBuffer in = ByteBuffer.allocate((int)length).order(ByteOrder.LITTLE_ENDIAN);
        if (CheckpointFile.read(file, MAGIC, in) != CheckpointFile.Status.OK)
        {
            return false;
        }
        final int count = in.getInt(CheckpointDescriptor.FIELDS_OFFSET);
        if (count < 0 || (long)CheckpointDescriptor.FIELDS_OFFSET + 4 + (long)count * ENTRY_LENGTH + 4 != length)
        {
            return false;
        }
        size = 0;
        for (int i = 0; i < count; i++)
        {
            final int at = CheckpointDescriptor.FIELDS_OFFSET + 4 + i * ENTRY_LENGTH;
            final int epoch = in.getInt(at);
            final long start = in.getLong(at + 4);
            if (size > 0 && (epoch <= epochs[size - 1] || start <= starts[size - 1]))
            {
                size = 0;
                return false;
            }
            add(epoch, start);
        }
        latestEpoch = size == 0 ? UNDEFINED_EPOCH : epochs[size - 1];
        return true;
    }

    private void rebuild(final Log log)
    {
        size = 0;
        try (LogReader reader = log.openReader())
        {
            while (reader.pollBatches((batch) ->
            {
                final int epoch = batch.leaderEpoch();
                if (epoch >= 0 && (size == 0 || epoch > epochs[size - 1]))
                {
                    add(epoch, batch.baseOffset());
                }
            }, Long.MAX_VALUE, 1 << 20) > 0)
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
            // a damaged batch below the recovery point: epochs after it are re-learnt as batches arrive
        }
        latestEpoch = size == 0 ? UNDEFINED_EPOCH : epochs[size - 1];
        persist();
    }

    private void add(final int epoch, final long start)
    {
        if (size == epochs.length)
        {
            epochs = Arrays.copyOf(epochs, size * 2);
            starts = Arrays.copyOf(starts, size * 2);
        }
        epochs[size] = epoch;
        starts[size] = start;
        size++;
    }

    /** @return the latest epoch, or {@link #UNDEFINED_EPOCH}. Lock-free. */
    int latestEpoch()
    {
        return latestEpoch;
    }

    /**
     * Record that {@code epoch} starts at {@code startOffset}. A stale (smaller) epoch is ignored; entries starting
     * at or after {@code startOffset} are replaced (an epoch that produced no records).
     */
    synchronized void assign(final int epoch, final long startOffset)
    {
        if (size > 0 && epoch <= epochs[size - 1])
        {
            return;
        }
        while (size > 0 && starts[size - 1] >= startOffset)
        {
            size--;
        }
        add(epoch, startOffset);
        latestEpoch = epoch;
        persist();
    }

    /**
     * @param requestedEpoch the epoch asked about.
     * @param logEndOffset   this replica's log end offset.
     * @return the largest known epoch at or below the one asked, and its end offset (the start of the next epoch,
     *         or the log end for the latest); {@code (-1, -1)} when no such epoch is known.
     */
    synchronized EpochEndOffset endOffsetFor(final int requestedEpoch, final long logEndOffset)
    {
        int index = -1;
        for (int i = size - 1; i >= 0; i--)
        {
            if (epochs[i] <= requestedEpoch)
            {
                index = i;
                break;
            }
        }
        if (index < 0)
        {
            return new EpochEndOffset(UNDEFINED_EPOCH, UNDEFINED_OFFSET);
        }
        return new EpochEndOffset(epochs[index], index == size - 1 ? logEndOffset : starts[index + 1]);
    }

    /** @return whether {@code epoch} has an entry. */
    synchronized boolean contains(final int epoch)
    {
        for (int i = 0; i < size; i++)
        {
            if (epochs[i] == epoch)
            {
                return true;
            }
        }
        return false;
    }

    /** @return the largest epoch below {@code epoch}, or {@link #UNDEFINED_EPOCH}. */
    synchronized int previousEpoch(final int epoch)
    {
        for (int i = size - 1; i >= 0; i--)
        {
            if (epochs[i] < epoch)
            {
                return epochs[i];
            }
        }
        return UNDEFINED_EPOCH;
    }

    /** @return the epoch of the entry covering {@code offset}, or {@link #UNDEFINED_EPOCH}. */
    synchronized int epochForOffset(final long offset)
    {
        for (int i = size - 1; i >= 0; i--)
        {
            if (starts[i] <= offset)
            {
                return epochs[i];
            }
        }
        return UNDEFINED_EPOCH;
    }

    /** The log was truncated to {@code endOffset}: forget epochs starting at or after it. */
    synchronized void truncateFromEnd(final long endOffset)
    {
        final int before = size;
        while (size > 0 && starts[size - 1] >= endOffset)
        {
            size--;
        }
        if (size != before)
        {
            latestEpoch = size == 0 ? UNDEFINED_EPOCH : epochs[size - 1];
            persist();
        }
    }

    /** The log now starts at {@code startOffset}: drop epochs wholly before it, clamp the one covering it. */
    synchronized void truncateFromStart(final long startOffset)
    {
        int firstKept = 0;
        while (firstKept + 1 < size && starts[firstKept + 1] <= startOffset)
        {
            firstKept++;
        }
        if (firstKept == 0 && (size == 0 || starts[0] >= startOffset))
        {
            return;
        }
        System.arraycopy(epochs, firstKept, epochs, 0, size - firstKept);
        System.arraycopy(starts, firstKept, starts, 0, size - firstKept);
        size -= firstKept;
        if (starts[0] < startOffset)
        {
            starts[0] = startOffset;
        }
        persist();
    }

    /** Forget every epoch (the log was emptied and restarted). */
    synchronized void clear()
    {
        size = 0;
        latestEpoch = UNDEFINED_EPOCH;
        persist();
    }

    /** @return the entries as (epoch, start offset) pairs, oldest first. */
    synchronized List<long[]> entries()
    {
        final List<long[]> out = new ArrayList<>(size);
        for (int i = 0; i < size; i++)
        {
            out.add(new long[]{ epochs[i], starts[i] });
        }
        return out;
    }

    /**
     * Write the checkpoint. A failure leaves the entries in memory ahead of the file: the cache refuses every later
     * change (it would write a file that skips this one) and the caller stops the host (fail-stop), so that no batch
     * of an epoch the file lacks is ever appended.
     *
     * @throws StorageException IO_ERROR when the write fails, now or at an earlier change.
     */
    private void persist()
    {
        if (null != persistFailure)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "an earlier write of " + file + " failed",
                persistFailure);
        }
        final ByteBuffer out = CheckpointFile.allocate(MAGIC, 4 + size * ENTRY_LENGTH);
        out.putInt(CheckpointDescriptor.FIELDS_OFFSET, size);
        for (int i = 0; i < size; i++)
        {
            final int at = CheckpointDescriptor.FIELDS_OFFSET + 4 + i * ENTRY_LENGTH;
            out.putInt(at, epochs[i]);
            out.putLong(at + 4, starts[i]);
        }
        try
        {
            CheckpointFile.write(file, out, sync);
        }
        catch (final IOException | RuntimeException ex)
        {
            persistFailure = new StorageException(StorageErrorCode.IO_ERROR, "cannot write " + file + ": " + ex, ex);
            throw persistFailure;
        }
    }

    @Override
    public synchronized String toString()
    {
        final StringBuilder sb = new StringBuilder("LeaderEpochCache{");
        for (int i = 0; i < size; i++)
        {
            sb.append(i == 0 ? "" : ", ").append(epochs[i]).append('@').append(starts[i]);
        }
        return sb.append('}').toString();
    }
}
