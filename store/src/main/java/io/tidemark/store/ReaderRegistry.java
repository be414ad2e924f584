package io.tidemark.store;

import java.util.Arrays;

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
 * Thread-safe: registration is synchronized and rare; {@link #isPinned} is lock-free.
 */
final class ReaderRegistry
{
    private volatile LogReader[] readers = new LogReader[0];

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

    boolean anyPinned()
    {
        for (final LogReader reader : readers)
        {
            if (null != reader.pinned())
            {
                return true;
            }
        }
        return false;
    }

    int size()
    {
        return readers.length;
    }
}
