package io.tidemark.store;

import io.tidemark.store.format.SegmentFiles;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.tidemark.store.CrashChild.exitWithError;
import static io.tidemark.store.CrashChild.report;

/**
 * A child JVM for the store's edge cases that could kill a JVM (a SIGSEGV or SIGBUS on a mapping) or keep one
 * alive: run apart so that a regression fails its test with the child's exit status and stderr instead of taking
 * the test JVM down. Started by {@link CrashProcess#start(Class, Path, String...)}; reports one line per event.
 * <pre>
 *   close-under-reader DIR other-thread|handler   close the log while a reader is inside a poll handler
 *   full-disk-reopen   MOUNT                      issue 16's reproducer: reopen a killed log on a full file system
 *   abandon            DIR                        open a log, append, and return from main without closing it
 * </pre>
 */
public final class EdgeCaseChild
{
    private EdgeCaseChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try
        {
            switch (args[0])
            {
                case "close-under-reader":
                    closeUnderReader(Path.of(args[1]), args[2].equals("handler"));
                    break;
                case "full-disk-reopen":
                    fullDiskReopen(Path.of(args[1]));
                    break;
                case "abandon":
                    abandon(Path.of(args[1]));
                    return; // returns from main: the JVM must exit by itself, with the log still open
                default:
                    throw new IllegalArgumentException("unknown mode " + args[0]);
            }
        }
        catch (final Throwable t)
        {
            exitWithError(t);
        }
        System.exit(0);
    }

    private static LogContext readerContext(final Path dir)
    {
        return new LogContext().logDir(dir).segmentBytes(1 << 20).pretouchBytes(64 * 1024)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    /**
     * Three records, one batch each; a reader polls them and its handler, at the first record, waits while the log
     * is closed (by the main thread, or by the handler itself), then reads the record's value from the mapping.
     * Reports {@code READ <offset> <value>} for every record read, {@code POLLED <n>} when the poll returns,
     * {@code NEXT <n or error code>} for the poll after it, {@code CLOSED} when close returned and
     * {@code REOPENED <end>} when the directory could be opened again.
     */
    private static void closeUnderReader(final Path dir, final boolean handlerCloses) throws Exception
    {
        final Log log = Log.open(readerContext(dir));
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        for (long i = 0; i < 3; i++)
        {
            value.putLong(0, 1000 + i);
            log.append(value, 0, 8);
        }
        final CountDownLatch inside = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final Thread reader = new Thread(() ->
        {
            try (LogReader logReader = log.openReader())
            {
                final int polled = logReader.poll((r) ->
                {
                    if (r.offset() == 0)
                    {
                        inside.countDown();
                        if (handlerCloses)
                        {
                            log.close();
                            report("CLOSED");
                        }
                        else
                        {
                            await(release);
                        }
                    }
                    report("READ " + r.offset() + " " + r.buffer().getLong(r.valueOffset()));
                }, Long.MAX_VALUE, 10);
                report("POLLED " + polled);
                try
                {
                    report("NEXT " + logReader.poll((r) -> report("READ " + r.offset()), Long.MAX_VALUE, 10));
                }
                catch (final StorageException ex)
                {
                    report("NEXT " + ex.code());
                }
            }
        }, "reader");
        reader.start();
        if (!inside.await(60, TimeUnit.SECONDS))
        {
            throw new IllegalStateException("the reader never reached its handler");
        }
        if (!handlerCloses)
        {
            log.close();
            report("CLOSED");
        }
        else
        {
            reader.join();
        }
        try (Log again = Log.open(readerContext(dir)))
        {
            report("REOPENED " + again.logEndOffset());
        }
        release.countDown();
        reader.join();
    }

    private static void await(final CountDownLatch latch)
    {
        try
        {
            if (!latch.await(60, TimeUnit.SECONDS))
            {
                throw new IllegalStateException("never released");
            }
        }
        catch (final InterruptedException ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * The reproducer of issue 16: 4 MiB segments, no pretouch, an agent never invoked (so the rolled segment is never
     * trimmed); 100 records of 1000 bytes, flush, roll, halt (a kill -9 in this JVM); fill the file system; open;
     * free the space; open again. Reports {@code HALTED <end>}, {@code FILLED}, {@code FULL-OPEN <end>} or
     * {@code FULL-REFUSED <code>}, {@code FREED}, {@code OPENED <end> <records intact>} and
     * {@code SEALED <file length> <data length>}.
     */
    private static void fullDiskReopen(final Path mount) throws IOException
    {
        final Path dir = mount.resolve("log");
        final Path filler = mount.resolve("filler");
        final LogContext ctx = fullDiskContext(dir);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[1000]);
        final Log log = Log.open(ctx);
        for (long i = 0; i < 100; i++)
        {
            value.putLong(0, i);
            log.append(value, 0, value.capacity());
        }
        log.flush();
        log.roll();
        final long dataLength = log.sizeInBytes();
        log.halt();
        report("HALTED 100");
        SmallFileSystem.fillUp(filler, 64 * 1024);
        SmallFileSystem.fillUp(filler, 1); // the last bytes of a partly free page
        report("FILLED");
        try (Log full = Log.open(fullDiskContext(dir)))
        {
            report("FULL-OPEN " + full.logEndOffset());
        }
        catch (final StorageException ex)
        {
            report("FULL-REFUSED " + ex.code());
        }
        Files.delete(filler);
        report("FREED");
        try (Log reopened = Log.open(fullDiskContext(dir)))
        {
            final long[] intact = new long[1];
            try (LogReader reader = reopened.openReader())
            {
                while (reader.poll((r) ->
                {
                    if (r.buffer().getLong(r.valueOffset()) == r.offset())
                    {
                        intact[0]++;
                    }
                }, Long.MAX_VALUE, 1000) > 0)
                {
                    // read on
                }
            }
            report("OPENED " + reopened.logEndOffset() + " " + intact[0]);
        }
        report("SEALED " + Files.size(new SegmentFiles(dir, 0).log()) + " " + dataLength);
    }

    private static LogContext fullDiskContext(final Path dir)
    {
        return new LogContext().logDir(dir).segmentBytes(4 << 20).pretouchBytes(0)
            .agentMode(LogContext.AgentMode.INVOKER);
    }

    /** Open a log with its own agent thread, append, and return: an application that forgot to close its log. */
    private static void abandon(final Path dir)
    {
        final Log log = Log.open(new LogContext().logDir(dir).segmentBytes(1 << 20).pretouchBytes(64 * 1024));
        final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
        value.putLong(0, 42);
        report("APPENDED " + log.append(value, 0, 8));
    }
}
