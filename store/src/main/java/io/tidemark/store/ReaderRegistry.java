package io.tidemark.store;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The readers of a log, so that a segment leaving the log (retention, truncation) is unmapped only once no reader
 * is inside it.
 * <p>
 * <b>Design note.</b> Instead of reference counts, a reader publishes the segment it is reading (a volatile
 * "pin") for the duration of a poll and then checks that the segment is not retired; the log marks a segment
 * retired and then looks for pins. Both sides write one volatile then read the other's, so at least one of them
 * sees the other: either the reader backs off, or the log defers the unmap to a later pass. A reader that is never
 * closed costs a slot in this array but pins nothing between polls, so it cannot leak a mapping.
 * <p>
 * When the log closes, the segments a reader is still inside are not unmapped: they are kept here
 * ({@link #closeWhenUnpinned}) and unmapped by the readers themselves as they leave their poll
 * ({@link #closeLeftUnpinned}), so that closing the log never pulls a mapping from under a poll handler.
 * <p>
 * Thread-safe: registration and the closing hand-over are synchronized and rare; {@link #isPinned} is lock-free.
 */
final class ReaderRegistry
{
    private volatile LogReader[] readers = new LogReader[0];
    private final List<Segment> leftToReaders = new ArrayList<>();
    private volatile boolean anyLeftToReaders;

    synchronized void add(final LogReader reader)
    {
        final LogReader[] current = readers;
        final LogReader[] next = Arrays.copyOf(current, current.length + 1);
        next[current.length] = reader;
        readers = next;
    }

    synchronized void remove(final LogReader reader)
    {
        final LogReader[] current = readers;
        for (int i = 0; i < current.length; i++)
        {
            if (current[i] == reader)
            {
                final LogReader[] next = new LogReader[current.length - 1];
                System.arraycopy(current, 0, next, 0, i);
                System.arraycopy(current, i + 1, next, i, current.length - i - 1);
                readers = next;
                return;
            }
        }
    }

    boolean isPinned(final Segment segment)
    {
        for (final LogReader reader : readers)
        {
            if (reader.pinned() == segment)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @param self the thread asking (a poll handler closing its own log pins its segment for as long as it runs).
     * @return whether a reader on another thread pins a segment.
     */
    boolean anyPinnedByAnotherThread(final Thread self)
    {
        for (final LogReader reader : readers)
        {
            if (null != reader.pinned() && reader.pollingThread() != self)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Close (unmap) the segments no reader pins; keep the others for the readers to close as they leave. The caller
     * has marked every one of them retired, so no reader pins one anew.
     *
     * @return the number of segments left to the readers.
     */
    synchronized int closeWhenUnpinned(final List<Segment> segments)
    {
        for (final Segment segment : segments)
        {
            if (isPinned(segment))
            {
                leftToReaders.add(segment);
            }
            else
            {
                segment.close();
            }
        }
        anyLeftToReaders = !leftToReaders.isEmpty();
        return leftToReaders.size();
    }

    /** A reader left its poll on a closed log: close what is no longer pinned. */
    void closeLeftUnpinned()
    {
        if (!anyLeftToReaders)
        {
            return;
        }
        synchronized (this)
        {
            for (int i = leftToReaders.size() - 1; i >= 0; i--)
            {
                final Segment segment = leftToReaders.get(i);
                if (!isPinned(segment))
                {
                    segment.close();
                    leftToReaders.remove(i);
                }
            }
            anyLeftToReaders = !leftToReaders.isEmpty();
        }
    }

    int size()
    {
        return readers.length;
    }
}
