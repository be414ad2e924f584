package io.tidemark.store;

import org.agrona.concurrent.IdleStrategy;

/**
 * Follows a log as it grows: each {@link #poll} delivers the records published since the last one and, when
 * there are none, idles with the given strategy (from {@code BusySpinIdleStrategy} for the lowest latency to
 * {@code SleepingMillisIdleStrategy} to spare the CPU). A record is visible to the tailer as soon as its batch is
 * published by the writer.
 * <p>
 * One tailer belongs to one thread; it owns its reader and closes it.
 */
public final class LogTailer implements AutoCloseable
{
    private final LogReader reader;
    private final IdleStrategy idleStrategy;

    /**
     * @param reader       the reader to advance, positioned where tailing starts.
     * @param idleStrategy how to wait when nothing is new.
     */
    public LogTailer(final LogReader reader, final IdleStrategy idleStrategy)
    {
        this.reader = reader;
        this.idleStrategy = idleStrategy;
    }

    /**
     * Deliver new records, or idle once if there are none.
     *
     * @param handler    receives each record.
     * @param maxRecords most records per call.
     * @return the number of records delivered.
     */
    public int poll(final RecordHandler handler, final int maxRecords)
    {
        final int delivered = reader.poll(handler, Long.MAX_VALUE, maxRecords);
        idleStrategy.idle(delivered);
        return delivered;
    }

    /** @return the underlying reader (to seek it). */
    public LogReader reader()
    {
        return reader;
    }

    @Override
    public void close()
    {
        reader.close();
    }
}
