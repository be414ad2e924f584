package io.tidemark.replication;

import io.tidemark.store.LogReader;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;

import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * Log readers of the partitions a host leads, kept open between a server's reads of them (the remote client's reads,
 * Kafka fetches) and tied to the leader epoch they were opened under: a reader of an earlier epoch, or of a partition
 * no longer led, is closed and opened again, so that no read goes on across a leader change and the truncation it
 * may bring. Not thread-safe: owned by the server's one thread.
 */
public final class LeaderReaders implements AutoCloseable
{
    private static final int NO_EPOCH = -2;

    private final Int2ObjectHashMap<LogReader> readers = new Int2ObjectHashMap<>();
    private final Int2IntHashMap epochs = new Int2IntHashMap(NO_EPOCH);
    private final IntFunction<LogReader> opener;
    private final IntPredicate leading;

    /**
     * @param opener  opens a reader of a led partition, or gives null when the partition is not led here.
     * @param leading whether a partition is still led here (checked before a cached reader is used again).
     */
    public LeaderReaders(final IntFunction<LogReader> opener, final IntPredicate leading)
    {
        this.opener = opener;
        this.leading = leading;
    }

    /**
     * @return the reader of {@code partitionId} for leader epoch {@code epoch}: the one kept from an earlier read, or
     *         a new one (closing one of another epoch); null when the partition is not led here.
     */
    public LogReader reader(final int partitionId, final int epoch)
    {
        LogReader reader = readers.get(partitionId);
        if (null != reader && (epochs.get(partitionId) != epoch || !leading.test(partitionId)))
        {
            close(partitionId);
            reader = null;
        }
        if (null == reader)
        {
            reader = opener.apply(partitionId);
            if (null != reader)
            {
                readers.put(partitionId, reader);
                epochs.put(partitionId, epoch);
            }
        }
        return reader;
    }

    /** Close the reader of {@code partitionId}, if one is kept (a read failed: the replica closed or moved). */
    public void close(final int partitionId)
    {
        final LogReader reader = readers.remove(partitionId);
        epochs.remove(partitionId);
        if (null != reader)
        {
            try
            {
                reader.close();
            }
            catch (final RuntimeException ignore)
            {
                // the log under it is closed already
            }
        }
    }

    /** Close every reader kept. */
    @Override
    public void close()
    {
        for (final int partitionId : readers.keySet().stream().mapToInt(Integer::intValue).toArray())
        {
            close(partitionId);
        }
    }
}
