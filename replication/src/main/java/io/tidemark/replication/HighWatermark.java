package io.tidemark.replication;

import io.tidemark.store.file.CheckpointFile;
import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.CheckpointDescriptor;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Path;

/**
 * A replica's high watermark: the first offset that is not committed. Advanced only upward, atomically
 * ({@link #advanceTo} is a lock-free CAS max, so concurrent advancers can never move it back), and read with
 * acquire semantics by consumers on any thread. Checkpointed to {@code replication.checkpoint} in the log
 * directory; on restart {@code HW = min(checkpointed HW, LEO)}.
 * <pre>
 *  replication.checkpoint (framing: CheckpointFile, magic 'TMHW')
 *  +---------------------------------------------------------------+
 *  |                      Magic, Version (8 bytes)                ...  0
 *  +---------------------------------------------------------------+
 *  |                        High watermark                         |  8
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                            CRC32C                             | 16
 *  +---------------------------------------------------------------+
 * </pre>
 */
final class HighWatermark
{
    static final String FILE_NAME = "replication.checkpoint";
    static final int MAGIC = 0x57484D54;
    private static final VarHandle VALUE;

    static
    {
        try
        {
            VALUE = MethodHandles.lookup().findVarHandle(HighWatermark.class, "value", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final Path file;
    private final FileSync sync;
    @SuppressWarnings("unused") // accessed through VALUE
    private volatile long value;
    private long checkpointed = -1; // guarded by this
    private boolean closed; // guarded by this

    HighWatermark(final Path logDir, final long initial)
    {
        this(logDir, initial, FileSync.SYSTEM);
    }

    HighWatermark(final Path logDir, final long initial, final FileSync sync)
    {
        this.file = logDir.resolve(FILE_NAME);
        this.sync = sync;
        this.value = initial;
    }

    /**
     * @param logDir       the replica's log directory.
     * @param logEndOffset the log end offset after recovery.
     * @return the checkpointed value capped at the log end, or 0 when there is no valid checkpoint.
     */
    static HighWatermark load(final Path logDir, final long logEndOffset)
    {
        return load(logDir, logEndOffset, FileSync.SYSTEM);
    }

    /**
     * @param logDir       the replica's log directory.
     * @param logEndOffset the log end offset after recovery.
     * @param sync         how the checkpoint reaches the disk (the log's).
     * @return the checkpointed value capped at the log end, or 0 when there is no valid checkpoint.
     */
    static HighWatermark load(final Path logDir, final long logEndOffset, final FileSync sync)
    {
        long hw = 0;
        try
        {
            final ByteBuffer in = ByteBuffer.allocate(CheckpointDescriptor.FIELDS_OFFSET + 8 + 4)
                .order(ByteOrder.LITTLE_ENDIAN);
            if (CheckpointFile.read(logDir.resolve(FILE_NAME), MAGIC, in) == CheckpointFile.Status.OK)
            {
                hw = Math.max(0, in.getLong(CheckpointDescriptor.FIELDS_OFFSET));
            }
        }
        catch (final IOException ignore)
        {
            hw = 0;
        }
        return new HighWatermark(logDir, Math.min(hw, logEndOffset), sync);
    }

    /** @return the high watermark (acquire). */
    long get()
    {
        return (long)VALUE.getAcquire(this);
    }

    /**
     * Raise to {@code candidate} if it is higher (lock-free CAS max).
     *
     * @return whether it moved.
     */
    boolean advanceTo(final long candidate)
    {
        long current = get();
        while (candidate > current)
        {
            if (VALUE.compareAndSet(this, current, candidate))
            {
                return true;
            }
            current = get();
        }
        return false;
    }

    /** Set outright: only when the log is emptied and restarted at {@code offset}. */
    void reset(final long offset)
    {
        VALUE.setRelease(this, offset);
    }

    /**
     * Write the checkpoint if the value changed since the last one. Called by whichever thread runs the host's log
     * housekeeping (the duty-cycle thread, or a housekeeping thread that parks: the write forces a file and its
     * directory to disk, which can wait for the journal behind every dirty page of the file system, so it must never
     * run on the thread that serves produce and fetch) and by the replica's clean close; the lock keeps the two from
     * writing the temporary file at once, and after {@link #close} or {@link #halt} no write happens (the directory
     * may be going away).
     */
    synchronized void checkpoint() throws IOException
    {
        if (closed)
        {
            return;
        }
        final long current = get();
        if (current != checkpointed)
        {
            final ByteBuffer out = CheckpointFile.allocate(MAGIC, 8);
            out.putLong(CheckpointDescriptor.FIELDS_OFFSET, current);
            CheckpointFile.write(file, out, sync);
            checkpointed = current;
        }
    }

    /** A clean close: write a last checkpoint; none is written after it (waits for a write in progress). */
    synchronized void close() throws IOException
    {
        try
        {
            checkpoint();
        }
        finally
        {
            closed = true;
        }
    }

    /** As a killed process: no checkpoint is written from now on (waits for a write in progress). */
    synchronized void halt()
    {
        closed = true;
    }

    @Override
    public String toString()
    {
        return Long.toString(get());
    }
}
